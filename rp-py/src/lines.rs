//! The player's hand on the story, on `World` (docs/edits.md): past lines edited and deleted
//! with the rest of the story kept (`preview_edit()`, `edit_line()`, `delete_line()`), and
//! swipes (`regenerate()`, `alternatives()`, `choose()`). What an edit does and what its
//! options mean are rp-core's (`rp_core::edit`); these methods convert arguments and answers.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::UtteranceId;
use rp_core::edit::EditOptions;
use rp_core::turn::TurnMachine;

use crate::run_turn::{Host, drive};
use crate::turn::turn_options;
use crate::world::World;

/// The async form that does not exist: these calls run on the calling thread.
const NO_ASYNC_FORM: &str = "a plain function (World.regenerate and World.choose are not async)";

/// Edit options from keyword arguments, read by rp-core (`EditOptions::from_json`).
fn edit_options(py: Python<'_>, with_replies: bool, on_invalid: &str) -> PyResult<EditOptions> {
    let json = serde_json::json!({"with_replies": with_replies, "on_invalid": on_invalid});
    EditOptions::from_json(&json.to_string()).map_err(|e| crate::errors::to_py_err(py, e))
}

#[pymethods]
impl World {
    /// What editing line ``line`` (an utterance id: a turn outcome's ``"input"`` or a reply's
    /// ``"utterance"``) to ``text`` would do (``text=None``: deleting it), changing nothing: a
    /// dict of ``"kept"`` (how many events are carried over as they were), ``"edited"``,
    /// ``"dropped"`` and ``"invalid"`` (lists of ``{"seq", "kind", "why"}``) and, with
    /// ``on_invalid="regenerate"``, the ``"regenerate"`` input.
    ///
    /// ``with_replies``: the later lines of the line's turn go too. ``on_invalid``:
    /// ``"cancel"``, ``"drop"`` or ``"regenerate"`` (docs/edits.md).
    ///
    /// Raises ``NotFound`` (no such line), ``InvalidInput`` (an empty or too long text, an
    /// unknown ``on_invalid``).
    #[pyo3(signature = (line, text = None, *, with_replies = false, on_invalid = "cancel"))]
    fn preview_edit<'py>(
        &self,
        py: Python<'py>,
        line: u64,
        text: Option<String>,
        with_replies: bool,
        on_invalid: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = edit_options(py, with_replies, on_invalid)?;
        let preview = self.with_engine(py, |engine| {
            engine.preview_edit(UtteranceId(line), text.as_deref(), &options)
        })?;
        crate::json::serialize(py, &preview)
    }

    /// Edits line ``line`` (the player's or a character's) to ``text``, keeping the rest of
    /// the story: the branch is rewound to before the line (its old history kept as a
    /// branch, named in ``"old_branch"``) and the events after it carried over. Returns
    /// ``{"old_branch", "head", "preview", "regenerate"}``; with ``on_invalid="regenerate"``,
    /// ``"regenerate"`` is the input (``{"speaker", "text", "now"}``) of the turn to run again.
    ///
    /// Raises ``Conflict`` (with ``on_invalid="cancel"``, the default: later events would no
    /// longer apply; nothing changed), ``NotFound``, ``InvalidInput``.
    #[pyo3(signature = (line, text, *, with_replies = false, on_invalid = "cancel"))]
    fn edit_line<'py>(
        &self,
        py: Python<'py>,
        line: u64,
        text: String,
        with_replies: bool,
        on_invalid: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = edit_options(py, with_replies, on_invalid)?;
        let outcome = self.with_engine(py, |engine| {
            engine.edit_line(UtteranceId(line), &text, &options)
        })?;
        crate::json::serialize(py, &outcome)
    }

    /// Deletes line ``line``, keeping the rest of the story; as ``edit_line`` (its memories
    /// and the record of its generation go with it).
    #[pyo3(signature = (line, *, with_replies = false, on_invalid = "cancel"))]
    fn delete_line<'py>(
        &self,
        py: Python<'py>,
        line: u64,
        with_replies: bool,
        on_invalid: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = edit_options(py, with_replies, on_invalid)?;
        let outcome =
            self.with_engine(py, |engine| engine.delete_line(UtteranceId(line), &options))?;
        crate::json::serialize(py, &outcome)
    }

    /// Asks ``generate`` for the last reply of the latest turn again (a swipe: the prompt the
    /// reply was given, built again) and records the answer as another alternative; the line
    /// stays as it is. ``line``, when given, must be that reply. Returns the new
    /// alternative's index (the line itself is 0 until another is chosen). ``generate`` is
    /// called as ``run_turn`` calls it.
    ///
    /// Raises ``Conflict`` (the last line is the player's, or ``line`` is not the last
    /// reply), ``InvalidInput`` (an empty answer), ``GenerationError`` (``generate`` raised).
    #[pyo3(signature = (generate, *, line = None, options = None))]
    fn regenerate<'py>(
        &self,
        py: Python<'py>,
        generate: Bound<'py, PyAny>,
        line: Option<u64>,
        options: Option<Bound<'py, PyDict>>,
    ) -> PyResult<usize> {
        let options = turn_options(py, options.as_ref())?;
        let swipe = self.with_engine(py, |engine| {
            engine.swipe_request(line.map(UtteranceId), &options)
        })?;
        let host = Host::generator(generate, NO_ASYNC_FORM);
        let result = host.generation(py, &swipe.request)?;
        self.with_engine(py, |engine| engine.add_alternative(swipe.line, &result))
    }

    /// The alternatives of line ``line``: ``{"texts": [...], "chosen": n}``, or None for a
    /// line that has only itself.
    fn alternatives<'py>(&self, py: Python<'py>, line: u64) -> PyResult<Bound<'py, PyAny>> {
        let alternatives = self.with_engine(py, |engine| {
            Ok(engine
                .world()
                .alternatives(UtteranceId(line))
                .map(|(texts, chosen)| serde_json::json!({"texts": texts, "chosen": chosen})))
        })?;
        crate::json::serialize(py, &alternatives)
    }

    /// Makes alternative ``n`` of line ``line`` (the last reply) the line: the line and its
    /// memories take its text, every alternative is kept, and the state-update pass of its
    /// turn is asked of ``generate`` again on the line that stands (when the turn had one and
    /// ``options`` enable it). Returns that pass's outcome, as ``run_turn`` returns one.
    ///
    /// Raises ``NotFound`` (no alternative ``n``), ``Conflict`` (``line`` is not the last
    /// reply), ``GenerationError`` (``generate`` raised: the choice stands, its pass is not
    /// recorded).
    #[pyo3(signature = (line, n, generate, *, options = None))]
    fn choose<'py>(
        slf: &Bound<'py, Self>,
        line: u64,
        n: usize,
        generate: Bound<'py, PyAny>,
        options: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let options = turn_options(py, options.as_ref())?;
        let host = Host::generator(generate, NO_ASYNC_FORM);
        drive(
            py,
            slf.get(),
            &host,
            move |engine| -> Result<TurnMachine, rp_core::Error> {
                engine.begin_choose(UtteranceId(line), n, options)
            },
        )
    }
}
