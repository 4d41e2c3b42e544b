//! Drives on `World` (docs/drives.md): the characters' inner life between
//! turns. Reading it (`drives()`, `initiation_candidates()`,
//! `next_tick_at()`), recording what the host knows (`notify()`,
//! `configure_drives()`, `set_personality()`, `report_availability()`), and
//! the tick, as a `Job` (`begin_tick()`) or played over host time in one call
//! (`advance()`). The conversions are in [`crate::drives`].

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::World;
use crate::job::Job;
use crate::model::Named;

#[pymethods]
impl World {
    /// The drives of ``entity`` (an id, key, name or alias of a character
    /// the engine plays) at ``now`` (host clock, ms; not before the world's
    /// clock), as a dict: ``"entity"``, ``"at"``, ``"energy"`` (0–1),
    /// ``"mode"`` (``"alert"``, ``"normal"``, ``"relaxed"`` or
    /// ``"sleep"``), ``"interval_ms"`` (its processing interval now),
    /// ``"disturbance"`` and ``"wake_threshold"`` (a sleeper's),
    /// ``"social_debt"`` (``[entity, debt]`` pairs toward each entity it has
    /// an edge to, in id order), ``"task"``, ``"curiosity"``,
    /// ``"pressure"`` (its highest initiation pressure toward anyone
    /// present), ``"threshold"``, ``"personality"`` (the seven traits),
    /// ``"inbox"`` (the stimuli waiting: ``"id"``, ``"kind"``,
    /// ``"priority"``, ``"payload"``, ``"at"``, ``"count"``), ``"noticed"``
    /// (processed stimuli its next prompt mentions), ``"notes"`` (what
    /// became of stimuli merged, dropped, filtered, or that woke it:
    /// ``"stimulus"``, ``"fate"``, ``"at"``), ``"held_until"``, and what
    /// rules and feedback left (docs/rules.md): ``"intentions"`` (``"rule"``,
    /// ``"to"``, None for a note, ``"text"``, ``"weight"``, ``"at"``),
    /// ``"awaiting"`` (its initiations waiting for an answer: ``"to"``,
    /// ``"at"``, ``"shares"``, ``"rules"``, ``"reply"``), ``"learned"``
    /// (``"to"``, ``"term"``, ``"factor"``: what it learned on a term's
    /// weight toward someone) and ``"feedback"`` (the answers it learned
    /// from: ``"from"``, ``"initiated_at"``, ``"latency_ms"``, ``"words"``,
    /// ``"sentiment"``, ``"reward"``). Drives
    /// move with time alone: reading them at a later ``now`` shows energy
    /// drained and debts grown. Changes nothing.
    ///
    /// Raises ``NotFound`` (entity), ``InvalidInput`` (``now`` before the
    /// world's clock, or a host-controlled entity: only the engine's
    /// characters have drives).
    #[pyo3(signature = (entity, *, now))]
    fn drives<'py>(&self, py: Python<'py>, entity: Named, now: i64) -> PyResult<Bound<'py, PyAny>> {
        let drives = self.with_engine(py, |engine| crate::drives::drives(engine, &entity, now))?;
        crate::json::to_py(py, serde_json::to_value(&drives))
    }

    /// The candidate initiations of ``entity`` at ``now``: one per entity it
    /// has an edge to that would hear it, awake, highest pressure first.
    /// Each is a dict: ``"speaker"``, ``"to"``, ``"about"`` (the drive that
    /// weighs most: ``"social_debt"``, ``"task"``, ``"curiosity"`` or
    /// ``"intent"``, a rule's intention), ``"terms"`` (``"name"``,
    /// ``"value"``, ``"weight"``, ``"learned"``: the factor feedback taught
    /// toward ``"to"``, already in the weight, and ``"contribution"``),
    /// ``"score"`` (the pressure), ``"threshold"``, ``"pushed_over_by"``
    /// (the term that took it over the threshold, or None), ``"gates"``
    /// (``"name"``, ``"open"``, ``"detail"``), ``"rules"`` (the rules whose
    /// intentions weigh in), ``"learned"`` (what feedback taught it about
    /// ``"to"``, in words, or None) and ``"explanation"``, all of it in
    /// words. Changes nothing.
    ///
    /// Raises as ``drives``.
    #[pyo3(signature = (entity, *, now))]
    fn initiation_candidates<'py>(
        &self,
        py: Python<'py>,
        entity: Named,
        now: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let candidates = self.with_engine(py, |engine| {
            crate::drives::initiation_candidates(engine, &entity, now)
        })?;
        crate::json::to_py(py, candidates)
    }

    /// When a tick next does something, seen from ``now`` (host clock, ms):
    /// a dict with ``"at"`` (the exact host time, at or after ``now``),
    /// ``"entity"`` (the character concerned, None for the story) and
    /// ``"reason"`` (``{"kind": "pressure", "to": id}``, or a ``"kind"`` of
    /// ``"sleep"``, ``"wake"``, ``"inbox"``, ``"retry"``, ``"story"``,
    /// ``"reflect"``, ``"decay"``, ``"rule"`` or ``"feedback"``); None
    /// while nothing will happen until the host changes something. Sleep
    /// until then, and ``begin_tick(now=...)`` at it. Changes nothing.
    ///
    /// Raises ``InvalidInput`` (``now`` before the world's clock).
    #[pyo3(signature = (*, now))]
    fn next_tick_at<'py>(&self, py: Python<'py>, now: i64) -> PyResult<Bound<'py, PyAny>> {
        let next = self.with_engine(py, |engine| engine.next_tick_at(now))?;
        crate::json::to_py(py, serde_json::to_value(next))
    }

    /// Starts a tick at ``now`` (host clock, ms) and returns the ``Job``.
    /// The tick's arithmetic is committed at once: the clock moves to
    /// ``now``, characters fall asleep or wake, inboxes are processed,
    /// scoped events start or expire, memories fade to a residue or are
    /// forgotten, rules due fire or are forgotten. Then it asks for the tone
    /// of each answer to an initiation (purpose ``{"kind": "classify",
    /// "speaker": id}``, a JSON answer ``{"sentiment": "positive"}``,
    /// ``"neutral"`` or ``"negative"``; docs/rules.md), what stimuli hoisted
    /// past arithmetic and rules mean (purpose ``classify``) and a
    /// character's thought on those that matter (purpose ``{"kind":
    /// "think", "speaker": id}``; docs/drives.md "Layers"), the summaries of
    /// whole memories that faded (purpose ``{"kind": "summary"}`` with a ``json_schema``) and the
    /// reflections due (purpose ``{"kind": "reflect", "speaker": id}``), JSON
    /// answers described in docs/memory.md. Then, for each character whose
    /// pressure crossed its threshold with every gate open (the highest
    /// ones, at most ``"max_initiations"``), the job asks for one line of
    /// purpose ``{"kind": "initiate", "speaker": id}`` and runs the rest as
    /// a turn (see ``Job.step``); ``finish()`` returns the outcome. With
    /// nothing due it asks for nothing and commits nothing.
    ///
    /// ``options`` is a dict of tick options, every key optional, unknown
    /// keys refused: ``"turn"`` (turn options for the initiations' turns, as
    /// ``begin_turn`` takes them) and ``"max_initiations"`` (default 2).
    ///
    /// Raises ``InvalidInput`` (``now`` before the world's clock, bad
    /// options).
    #[pyo3(signature = (*, now, options = None))]
    fn begin_tick(
        slf: &Bound<'_, Self>,
        now: i64,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Job> {
        crate::job::begin_tick(slf, now, options)
    }

    /// Plays host time from the world's clock to ``until`` (host clock, ms)
    /// in one call: ticks at each ``next_tick_at`` up to ``until`` (as
    /// ``begin_tick`` with ``options``), every request answered by
    /// ``generate``, then moves the clock to ``until``. Returns each tick's
    /// outcome, in order (the dicts of ``Job.finish``).
    ///
    /// ``generate(request)`` is a plain function, as for ``close_scene``: it
    /// receives each request as a dict and returns the text (``str``), a
    /// result dict or an iterable of ``str`` chunks; an async callable is
    /// refused with ``TypeError`` (drive ``begin_tick``'s ``Job`` to await
    /// one). The initiations' turns ask for nothing else: a turn that would
    /// need vectors fails, and a host action is recorded as refused.
    ///
    /// The World is held for the whole call: calls on it from other threads
    /// wait for its end, and a call on it from ``generate`` raises
    /// ``Conflict`` (answer from the request alone). Each tick commits as it
    /// goes: when ``generate`` raises an ``Exception``, the ticks before
    /// stay, the initiation it was asked for is held back (recorded), and
    /// ``GenerationError`` is raised from it (its ``__cause__``); other
    /// exceptions (``KeyboardInterrupt``) propagate as they are.
    ///
    /// Raises ``InvalidInput`` (``until`` before the world's clock, bad
    /// options).
    #[pyo3(signature = (*, until, generate, options = None))]
    fn advance<'py>(
        slf: &Bound<'py, Self>,
        until: i64,
        generate: Bound<'py, PyAny>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::drives::advance(slf, until, generate, options)
    }

    /// Delivers a stimulus to the inbox of ``entity`` (an id, key, name or
    /// alias) at ``now`` (host clock, ms; the clock moves to it) and returns
    /// its id: something it perceives outside dialogue. ``kind`` is a
    /// built-in kind (``"line"``, ``"sound"``, ``"sight"``, ``"touch"``,
    /// ``"message"``, ``"lore"``, ``"game"``) or one the drive settings add
    /// (``configure_drives({"stimulus_kinds": [...]})``); ``priority`` is
    /// ``"critical"``, ``"high"``, ``"normal"``, ``"low"`` or ``"idle"``;
    /// ``payload`` says what it is, in prose. What the inbox did with it
    /// (queued, merged, dropped, filtered, woke) is in ``drives()``'s
    /// ``"inbox"`` and ``"notes"``.
    ///
    /// Raises ``NotFound`` (entity), ``InvalidInput`` (an unknown kind or
    /// priority, a payload over 4 KiB, ``now`` before the world's clock); the
    /// world is then unchanged.
    #[pyo3(signature = (entity, kind, priority, payload, *, now))]
    fn notify(
        &self,
        py: Python<'_>,
        entity: Named,
        kind: &str,
        priority: &str,
        payload: &str,
        now: i64,
    ) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            crate::drives::notify(engine, &entity, kind, priority, payload, now)
        })
    }

    /// Sets the drive settings of the world (``entity`` None) or of one
    /// entity (an id, key, name or alias), laid over the world's; each call
    /// replaces the settings of its scope. ``config`` is a dict, every key
    /// optional, unknown keys refused: rates (``"energy_drain_per_hour"``,
    /// ``"social_debt_per_hour"``, ...), bounds (``"threshold"``,
    /// ``"min_energy"``, ...), night hours, processing intervals, inbox
    /// limits, ``"weights"`` (``"social_debt"``, ``"task"``,
    /// ``"curiosity"``, ``"availability"``, ``"intent"``),
    /// ``"stimulus_kinds"`` (kinds beyond the built-in ones), rules and
    /// learning (``"rule_half_life_days"``, ``"rule_forget_below"``,
    /// ``"learn_timing"``, ``"learn_rules"``, ``"learn_personality"``,
    /// ``"feedback_wait_minutes"``; docs/rules.md) and ``"enabled"``;
    /// docs/drives.md lists them. Recorded as an event; returns the new head.
    ///
    /// Raises ``InvalidInput`` (an unknown key, a value of the wrong type or
    /// out of its range: a negative rate, a bound outside 0–1, ...),
    /// ``NotFound`` (entity); the world is then unchanged.
    #[pyo3(signature = (config, entity = None))]
    fn configure_drives(
        &self,
        py: Python<'_>,
        config: &Bound<'_, PyDict>,
        entity: Option<Named>,
    ) -> PyResult<u64> {
        let config = crate::drives::drive_config(py, config)?;
        self.with_engine(py, |engine| {
            crate::drives::configure_drives(engine, entity.as_ref(), config)
        })
    }

    /// Sets the personality of ``entity`` (an id, key, name or alias):
    /// ``personality`` is a dict of traits in [0, 1] (``"humor"``,
    /// ``"formality"``, ``"curiosity"``, ``"patience"``, ``"empathy"``,
    /// ``"shyness"``, ``"independence"``), 0.5 for those not given. They
    /// shift its threshold, weights and rates, and its prompt's style line.
    /// Recorded as an event; returns the new head.
    ///
    /// Raises ``InvalidInput`` (an unknown trait, a trait outside [0, 1]),
    /// ``NotFound`` (entity); the world is then unchanged.
    fn set_personality(
        &self,
        py: Python<'_>,
        entity: Named,
        personality: &Bound<'_, PyDict>,
    ) -> PyResult<u64> {
        let personality = crate::drives::personality(py, personality)?;
        self.with_engine(py, |engine| {
            crate::drives::set_personality(engine, &entity, personality)
        })
    }

    /// Reports the availability of ``entity`` (an id, key, name or alias;
    /// usually the player: idle 0.3, away 0) at ``now`` (host clock, ms; the
    /// clock moves to it): every character believes it, with a confidence
    /// that decays. Recorded as an event; returns the new head.
    ///
    /// Raises ``NotFound`` (entity), ``InvalidInput`` (``availability``
    /// outside [0, 1], ``now`` before the world's clock); the world is then
    /// unchanged.
    #[pyo3(signature = (entity, availability, *, now))]
    fn report_availability(
        &self,
        py: Python<'_>,
        entity: Named,
        availability: f64,
        now: i64,
    ) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            crate::drives::report_availability(engine, &entity, availability, now)
        })
    }
}
