//! The pressure of a candidate initiation (who would speak, to whom, about what) as a weighted
//! sum of named terms (seed 004 §5), with the gates that must be open before any model call,
//! and the explanation in words.

use super::ramp::Ramp;
use super::{Tuned, availability_ramp, curiosity_ramp, ms, social_ramp, task_ramp};
use crate::error::Result;
use crate::log::World;
use crate::model::*;
use serde::Serialize;

/// One term of a pressure: its value, weight and contribution (value × weight).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Term {
    /// `social_debt`, `task`, `curiosity`, `availability` or `intent`.
    pub name: String,
    /// The drive's value, in [0, 1].
    pub value: f64,
    /// Its weight (world settings, personality, and what was learned toward the addressee).
    pub weight: f64,
    /// The factor learned toward the addressee from feedback, already in `weight` (1:
    /// nothing learned; docs/rules.md).
    pub learned: f64,
    /// value × weight.
    pub contribution: f64,
}

/// A condition an initiation must meet before any model call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gate {
    /// `awake`, `energy`, `availability`, `held` or `sheet`.
    pub name: String,
    /// Whether it lets the initiation through.
    pub open: bool,
    /// Why, in words.
    pub detail: String,
}

/// A candidate initiation and its explanation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// Who would speak.
    pub speaker: EntityId,
    /// To whom.
    pub to: EntityId,
    /// The drive that weighs most.
    pub about: Drive,
    /// Every term, in a fixed order.
    pub terms: Vec<Term>,
    /// The sum of the contributions.
    pub score: f64,
    /// The threshold (after personality).
    pub threshold: f64,
    /// The term without which the score would stay below the threshold (the largest such), if
    /// the score reaches it.
    pub pushed_over_by: Option<String>,
    /// The gates, in order; the sheet's is added by the tick.
    pub gates: Vec<Gate>,
    /// The rules whose intentions toward the addressee weigh in the `intent` term.
    pub rules: Vec<RuleId>,
    /// What feedback taught the speaker about the addressee, in words ("Tobias speaks up less
    /// to Wren since Wren twice answered curtly"), if anything.
    pub learned: Option<String>,
}

impl Candidate {
    /// Whether the score reaches the threshold and every gate is open.
    pub fn is_due(&self) -> bool {
        self.score >= self.threshold && self.gates.iter().all(|g| g.open)
    }

    /// Each term's share of the score (contribution ÷ score; none for a score of 0): what
    /// learning from the answer credits.
    pub fn shares(&self) -> Vec<(String, f64)> {
        if self.score <= 0.0 {
            return Vec::new();
        }
        self.terms
            .iter()
            .filter(|t| t.contribution > 0.0)
            .map(|t| {
                (
                    t.name.clone(),
                    (t.contribution / self.score).clamp(0.0, 1.0),
                )
            })
            .collect()
    }

    /// The explanation in words ("Tobias → Wren: pressure 0.81 ≥ 0.75 …").
    pub fn explain(&self, world: &World) -> String {
        let name = |id: EntityId| world.entity(id).map_or(id.to_string(), |e| e.name.clone());
        let mut out = format!(
            "{} → {}: pressure {:.2} {} threshold {:.2} (about {})\n",
            name(self.speaker),
            name(self.to),
            self.score,
            if self.score >= self.threshold {
                "≥"
            } else {
                "<"
            },
            self.threshold,
            self.about.name()
        );
        for t in &self.terms {
            out.push_str(&format!(
                "  {:<13} {:.2} × {:.2} = {:.3}",
                t.name, t.value, t.weight, t.contribution
            ));
            if (t.learned - 1.0).abs() > 0.005 {
                out.push_str(&format!(" (learned × {:.2})", t.learned));
            }
            out.push('\n');
        }
        if let Some(learned) = &self.learned {
            out.push_str(&format!("  learned: {learned}\n"));
        }
        if let Some(term) = &self.pushed_over_by {
            out.push_str(&format!("  pushed over by {term}\n"));
        }
        for g in &self.gates {
            out.push_str(&format!(
                "  gate {:<12} {} ({})\n",
                g.name,
                if g.open { "open" } else { "closed" },
                g.detail
            ));
        }
        out
    }

    /// Why the character speaks now, in words, for its prompt.
    pub fn reason(&self, world: &World) -> String {
        let to = world
            .entity(self.to)
            .map_or(self.to.to_string(), |e| e.name.clone());
        let why = match self.about {
            Drive::SocialDebt => format!("you have not talked with {to} for a while and want to"),
            Drive::Task => "something you mean to do is pressing on you".to_owned(),
            Drive::Curiosity => "something you noticed makes you curious".to_owned(),
            Drive::Intent => {
                let meant = world
                    .mind(self.speaker)
                    .and_then(|m| {
                        m.intentions
                            .iter()
                            .filter(|i| i.to == Some(self.to))
                            .max_by(|a, b| a.weight.total_cmp(&b.weight))
                    })
                    .map_or("something", |i| i.text.as_str());
                format!("you meant to talk with {to} about {meant}")
            }
        };
        format!("You decide to speak first, to {to}: {why}.")
    }
}

/// The names of a pressure's terms, in their fixed order.
pub(super) const TERMS: [&str; 5] = ["social_debt", "task", "curiosity", "availability", "intent"];

/// The weights of `speaker`'s terms toward `to` at `at`: the tuned ones, each times the factor
/// learned toward `to` then (docs/rules.md), with those factors.
pub(super) fn weights_toward(
    world: &World,
    t: &Tuned,
    speaker: EntityId,
    to: EntityId,
    at: Millis,
) -> ([f64; 5], [f64; 5]) {
    let w = &t.weights;
    let base = [w.social_debt, w.task, w.curiosity, w.availability, w.intent];
    let mut learned = [1.0; 5];
    if let Some(mind) = world.mind(speaker) {
        for l in mind.learned.iter().filter(|l| l.to == to) {
            if let Some(i) = TERMS.iter().position(|n| *n == l.term) {
                learned[i] = l.factor_at(at, t.s.learned_half_life_days);
            }
        }
    }
    (std::array::from_fn(|i| base[i] * learned[i]), learned)
}

/// The value of the `intent` term toward `to`: the strongest intention a rule left to speak
/// to it, with the rules behind those intentions.
pub(super) fn intent_toward(mind: &Mind, to: EntityId) -> (f64, Vec<RuleId>) {
    let toward = mind.intentions.iter().filter(|i| i.to == Some(to));
    let value = toward.clone().map(|i| i.weight).fold(0.0, f64::max);
    (value, toward.filter_map(|i| i.rule).collect())
}

/// The terms of `speaker` → `to` as functions of time from `from`, with their weights and
/// learned factors.
pub(super) fn term_ramps(
    world: &World,
    t: &Tuned,
    mind: &Mind,
    speaker: EntityId,
    to: EntityId,
    from: Millis,
) -> [(&'static str, Ramp, f64, f64); 5] {
    let (w, learned) = weights_toward(world, t, speaker, to, from);
    let (intent, _) = intent_toward(mind, to);
    let ramps = [
        social_ramp(world, speaker, to, t, mind, from),
        task_ramp(world, speaker, t, mind, from),
        curiosity_ramp(world, speaker, t, mind, from),
        availability_ramp(world, speaker, to, t, from),
        Ramp::constant(ms(from), intent),
    ];
    let mut ramps = ramps.into_iter();
    std::array::from_fn(|i| (TERMS[i], ramps.next().expect("five"), w[i], learned[i]))
}

/// The candidate initiations of `speaker` at `at` toward everyone it knows among `hearers`,
/// highest score first.
pub(super) fn candidates(
    world: &World,
    speaker: EntityId,
    at: Millis,
    hearers: &WitnessSet,
) -> Result<Vec<Candidate>> {
    let Some((t, mind)) = Tuned::of(world, speaker) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<Candidate> = super::addressees(world, speaker, hearers)
        .into_iter()
        .map(|to| candidate(world, &t, mind, speaker, to, at))
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.to.cmp(&b.to)));
    Ok(out)
}

fn candidate(
    world: &World,
    t: &Tuned,
    mind: &Mind,
    speaker: EntityId,
    to: EntityId,
    at: Millis,
) -> Candidate {
    let terms: Vec<Term> = term_ramps(world, t, mind, speaker, to, at)
        .into_iter()
        .map(|(name, ramp, weight, learned)| {
            let value = ramp.at(ms(at));
            Term {
                name: name.to_owned(),
                value,
                weight,
                learned,
                contribution: value * weight,
            }
        })
        .collect();
    let score: f64 = terms.iter().map(|x| x.contribution).sum();
    let pushed_over_by = (score >= t.threshold)
        .then(|| {
            terms
                .iter()
                .filter(|x| x.contribution > 0.0 && score - x.contribution < t.threshold)
                .max_by(|a, b| a.contribution.total_cmp(&b.contribution))
                .map(|x| x.name.clone())
        })
        .flatten();
    let about = [
        (Drive::SocialDebt, terms[0].contribution),
        (Drive::Task, terms[1].contribution),
        (Drive::Curiosity, terms[2].contribution),
        (Drive::Intent, terms[4].contribution),
    ]
    .into_iter()
    .filter(|(d, c)| *d != Drive::Intent || *c > 0.0)
    .max_by(|a, b| a.1.total_cmp(&b.1))
    .map_or(Drive::SocialDebt, |x| x.0);
    let energy = mind.energy_at(&t.s, at);
    let availability = terms[3].value;
    let urgent = terms[1].value >= t.s.urgent_task;
    let gates = vec![
        Gate {
            name: "awake".into(),
            open: !mind.asleep,
            detail: if mind.asleep { "asleep" } else { "awake" }.into(),
        },
        Gate {
            name: "energy".into(),
            open: energy >= t.s.min_energy,
            detail: format!("energy {energy:.2}, needs {:.2}", t.s.min_energy),
        },
        Gate {
            name: "availability".into(),
            open: availability >= t.availability_gate || urgent,
            detail: format!(
                "believed availability {availability:.2}, needs {:.2}{}",
                t.availability_gate,
                if urgent { " (urgent: goes ahead)" } else { "" }
            ),
        },
        Gate {
            name: "held".into(),
            open: mind.held_until.is_none_or(|u| at >= u),
            detail: match mind.held_until {
                Some(u) if at < u => format!("held until {u}"),
                _ => "not held".into(),
            },
        },
    ];
    Candidate {
        speaker,
        to,
        about,
        terms,
        score,
        threshold: t.threshold,
        pushed_over_by,
        gates,
        rules: intent_toward(mind, to).1,
        learned: super::learn::narrative(world, speaker, to, at),
    }
}
