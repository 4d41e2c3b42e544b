//! The world model as typed Python objects (docs/architecture.md): `Entity`,
//! `Container` (with its `Slot`s), `Edge`, `Memory` and `Group`, read from
//! `World.entities()`, `World.containers()`, `World.edges()` and friends.
//!
//! Each is a frozen snapshot of one rp-core record, taken when it was read:
//! it never changes, and a later edit of the world is seen by reading again.
//! They compare by value, and `to_dict()` gives the record as the JSON
//! rp-core writes (the form `World.append` reads inside its events).

use pyo3::prelude::*;
use rp_core::{ContainerId, EntityId, World};

use crate::json;

/// Something named by the caller: an id, or a name or world-file key.
#[derive(FromPyObject)]
pub(crate) enum Named {
    /// An id.
    Id(u64),
    /// A world-file key (exact) or a name (ignoring case).
    Name(String),
}

impl Named {
    /// The name as rp-core takes it.
    fn as_core(&self) -> rp_core::Named<'_> {
        match self {
            Named::Id(id) => rp_core::Named::Id(*id),
            Named::Name(name) => rp_core::Named::Text(name),
        }
    }
}

/// The entity `named` names, by rp-core's rule (`World::resolve_entity`: id,
/// key, name, then a unique alias).
pub(crate) fn entity_id(world: &World, named: &Named) -> Result<EntityId, rp_core::Error> {
    world.resolve_entity(named.as_core())
}

/// The container `named` names, by rp-core's rule
/// (`World::resolve_container`: id, key, then name).
pub(crate) fn container_id(world: &World, named: &Named) -> Result<ContainerId, rp_core::Error> {
    world.resolve_container(named.as_core())
}

/// The JSON name of a serde enum value (`"scene_summary"`), or its debug
/// form.
fn enum_name(value: serde_json::Result<serde_json::Value>, debug: impl std::fmt::Debug) -> String {
    match value {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{debug:?}"),
    }
}

/// An entity: a character, the player, an item (a snapshot, taken when read).
///
/// Where it is: ``container`` (an id) and ``slot``; ``None`` for an entity
/// that is nowhere (an item someone carries, see ``carrier``). What it is
/// doing: ``posture``, ``action``, ``holding``, ``attention``. Its inner
/// state: ``mood``, ``goals``, ``status``. ``to_dict()`` has every field.
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Entity {
    pub(crate) entity: rp_core::Entity,
    carrier: Option<u64>,
}

impl Entity {
    pub(crate) fn of(world: &World, entity: &rp_core::Entity) -> Entity {
        Entity {
            entity: entity.clone(),
            carrier: world.carrier_of(entity.id).map(|id| id.0),
        }
    }
}

#[pymethods]
impl Entity {
    /// Its id.
    #[getter]
    fn id(&self) -> u64 {
        self.entity.id.0
    }
    /// The key a world file gives it (``id = "mira"``), or None.
    #[getter]
    fn key(&self) -> Option<String> {
        self.entity.key.clone()
    }
    /// Its name, unique in the world (ignoring case).
    #[getter]
    fn name(&self) -> String {
        self.entity.name.clone()
    }
    /// Other names it answers to.
    #[getter]
    fn aliases(&self) -> Vec<String> {
        self.entity.aliases.clone()
    }
    /// Its fact sheet, one fact per line.
    #[getter]
    fn facts(&self) -> String {
        self.entity.facts.to_text()
    }
    /// Whether the host speaks for it (the player).
    #[getter]
    fn host_controlled(&self) -> bool {
        self.entity.host_controlled
    }
    /// Whether it is a person only talked about (docs/beliefs.md): no
    /// place, no mind, no lines.
    #[getter]
    fn mentioned(&self) -> bool {
        self.entity.mentioned
    }
    /// Its mood, in prose, or None.
    #[getter]
    fn mood(&self) -> Option<String> {
        self.entity.state.mood.clone()
    }
    /// Its goals, most important first.
    #[getter]
    fn goals(&self) -> Vec<String> {
        self.entity.state.goals.clone()
    }
    /// Its status line ("injured", "on shift"), or None.
    #[getter]
    fn status(&self) -> Option<String> {
        self.entity.state.status.clone()
    }
    /// The id of the container it is in, or None.
    #[getter]
    fn container(&self) -> Option<u64> {
        self.entity
            .activity
            .position
            .as_ref()
            .map(|p| p.container.0)
    }
    /// The slot of that container it is in, or None.
    #[getter]
    fn slot(&self) -> Option<String> {
        self.entity
            .activity
            .position
            .as_ref()
            .and_then(|p| p.slot.clone())
    }
    /// Its posture ("sitting"), or None.
    #[getter]
    fn posture(&self) -> Option<String> {
        self.entity.activity.posture.clone()
    }
    /// What it is doing ("polishing tankards"), or None.
    #[getter]
    fn action(&self) -> Option<String> {
        self.entity.activity.action.as_ref().map(|a| a.verb.clone())
    }
    /// The ids of the items in its hands.
    #[getter]
    fn holding(&self) -> Vec<u64> {
        self.entity.activity.holding.iter().map(|id| id.0).collect()
    }
    /// The id of who or what it attends to, or None.
    #[getter]
    fn attention(&self) -> Option<u64> {
        self.entity.activity.attention.map(|id| id.0)
    }
    /// The ids of the items it carries.
    #[getter]
    fn inventory(&self) -> Vec<u64> {
        self.entity.inventory.iter().map(|id| id.0).collect()
    }
    /// The id of who carries it (it is an item in an inventory), or None.
    #[getter]
    fn carrier(&self) -> Option<u64> {
        self.carrier
    }
    /// Every field, as the JSON rp-core writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.entity))
    }
    fn __repr__(&self) -> String {
        let e = &self.entity;
        let place = match &e.activity.position {
            Some(p) => match &p.slot {
                Some(slot) => format!(", in {} ({slot})", p.container.0),
                None => format!(", in {}", p.container.0),
            },
            None => String::new(),
        };
        format!("Entity(id={}, name={:?}{place})", e.id.0, e.name)
    }
}

/// A named place within a container, and how many fit (None: no limit).
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Slot {
    /// The slot's name, unique within its container.
    #[pyo3(get)]
    name: String,
    /// How many entities fit in it; None for no limit.
    #[pyo3(get)]
    capacity: Option<u32>,
    /// How many stand in it now (when the container was read).
    #[pyo3(get)]
    occupancy: u32,
}

#[pymethods]
impl Slot {
    fn __repr__(&self) -> String {
        let capacity = self
            .capacity
            .map_or_else(|| "None".to_owned(), |c| c.to_string());
        format!(
            "Slot(name={:?}, capacity={capacity}, occupancy={})",
            self.name, self.occupancy
        )
    }
}

/// A container: a room, a booth, a car (a snapshot, taken when read).
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Container {
    pub(crate) container: rp_core::Container,
    slots: Vec<Slot>,
}

impl Container {
    pub(crate) fn of(world: &World, container: &rp_core::Container) -> Container {
        let slots = container
            .slots
            .iter()
            .map(|s| Slot {
                name: s.name.clone(),
                capacity: s.capacity,
                occupancy: world.occupancy(container.id, &s.name),
            })
            .collect();
        Container {
            container: container.clone(),
            slots,
        }
    }
}

#[pymethods]
impl Container {
    /// Its id.
    #[getter]
    fn id(&self) -> u64 {
        self.container.id.0
    }
    /// The key a world file gives it, or None.
    #[getter]
    fn key(&self) -> Option<String> {
        self.container.key.clone()
    }
    /// Its name.
    #[getter]
    fn name(&self) -> String {
        self.container.name.clone()
    }
    /// Facts about the place, one per line.
    #[getter]
    fn facts(&self) -> String {
        self.container.facts.to_text()
    }
    /// The id of the container it sits in (a booth in a tavern), or None.
    #[getter]
    fn parent(&self) -> Option<u64> {
        self.container.parent.map(|id| id.0)
    }
    /// Its slots, in order.
    #[getter]
    fn slots(&self) -> Vec<Slot> {
        self.slots.clone()
    }
    /// Whether it is open to the place around it (a market stall): lines said
    /// in it are heard there, and lines said there are heard in it.
    #[getter]
    fn public(&self) -> bool {
        self.container.properties.public
    }
    /// Whether it moves (a car, a ship); the prompts of those inside say so.
    #[getter]
    fn moving(&self) -> bool {
        self.container.properties.moving
    }
    /// How many steps through the container tree a voice carries (0: only
    /// inside).
    #[getter]
    fn audible_range(&self) -> u32 {
        self.container.properties.audible_range
    }
    /// Every field, as the JSON rp-core writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.container))
    }
    fn __repr__(&self) -> String {
        format!(
            "Container(id={}, name={:?}, slots={:?})",
            self.container.id.0,
            self.container.name,
            self.slots
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
        )
    }
}

/// A directed edge of the relationship graph: what ``from_`` feels about,
/// and knows of, ``to`` (a snapshot). ``b → a`` is another edge.
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Edge(pub(crate) rp_core::Edge);

#[pymethods]
impl Edge {
    /// The id of whose feelings these are.
    #[getter]
    fn from_(&self) -> u64 {
        self.0.from.0
    }
    /// The id of whom they are about.
    #[getter]
    fn to(&self) -> u64 {
        self.0.to.0
    }
    /// Liking, in [-1, 1].
    #[getter]
    fn affinity(&self) -> f64 {
        self.0.affinity
    }
    /// Trust, in [-1, 1].
    #[getter]
    fn trust(&self) -> f64 {
        self.0.trust
    }
    /// How ``from_`` would sum up the relationship, in prose.
    #[getter]
    fn summary(&self) -> String {
        self.0.summary.clone()
    }
    /// Facts ``from_`` knows about ``to``.
    #[getter]
    fn knowledge(&self) -> Vec<String> {
        self.0.knowledge.clone()
    }
    /// Moments only these two share.
    #[getter]
    fn private_moments(&self) -> Vec<String> {
        self.0.private_moments.clone()
    }
    /// When they last interacted (host clock, ms), or None.
    #[getter]
    fn last_interaction(&self) -> Option<i64> {
        self.0.last_interaction
    }
    /// What faded memories left behind (docs/memory.md): the feeling of
    /// each memory of ``from_`` about ``to`` that decayed to a residue,
    /// oldest first.
    #[getter]
    fn imprints(&self) -> Vec<String> {
        self.0.imprints.clone()
    }
    /// Every field, as the JSON rp-core writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.0))
    }
    fn __repr__(&self) -> String {
        format!(
            "Edge(from_={}, to={}, affinity={:+.2}, trust={:+.2})",
            self.0.from.0, self.0.to.0, self.0.affinity, self.0.trust
        )
    }
}

/// A memory held by one entity, its owner (a snapshot).
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Memory(pub(crate) rp_core::Memory);

#[pymethods]
impl Memory {
    /// Its id.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id.0
    }
    /// The id of whose memory it is.
    #[getter]
    fn owner(&self) -> u64 {
        self.0.owner.0
    }
    /// The ids of who witnessed what it records (the owner among them).
    #[getter]
    fn witnesses(&self) -> Vec<u64> {
        self.0.witnesses.iter().map(|id| id.0).collect()
    }
    /// The text, from the owner's point of view.
    #[getter]
    fn text(&self) -> String {
        self.0.text.clone()
    }
    /// ``"utterance"``, ``"scene_summary"``, ``"event_gist"``,
    /// ``"reflection"`` or ``"thought"``.
    #[getter]
    fn kind(&self) -> String {
        enum_name(serde_json::to_value(self.0.kind), self.0.kind)
    }
    /// How much it matters, 0–1.
    #[getter]
    fn significance(&self) -> f64 {
        self.0.significance
    }
    /// When it was formed (host clock, ms).
    #[getter]
    fn created(&self) -> i64 {
        self.0.created
    }
    /// When it was last recalled, or None.
    #[getter]
    fn last_accessed(&self) -> Option<i64> {
        self.0.last_accessed
    }
    /// How often it was recalled.
    #[getter]
    fn access_count(&self) -> u32 {
        self.0.access_count
    }
    /// How far it has faded: ``"full"``, ``"summary"``, ``"residue"`` or
    /// ``"forgotten"``.
    #[getter]
    fn decay(&self) -> String {
        enum_name(serde_json::to_value(self.0.decay), self.0.decay)
    }
    /// Whether it is always in the owner's prompt.
    #[getter]
    fn pinned(&self) -> bool {
        self.0.pinned
    }
    /// The host's vector for the text, or None.
    #[getter]
    fn embedding(&self) -> Option<Vec<f32>> {
        self.0.embedding.clone()
    }
    /// The host time (ms) after which its retention falls to 0.9 unless
    /// recalled; 0 until first reinforced (then its significance sets it).
    /// ``World.retention`` reads how well it is kept at any time.
    #[getter]
    fn stability(&self) -> f64 {
        self.0.stability
    }
    /// At stage ``"summary"``: the shorter text that stands for it, or None.
    #[getter]
    fn summary(&self) -> Option<String> {
        self.0.summary.clone()
    }
    /// The feeling it left (given with its summary), or None.
    #[getter]
    fn feeling(&self) -> Option<String> {
        self.0.feeling.clone()
    }
    /// The id of whom it was mostly about (given with its summary), or None.
    #[getter]
    fn about(&self) -> Option<u64> {
        self.0.about.map(|id| id.0)
    }
    /// For a reflection: the ids of the owner's memories it rests on.
    #[getter]
    fn sources(&self) -> Vec<u64> {
        self.0.sources.iter().map(|id| id.0).collect()
    }
    /// Every field, as the JSON rp-core writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.0))
    }
    fn __repr__(&self) -> String {
        format!(
            "Memory(id={}, owner={}, text={:?})",
            self.0.id.0, self.0.owner.0, self.0.text
        )
    }
}

/// A group node: three or more entities that share scenes (a snapshot).
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Group(pub(crate) rp_core::Group);

#[pymethods]
impl Group {
    /// Its id.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id.0
    }
    /// The ids of its members.
    #[getter]
    fn members(&self) -> Vec<u64> {
        self.0.members.iter().map(|id| id.0).collect()
    }
    /// Its name ("the crew"), or None.
    #[getter]
    fn name(&self) -> Option<String> {
        self.0.name.clone()
    }
    /// The group's dynamic, in prose.
    #[getter]
    fn summary(&self) -> String {
        self.0.summary.clone()
    }
    /// Jokes, rituals, shared history.
    #[getter]
    fn shared(&self) -> Vec<String> {
        self.0.shared.clone()
    }
    /// Every field, as the JSON rp-core writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.0))
    }
    fn __repr__(&self) -> String {
        format!("Group(id={}, members={:?})", self.0.id.0, self.members())
    }
}

/// A branch of the world's history (``World.branches()``, ``World.fork``).
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Branch {
    /// Its name.
    #[pyo3(get)]
    name: String,
    /// The seq of its last event.
    #[pyo3(get)]
    head: u64,
    /// The name of the branch it was forked from, or None (the first
    /// branch, or a parent since deleted).
    #[pyo3(get)]
    forked_from: Option<String>,
    /// The seq it shares with that branch, up to which their histories are
    /// one; None for the first branch.
    #[pyo3(get)]
    forked_at: Option<u64>,
    /// Whether it is the current branch.
    #[pyo3(get)]
    current: bool,
}

impl From<rp_core::BranchInfo> for Branch {
    fn from(info: rp_core::BranchInfo) -> Self {
        let (forked_from, forked_at) = match info.forked_from {
            Some((name, seq)) => (name, Some(seq)),
            None => (None, None),
        };
        Branch {
            name: info.name,
            head: info.head,
            forked_from,
            forked_at,
            current: info.current,
        }
    }
}

#[pymethods]
impl Branch {
    fn __repr__(&self) -> String {
        let current = if self.current { ", current" } else { "" };
        format!("Branch(name={:?}, head={}{current})", self.name, self.head)
    }
}

/// What ``World.rewind`` to ``to_seq`` would undo (``World.preview_rewind``).
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct RewindPreview {
    /// The head now.
    #[pyo3(get)]
    from_seq: u64,
    /// The head after the rewind.
    #[pyo3(get)]
    to_seq: u64,
    /// How many of the undone events are of each kind (``"user_turn"``, ...).
    #[pyo3(get)]
    events_by_kind: std::collections::BTreeMap<String, usize>,
    /// The ids of the entities the undone events touched.
    #[pyo3(get)]
    entities: Vec<u64>,
    /// The ids of the containers they touched.
    #[pyo3(get)]
    containers: Vec<u64>,
    /// The edges they touched, as ``(from_, to)`` ids.
    #[pyo3(get)]
    edges: Vec<(u64, u64)>,
    /// The ids of the groups they touched.
    #[pyo3(get)]
    groups: Vec<u64>,
    /// The ids of the memories they touched.
    #[pyo3(get)]
    memories: Vec<u64>,
}

impl From<rp_core::RewindPreview> for RewindPreview {
    fn from(p: rp_core::RewindPreview) -> Self {
        RewindPreview {
            from_seq: p.from_seq,
            to_seq: p.to_seq,
            events_by_kind: p
                .events_by_kind
                .iter()
                .map(|(kind, n)| ((*kind).to_owned(), *n))
                .collect(),
            entities: p.entities.iter().map(|id| id.0).collect(),
            containers: p.containers.iter().map(|id| id.0).collect(),
            edges: p.edges.iter().map(|(a, b)| (a.0, b.0)).collect(),
            groups: p.groups.iter().map(|id| id.0).collect(),
            memories: p.memories.iter().map(|id| id.0).collect(),
        }
    }
}

#[pymethods]
impl RewindPreview {
    /// How many events the rewind would undo.
    #[getter]
    fn event_count(&self) -> usize {
        self.events_by_kind.values().sum()
    }
    fn __repr__(&self) -> String {
        format!(
            "RewindPreview(from_seq={}, to_seq={}, event_count={})",
            self.from_seq,
            self.to_seq,
            self.event_count()
        )
    }
}
