//! Time skips (docs/architecture.md): `elision` skips the boring middle of an action in
//! progress, `jump` goes to a time ("the next morning"). A skip is one atomic step, one commit:
//!
//! 1. every open scene closes at the moment the skip begins, each witness with its own summary
//!    (the summaries are generated through this sans-IO machine, as a scene close asks for
//!    them: see [`crate::scene`]);
//! 2. [`Event::TimeSkipped`] moves the clock;
//! 3. the scoped-event transitions due in between run forward in time order: starts whose
//!    time came (and whose conditions hold), expiries ([`crate::story`]);
//! 4. the landing activities are reset: an action that ended by the landing time is over
//!    (action, attention and status cleared; position, posture and what is held stay). After a
//!    jump every action is over, whether or not its duration was known.
//!
//! Rewinding to a seq before the skip restores everything, since the skip is only events.
//!
//! ```
//! use rp_core::{Engine, Skip, scene::SceneOptions, turn::Step};
//! # let mut engine = Engine::in_memory("Demo", 0)?;
//! let mut skip = engine.begin_time_skip(Skip::Jump { to: 8 * 3_600_000 }, &SceneOptions::default())?;
//! while let Step::Generate(_request) = skip.step(&mut engine)? {
//!     // one summary per witness of each open scene
//! #   unreachable!();
//! }
//! let outcome = skip.finish(&mut engine)?;
//! assert_eq!(engine.world().now(), 8 * 3_600_000);
//! # let _ = outcome;
//! # Ok::<(), rp_core::Error>(())
//! ```

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::{Event, World};
use crate::machine::{Generate, GenerateResult, NoSink, Step};
use crate::model::{EntityId, GroupId, MemoryId, Millis, SceneId, Seq, Skip};
use crate::scene::{SceneClose, SceneOptions};
use crate::story::{self, Batch, DueOutcome};
use serde::{Deserialize, Serialize};

/// A time skip in progress. It borrows nothing: every call takes the engine, which must not
/// change meanwhile (a commit in between makes the machine refuse; begin again). Dropping it
/// commits nothing.
#[derive(Clone, Debug)]
pub struct TimeSkip {
    skip: Skip,
    from: Millis,
    to: Millis,
    /// One close per open scene, in scene id order.
    closes: Vec<SceneClose>,
    /// The head and epoch of the engine when it began.
    base: (Seq, u64),
    /// Why the host could not answer, once it said so ([`TimeSkip::fail`]).
    failed: Option<String>,
}

/// A scene a skip closed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClosedScene {
    /// The scene.
    pub scene: SceneId,
    /// Each witness and the id of its summary memory, in witness id order.
    pub summaries: Vec<(EntityId, MemoryId)>,
    /// The group node created for the witnesses, if one was.
    pub group: Option<GroupId>,
}

/// What a skip committed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkipOutcome {
    /// The head after the commit.
    pub seq: Seq,
    /// The world's time when the skip began.
    pub from: Millis,
    /// The time landed at.
    pub to: Millis,
    /// The scenes closed, in scene id order.
    pub closed_scenes: Vec<ClosedScene>,
    /// The scoped-event transitions run in between.
    pub due: DueOutcome,
    /// The entities whose activity was reset, in id order.
    pub reset: Vec<EntityId>,
}

impl TimeSkip {
    /// Plans `skip` on `engine` (see [`Engine::begin_time_skip`]).
    fn begin(engine: &Engine, skip: Skip, options: &SceneOptions) -> Result<TimeSkip> {
        options.check()?;
        let world = engine.world();
        let from = world.now();
        let to = landing(world, &skip)?;
        let closes = if options.enabled {
            world
                .open_scenes()
                .map(|s| SceneClose::plan(world, s.id, from, options))
                .collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        Ok(TimeSkip {
            skip,
            from,
            to,
            closes,
            base: (engine.head(), engine.epoch()),
            failed: None,
        })
    }

    /// The time the skip lands at.
    pub fn to(&self) -> Millis {
        self.to
    }

    /// The scenes the skip closes, in id order.
    pub fn scenes(&self) -> Vec<SceneId> {
        self.closes.iter().map(SceneClose::scene).collect()
    }

    /// What the skip needs next: the next summary of a closing scene, or [`Step::Done`].
    /// Calling it again without providing returns the same request.
    pub fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        self.check_engine(engine)?;
        if self.failed.is_some() {
            return Ok(Step::Done);
        }
        Ok(self
            .closes
            .iter()
            .find_map(SceneClose::next_request)
            .map_or(Step::Done, |r| Step::Generate(r.clone())))
    }

    /// Feeds the summary asked for by the last [`TimeSkip::step`]. An empty or oversized text
    /// is refused and changes nothing (provide again).
    pub fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        self.check_engine(engine)?;
        match self.closes.iter_mut().find(|c| !c.is_done()) {
            Some(close) if self.failed.is_none() => close.accept(result),
            _ => Err(Error::conflict(
                "the time skip is not waiting for a summary",
            )),
        }
    }

    /// The host could not produce the summary asked for (its model failed): the skip ends.
    /// [`TimeSkip::step`] returns [`Step::Done`] from now on, and [`TimeSkip::finish`]
    /// commits nothing and returns an [`crate::ErrorKind::Generation`] error naming `reason`;
    /// the world stays where it was. Refused when nothing is asked for.
    pub fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        self.check_engine(engine)?;
        if self.failed.is_some() || self.closes.iter().all(SceneClose::is_done) {
            return Err(Error::conflict(
                "the time skip asks for nothing to fail; finish it",
            ));
        }
        self.failed = Some(reason.to_owned());
        Ok(())
    }

    /// Commits the skip in one transaction (see the module docs). Refused while a summary is
    /// still needed.
    pub fn finish(self, engine: &mut Engine) -> Result<SkipOutcome> {
        self.check_engine(engine)?;
        if let Some(reason) = self.failed {
            return Err(Error::Generation { message: reason });
        }
        let mut scratch = engine.world().clone();
        let mut events = Vec::new();
        let mut closed_scenes = Vec::new();
        for close in &self.closes {
            let (closing, summaries, group) = close.events(&mut scratch)?;
            events.extend(closing);
            closed_scenes.push(ClosedScene {
                scene: close.scene(),
                summaries,
                group,
            });
        }
        let mut batch = Batch {
            world: scratch,
            events: Vec::new(),
        };
        batch.push(Event::TimeSkipped {
            from: self.from,
            to: self.to,
            skip: self.skip.clone(),
        })?;
        let due = story::run_due(&mut batch, self.from, self.to);
        let reset = reset_activities(&mut batch, &self.skip, self.to)?;
        events.extend(batch.events);
        let epoch = engine.epoch();
        let (seq, ()) = engine.append_applied(events, Some((batch.world, epoch)), |_| ())?;
        Ok(SkipOutcome {
            seq,
            from: self.from,
            to: self.to,
            closed_scenes,
            due,
            reset,
        })
    }

    fn check_engine(&self, engine: &Engine) -> Result<()> {
        if (engine.head(), engine.epoch()) != self.base {
            return Err(Error::conflict(
                "the world changed since the time skip began; begin it again",
            ));
        }
        Ok(())
    }
}

/// The time `skip` lands at, from `world`'s time; refused when it would not move forward.
fn landing(world: &World, skip: &Skip) -> Result<Millis> {
    let now = world.now();
    let to = match skip {
        Skip::Jump { to } => *to,
        Skip::Elision { entity } => {
            let e = world
                .entity(*entity)
                .ok_or_else(|| Error::not_found("entity", entity))?;
            let action = e.activity.action.as_ref().ok_or_else(|| {
                Error::invalid(
                    "time skip",
                    format!(
                        "{} is doing nothing: there is no action to skip through",
                        e.name
                    ),
                )
            })?;
            let duration = action.duration_ms.ok_or_else(|| {
                Error::invalid(
                    "time skip",
                    format!(
                        "{}'s action ({}) has no duration, so it has no end to skip to; \
                         jump to a time instead",
                        e.name, action.verb
                    ),
                )
            })?;
            let duration = Millis::try_from(duration).unwrap_or(Millis::MAX);
            action.started.saturating_add(duration)
        }
    };
    if to <= now {
        return Err(Error::invalid(
            "time skip",
            format!("a skip goes forward: it would land at {to}, not after the world's time {now}"),
        ));
    }
    Ok(to)
}

/// Ends the actions that are over at `to` (every action after a jump), on `batch`.
fn reset_activities(batch: &mut Batch, skip: &Skip, to: Millis) -> Result<Vec<EntityId>> {
    let jump = matches!(skip, Skip::Jump { .. });
    let over: Vec<EntityId> = batch
        .world
        .entities()
        .filter(|e| {
            e.activity.action.as_ref().is_some_and(|a| {
                jump || a.duration_ms.is_some_and(|d| {
                    a.started
                        .saturating_add(Millis::try_from(d).unwrap_or(Millis::MAX))
                        <= to
                })
            })
        })
        .map(|e| e.id)
        .collect();
    for id in &over {
        let Some(e) = batch.world.entity(*id) else {
            continue;
        };
        let mut activity = e.activity.clone();
        activity.action = None;
        activity.attention = None;
        activity.status = None;
        batch.push(Event::ActivityChanged {
            entity: *id,
            activity,
        })?;
    }
    Ok(over)
}

impl Engine {
    /// Begins a time skip: `skip` says where it lands (it must move the clock forward; an
    /// elision needs an action with a duration). Closing the open scenes uses `options` (with
    /// scenes disabled, none is closed). Refused, with nothing changed: a landing time not after
    /// the world's clock, an unknown entity, an entity doing nothing or an action without a
    /// duration, bad options.
    pub fn begin_time_skip(&mut self, skip: Skip, options: &SceneOptions) -> Result<TimeSkip> {
        TimeSkip::begin(self, skip, options)
    }

    /// A whole time skip, with `generator` writing the summaries of the scenes it closes. A
    /// generator failure commits nothing ([`Error::Generation`]).
    pub async fn time_skip(
        &mut self,
        skip: Skip,
        options: &SceneOptions,
        generator: &dyn Generate,
    ) -> Result<SkipOutcome> {
        let machine = self.begin_time_skip(skip, options)?;
        crate::machine::run(self, machine, generator, &mut NoSink).await
    }

    /// [`Engine::time_skip`] on the calling thread, without an async runtime.
    pub fn time_skip_blocking(
        &mut self,
        skip: Skip,
        options: &SceneOptions,
        generator: &dyn Generate,
    ) -> Result<SkipOutcome> {
        crate::machine::block_on(self.time_skip(skip, options, generator))
    }
}

impl crate::machine::Machine for TimeSkip {
    type Outcome = SkipOutcome;

    fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        TimeSkip::step(self, engine)
    }

    fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        TimeSkip::provide(self, engine, result)
    }

    fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        TimeSkip::fail(self, engine, reason)
    }

    fn finish(self, engine: &mut Engine) -> Result<SkipOutcome> {
        TimeSkip::finish(self, engine)
    }
}
