//! Scoped events and threads through the engine: each call checks its input, builds the
//! events on a scratch copy of the world ([`crate::story`]) and appends them in one commit.
//! Every call takes the host clock `now`; the world's clock advances to it first (in the same
//! commit) and never goes back.

use super::{Batch, DueOutcome, EventPlan};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::model::{
    EntityId, EventStatus, Millis, Promotion, ScopedEventId, Seq, Thread, ThreadId, ThreadStatus,
};

impl Engine {
    /// Plans a scoped event (status planned); returns its id. Refused, with nothing changed:
    /// an empty name, no participants or one that does not exist, a condition that does not
    /// compile (a [`crate::ErrorKind::FactSyntax`] error quoting it), an effect naming what
    /// does not exist, significance outside 0–1, an expiry before the start.
    pub fn plan_event(&mut self, plan: EventPlan, now: Millis) -> Result<ScopedEventId> {
        let mut batch = self.batch_at(now, "event plan")?;
        let id = ScopedEventId(batch.world.next_id());
        batch.push(crate::Event::ScopedEventPlanned {
            event: plan.into_event(id),
        })?;
        self.append(batch.events)?;
        Ok(id)
    }

    /// Starts a planned event: its preconditions must hold now (evaluated once, recorded),
    /// then its `on_start` effects run, all in one commit. Its props enter its participants'
    /// prompts. Starting an event that is not planned is a [`crate::ErrorKind::Conflict`].
    pub fn start_event(&mut self, id: ScopedEventId, now: Millis) -> Result<Seq> {
        let mut batch = self.batch_at(now, "event start")?;
        super::start(&mut batch, id, now, false)?;
        self.append(batch.events)
    }

    /// Completes an active event with `promotion`, what survives it: items into inventories,
    /// facts onto edges, new edge summaries, a gist memory per witness (participants only).
    /// Its `on_complete` effects run first. Its props leave every prompt for good.
    pub fn complete_event(
        &mut self,
        id: ScopedEventId,
        promotion: Promotion,
        now: Millis,
    ) -> Result<Seq> {
        self.close_event(id, EventStatus::Completed, promotion, now)
    }

    /// Cancels a planned or active event: nothing is promoted, no hook runs.
    pub fn cancel_event(&mut self, id: ScopedEventId, now: Millis) -> Result<Seq> {
        self.close_event(id, EventStatus::Cancelled, Promotion::default(), now)
    }

    /// Expires a planned or active event now (as `expire_at` would): nothing is promoted.
    pub fn expire_event(&mut self, id: ScopedEventId, now: Millis) -> Result<Seq> {
        self.close_event(id, EventStatus::Expired, Promotion::default(), now)
    }

    fn close_event(
        &mut self,
        id: ScopedEventId,
        status: EventStatus,
        promotion: Promotion,
        now: Millis,
    ) -> Result<Seq> {
        let mut batch = self.batch_at(now, "event close")?;
        super::close(&mut batch, id, status, now, promotion)?;
        self.append(batch.events)
    }

    /// Runs every scoped-event transition due by `now` (starts whose time came and whose
    /// conditions hold, expiries), in time order, in one commit. Turns do this by themselves
    /// when they begin; a host calls it to move events on between turns.
    pub fn run_due(&mut self, now: Millis) -> Result<DueOutcome> {
        let from = self.world().now();
        let mut batch = self.batch_at(now, "due events")?;
        let out = super::run_due(&mut batch, from, now);
        if !batch.events.is_empty() {
            self.append(batch.events)?;
        }
        Ok(out)
    }

    /// Opens a thread: an unresolved tension, in the prompts of each of `participants` (at
    /// least one, each existing) until it is resolved or dropped. Returns its id.
    pub fn open_thread(
        &mut self,
        text: &str,
        participants: Vec<EntityId>,
        now: Millis,
    ) -> Result<ThreadId> {
        if participants.is_empty() {
            return Err(Error::invalid(
                "thread",
                "a thread needs at least one participant: no prompt would show it",
            ));
        }
        let mut participants = participants;
        let mut seen = std::collections::BTreeSet::new();
        participants.retain(|p| seen.insert(*p));
        let mut batch = self.batch_at(now, "thread")?;
        let id = ThreadId(batch.world.next_id());
        batch.push(crate::Event::ThreadOpened {
            thread: Thread {
                id,
                text: text.trim().to_owned(),
                participants,
                opened: now,
                status: ThreadStatus::Open,
                event: None,
            },
        })?;
        self.append(batch.events)?;
        Ok(id)
    }

    /// Resolves an open thread: it leaves every prompt.
    pub fn resolve_thread(&mut self, id: ThreadId, now: Millis) -> Result<Seq> {
        self.close_thread(id, ThreadStatus::Resolved, now)
    }

    /// Drops an open thread unresolved: it leaves every prompt.
    pub fn drop_thread(&mut self, id: ThreadId, now: Millis) -> Result<Seq> {
        self.close_thread(id, ThreadStatus::Dropped, now)
    }

    fn close_thread(&mut self, id: ThreadId, status: ThreadStatus, now: Millis) -> Result<Seq> {
        let mut batch = self.batch_at(now, "thread")?;
        batch.push(crate::Event::ThreadClosed { id, status })?;
        self.append(batch.events)
    }

    /// A scratch batch on the current world with the clock advanced to `now`.
    fn batch_at(&mut self, now: Millis, what: &'static str) -> Result<Batch> {
        let mut batch = Batch::new(self.world());
        batch.advance_to(now, what)?;
        Ok(batch)
    }
}
