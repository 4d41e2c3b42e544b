//! Rules and feedback in a tick (docs/rules.md): rules let go when their weight faded below
//! the threshold, `at` rules considered at their time, rules on a stimulus kind tested on each
//! stimulus the tick processed; an initiation nobody answered learned from in arithmetic, and
//! an answer's tone asked of the fast model (purpose `classify`) before learning from it.

use crate::drives::learn;
use crate::error::Result;
use crate::facts::{Context, SeededDraws};
use crate::log::{Event, World, hour_of};
use crate::machine::{GenerateRequest, Purpose};
use crate::model::*;
use serde::Deserialize;
use serde_json::json;

/// The events of `entity`'s rules at `now`: those forgotten, then those due, then those the
/// stimuli it just processed trigger (each rule at most once a tick).
pub(super) fn rule_events(
    world: &World,
    entity: EntityId,
    processed: &[Stimulus],
    now: Millis,
) -> Vec<Event> {
    let s = world.drive_settings(entity);
    let mut events = Vec::new();
    let mut live: Vec<&Rule> = Vec::new();
    for rule in world.rules_of(entity) {
        if rule
            .forgotten_at(s.rule_half_life_days, s.rule_forget_below)
            .is_some_and(|at| at <= now)
        {
            events.push(Event::RuleRemoved {
                entity,
                rule: rule.id,
                at: now,
                forgotten: true,
            });
        } else {
            live.push(rule);
        }
    }
    for rule in live {
        match &rule.trigger {
            Trigger::At(_) if rule.due_at().is_some_and(|at| at <= now) => {
                // Considered once: fired, or spent (`held`) when its condition does not hold.
                let holds = condition_holds(world, rule, "", now);
                events.push(Event::RuleFired {
                    entity,
                    rule: rule.id,
                    at: now,
                    held: !holds,
                    cause: "its time came".to_owned(),
                    stimulus: None,
                });
            }
            Trigger::Stimulus(kind) => {
                // The first stimulus of its kind its condition holds for; none: no trace.
                let hit = processed
                    .iter()
                    .filter(|x| x.kind == *kind)
                    .find(|x| condition_holds(world, rule, &x.payload, now));
                if let Some(x) = hit {
                    let what = x.payload.chars().take(80).collect::<String>();
                    events.push(Event::RuleFired {
                        entity,
                        rule: rule.id,
                        at: now,
                        held: false,
                        cause: format!("a {kind} stimulus: {what}"),
                        stimulus: Some(x.id),
                    });
                }
            }
            Trigger::At(_) => {}
        }
    }
    events
}

/// Whether `rule`'s condition holds at `now` with `content` (a rule without one always
/// does). Random draws come from the world's generator without advancing it (what is recorded
/// is whether the rule fired); a condition that fails to run counts as false.
fn condition_holds(world: &World, rule: &Rule, content: &str, now: Millis) -> bool {
    let Some(source) = &rule.condition else {
        return true;
    };
    let Ok(condition) = crate::log::compile_condition(world, rule.owner, source) else {
        return false;
    };
    let Some(me) = world.entity(rule.owner) else {
        return false;
    };
    let present = world.present_names(rule.owner);
    let ctx = Context {
        name: &me.name,
        content,
        mentioned: world.mentions(rule.owner, content),
        present: &present,
        hour: hour_of(now),
        drives: crate::drives::values(world, rule.owner, now),
        ..Context::default()
    };
    let seed = world.meta().map_or(0, |m| m.settings.seed);
    let mut draws = SeededDraws::new(seed, world.draws_taken());
    condition.test(&ctx, &mut draws).unwrap_or(false)
}

/// `entity`'s feedback due at `now`: what it learns from the initiations nobody answered in
/// time (events, in arithmetic), and the answers whose tone must be asked (addressee and the
/// initiation's time).
pub(super) fn feedback_due(
    world: &World,
    entity: EntityId,
    now: Millis,
) -> (Vec<Event>, Vec<(EntityId, Millis)>) {
    let Some(mind) = world.mind(entity) else {
        return (Vec::new(), Vec::new());
    };
    let wait = (world.drive_settings(entity).feedback_wait_minutes * 60_000.0) as Millis;
    let mut ignored = Vec::new();
    let mut ask = Vec::new();
    for a in &mind.awaiting {
        match &a.reply {
            Some(r) if r.at <= now => ask.push((a.to, a.at)),
            None if a.at.saturating_add(wait) <= now => {
                ignored.push(learned_event(world, entity, a, None, now));
            }
            _ => {}
        }
    }
    (ignored, ask)
}

/// The record of what `entity` learns at `now` from `awaiting` with `sentiment`.
pub(super) fn learned_event(
    world: &World,
    entity: EntityId,
    awaiting: &Awaiting,
    sentiment: Option<Sentiment>,
    now: Millis,
) -> Event {
    let l = learn::learn(world, entity, awaiting, sentiment, now);
    Event::FeedbackLearned {
        entity,
        feedback: l.feedback,
        changes: l.changes,
        reason: l.reason,
        at: now,
    }
}

/// The record of an answer whose tone could not be had (`why`): the wait ends, no weight
/// moves.
pub(super) fn unlearned_event(
    world: &World,
    entity: EntityId,
    awaiting: &Awaiting,
    why: &str,
    now: Millis,
) -> Event {
    let mut l = learn::learn(world, entity, awaiting, None, now);
    l.feedback.reward = 0.0;
    Event::FeedbackLearned {
        entity,
        feedback: l.feedback,
        changes: Vec::new(),
        reason: format!("nothing learned: {why}")
            .chars()
            .take(4000)
            .collect(),
        at: now,
    }
}

/// The initiation of `entity` to `to` made at `at`, still awaiting its feedback.
pub(super) fn awaiting(
    world: &World,
    entity: EntityId,
    to: EntityId,
    at: Millis,
) -> Option<&Awaiting> {
    world
        .mind(entity)?
        .awaiting
        .iter()
        .find(|a| a.to == to && a.at == at)
}

/// The classification request of the answer `to` gave `entity`'s initiation made at `at`:
/// the initiating line (when the world still holds it), the answer, and the three labels.
pub(super) fn classify_request(
    world: &World,
    entity: EntityId,
    to: EntityId,
    at: Millis,
) -> GenerateRequest {
    let name = |id: EntityId| world.entity(id).map_or("someone", |e| e.name.as_str());
    let said = world
        .dialogue()
        .rev()
        .find(|u| u.speaker == entity && u.at == at)
        .map(|u| u.text.as_str());
    let answer = awaiting(world, entity, to, at)
        .and_then(|a| a.reply.as_ref())
        .map_or("", |r| r.text.as_str());
    let mut user = String::new();
    if let Some(said) = said {
        user.push_str(&format!(
            "{} said to {}: \"{said}\"\n",
            name(entity),
            name(to)
        ));
    }
    user.push_str(&format!(
        "{} answered: \"{answer}\"\n\nHow did {} take being spoken to? Answer with the JSON \
         object {{\"sentiment\": \"positive\" | \"neutral\" | \"negative\"}} and nothing else: \
         positive for a warm, engaged or thankful answer, negative for a curt, annoyed or \
         \"busy right now\" one.",
        name(to),
        name(to)
    ));
    super::think::json_request(
        Purpose::Classify { speaker: entity },
        "You classify the tone of an answer in a story, in one word of JSON.".to_owned(),
        user,
        0.0,
        json!({
            "type": "object",
            "properties": {
                "sentiment": {"type": "string", "enum": ["positive", "neutral", "negative"]}
            },
            "required": ["sentiment"],
            "additionalProperties": false
        }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Classified {
    sentiment: Sentiment,
}

/// Reads a classification answer: `{"sentiment": "positive" | "neutral" | "negative"}`, and
/// nothing else.
pub(super) fn read_sentiment(answer: &str) -> std::result::Result<Sentiment, String> {
    crate::decay::read_answer::<Classified>(answer).map(|c| c.sentiment)
}

/// Pushes `events` onto the tick's batch, in order.
pub(super) fn push_all(batch: &mut crate::story::Batch, events: Vec<Event>) -> Result<()> {
    for e in events {
        batch.push(e)?;
    }
    Ok(())
}
