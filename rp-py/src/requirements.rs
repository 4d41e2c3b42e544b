//! Requirements on `World` (docs/requirements.md): decision points and
//! validators. Adding one (`add_requirement()`, rp-core's
//! `Engine::add_requirement_value` and `Engine::add_requirement`), removing
//! it (`remove_requirement()`), reading them with whether each is pending
//! (`requirements()`) and checking a host action (`check_action()`).
//!
//! Every rule about requirements is rp-core's: the dict a host gives is
//! handed to rp-core as the JSON C gives, and the answers come back as the
//! dicts their JSON makes. A guarded transition made any other way (a batch
//! of events, a turn, a time skip) is refused by rp-core with
//! ``RequirementUnmet`` too.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::model::{Named, entity_id};
use crate::world::World;

#[pymethods]
impl World {
    /// Adds a requirement and returns it as the world keeps it (names
    /// resolved to ids). ``requirement`` is a dict (or its JSON text):
    /// ``"id"`` (a key, unique in the world), ``"name"``, ``"subject"``
    /// (optional: an entity's id, key, name or alias, whose facts ``self``
    /// reads and whose moves ``leave`` guards), ``"condition"`` (an ``$if``
    /// expression; the requirement is pending while it is false),
    /// ``"guards"`` (a list of ``{"leave": container}``,
    /// ``{"start_event": event or True}``, ``{"complete_event": event or
    /// True}``, ``{"time_skip": True}``, ``{"scene_close": True}``,
    /// ``{"action": name}``) and ``"text"`` (what the characters concerned
    /// are told). Recorded as an event; if it is pending, the same commit
    /// injects a system line announcing it.
    ///
    /// Raises ``InvalidInput`` (not a requirement: bad JSON, an unknown key,
    /// an empty text, no guards), ``Conflict`` (the id is taken),
    /// ``NotFound`` (the subject, a container or a scoped event),
    /// ``FactSyntaxError`` (a condition that does not compile); the world is
    /// then unchanged.
    fn add_requirement<'py>(
        &self,
        py: Python<'py>,
        requirement: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let made = if requirement.is_instance_of::<PyString>() {
            let text: String = requirement.extract()?;
            self.with_engine(py, |engine| engine.add_requirement(&text))?
        } else {
            let value = crate::json::py_to_json(requirement)?;
            self.with_engine(py, |engine| engine.add_requirement_value(value))?
        };
        crate::json::to_py(py, serde_json::to_value(&made))
    }

    /// Removes requirement ``id``. Recorded as an event: a rewind brings it
    /// back.
    ///
    /// Raises ``NotFound`` (no such requirement); the world is then
    /// unchanged.
    fn remove_requirement(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        self.with_engine(py, |engine| engine.remove_requirement(id))
    }

    /// Every requirement, by id, as a list of dicts: ``"requirement"`` (as
    /// ``add_requirement`` returns it), ``"pending"`` (its condition is false
    /// now: its guarded transitions are refused) and ``"announced"`` (a
    /// system line announced it). Changes nothing.
    fn requirements<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let views = self.with_engine(py, |engine| Ok(engine.requirements()))?;
        crate::json::to_py(py, serde_json::to_value(&views))
    }

    /// Checks host action ``name`` (of ``subject``, an entity's id, key,
    /// name or alias, if given): raises ``RequirementUnmet`` (naming the
    /// requirement's id, name and text) while a requirement guarding it
    /// (``{"action": name}``) is pending. Changes nothing.
    ///
    /// Raises ``NotFound`` (subject).
    #[pyo3(signature = (name, subject=None))]
    fn check_action(&self, py: Python<'_>, name: &str, subject: Option<Named>) -> PyResult<()> {
        self.with_engine(py, |engine| {
            let subject = match &subject {
                Some(s) => Some(entity_id(engine.world(), s)?),
                None => None,
            };
            engine.check_action(name, subject)
        })
    }
}
