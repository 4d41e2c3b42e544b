//! Applying the scoped-event records: plan, start, close. Validation first, as everywhere in
//! `apply`: a refused event changes nothing. The effects and promotions of a transition are
//! their own events, recorded after it in the same commit (see [`crate::story`]).

use super::World;
use super::apply::{check_name, check_text, check_unit, distinct};
use crate::error::{Error, Result};
use crate::facts::{Condition, RegexCache};
use crate::model::{
    Effect, EventStatus, Millis, Promotion, ScopedEvent, ScopedEventId, ThreadStatus,
};

/// The most props, preconditions or effects of one hook an event may have.
pub const MAX_EVENT_ITEMS: usize = 256;

fn status_name(s: EventStatus) -> &'static str {
    match s {
        EventStatus::Planned => "planned",
        EventStatus::Active => "active",
        EventStatus::Completed => "completed",
        EventStatus::Cancelled => "cancelled",
        EventStatus::Expired => "expired",
    }
}

/// The error for moving `event` to `next` when its lifecycle does not allow it.
pub fn transition_error(event: &ScopedEvent, next: EventStatus) -> Error {
    let verb = match next {
        EventStatus::Planned => "be planned again",
        EventStatus::Active => "start",
        EventStatus::Completed => "complete",
        EventStatus::Cancelled => "be cancelled",
        EventStatus::Expired => "expire",
    };
    let again = if event.status == next { " again" } else { "" };
    let why = if event.status.is_closed() {
        "it is closed for good".to_owned()
    } else {
        format!("only {} moves", lifecycle_moves(event.status))
    };
    Error::conflict(format!(
        "{} ({}) is {}; it cannot {verb}{again}: {why}",
        event.name,
        event.id,
        status_name(event.status),
    ))
}

fn lifecycle_moves(from: EventStatus) -> &'static str {
    match from {
        EventStatus::Planned => "start, cancel and expire",
        _ => "complete, cancel and expire",
    }
}

/// Compiles a condition of `event` (a precondition or `start_when`): a syntax error names the
/// event and quotes the condition.
pub(crate) fn compile_condition(event_name: &str, source: &str) -> Result<Condition> {
    Condition::compile(source, &mut RegexCache::default()).map_err(|e| {
        e.to_error(
            source,
            &format!("the condition `{source}` of the event {event_name:?}"),
        )
    })
}

impl World {
    /// The scoped event with that id.
    pub fn scoped_event(&self, id: ScopedEventId) -> Option<&ScopedEvent> {
        self.scoped_events.get(&id)
    }

    fn get_scoped_event(&self, id: ScopedEventId) -> Result<&ScopedEvent> {
        self.scoped_events
            .get(&id)
            .ok_or_else(|| Error::not_found("scoped event", id))
    }

    pub(super) fn plan_scoped_event(&mut self, ev: &ScopedEvent) -> Result<()> {
        self.check_fresh(ev.id.0)?;
        check_name("scoped event", &ev.name)?;
        let what = "scoped event";
        if ev.status != EventStatus::Planned || ev.started.is_some() || ev.closed.is_some() {
            return Err(Error::invalid(what, "an event is planned as planned"));
        }
        if ev.participants.is_empty() {
            return Err(Error::invalid(
                what,
                format!("{:?} has no participants: no prompt would show it", ev.name),
            ));
        }
        distinct(what, &ev.participants)?;
        for p in &ev.participants {
            self.get_entity(*p)?;
        }
        for (k, v) in &ev.props {
            if k.trim().is_empty() {
                return Err(Error::invalid(what, "a prop has an empty name"));
            }
            check_text(what, k)?;
            check_text(what, v)?;
        }
        let counts = [
            ev.props.len(),
            ev.preconditions.len(),
            ev.on_start.len(),
            ev.on_complete.len(),
        ];
        if counts.iter().any(|n| *n > MAX_EVENT_ITEMS) {
            return Err(Error::invalid(
                what,
                format!("at most {MAX_EVENT_ITEMS} props, preconditions or effects per hook"),
            ));
        }
        for c in ev.preconditions.iter().chain(ev.start_when.iter()) {
            check_text(what, c)?;
            compile_condition(&ev.name, c)?;
        }
        for effect in ev.on_start.iter().chain(&ev.on_complete) {
            self.check_effect(&ev.name, effect)?;
        }
        check_unit(what, "significance", ev.significance, 0.0)?;
        if let (Some(s), Some(e)) = (ev.start_at, ev.expire_at)
            && e < s
        {
            return Err(Error::invalid(
                what,
                format!(
                    "{:?} expires ({e}) before it is due to start ({s})",
                    ev.name
                ),
            ));
        }
        self.take_id(ev.id.0);
        self.scoped_events.insert(ev.clone());
        Ok(())
    }

    fn check_effect(&self, event: &str, effect: &Effect) -> Result<()> {
        let what = "effect";
        let nonempty = |field: &str, t: &str| -> Result<()> {
            check_text(what, t)?;
            if t.trim().is_empty() {
                return Err(Error::invalid(
                    what,
                    format!("a {field} effect of {event:?} has an empty text"),
                ));
            }
            Ok(())
        };
        match effect {
            Effect::SystemLine { text } => nonempty("system_line", text),
            Effect::Memory { text, significance } => {
                nonempty("memory", text)?;
                check_unit(what, "significance", *significance, 0.0)
            }
            Effect::GiveItem { item, to } => {
                self.get_entity(*item)?;
                self.get_entity(*to)?;
                if item == to {
                    return Err(Error::invalid(what, format!("{item} cannot carry itself")));
                }
                Ok(())
            }
            Effect::TeachFact { who, about, fact } => {
                self.get_entity(*who)?;
                self.get_entity(*about)?;
                if who == about {
                    return Err(Error::invalid(
                        what,
                        format!("{who} cannot learn a fact about itself: there is no such edge"),
                    ));
                }
                nonempty("teach_fact", fact)
            }
            Effect::ChangeEdge {
                from,
                to,
                affinity,
                trust,
                summary,
            } => {
                self.get_entity(*from)?;
                self.get_entity(*to)?;
                if from == to {
                    return Err(Error::invalid(
                        what,
                        format!("an edge cannot point from {from} to itself"),
                    ));
                }
                for (field, v) in [("affinity", affinity), ("trust", trust)] {
                    if !v.is_finite() || v.abs() > 2.0 {
                        return Err(Error::invalid(
                            what,
                            format!("a change of {field} must be within [-2, 2], not {v}"),
                        ));
                    }
                }
                summary.iter().try_for_each(|s| check_text(what, s))
            }
            Effect::OpenThread { text } => nonempty("open_thread", text),
            Effect::CloseThread { thread, status } => {
                if *status == ThreadStatus::Open {
                    return Err(Error::invalid(
                        what,
                        "a thread closes as resolved or dropped",
                    ));
                }
                if let Some(t) = thread
                    && !self.threads.contains(t)
                {
                    return Err(Error::not_found("thread", t));
                }
                Ok(())
            }
        }
    }

    pub(super) fn start_scoped_event(
        &mut self,
        id: ScopedEventId,
        at: Millis,
        draws: &[f64],
    ) -> Result<()> {
        let ev = self.get_scoped_event(id)?;
        if !ev.status.can_become(EventStatus::Active) {
            return Err(transition_error(ev, EventStatus::Active));
        }
        self.check_at(at)?;
        for p in &ev.participants {
            self.get_entity(*p)?;
        }
        if let Some(d) = draws.iter().find(|d| !(0.0..1.0).contains(*d)) {
            return Err(Error::invalid(
                "event",
                format!("a random draw of {d} is outside [0, 1)"),
            ));
        }
        let taken = self
            .draws_taken
            .checked_add(draws.len() as u64)
            .ok_or_else(|| {
                Error::invalid("event", "the random generator's counter is exhausted")
            })?;
        self.draws_taken = taken;
        if let Some(ev) = self.scoped_events.get_mut(&id) {
            ev.status = EventStatus::Active;
            ev.started = Some(at);
        }
        Ok(())
    }

    pub(super) fn close_scoped_event(
        &mut self,
        id: ScopedEventId,
        status: EventStatus,
        at: Millis,
        promotion: &Promotion,
    ) -> Result<()> {
        let ev = self.get_scoped_event(id)?;
        if !status.is_closed() {
            return Err(Error::invalid(
                "event",
                "a scoped event closes as completed, cancelled or expired",
            ));
        }
        if !ev.status.can_become(status) {
            return Err(transition_error(ev, status));
        }
        self.check_at(at)?;
        if ev.started.is_some_and(|s| at < s) {
            return Err(Error::invalid(
                "event",
                format!("{} cannot close ({at}) before it started", ev.name),
            ));
        }
        self.check_promotion(ev, status, promotion)?;
        if let Some(ev) = self.scoped_events.get_mut(&id) {
            ev.status = status;
            ev.closed = Some(at);
        }
        Ok(())
    }

    fn check_at(&self, at: Millis) -> Result<()> {
        if at > self.now {
            return Err(Error::invalid(
                "event",
                format!(
                    "a transition at {at} is after the world's clock ({})",
                    self.now
                ),
            ));
        }
        Ok(())
    }

    /// The four categories only, each naming participants and existing entities.
    fn check_promotion(&self, ev: &ScopedEvent, status: EventStatus, p: &Promotion) -> Result<()> {
        let what = "promotion";
        if status != EventStatus::Completed && !p.is_empty() {
            return Err(Error::invalid(
                what,
                format!(
                    "{} is {}, not completed: only a completed event promotes",
                    ev.name,
                    status_name(status)
                ),
            ));
        }
        let participant = |id: crate::model::EntityId| -> Result<()> {
            self.get_entity(id)?;
            if !ev.participants.contains(&id) {
                return Err(Error::invalid(
                    what,
                    format!("{id} is not a participant of {}", ev.name),
                ));
            }
            Ok(())
        };
        let text = |t: &str| -> Result<()> {
            check_text(what, t)?;
            if t.trim().is_empty() {
                return Err(Error::invalid(what, "a promoted text is empty"));
            }
            Ok(())
        };
        for (i, it) in p.items.iter().enumerate() {
            self.get_entity(it.item)?;
            participant(it.to)?;
            if p.items[..i].iter().any(|o| o.item == it.item) {
                return Err(Error::invalid(
                    what,
                    format!("{} is promoted twice", it.item),
                ));
            }
        }
        for k in &p.knowledge {
            participant(k.who)?;
            self.get_entity(k.about)?;
            if k.who == k.about {
                return Err(Error::invalid(what, "knowledge about oneself has no edge"));
            }
            text(&k.fact)?;
        }
        for s in &p.summaries {
            participant(s.from)?;
            self.get_entity(s.to)?;
            if s.from == s.to {
                return Err(Error::invalid(what, "a summary of oneself has no edge"));
            }
            text(&s.summary)?;
        }
        for (i, g) in p.gists.iter().enumerate() {
            participant(g.witness)?;
            if p.gists[..i].iter().any(|o| o.witness == g.witness) {
                return Err(Error::invalid(
                    what,
                    format!("{} has two gists; one memory per witness", g.witness),
                ));
            }
            text(&g.text)?;
            if let Some(s) = g.significance {
                check_unit(what, "significance", s, 0.0)?;
            }
        }
        Ok(())
    }
}
