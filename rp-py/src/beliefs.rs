//! Beliefs about people on `World` (docs/beliefs.md): what a character
//! believes of others read at any host time (`beliefs()`, rp-core's
//! `Engine::beliefs`), a belief the host records (`observe_belief()`,
//! `Engine::observe_belief_value`) and a person who is only mentioned
//! (`mention_person()`, `Engine::mention_person`).
//!
//! Every rule (how confidence decays, what a belief may hold, how a name
//! resolves) is rp-core's: the dict a host gives is handed to rp-core as the
//! JSON C gives, and the answers come back as the dicts their JSON makes.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::FactSheet;

use crate::model::{Named, entity_id};
use crate::world::World;

#[pymethods]
impl World {
    /// What ``observer`` (an id, key, name or alias) believes about each
    /// person at ``now`` (host clock, ms; any time may be asked), as a list
    /// of dicts in id order of the people: ``"about"``, ``"name"``,
    /// ``"mentioned"`` (a person only talked about), ``"mood"``,
    /// ``"energy"``, ``"availability"`` (each None when not believed),
    /// ``"traits"`` and ``"feelings"`` (lists). Each aspect is a dict:
    /// ``"value"`` (a feeling's is ``"toward"``, ``"toward_name"``,
    /// ``"sentiment"`` −1..1 and ``"text"``), ``"confidence"`` (at ``now``:
    /// the confidence observed, halved every half-life since),
    /// ``"observed_confidence"``, ``"at"`` and ``"source"`` (``"observed"``,
    /// ``"inferred"``, ``"host"`` or ``{"told_by": id}``). Changes nothing.
    ///
    /// Raises ``NotFound`` (observer).
    #[pyo3(signature = (observer, *, now))]
    fn beliefs<'py>(
        &self,
        py: Python<'py>,
        observer: Named,
        now: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let beliefs = self.with_engine(py, |engine| {
            let observer = entity_id(engine.world(), &observer)?;
            engine.beliefs(observer, now)
        })?;
        crate::json::to_py(py, serde_json::to_value(&beliefs))
    }

    /// Records what a character believes about someone at ``now`` (host
    /// clock, ms; the clock moves to it). ``belief`` is a dict: ``"observer"``
    /// and ``"about"`` (ids, keys, names or aliases), any of ``"mood"``,
    /// ``"energy"`` (0–1), ``"availability"`` (0–1), ``"traits"`` (a list of
    /// texts) and ``"feelings"`` (a list of ``{"toward": entity,
    /// "sentiment": -1..1, "text": str}``: how ``about`` feels about a third
    /// person), ``"confidence"`` (0–1, default 1) and ``"source"``
    /// (``"host"``, the default, ``"observed"``, ``"inferred"`` or
    /// ``{"told_by": entity}``). The aspects given replace what it believed.
    /// Recorded as an event; returns the new head.
    ///
    /// Raises ``InvalidInput`` (a value out of range, a text over 200
    /// characters or with a line break, no aspect, an unknown key, a
    /// believer only mentioned, ``now`` before the world's clock),
    /// ``NotFound`` (an entity named); the world is then unchanged.
    #[pyo3(signature = (belief, *, now))]
    fn observe_belief(
        &self,
        py: Python<'_>,
        belief: &Bound<'_, PyDict>,
        now: i64,
    ) -> PyResult<u64> {
        let value = crate::json::py_to_json(belief.as_any())?;
        self.with_engine(py, |engine| engine.observe_belief_value(value, now))
    }

    /// Mentions a person who is only talked about (a mother, a boss) at
    /// ``now``: a new lightweight entity named ``name`` with no place, no
    /// mind and no lines, which beliefs and edges may name. ``facts`` is
    /// what is said of it, one fact per line; ``by`` who mentioned it.
    /// Recorded as an event; returns its id.
    ///
    /// Raises ``InvalidInput`` (an empty or too long name, ``now`` before the
    /// world's clock), ``Conflict`` (the name is taken), ``NotFound``
    /// (``by``); the world is then unchanged.
    #[pyo3(signature = (name, *, now, facts=None, by=None))]
    fn mention_person(
        &self,
        py: Python<'_>,
        name: &str,
        now: i64,
        facts: Option<&str>,
        by: Option<Named>,
    ) -> PyResult<u64> {
        let facts = facts.map(FactSheet::from_text).unwrap_or_default();
        self.with_engine(py, |engine| {
            let by = by
                .as_ref()
                .map(|b| entity_id(engine.world(), b))
                .transpose()?;
            Ok(engine.mention_person(name, facts, by, now)?.0)
        })
    }
}
