//! Rules on `World` (docs/rules.md): giving a character a rule
//! (`add_rule()`, rp-core's `Engine::add_rule_value` and `Engine::add_rule`),
//! taking it away (`remove_rule()`, `Engine::remove_rule`) and reading its
//! rules with their weights at any host time (`rules()`, `Engine::rules`).
//!
//! Every rule about rules (what one may say, when it fires, how its weight
//! fades and learns) is rp-core's: the dict a host gives is handed to
//! rp-core as the JSON C gives, and the answers come back as the dicts their
//! JSON makes.

use pyo3::prelude::*;
use pyo3::types::PyString;
use rp_core::RuleId;

use crate::model::{Named, entity_id};
use crate::world::World;

/// A rule as the host gives it: a dict, or its JSON text.
enum RuleArg {
    Value(serde_json::Value),
    Text(String),
}

impl RuleArg {
    fn extract(rule: &Bound<'_, PyAny>) -> PyResult<RuleArg> {
        if rule.is_instance_of::<PyString>() {
            return Ok(RuleArg::Text(rule.extract()?));
        }
        Ok(RuleArg::Value(crate::json::py_to_json(rule)?))
    }
}

#[pymethods]
impl World {
    /// Gives ``entity`` (an id, key, name or alias of a character the engine
    /// plays) a rule at ``now`` (host clock, ms; the clock moves to it) and
    /// returns its id. ``rule`` is a dict (or its JSON text):
    /// ``"description"`` (at most 300 characters), ``"on"`` (when:
    /// ``{"day": d, "hour": h}``, ``d`` days after today at hour ``h``;
    /// ``{"in_hours": h}``; ``{"at": ms}``; or ``{"stimulus": kind}``, each
    /// stimulus of that kind it processes), ``"intent"`` (what it does:
    /// ``{"initiate": entity, "about": text}``, it means to speak to
    /// ``entity``; ``{"note": text}``, a thought for its next prompt; or
    /// ``{"drive": "task" | "curiosity", "amount": -1..1}``), and optionally
    /// ``"condition"`` (an ``$if`` expression tested when triggered) and
    /// ``"weight"`` (0–1, default 0.8; it halves every
    /// ``"rule_half_life_days"`` unused). Recorded as an event.
    ///
    /// Raises ``InvalidInput`` (not a rule: bad JSON, an unknown key, a value
    /// out of range, an unknown stimulus kind, a time that has passed, a
    /// host-controlled or only mentioned entity, 64 rules held already,
    /// ``now`` before the world's clock), ``NotFound`` (``entity`` or an
    /// entity the rule names), ``FactSyntaxError`` (a condition that does
    /// not compile); the world is then unchanged.
    #[pyo3(signature = (entity, rule, *, now))]
    fn add_rule(
        &self,
        py: Python<'_>,
        entity: Named,
        rule: &Bound<'_, PyAny>,
        now: i64,
    ) -> PyResult<u64> {
        let rule = RuleArg::extract(rule)?;
        self.with_engine(py, |engine| {
            let owner = entity_id(engine.world(), &entity)?;
            let id = match rule {
                RuleArg::Value(value) => engine.add_rule_value(owner, value, now)?,
                RuleArg::Text(text) => engine.add_rule(owner, &text, now)?,
            };
            Ok(id.0)
        })
    }

    /// Takes rule ``rule`` (an id ``add_rule`` returned) away from the
    /// character that holds it at ``now`` (host clock, ms; the clock moves to
    /// it). Recorded as an event: a rewind brings it back.
    ///
    /// Raises ``NotFound`` (no such rule), ``InvalidInput`` (``now`` before
    /// the world's clock); the world is then unchanged.
    #[pyo3(signature = (rule, *, now))]
    fn remove_rule(&self, py: Python<'_>, rule: u64, now: i64) -> PyResult<()> {
        self.with_engine(py, |engine| engine.remove_rule(RuleId(rule), now))
    }

    /// The rules ``entity`` (an id, key, name or alias) holds, in id order,
    /// with their weights at ``now`` (host clock, ms; any time may be asked),
    /// as a list of dicts: ``"rule"`` (``"id"``, ``"owner"``,
    /// ``"description"``, ``"trigger"``: ``{"at": ms}`` or ``{"stimulus":
    /// kind}``, ``"condition"``, ``"intent"``: ``{"initiate": {"to": id,
    /// "about": text}}``, ``{"note": {"text": text}}`` or ``{"drive":
    /// {"drive": name, "amount": x}}``, ``"weight"`` as of ``"since"``,
    /// ``"uses"``, ``"last_used"``, ``"checked"``, ``"created_at"``,
    /// ``"source"``: ``"world"``, ``"host"`` or ``"model"``),
    /// ``"weight_now"`` and ``"forgotten_at"`` (when it falls below
    /// ``"rule_forget_below"`` unused, or None). Changes nothing.
    ///
    /// Raises ``NotFound`` (entity).
    #[pyo3(signature = (entity, *, now))]
    fn rules<'py>(&self, py: Python<'py>, entity: Named, now: i64) -> PyResult<Bound<'py, PyAny>> {
        let rules = self.with_engine(py, |engine| {
            let entity = entity_id(engine.world(), &entity)?;
            engine.rules(entity, now)
        })?;
        crate::json::to_py(py, serde_json::to_value(&rules))
    }
}
