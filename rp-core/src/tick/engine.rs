//! The engine's calls for the characters' inner life (docs/drives.md): reading drives and
//! their explanations, when the next tick is due, starting a tick, and the events a host
//! records (stimuli, drive settings, personality, availability reports).

use super::{TickMachine, TickOptions};
use crate::drives::{self, Candidate, Drives, NextTick};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::Event;
use crate::model::{DriveConfig, EntityId, Millis, Personality, Priority, Seq, Stimulus};

impl Engine {
    /// `entity`'s drives at `now` (never before the world's clock): energy, social debt toward
    /// each entity it knows, task pressure, curiosity, the highest pressure, its mode, inbox and
    /// personality. Changes nothing.
    pub fn drives(&mut self, entity: EntityId, now: Millis) -> Result<Drives> {
        drives::drives(self.world(), entity, now)
    }

    /// `entity`'s candidate initiations at `now`, highest pressure first, each with its terms,
    /// threshold, gates and the term that pushed it over. Changes nothing.
    pub fn initiation_candidates(
        &mut self,
        entity: EntityId,
        now: Millis,
    ) -> Result<Vec<Candidate>> {
        drives::candidates_now(self.world(), entity, now)
    }

    /// The exact earliest host time at or after `now` at which a tick does something (a
    /// pressure reaching its threshold, falling asleep, waking, an inbox due, a `$retry`, a
    /// scoped event's start or expiry), and why; `None` while nothing will happen until the
    /// host changes something. Refused if `now` is before the world's clock.
    pub fn next_tick_at(&mut self, now: Millis) -> Result<Option<NextTick>> {
        check_now(self, now, "next_tick_at")?;
        // Worked out from the world's clock once per change: a moment already past is due now.
        Ok(self.next_due().map(|n| NextTick {
            at: n.at.max(now),
            ..n
        }))
    }

    /// Starts a tick at `now` (see [`crate::tick`]): its arithmetic is committed at once; its
    /// initiations are asked for through the returned machine.
    pub fn begin_tick(&mut self, now: Millis, options: TickOptions) -> Result<TickMachine> {
        TickMachine::begin(self, now, options)
    }

    /// Delivers a stimulus to `entity`'s inbox at `now` (the clock moves to `now`): `kind` is
    /// a built-in kind (`line`, `sound`, `sight`, `touch`, `message`, `lore`, `game`) or one the
    /// world's drive settings add; `payload` says what it is, in prose. Returns the stimulus's
    /// id. What the inbox did with it (queued, merged, dropped, filtered, woke) is in
    /// [`Drives::notes`] and [`Drives::inbox`].
    pub fn notify(
        &mut self,
        entity: EntityId,
        kind: &str,
        priority: Priority,
        payload: &str,
        now: Millis,
    ) -> Result<u64> {
        check_now(self, now, "notify")?;
        let id = self.world().next_id();
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.push(Event::StimulusNotified {
            entity,
            stimulus: Stimulus {
                id,
                kind: kind.to_owned(),
                priority,
                payload: payload.to_owned(),
                at: now,
                count: 1,
            },
        });
        self.append(events)?;
        Ok(id)
    }

    /// Sets the world's drive settings (`entity` `None`) or one entity's, laid over the
    /// world's; each call replaces the settings of its scope. Recorded as an event.
    pub fn configure_drives(
        &mut self,
        entity: Option<EntityId>,
        config: DriveConfig,
    ) -> Result<Seq> {
        self.append(vec![Event::DrivesConfigured {
            entity,
            config: Box::new(config),
        }])
    }

    /// Sets `entity`'s personality (every trait in [0, 1]). Recorded as an event.
    pub fn set_personality(&mut self, entity: EntityId, personality: Personality) -> Result<Seq> {
        self.append(vec![Event::PersonalitySet {
            entity,
            personality,
        }])
    }

    /// Reports `about`'s availability at `now` (the player idle: 0.3, away: 0): every
    /// character believes it, with a confidence that decays. Recorded as an event.
    pub fn report_availability(
        &mut self,
        about: EntityId,
        availability: f64,
        now: Millis,
    ) -> Result<Seq> {
        check_now(self, now, "report_availability")?;
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.push(Event::AvailabilityReported {
            about,
            availability,
            at: now,
        });
        self.append(events)
    }
}

fn check_now(engine: &Engine, now: Millis, what: &str) -> Result<()> {
    if now < engine.world().now() {
        return Err(Error::invalid(
            "time",
            format!(
                "{what}: now ({now}) is before the world's clock ({}); time never goes back",
                engine.world().now()
            ),
        ));
    }
    Ok(())
}
