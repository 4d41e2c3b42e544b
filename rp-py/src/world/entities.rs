//! The world model of `World`: entities, containers, edges and groups read
//! as typed snapshots (`entities()`, `entity()`, `containers()`, `edges()`,
//! `groups()`, `state()`, `search_entities()`), and changed only through
//! validated events: `append()` and the named edits (`create_entity()`,
//! `move_entity()`, `set_edge()`, ...), the clock (`advance_time()`) and the
//! host's state-update reports (`apply_reports()`).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::log::LoggedEvent;
use rp_core::{Engine, Event};

use super::{Failure, World, to_py};
use crate::errors::to_py_err;
use crate::model::{Container, Edge, Entity, Group, Named, container_id, entity_id};

#[pymethods]
impl World {
    /// The world's name.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        self.with_engine(py, |engine| {
            Ok(engine
                .world()
                .meta()
                .map(|meta| meta.name.clone())
                .unwrap_or_default())
        })
    }

    /// The world's clock: the host time (ms) it was last advanced to.
    #[getter]
    fn now(&self, py: Python<'_>) -> PyResult<i64> {
        self.with_engine(py, |engine| Ok(engine.world().now()))
    }

    /// Every entity, in id order, as ``Entity`` snapshots.
    fn entities(&self, py: Python<'_>) -> PyResult<Vec<Entity>> {
        self.with_engine(py, |engine| {
            let world = engine.world();
            Ok(world.entities().map(|e| Entity::of(world, e)).collect())
        })
    }

    /// The entity ``entity`` names: an id, or a world-file key (exact) or
    /// name (ignoring case). Raises ``NotFound``.
    fn entity(&self, py: Python<'_>, entity: Named) -> PyResult<Entity> {
        self.with_engine(py, |engine| read_entity(engine, &entity))
    }

    /// The id of the entity ``name_or_key`` names: its world-file key
    /// (exact), or failing that its name (exactly, then ignoring case), or
    /// failing that its alias (ignoring case).
    ///
    /// Raises ``NotFound``, or ``InvalidInput`` for an alias two entities
    /// share (the message lists them).
    fn entity_id(&self, py: Python<'_>, name_or_key: String) -> PyResult<u64> {
        let named = Named::Name(name_or_key);
        self.with_engine(py, |engine| Ok(entity_id(engine.world(), &named)?.0))
    }

    /// The ``k`` entities (1–1000) whose names, aliases or fact lines best
    /// match ``query``, best first, as ``(id, name, score)``. A word of a
    /// name or alias counts three times a word of the facts; ``query`` is
    /// words, never query syntax. The host's view of the whole world, not
    /// what any character knows. Raises ``InvalidInput`` for ``k``.
    #[pyo3(signature = (query, k = 10))]
    fn search_entities(
        &self,
        py: Python<'_>,
        query: &str,
        k: usize,
    ) -> PyResult<Vec<(u64, String, f32)>> {
        self.with_engine(py, |engine| {
            let found = engine.search_entities(query, k)?;
            Ok(found
                .iter()
                .filter_map(|(id, score)| {
                    let e = engine.world().entity(*id)?;
                    Some((id.0, e.name.clone(), *score))
                })
                .collect())
        })
    }

    /// Every container, in id order, as ``Container`` snapshots (with how
    /// many stand in each slot).
    fn containers(&self, py: Python<'_>) -> PyResult<Vec<Container>> {
        self.with_engine(py, |engine| {
            let world = engine.world();
            Ok(world
                .containers()
                .map(|c| Container::of(world, c))
                .collect())
        })
    }

    /// The container ``container`` names: an id, a world-file key (exact) or
    /// a name (ignoring case). Raises ``NotFound``, or ``InvalidInput`` for a
    /// name that two containers share.
    fn container(&self, py: Python<'_>, container: Named) -> PyResult<Container> {
        self.with_engine(py, |engine| read_container(engine, &container))
    }

    /// The directed edges of the relationship graph, in ``(from_, to)``
    /// order, as ``Edge`` snapshots; only those going out of ``from_``
    /// and/or into ``to`` when given (ids, keys or names). Raises
    /// ``NotFound``.
    #[pyo3(signature = (*, from_ = None, to = None))]
    fn edges(
        &self,
        py: Python<'_>,
        from_: Option<Named>,
        to: Option<Named>,
    ) -> PyResult<Vec<Edge>> {
        self.with_engine(py, |engine| {
            let world = engine.world();
            let from = from_.map(|f| entity_id(world, &f)).transpose()?;
            let to = to.map(|t| entity_id(world, &t)).transpose()?;
            Ok(world
                .edges()
                .filter(|e| from.is_none_or(|f| e.from == f) && to.is_none_or(|t| e.to == t))
                .map(|e| Edge(e.clone()))
                .collect())
        })
    }

    /// The edge ``from_ → to``. Raises ``NotFound`` (an entity, or no such
    /// edge).
    fn edge(&self, py: Python<'_>, from_: Named, to: Named) -> PyResult<Edge> {
        self.with_engine(py, |engine| read_edge(engine, &from_, &to))
    }

    /// Every group node, in id order, as ``Group`` snapshots.
    fn groups(&self, py: Python<'_>) -> PyResult<Vec<Group>> {
        self.with_engine(py, |engine| {
            Ok(engine.world().groups().map(|g| Group(g.clone())).collect())
        })
    }

    /// The whole state of the world as a dict: the JSON of its serialised
    /// form (entities, containers, edges, groups, memories, dialogue,
    /// threads, clock, ...). Two worlds with the same history give equal
    /// dicts, so a reopened save can be compared with the live world.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let state = self.with_engine(py, |engine| Ok(serde_json::to_value(engine.world())))?;
        crate::json::to_py(py, state)
    }

    /// The events of the current branch with ``first <= seq <= last``
    /// (default: to the head), oldest first, as dicts ``{"seq": 41,
    /// "event": {"time_advanced": {"to": 120000}}}``: each event in the form
    /// ``append`` takes, its kind (``"entity_created"``, ``"user_turn"``,
    /// ...) the key of its fields. Raises ``StorageError``.
    #[pyo3(signature = (first = 1, last = None))]
    fn events<'py>(
        &self,
        py: Python<'py>,
        first: u64,
        last: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let events = self.with_engine(py, |engine| {
            let found = engine.events(first, last.unwrap_or(u64::MAX))?;
            Ok(found
                .into_iter()
                .map(|(seq, event)| LoggedEvent { seq, event })
                .collect::<Vec<_>>())
        })?;
        crate::json::serialize(py, &events)
    }

    /// Validates ``events`` in order, commits them in one transaction and
    /// applies them; returns the new head. Each event is a dict of rp's one
    /// JSON shape of an event (the same in C), its kind the key of its
    /// fields, as ``events()`` gives them under ``"event"``: such as
    /// ``{"time_advanced": {"to": 60000}}`` or ``{"edge_updated": {"edge":
    /// {"from": 1, "to": 2, "affinity": 0.5}}}`` (new ids are at least
    /// ``next_id``). An unknown kind or field is refused (``InvalidInput``
    /// naming the event's index, kind and field).
    ///
    /// If any event is malformed or refused, nothing changes and the error
    /// says why: ``InvalidInput`` (a malformed event, a value out of range),
    /// ``NotFound``, ``Conflict`` (a duplicate name, an entity in two
    /// places), ``CapacityError``, ``FactSyntaxError``, ``StorageError``.
    fn append(&self, py: Python<'_>, events: Vec<Bound<'_, PyDict>>) -> PyResult<u64> {
        let values = events
            .iter()
            .map(|event| crate::json::py_to_json(event.as_any()))
            .collect::<PyResult<Vec<_>>>()?;
        let events = Event::list_from_json_values(&values).map_err(|e| to_py_err(py, e))?;
        self.with_engine(py, |engine| engine.append(events))
    }

    /// The id the next created thing takes (``append`` needs fresh ids).
    #[getter]
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_engine(py, |engine| Ok(engine.world().next_id()))
    }

    /// Creates an entity and returns it. ``facts`` is its fact sheet (one
    /// fact per line, ``$if`` lines included); with ``container`` (an id, key
    /// or name) it is placed there, in ``slot``, with ``posture``. One
    /// commit: on error nothing changes.
    ///
    /// Raises ``Conflict`` (a name or key in use), ``FactSyntaxError``,
    /// ``NotFound`` (container or slot), ``CapacityError`` (a full slot),
    /// ``InvalidInput`` (an empty name, a slot without a container).
    #[pyo3(signature = (name, *, key = None, aliases = None, facts = "", host_controlled = false, container = None, slot = None, posture = None, mood = None, goals = None, status = None))]
    #[allow(clippy::too_many_arguments)]
    fn create_entity(
        &self,
        py: Python<'_>,
        name: String,
        key: Option<String>,
        aliases: Option<Vec<String>>,
        facts: &str,
        host_controlled: bool,
        container: Option<Named>,
        slot: Option<String>,
        posture: Option<String>,
        mood: Option<String>,
        goals: Option<Vec<String>>,
        status: Option<String>,
    ) -> PyResult<Entity> {
        let new = crate::edits::NewEntity {
            name,
            key,
            aliases: aliases.unwrap_or_default(),
            facts: facts.to_owned(),
            host_controlled,
            container,
            slot,
            posture,
            mood,
            goals: goals.unwrap_or_default(),
            status,
        };
        self.with_engine(py, |engine| {
            let id = crate::edits::create_entity(engine, new)?;
            read_entity(engine, &Named::Id(id.0))
        })
    }

    /// Edits an entity's name, aliases, fact sheet or host-controlled flag
    /// (None keeps a field) and returns it. Raises ``NotFound``,
    /// ``Conflict`` (a name in use), ``FactSyntaxError``, ``InvalidInput``.
    #[pyo3(signature = (entity, *, name = None, aliases = None, facts = None, host_controlled = None))]
    fn edit_entity(
        &self,
        py: Python<'_>,
        entity: Named,
        name: Option<String>,
        aliases: Option<Vec<String>>,
        facts: Option<String>,
        host_controlled: Option<bool>,
    ) -> PyResult<Entity> {
        self.with_engine(py, |engine| {
            let id =
                crate::edits::edit_entity(engine, &entity, name, aliases, facts, host_controlled)?;
            read_entity(engine, &Named::Id(id.0))
        })
    }

    /// Sets an entity's ``mood``, ``goals`` or ``status`` (None keeps a
    /// field; ``""`` clears mood or status) and returns it. Raises
    /// ``NotFound``, ``InvalidInput``.
    #[pyo3(signature = (entity, *, mood = None, goals = None, status = None))]
    fn set_entity_state(
        &self,
        py: Python<'_>,
        entity: Named,
        mood: Option<String>,
        goals: Option<Vec<String>>,
        status: Option<String>,
    ) -> PyResult<Entity> {
        self.with_engine(py, |engine| {
            let id = crate::edits::set_entity_state(engine, &entity, mood, goals, status)?;
            read_entity(engine, &Named::Id(id.0))
        })
    }

    /// Moves an entity into ``container`` (an id, key or name) and ``slot``
    /// (None: outside any slot), keeping what it holds and does;
    /// ``posture`` replaces its posture (``""`` clears it). Returns it.
    ///
    /// Raises ``NotFound`` (entity, container or slot), ``CapacityError``
    /// (a full slot), ``InvalidInput`` (an item someone carries).
    #[pyo3(signature = (entity, container, slot = None, *, posture = None))]
    fn move_entity(
        &self,
        py: Python<'_>,
        entity: Named,
        container: Named,
        slot: Option<String>,
        posture: Option<String>,
    ) -> PyResult<Entity> {
        self.with_engine(py, |engine| {
            let id = crate::edits::move_entity(engine, &entity, &container, slot, posture)?;
            read_entity(engine, &Named::Id(id.0))
        })
    }

    /// Removes an entity with its edges, group memberships and memories;
    /// returns the new head. Raises ``NotFound``, ``Conflict`` (it carries
    /// items, or someone carries it).
    fn remove_entity(&self, py: Python<'_>, entity: Named) -> PyResult<u64> {
        self.with_engine(py, |engine| crate::edits::remove_entity(engine, &entity))
    }

    /// Creates a container and returns it. ``parent`` (an id, key or name)
    /// is the container it sits in; ``slots`` are names or ``(name,
    /// capacity)`` pairs (capacity None: no limit); ``public``, ``moving``
    /// and ``audible_range`` are its properties.
    ///
    /// Raises ``Conflict`` (a key in use), ``NotFound`` (parent),
    /// ``InvalidInput`` (an empty name, a slot named twice).
    #[pyo3(signature = (name, *, key = None, parent = None, slots = None, facts = "", public = false, moving = false, audible_range = 0))]
    #[allow(clippy::too_many_arguments)]
    fn create_container(
        &self,
        py: Python<'_>,
        name: String,
        key: Option<String>,
        parent: Option<Named>,
        slots: Option<Vec<crate::edits::SlotArg>>,
        facts: &str,
        public: bool,
        moving: bool,
        audible_range: u32,
    ) -> PyResult<Container> {
        let new = crate::edits::NewContainer {
            name,
            key,
            parent,
            slots: slots.unwrap_or_default(),
            facts: facts.to_owned(),
            public,
            moving,
            audible_range,
        };
        self.with_engine(py, |engine| {
            let id = crate::edits::create_container(engine, new)?;
            read_container(engine, &Named::Id(id.0))
        })
    }

    /// Redefines a container: each field given replaces its value (None
    /// keeps it; ``slots`` as in ``create_container``). Returns it. Raises
    /// ``NotFound``, ``InvalidInput`` (a slot still occupied is removed, a
    /// parent that makes a cycle, ...).
    #[pyo3(signature = (container, *, name = None, parent = None, slots = None, facts = None, public = None, moving = None, audible_range = None))]
    #[allow(clippy::too_many_arguments)]
    fn edit_container(
        &self,
        py: Python<'_>,
        container: Named,
        name: Option<String>,
        parent: Option<Named>,
        slots: Option<Vec<crate::edits::SlotArg>>,
        facts: Option<String>,
        public: Option<bool>,
        moving: Option<bool>,
        audible_range: Option<u32>,
    ) -> PyResult<Container> {
        let edit = crate::edits::ContainerEdit {
            name,
            parent,
            slots,
            facts,
            public,
            moving,
            audible_range,
        };
        self.with_engine(py, |engine| {
            let id = crate::edits::edit_container(engine, &container, edit)?;
            read_container(engine, &Named::Id(id.0))
        })
    }

    /// Removes an empty container (no entities, no child containers);
    /// returns the new head. Raises ``NotFound``, ``Conflict``.
    fn remove_container(&self, py: Python<'_>, container: Named) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            crate::edits::remove_container(engine, &container)
        })
    }

    /// Creates or edits the directed edge ``from_ → to`` (ids, keys or
    /// names) and returns it: each field given replaces its value, the
    /// others are kept (a new edge starts neutral). ``affinity`` and
    /// ``trust`` are in [-1, 1].
    ///
    /// Raises ``NotFound``, ``InvalidInput`` (a value out of range, an edge
    /// to itself).
    #[pyo3(signature = (from_, to, *, affinity = None, trust = None, summary = None, knowledge = None, private_moments = None, last_interaction = None))]
    #[allow(clippy::too_many_arguments)]
    fn set_edge(
        &self,
        py: Python<'_>,
        from_: Named,
        to: Named,
        affinity: Option<f64>,
        trust: Option<f64>,
        summary: Option<String>,
        knowledge: Option<Vec<String>>,
        private_moments: Option<Vec<String>>,
        last_interaction: Option<i64>,
    ) -> PyResult<Edge> {
        let edit = crate::edits::EdgeEdit {
            affinity,
            trust,
            summary,
            knowledge,
            private_moments,
            last_interaction,
        };
        self.with_engine(py, |engine| {
            let (from, to) = crate::edits::set_edge(engine, &from_, &to, edit)?;
            read_edge(engine, &Named::Id(from.0), &Named::Id(to.0))
        })
    }

    /// Removes the edge ``from_ → to``; returns the new head. Raises
    /// ``NotFound``.
    fn remove_edge(&self, py: Python<'_>, from_: Named, to: Named) -> PyResult<u64> {
        self.with_engine(py, |engine| crate::edits::remove_edge(engine, &from_, &to))
    }

    /// Advances the world's clock to ``to`` (host time, ms); returns the new
    /// head. Raises ``InvalidInput`` when ``to`` is before the clock.
    fn advance_time(&self, py: Python<'_>, to: i64) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            engine.append(vec![rp_core::Event::TimeAdvanced { to }])
        })
    }

    /// Applies the host's own state-update reports: the dicts a model's
    /// state-update pass writes (``{"type": "feeling", "who": "Tobias Reed",
    /// "toward": "Wren", "affinity": "warmer"}``, ``"learned"``,
    /// ``"relationship"``, ``"state"``, ``"activity"``, ``"thread_opened"``,
    /// ...; see ``Turn.step``), judged the same way: names resolved, values
    /// checked, the engine computing each change (``step`` is how far one
    /// warmer/colder or more/less moves). ``present`` (ids, keys or names;
    /// default: everyone) are who may be a report's ``"who"``. Returns the
    /// new head; the changes and the record of the reports are one commit.
    ///
    /// Raises ``InvalidReport`` when any report is refused (then nothing is
    /// applied; ``.reasons`` has each report's reason, None for the valid
    /// ones), ``NotFound`` (present), ``InvalidInput`` (``step``).
    #[pyo3(signature = (reports, *, present = None, step = 0.1))]
    fn apply_reports(
        &self,
        py: Python<'_>,
        reports: Vec<Bound<'_, PyAny>>,
        present: Option<Vec<Named>>,
        step: f64,
    ) -> PyResult<u64> {
        let reports = reports
            .iter()
            .map(crate::json::py_to_json)
            .collect::<PyResult<Vec<_>>>()?;
        let outcome = py.detach(|| {
            let mut engine = self.lock().map_err(Err)?;
            let engine = engine.as_mut().ok_or(Err(Failure::Closed))?;
            let result = crate::edits::apply_reports(engine, reports, present, step)
                .map_err(|e| e.map_err(Failure::Core));
            self.publish(engine);
            result
        });
        match outcome {
            Ok(head) => Ok(head),
            Err(Ok(refused)) => Err(crate::errors::invalid_report(
                py,
                refused.message,
                refused.reasons,
            )),
            Err(Err(failure)) => Err(to_py(py, failure)),
        }
    }
}

/// The entity `named` names, as a snapshot.
fn read_entity(engine: &Engine, named: &Named) -> Result<Entity, rp_core::Error> {
    let world = engine.world();
    let id = entity_id(world, named)?;
    world
        .entity(id)
        .map(|e| Entity::of(world, e))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "entity",
            id: id.0.to_string(),
        })
}

/// The container `named` names, as a snapshot.
fn read_container(engine: &Engine, named: &Named) -> Result<Container, rp_core::Error> {
    let world = engine.world();
    let id = container_id(world, named)?;
    world
        .container(id)
        .map(|c| Container::of(world, c))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "container",
            id: id.0.to_string(),
        })
}

/// The edge `from → to`, as a snapshot.
fn read_edge(engine: &Engine, from: &Named, to: &Named) -> Result<Edge, rp_core::Error> {
    let world = engine.world();
    let (from, to) = (entity_id(world, from)?, entity_id(world, to)?);
    world
        .edge(from, to)
        .map(|e| Edge(e.clone()))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "edge",
            id: format!("{} → {}", from.0, to.0),
        })
}
