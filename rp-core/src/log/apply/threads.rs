//! Applying the records of story threads: opened, closed.

use super::check_text;
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{Thread, ThreadId, ThreadStatus};

impl World {
    /// `thread_opened`: a new open thread of known participants (and scoped event).
    pub(super) fn open_thread(&mut self, thread: &Thread) -> Result<()> {
        self.check_fresh(thread.id.0)?;
        check_text("thread", &thread.text)?;
        if thread.text.trim().is_empty() {
            return Err(Error::invalid("event", "a thread's text is empty"));
        }
        if thread.status != ThreadStatus::Open {
            return Err(Error::invalid("event", "a thread opens as open"));
        }
        for p in &thread.participants {
            self.get_entity(*p)?;
        }
        if let Some(ev) = thread.event
            && self.scoped_event(ev).is_none()
        {
            return Err(Error::not_found("scoped event", ev));
        }
        self.take_id(thread.id.0);
        self.threads.insert(thread.clone());
        Ok(())
    }

    /// `thread_closed`: an open thread resolved or dropped.
    pub(super) fn close_thread(&mut self, id: ThreadId, status: ThreadStatus) -> Result<()> {
        let thread = self
            .threads
            .get(&id)
            .ok_or_else(|| Error::not_found("thread", id))?;
        if thread.status != ThreadStatus::Open {
            return Err(Error::conflict(format!("thread {id} is already closed")));
        }
        if status == ThreadStatus::Open {
            return Err(Error::invalid(
                "event",
                "a thread closes as resolved or dropped",
            ));
        }
        if let Some(t) = self.threads.get_mut(&id) {
            t.status = status;
        }
        Ok(())
    }
}
