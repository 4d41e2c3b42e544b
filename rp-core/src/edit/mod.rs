//! The player's hand on the story (docs/edits.md): a past line edited or deleted with the rest
//! of the story kept, and the alternatives of a reply (swipes).
//!
//! An edit is exact where a chat app is approximate: the engine knows every event a line
//! caused. [`Engine::preview_edit`] says, event by event, what an edit would carry over, change,
//! drop, and which later events would no longer apply on the new history; [`Engine::edit_line`]
//! and [`Engine::delete_line`] make it: the branch is rewound to just before the line (the old
//! history stays, as a branch named after the current one, `main~2`: DESIGN invariant 5) and
//! the planned events are appended in one commit. What becomes of the later events that no
//! longer apply is [`OnInvalid`]'s: refuse the edit, drop them, or stop the new history before
//! the turn of the first of them and hand that turn's input back to be run again.
//!
//! ```
//! # use rp_core::*;
//! # use rp_core::turn::{ScriptedGenerator, TurnInput};
//! # use rp_core::edit::EditOptions;
//! # let mut engine = Engine::in_memory("Inn", 0)?;
//! # engine.apply_world_file("inn.toml", "[world]\nname = \"Inn\"\n[[containers]]\nid = \"booth\"\nname = \"the booth\"\n[[entities]]\nid = \"wren\"\nname = \"Wren\"\nplayer = true\ncontainer = \"booth\"\n[[entities]]\nid = \"tobias\"\nname = \"Tobias\"\ncontainer = \"booth\"\n")?;
//! # let wren = engine.world().resolve_entity("wren")?;
//! let said = engine.run_turn_blocking(
//!     TurnInput::say(wren, "I carry a sealed letter.", 1_000),
//!     Default::default(),
//!     &ScriptedGenerator::new("A letter? For whom?"),
//!     &mut machine::NoSink,
//! )?;
//! let line = said.input.expect("the player's line");
//! let preview = engine.preview_edit(line, Some("I carry a wet letter."), &EditOptions::default())?;
//! assert!(preview.invalid.is_empty());
//! let done = engine.edit_line(line, "I carry a wet letter.", &EditOptions::default())?;
//! assert_eq!(done.old_branch.as_deref(), Some("main~2"));
//! # Ok::<(), rp_core::Error>(())
//! ```

mod plan;
mod swipe;

pub use swipe::SwipeRequest;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::Event;
use crate::model::{AsOf, HistoryPoint, Seq, UtteranceId};
use crate::turn::TurnInput;
use plan::{Change, Plan, block_start, line_of};
use serde::{Deserialize, Serialize};

/// What becomes of later events that no longer apply once a line is edited or deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnInvalid {
    /// The edit is refused (a `conflict` error listing them) and nothing changes.
    #[default]
    Cancel,
    /// They are dropped; the rest is carried over.
    Drop,
    /// The new history stops before the turn of the first of them; that turn's input comes
    /// back ([`EditOutcome::regenerate`]) for the host to run as a turn again. Invalid events
    /// in the line's own turn of a character's line are dropped.
    Regenerate,
}

/// How an edit is made.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EditOptions {
    /// The later lines of the line's turn (the replies to it) go too.
    pub with_replies: bool,
    /// What becomes of later events that no longer apply.
    pub on_invalid: OnInvalid,
}

impl EditOptions {
    /// The options from their JSON (`{"with_replies": true, "on_invalid": "drop"}`; every field
    /// may be left out), strictly: an unknown field or value is an `invalid` error naming it.
    pub fn from_json(json: &str) -> Result<EditOptions> {
        if json.trim().is_empty() {
            return Ok(EditOptions::default());
        }
        serde_json::from_str(json).map_err(|e| Error::invalid("edit options", e.to_string()))
    }
}

/// One event an edit carries over changed, drops, or cannot apply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditNote {
    /// Its seq on the current branch.
    pub seq: Seq,
    /// Its kind (`"memory_added"`).
    pub kind: String,
    /// What happens to it, or why it no longer applies.
    pub why: String,
}

/// What an edit does (docs/edits.md, "The preview").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EditPreview {
    /// The line.
    pub line: UtteranceId,
    /// The seq the branch is rewound to (everything after it is planned again).
    pub base: Seq,
    /// Events carried over as they were.
    pub kept: usize,
    /// Events carried over changed (the line, its memories, recalls).
    pub edited: Vec<EditNote>,
    /// Events dropped, with why.
    pub dropped: Vec<EditNote>,
    /// Later events that no longer apply, with the error each gives.
    pub invalid: Vec<EditNote>,
    /// With [`OnInvalid::Regenerate`]: the input of the turn to run again.
    pub regenerate: Option<TurnInput>,
}

/// An edit made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EditOutcome {
    /// The branch that keeps the history as it was (`None` if nothing was rewound).
    pub old_branch: Option<String>,
    /// The new head.
    pub head: Seq,
    /// What the edit did.
    pub preview: EditPreview,
    /// With [`OnInvalid::Regenerate`]: the input of the turn to run again as a turn.
    pub regenerate: Option<TurnInput>,
}

/// An edit planned and not yet made ([`Engine::begin_edit`]): what it would do, and what
/// [`Engine::finish_edit`] makes. Valid while the engine does not change: a host shows the
/// preview, then makes the edit without planning it again.
#[derive(Debug)]
pub struct EditPlan {
    plan: Plan,
    options: EditOptions,
    epoch: u64,
}

impl EditPlan {
    /// What the edit would do.
    pub fn preview(&self) -> &EditPreview {
        &self.plan.preview
    }
}

/// A line found on the current branch: the seq its block follows, the events from its block
/// on, and the line's index among them.
struct Found {
    base: Seq,
    tail: Stretch,
    at: usize,
}

/// Events of the current branch, by seq, oldest first.
type Stretch = Vec<(Seq, Event)>;

/// Reads the current branch back from the head, in chunks growing from `first_chunk` events,
/// until an event `wanted` accepts turns up: the events from the start of the chunk it is in to
/// the head, and the index of the latest such event among them; `None` when none is.
pub(crate) fn read_back(
    engine: &Engine,
    first_chunk: Seq,
    wanted: impl Fn(&Event) -> bool,
) -> Result<Option<(Stretch, usize)>> {
    let mut chunk_len = first_chunk.max(1);
    let mut events: Stretch = Vec::new();
    let mut last = engine.head();
    while last > 0 {
        let first = last.saturating_sub(chunk_len - 1).max(1);
        chunk_len = (chunk_len * 2).min(4096);
        let mut chunk = engine.events(first, last)?;
        let found = chunk.iter().rposition(|(_, e)| wanted(e));
        chunk.append(&mut events);
        events = chunk;
        if let Some(at) = found {
            return Ok(Some((events, at)));
        }
        last = first - 1;
    }
    Ok(None)
}

/// Finds line `line` on the current branch, with the events of its block on.
fn find_line(engine: &Engine, line: UtteranceId) -> Result<Found> {
    // Small reads first (a swipe's line is a few events back), larger as it goes back.
    let Some((mut events, mut at)) =
        read_back(engine, 64, |e| line_of(e).is_some_and(|u| u.id == line))?
    else {
        return Err(Error::not_found("line", line.0));
    };
    // The block may begin in the events before those read: read a few more when it might.
    if block_start(&events, at) == 0 && events[0].0 > 1 {
        let first = events[0].0;
        let mut before = engine.events(first.saturating_sub(64).max(1), first - 1)?;
        at += before.len();
        before.append(&mut events);
        events = before;
    }
    let start = block_start(&events, at);
    Ok(Found {
        base: events[start].0 - 1,
        tail: events.split_off(start),
        at: at - start,
    })
}

impl Engine {
    fn plan_change(
        &mut self,
        line: UtteranceId,
        change: &Change,
        options: &EditOptions,
    ) -> Result<Plan> {
        if let Change::Text(t) = change
            && t.trim().is_empty()
        {
            return Err(Error::invalid(
                "line",
                "an edited line needs a text; delete the line instead",
            ));
        }
        let found = find_line(self, line)?;
        let world = self.world_at(&AsOf {
            point: HistoryPoint::Seq(found.base),
            branch: None,
        })?;
        plan::plan(world, found.base, &found.tail, found.at, change, options)
    }

    /// What editing line `line` to `text` (`None`: deleting it) with `options` would do, event
    /// by event: what is kept, what changes, what is dropped, which later events no longer
    /// apply and why. Changes nothing. An unknown line is a `not_found` error; an empty text an
    /// `invalid` one.
    pub fn preview_edit(
        &mut self,
        line: UtteranceId,
        text: Option<&str>,
        options: &EditOptions,
    ) -> Result<EditPreview> {
        let change = match text {
            Some(t) => Change::Text(t.trim().to_owned()),
            None => Change::Delete,
        };
        Ok(self.plan_change(line, &change, options)?.preview)
    }

    /// Plans editing line `line` to `text` (`None`: deleting it) with `options`: its preview
    /// ([`EditPlan::preview`]), and the edit [`Engine::finish_edit`] makes, without planning
    /// it again. Changes nothing. Errors as [`Engine::preview_edit`].
    pub fn begin_edit(
        &mut self,
        line: UtteranceId,
        text: Option<&str>,
        options: &EditOptions,
    ) -> Result<EditPlan> {
        let change = match text {
            Some(t) => Change::Text(t.trim().to_owned()),
            None => Change::Delete,
        };
        Ok(EditPlan {
            plan: self.plan_change(line, &change, options)?,
            options: options.clone(),
            epoch: self.epoch(),
        })
    }

    /// Makes the edit `plan` planned ([`Engine::begin_edit`]); as [`Engine::edit_line`]. A
    /// `conflict` error, changing nothing, when the engine changed since it was planned.
    pub fn finish_edit(&mut self, plan: EditPlan) -> Result<EditOutcome> {
        if plan.epoch != self.epoch() {
            return Err(Error::conflict(
                "the story changed since the edit was planned; plan it again",
            ));
        }
        self.make_edit(plan.plan, &plan.options)
    }

    /// Edits line `line` (the player's or a character's) to `text`, keeping the rest of the
    /// story (docs/edits.md): the branch is rewound to before the line, its old history kept
    /// as a branch, and the planned events appended in one commit. With
    /// [`OnInvalid::Cancel`] (the default) an edit that would leave later events invalid is
    /// refused as a `conflict` naming them, and nothing changes.
    pub fn edit_line(
        &mut self,
        line: UtteranceId,
        text: &str,
        options: &EditOptions,
    ) -> Result<EditOutcome> {
        let plan = self.plan_change(line, &Change::Text(text.trim().to_owned()), options)?;
        self.make_edit(plan, options)
    }

    /// Deletes line `line`, keeping the rest of the story: see [`Engine::edit_line`]. Its
    /// memories and the record of its generation go with it; with `with_replies`, the later
    /// lines of its turn too.
    pub fn delete_line(&mut self, line: UtteranceId, options: &EditOptions) -> Result<EditOutcome> {
        let plan = self.plan_change(line, &Change::Delete, options)?;
        self.make_edit(plan, options)
    }

    /// Commits a plan: checked whole before anything is written.
    pub(crate) fn make_edit(&mut self, plan: Plan, options: &EditOptions) -> Result<EditOutcome> {
        if options.on_invalid == OnInvalid::Cancel && !plan.preview.invalid.is_empty() {
            let list: Vec<String> = plan
                .preview
                .invalid
                .iter()
                .take(5)
                .map(|n| format!("seq {} ({}): {}", n.seq, n.kind, n.why))
                .collect();
            return Err(Error::conflict(format!(
                "{} later event(s) would no longer apply: {}{}; edit with on_invalid \"drop\" or \"regenerate\", or not at all",
                plan.preview.invalid.len(),
                list.join("; "),
                if plan.preview.invalid.len() > 5 {
                    "; …"
                } else {
                    ""
                }
            )));
        }
        // The planned events were applied to the world they follow: not replayed or checked
        // again, and written with the branch's move in one commit.
        let (old_branch, head) =
            self.replace_tail(plan.base, &plan.base_world, &plan.events, plan.after)?;
        Ok(EditOutcome {
            old_branch,
            head,
            regenerate: plan.preview.regenerate.clone(),
            preview: plan.preview,
        })
    }
}
