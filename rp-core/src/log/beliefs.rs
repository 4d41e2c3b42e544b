//! Reading what characters believe about people (docs/beliefs.md): every aspect with its
//! confidence at any `now`, computed from when it was observed, without ticking.

use super::World;
use super::belief_reads::BeliefReads;
use crate::model::{
    BeliefSource, DriveSettings, EntityId, Held, Millis, PersonBelief, decayed, elapsed,
};
use serde::{Deserialize, Serialize};

/// One believed aspect as read at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AspectView<T> {
    /// What is believed.
    pub value: T,
    /// The confidence at the time read: `observed_confidence × 0.5^(hours since / half-life)`.
    pub confidence: f64,
    /// The confidence it was observed with.
    pub observed_confidence: f64,
    /// When it was observed (host clock).
    pub at: Millis,
    /// Where it comes from.
    pub source: BeliefSource,
}

/// A believed feeling of the person about a third, with the third's name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeltView {
    /// About whom.
    pub toward: EntityId,
    /// The third person's name.
    pub toward_name: String,
    /// From −1 to 1.
    pub sentiment: f64,
    /// In words; may be empty.
    pub text: String,
}

/// What an observer believes about one person, read at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BeliefView {
    /// About whom.
    pub about: EntityId,
    /// Their name.
    pub name: String,
    /// Whether they are only mentioned (a lightweight person: docs/beliefs.md).
    pub mentioned: bool,
    /// Their mood.
    #[serde(default)]
    pub mood: Option<AspectView<String>>,
    /// Their energy, in [0, 1].
    #[serde(default)]
    pub energy: Option<AspectView<f64>>,
    /// Their availability, in [0, 1]: the latest of what the observer saw (a line heard, an
    /// initiation unanswered), what the host reported and what was observed as a belief.
    #[serde(default)]
    pub availability: Option<AspectView<f64>>,
    /// Their traits, oldest observed first.
    #[serde(default)]
    pub traits: Vec<AspectView<String>>,
    /// How they feel about third persons, oldest observed first.
    #[serde(default)]
    pub feelings: Vec<AspectView<FeltView>>,
}

impl World {
    /// What `observer` believes about everyone it holds a belief about, each aspect with its
    /// confidence at `now` (docs/beliefs.md), in id order of the people. Reading never changes
    /// the world; any `now` may be asked, before or after the world's clock (before an
    /// observation, its observed confidence). An unknown observer believes nothing.
    pub fn beliefs_of(&self, observer: EntityId, now: Millis) -> Vec<BeliefView> {
        beliefs_read(self, observer, now)
    }

    /// What `observer` believes about `about` at `now`; `None` when it believes nothing.
    pub fn belief_about(
        &self,
        observer: EntityId,
        about: EntityId,
        now: Millis,
    ) -> Option<BeliefView> {
        if observer == about {
            return None;
        }
        belief_view(self, observer, about, now, &self.drive_settings(observer))
    }

    /// What the world keeps of `observer`'s beliefs about `about` (aspects and when each was
    /// observed, without decay).
    pub fn person_belief(&self, observer: EntityId, about: EntityId) -> Option<&PersonBelief> {
        self.people.get(&(observer, about))
    }

    /// The latest availability `observer` holds of `about`: seen (a line heard, an initiation
    /// unanswered: confidence 1), reported by the host (confidence 1), or observed as a belief.
    pub(super) fn availability_held(
        &self,
        observer: EntityId,
        about: EntityId,
        held: Option<&PersonBelief>,
    ) -> Option<Held<f64>> {
        availability_held(self, observer, about, held)
    }
}

/// [`World::beliefs_of`] on anything that answers what it reads ([`BeliefReads`]): a world, or
/// the versions an index of the past kept of it (docs/history.md). The one place the reading
/// is written.
pub(crate) fn beliefs_read<R: BeliefReads + ?Sized>(
    r: &R,
    observer: EntityId,
    now: Millis,
) -> Vec<BeliefView> {
    let settings = r.settings(observer);
    let mut about: Vec<EntityId> = r
        .candidates(observer)
        .into_iter()
        .filter(|b| *b != observer && r.named(*b).is_some())
        .collect();
    about.sort_unstable();
    about.dedup();
    about
        .into_iter()
        .filter_map(|b| belief_view(r, observer, b, now, &settings))
        .collect()
}

fn belief_view<R: BeliefReads + ?Sized>(
    r: &R,
    observer: EntityId,
    about: EntityId,
    now: Millis,
    settings: &DriveSettings,
) -> Option<BeliefView> {
    let (name, mentioned) = r.named(about)?;
    let held = r.person(observer, about);
    let short = settings.belief_half_life_hours;
    let long = settings.trait_half_life_hours;
    let view = |h: &Held<String>, half: f64| aspect(h, h.value.clone(), now, half);
    let availability = availability_held(r, observer, about, held);
    let v = BeliefView {
        about,
        name: name.to_owned(),
        mentioned,
        mood: held.and_then(|p| p.mood.as_ref()).map(|h| view(h, short)),
        energy: held
            .and_then(|p| p.energy.as_ref())
            .map(|h| aspect(h, h.value, now, short)),
        availability: availability.map(|h| aspect(&h, h.value, now, short)),
        traits: held
            .map(|p| p.traits.iter().map(|h| view(h, long)).collect())
            .unwrap_or_default(),
        feelings: held
            .map(|p| {
                p.feelings
                    .iter()
                    .map(|h| {
                        let felt = FeltView {
                            toward: h.value.toward,
                            toward_name: r
                                .named(h.value.toward)
                                .map(|(n, _)| n.to_owned())
                                .unwrap_or_default(),
                            sentiment: h.value.sentiment,
                            text: h.value.text.clone(),
                        };
                        aspect(h, felt, now, long)
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    let empty = v.mood.is_none()
        && v.energy.is_none()
        && v.availability.is_none()
        && v.traits.is_empty()
        && v.feelings.is_empty();
    (!empty).then_some(v)
}

/// The latest availability `observer` holds of `about` (see [`World::availability_held`]).
fn availability_held<R: BeliefReads + ?Sized>(
    r: &R,
    observer: EntityId,
    about: EntityId,
    held: Option<&PersonBelief>,
) -> Option<Held<f64>> {
    let seen = r.seen(observer, about).map(|b| Held {
        value: b.availability,
        confidence: 1.0,
        at: b.at,
        source: BeliefSource::Observed,
    });
    let told = r.reported(about).map(|b| Held {
        value: b.availability,
        confidence: 1.0,
        at: b.at,
        source: BeliefSource::Host,
    });
    let believed = held.and_then(|p| p.availability.clone());
    // Latest wins; on a tie, a belief observed outranks a report, which outranks a sight.
    [seen, told, believed]
        .into_iter()
        .flatten()
        .fold(None, |best: Option<Held<f64>>, h| match best {
            Some(b) if b.at > h.at => Some(b),
            _ => Some(h),
        })
}

fn aspect<T, V>(h: &Held<T>, value: V, now: Millis, half_life_hours: f64) -> AspectView<V> {
    AspectView {
        value,
        confidence: decayed(h.confidence, h.at, now, half_life_hours),
        observed_confidence: h.confidence,
        at: h.at,
        source: h.source,
    }
}

/// Below this confidence a belief is too faint to show in a prompt.
pub const FAINT_BELIEF: f64 = 0.1;

impl BeliefView {
    /// The belief in words, for the observer's prompt: every aspect at least
    /// 0.1 sure (`FAINT_BELIEF`), each with how sure, where from and how long ago;
    /// `None` when nothing is. A high availability (the usual case) is not said.
    ///
    /// `You believe Wren is tired (fairly sure, 2 hours ago); feels coldly toward Wren's
    /// mother: resents her (not sure, Mira told you, 3 days ago).`
    pub fn describe(&self, world: &World, now: Millis) -> Option<String> {
        let mut parts: Vec<String> = Vec::new();
        let mut say = |what: String, a: &AspectView<()>| {
            if a.confidence >= FAINT_BELIEF {
                parts.push(format!("{what} ({})", qualifier(world, a, now)));
            }
        };
        if let Some(m) = &self.mood {
            say(format!("is {}", m.value), &bare(m));
        }
        if let Some(e) = &self.energy {
            let words = if e.value <= 0.3 {
                "is tired"
            } else if e.value >= 0.7 {
                "is full of energy"
            } else {
                "is somewhat tired"
            };
            say(words.to_owned(), &bare(e));
        }
        if let Some(a) = &self.availability
            && a.value < 0.7
        {
            let words = if a.value <= 0.3 {
                "is not available"
            } else {
                "is only half available"
            };
            say(words.to_owned(), &bare(a));
        }
        for t in &self.traits {
            say(format!("is {}", t.value), &bare(t));
        }
        for f in &self.feelings {
            let how = match f.value.sentiment {
                s if s >= 0.5 => "warmly",
                s if s >= 0.1 => "kindly",
                s if s > -0.1 => "neutrally",
                s if s > -0.5 => "coolly",
                _ => "bitterly",
            };
            let mut what = format!("feels {how} toward {}", f.value.toward_name);
            if !f.value.text.is_empty() {
                what.push_str(&format!(": {}", f.value.text));
            }
            say(what, &bare(f));
        }
        (!parts.is_empty()).then(|| format!("You believe {} {}.", self.name, parts.join("; ")))
    }
}

/// An aspect without its value: what [`qualifier`] reads.
fn bare<T>(a: &AspectView<T>) -> AspectView<()> {
    AspectView {
        value: (),
        confidence: a.confidence,
        observed_confidence: a.observed_confidence,
        at: a.at,
        source: a.source,
    }
}

/// "fairly sure, Mira told you, 2 hours ago".
fn qualifier(world: &World, a: &AspectView<()>, now: Millis) -> String {
    let sure = match a.confidence {
        c if c >= 0.8 => "sure",
        c if c >= 0.5 => "fairly sure",
        _ => "not sure",
    };
    let from = match a.source {
        BeliefSource::ToldBy(by) => Some(format!(
            "{} told you",
            world.entity(by).map_or("someone", |e| e.name.as_str())
        )),
        BeliefSource::Inferred => Some("your guess".to_owned()),
        BeliefSource::Observed | BeliefSource::Host => None,
    };
    let minutes = elapsed(a.at, now) / 60_000;
    let ago = match minutes {
        0..=1 => "just now".to_owned(),
        2..=59 => format!("{minutes} minutes ago"),
        60..=119 => "an hour ago".to_owned(),
        120..=2879 => format!("{} hours ago", minutes / 60),
        _ => format!("{} days ago", minutes / 1440),
    };
    match from {
        Some(f) => format!("{sure}, {f}, {ago}"),
        None => format!("{sure}, {ago}"),
    }
}
