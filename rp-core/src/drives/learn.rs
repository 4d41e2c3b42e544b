//! What a character learns from the answer to its initiation (docs/rules.md; seed 004 §6):
//! a reward from how soon, how much and in what tone the other answered, and the weights it
//! moves, each at its kind's rate: the factors on the pressure's terms toward that addressee
//! (timing, fast), the weights of the rules whose intentions weighed in it (moderate), and
//! the character's independence (personality, very slow). Arithmetic only: the tick asks the
//! fast model for the tone and records what this returns.

use crate::log::World;
use crate::model::*;

/// What a piece of feedback teaches: the feedback as read, the weights it moves, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Learning {
    /// The feedback.
    pub feedback: Feedback,
    /// The weights moved (none may move: a neutral answer).
    pub changes: Vec<WeightChange>,
    /// Why, in words.
    pub reason: String,
}

/// The reward of an answer, in [−1, 1]: −1 without one; otherwise
/// `0.5 × sentiment + 0.25 × latency score + 0.25 × length score`, the latency score 1 for an
/// answer at once down to −1 at `wait_ms`, the length score −1 for two words or fewer up to 1
/// for twelve or more.
pub fn reward(
    latency_ms: Option<Millis>,
    words: u32,
    sentiment: Option<Sentiment>,
    wait_ms: f64,
) -> f64 {
    let Some(latency) = latency_ms else {
        return -1.0;
    };
    let soon = 1.0 - 2.0 * (latency.max(0) as f64 / wait_ms.max(1.0)).clamp(0.0, 1.0);
    let long = 2.0 * ((f64::from(words) - 2.0) / 10.0).clamp(0.0, 1.0) - 1.0;
    let tone = sentiment.map_or(0.0, Sentiment::value);
    (0.5 * tone + 0.25 * soon + 0.25 * long).clamp(-1.0, 1.0)
}

/// What `entity` learns at `now` from the answer `awaiting` waited for (`sentiment`: its tone
/// as classified; `None` when no answer came).
pub fn learn(
    world: &World,
    entity: EntityId,
    awaiting: &Awaiting,
    sentiment: Option<Sentiment>,
    now: Millis,
) -> Learning {
    let s = world.drive_settings(entity);
    let wait_ms = s.feedback_wait_minutes * 60_000.0;
    let latency_ms = awaiting
        .reply
        .as_ref()
        .map(|r| r.at.saturating_sub(awaiting.at));
    let words = awaiting.reply.as_ref().map_or(0, |r| r.words);
    let r = reward(latency_ms, words, sentiment, wait_ms);
    let feedback = Feedback {
        from: awaiting.to,
        initiated_at: awaiting.at,
        latency_ms,
        words,
        sentiment,
        reward: r,
    };
    let mut changes = Vec::new();
    let mut change = |target: WeightTarget, from: f64, to: f64| {
        if (to - from).abs() > 1e-12 {
            changes.push(WeightChange { target, from, to });
        }
    };
    let (lo, hi) = LEARNED_FACTOR_RANGE;
    for (term, share) in &awaiting.shares {
        if *share <= 0.0 || !crate::log::TERM_NAMES.contains(&term.as_str()) {
            continue;
        }
        let from = world.learned_factor(entity, awaiting.to, term, now);
        let to = (from * (s.learn_timing * r * share).exp()).clamp(lo, hi);
        let target = WeightTarget::Term {
            to: awaiting.to,
            term: term.clone(),
        };
        change(target, from, to);
    }
    for id in &awaiting.rules {
        let Some(rule) = world.rule(entity, *id) else {
            continue; // forgotten or removed since
        };
        let from = rule.weight_at(now, s.rule_half_life_days);
        let room = if r > 0.0 { 1.0 - from } else { from };
        let to = (from + s.learn_rules * r * room).clamp(0.0, 1.0);
        change(WeightTarget::Rule { rule: *id }, from, to);
    }
    if let Some(mind) = world.mind(entity) {
        let from = mind.personality.independence;
        let to = (from + s.learn_personality * r).clamp(0.0, 1.0);
        let name = "independence".to_owned();
        change(WeightTarget::Trait { name }, from, to);
    }
    let who = name(world, awaiting.to);
    let reason = match (&awaiting.reply, latency_ms) {
        (Some(reply), Some(latency)) => format!(
            "{who} {}: {} words after {}{}",
            feedback.label(),
            reply.words,
            duration(latency),
            sentiment.map_or(String::new(), |s| format!(", {}", s.name()))
        ),
        _ => format!(
            "{who} did not answer within {} min",
            s.feedback_wait_minutes
        ),
    };
    Learning {
        feedback,
        changes,
        reason,
    }
}

/// What feedback taught `speaker` about speaking to `to`, in words, while its weights toward
/// `to` at `at` are still moved: "Tobias speaks up less to Wren (learned × 0.72) since Wren
/// twice answered curtly".
pub fn narrative(world: &World, speaker: EntityId, to: EntityId, at: Millis) -> Option<String> {
    let mind = world.mind(speaker)?;
    let half_life = world.drive_settings(speaker).learned_half_life_days;
    let factors: Vec<f64> = mind
        .learned
        .iter()
        .filter(|l| l.to == to)
        .map(|l| l.factor_at(at, half_life))
        .collect();
    if factors.is_empty() {
        return None;
    }
    let mean = factors.iter().sum::<f64>() / factors.len() as f64;
    let less = mean < 1.0;
    if (mean - 1.0).abs() < 0.02 {
        return None;
    }
    let labels: &[&str] = if less {
        &["answered curtly", "did not answer"]
    } else {
        &["answered warmly"]
    };
    let counted: Vec<String> = labels
        .iter()
        .filter_map(|label| {
            let n = mind
                .feedback
                .iter()
                .filter(|f| f.from == to && f.label() == *label)
                .count();
            (n > 0).then(|| format!("{} {label}", times(n)))
        })
        .collect();
    let who = name(world, to);
    let mut out = format!(
        "{} speaks up {} to {who} (learned × {mean:.2})",
        name(world, speaker),
        if less { "less" } else { "more" }
    );
    if !counted.is_empty() {
        out.push_str(&format!(" since {who} {}", counted.join(" and ")));
    }
    Some(out)
}

fn name(world: &World, id: EntityId) -> String {
    world
        .entity(id)
        .map_or_else(|| id.to_string(), |e| e.name.clone())
}

fn times(n: usize) -> String {
    match n {
        1 => "once".to_owned(),
        2 => "twice".to_owned(),
        n => format!("{n} times"),
    }
}

fn duration(ms: Millis) -> String {
    if ms < 60_000 {
        format!("{} s", ms.max(0) / 1000)
    } else {
        format!("{} min", ms / 60_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewards_follow_the_documented_formula() {
        let wait = 30.0 * 60_000.0;
        assert_eq!(reward(None, 0, None, wait), -1.0);
        // A long, warm answer at once: the best there is.
        assert_eq!(reward(Some(0), 15, Some(Sentiment::Positive), wait), 1.0);
        // "ok" at once, neutral: quick but short, nothing learned.
        assert_eq!(reward(Some(0), 1, Some(Sentiment::Neutral), wait), 0.0);
        // Two curt words after four minutes.
        let curt = reward(Some(240_000), 2, Some(Sentiment::Negative), wait);
        let expected = -0.5 + 0.25 * (1.0 - 2.0 * 4.0 / 30.0) - 0.25;
        assert!((curt - expected).abs() < 1e-12);
        // Late answers count as late as the wait, never worse.
        assert_eq!(
            reward(Some(10 * 3_600_000), 12, Some(Sentiment::Neutral), wait),
            0.0
        );
    }
}
