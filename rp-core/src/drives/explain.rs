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
    /// `social_debt`, `task`, `curiosity` or `availability`.
    pub name: String,
    /// The drive's value, in [0, 1].
    pub value: f64,
    /// Its weight (world settings and personality).
    pub weight: f64,
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
}

impl Candidate {
    /// Whether the score reaches the threshold and every gate is open.
    pub fn is_due(&self) -> bool {
        self.score >= self.threshold && self.gates.iter().all(|g| g.open)
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
                "  {:<13} {:.2} × {:.2} = {:.3}\n",
                t.name, t.value, t.weight, t.contribution
            ));
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
        };
        format!("You decide to speak first, to {to}: {why}.")
    }
}

/// The terms of `speaker` → `to` as functions of time from `from`, and their weights.
pub(super) fn term_ramps(
    world: &World,
    t: &Tuned,
    mind: &Mind,
    speaker: EntityId,
    to: EntityId,
    from: Millis,
) -> [(&'static str, Ramp, f64); 4] {
    [
        (
            "social_debt",
            social_ramp(world, speaker, to, t, mind, from),
            t.weights.social_debt,
        ),
        (
            "task",
            task_ramp(world, speaker, t, mind, from),
            t.weights.task,
        ),
        (
            "curiosity",
            curiosity_ramp(world, speaker, t, mind, from),
            t.weights.curiosity,
        ),
        (
            "availability",
            availability_ramp(world, speaker, to, t, from),
            t.weights.availability,
        ),
    ]
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
        .map(|(name, ramp, weight)| {
            let value = ramp.at(ms(at));
            Term {
                name: name.to_owned(),
                value,
                weight,
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
    ]
    .into_iter()
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
    }
}
