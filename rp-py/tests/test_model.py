"""The world model from Python: typed snapshots of entities, containers,
edges, memories and groups, and edits through validated events (World.append
and the named edits), on the tavern world. An edit the world refuses raises
the RpError subclass of its kind and changes nothing."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from rp_engine import (
    CapacityError,
    Conflict,
    Container,
    Edge,
    Entity,
    FactSyntaxError,
    InvalidInput,
    InvalidReport,
    Memory,
    NotFound,
    RpError,
    Slot,
    World,
)


@contextmanager
def unchanged(world: World) -> Iterator[None]:
    """Asserts that the block leaves the world exactly as it was."""
    head, state = world.head, world.state()
    yield
    assert world.head == head
    assert world.state() == state


def test_entities_read_as_typed_snapshots(world: World, wren: int, mira: int) -> None:
    entities = world.entities()
    assert [e.name for e in entities] == ["Wren", "Mira Holt", "Tobias Reed", "the sealed letter"]
    assert all(isinstance(e, Entity) for e in entities)
    assert [e.id for e in entities] == sorted(e.id for e in entities)

    m = world.entity(mira)
    assert (m.id, m.key, m.name) == (mira, "mira", "Mira Holt")
    assert m.aliases == ["Mira", "the innkeeper"]
    assert m.facts.splitlines()[-1] == "$if mentioned: $respond true"
    assert not m.host_controlled
    assert (m.mood, m.goals[0], m.status) == ("watchful", "keep the peace tonight", None)
    assert world.container(m.container or 0).name == "the bar"
    assert (m.slot, m.posture, m.action) == ("behind the bar", "standing", "polishing tankards")
    assert (m.holding, m.attention, m.inventory, m.carrier) == ([], None, [], None)

    w = world.entity(wren)
    assert w.host_controlled
    letter = world.entity("the sealed letter")
    assert w.inventory == [letter.id]
    assert letter.carrier == wren
    assert letter.container is None and letter.slot is None

    as_dict = m.to_dict()
    assert as_dict["name"] == "Mira Holt"
    assert as_dict["activity"]["position"]["slot"] == "behind the bar"
    assert repr(m).startswith(f'Entity(id={mira}, name="Mira Holt", in ')


def test_an_entity_is_named_by_id_key_name_or_alias(world: World, mira: int) -> None:
    assert world.entity(mira).id == mira
    for name in ("mira", "MIRA HOLT", "the Innkeeper"):
        assert world.entity(name).id == mira
        assert world.entity_id(name) == mira
    with pytest.raises(NotFound, match="Nobody"):
        world.entity("Nobody")
    with pytest.raises(NotFound):
        world.entity(999_999)
    with pytest.raises(TypeError):
        world.entity(1.5)  # type: ignore[arg-type]


def test_snapshots_compare_by_value_and_never_change(world: World, mira: int) -> None:
    before = world.entity(mira)
    assert before == world.entity("Mira Holt")
    world.set_entity_state(mira, mood="cheerful")
    after = world.entity(mira)
    assert before.mood == "watchful", "a snapshot is taken when read"
    assert after.mood == "cheerful"
    assert before != after


def test_containers_and_slots(world: World) -> None:
    containers = world.containers()
    assert [c.name for c in containers] == ["The Crooked Lantern", "the corner booth", "the bar"]
    assert all(isinstance(c, Container) for c in containers)
    tavern, booth, bar = containers
    assert (tavern.key, tavern.parent, tavern.public, tavern.audible_range) == (
        "tavern",
        None,
        True,
        1,
    )
    assert booth.parent == tavern.id and not booth.public and not booth.moving
    assert "darkest corner" in booth.facts
    assert all(isinstance(s, Slot) for s in booth.slots)
    assert [(s.name, s.capacity, s.occupancy) for s in booth.slots] == [
        ("bench", 2, 1),
        ("window seat", 1, 1),
    ]
    assert bar.slots[1] == world.container("bar").slots[1]
    assert world.container("THE BAR") == bar
    assert world.container(bar.id).to_dict()["key"] == "bar"
    with pytest.raises(NotFound):
        world.container("the cellar")


def test_a_container_name_two_share_is_ambiguous(world: World) -> None:
    world.create_container("the bar", key="bar2")
    with pytest.raises(InvalidInput, match="more than one container"):
        world.container("the bar")
    assert world.container("bar2").name == "the bar"


def test_edges_filtered_by_either_end(world: World, wren: int, mira: int, tobias: int) -> None:
    edges = world.edges()
    assert all(isinstance(e, Edge) for e in edges)
    assert [(e.from_, e.to) for e in edges] == sorted((e.from_, e.to) for e in edges)
    assert len(edges) == 5
    assert {e.to for e in world.edges(from_="Mira Holt")} == {wren, tobias}
    assert [e.from_ for e in world.edges(to=mira)] == sorted([wren, tobias])
    assert world.edges(from_=mira, to=tobias) == [world.edge(mira, tobias)]
    # Tobias has an eye on the stranger in his booth; she has none on him.
    assert world.edges(from_=tobias, to=wren) == [world.edge(tobias, wren)]
    assert world.edge(tobias, wren).affinity == 0.2
    assert world.edges(from_=wren, to=tobias) == []

    edge = world.edge("Mira Holt", "Tobias Reed")
    assert (edge.affinity, edge.trust) == (0.3, -0.2)
    assert edge.summary.startswith("Fond of him")
    assert edge.knowledge == ["owes her eleven silver", "drinks more since his boat sank"]
    assert edge.private_moments == [] and edge.last_interaction is None
    assert edge.to_dict()["from"] == mira
    assert "affinity=+0.30" in repr(edge)
    with pytest.raises(NotFound, match="edge"):
        world.edge(wren, tobias)
    with pytest.raises(NotFound):
        world.edges(from_="Nobody")


def test_memories_and_groups(world: World, wren: int, tobias: int) -> None:
    assert world.memories() == [] and world.groups() == []
    first = world.add_memory(tobias, "The stranger asked about the lights.", witnesses=[wren])
    second = world.add_memory(wren, "Tobias saw lights.", kind="reflection", pinned=True)
    memory = world.memory(first)
    assert isinstance(memory, Memory)
    assert (memory.owner, memory.text, memory.kind) == (
        tobias,
        "The stranger asked about the lights.",
        "utterance",
    )
    assert memory.witnesses == sorted([wren, tobias])
    assert (memory.significance, memory.decay, memory.pinned) == (0.5, "full", False)
    assert (memory.last_accessed, memory.access_count, memory.embedding) == (None, 0, None)
    assert [m.id for m in world.memories()] == [first, second]
    assert [m.id for m in world.memories("Tobias Reed")] == [first]
    assert world.memory(second).kind == "reflection"
    world.mark_recalled([first], 5)
    assert (world.memory(first).last_accessed, world.memory(first).access_count) == (5, 1)
    with pytest.raises(NotFound):
        world.memory(123_456)

    members = [wren, tobias, world.entity_id("Mira Holt")]
    world.append([{"group_updated": {"group": {"id": world.next_id, "members": members}}}])
    (group,) = world.groups()
    assert group.members == sorted(members)
    assert (group.name, group.summary, group.shared) == (None, "", [])


def test_create_entity_places_it_in_one_commit(world: World) -> None:
    head = world.head
    bram = world.create_entity(
        "Bram",
        key="bram",
        aliases=["the smith"],
        facts="A smith.\n$if mentioned: $respond",
        container="bar",
        slot="stools",
        posture="leaning",
        mood="tired",
        goals=["get drunk"],
        status="off duty",
    )
    assert world.head == head + 2
    assert (bram.name, bram.key, bram.aliases, bram.facts) == (
        "Bram",
        "bram",
        ["the smith"],
        "A smith.\n$if mentioned: $respond",
    )
    assert (bram.slot, bram.posture, bram.mood, bram.goals, bram.status) == (
        "stools",
        "leaning",
        "tired",
        ["get drunk"],
        "off duty",
    )
    assert world.entity("the smith") == bram
    nowhere = world.create_entity("a ghost")
    assert nowhere.container is None
    assert world.decide(bram.id, content="Bram?").respond


def test_edits_change_the_world(world: World, wren: int, mira: int, tobias: int) -> None:
    edited = world.edit_entity(mira, name="Mira Holt-Reed", aliases=["Mira"], host_controlled=False)
    assert (edited.name, edited.aliases) == ("Mira Holt-Reed", ["Mira"])
    assert world.edit_entity(mira) == edited, "nothing given, nothing changed"

    state = world.set_entity_state(tobias, mood="", goals=["go home"], status="sober")
    assert (state.mood, state.goals, state.status) == (None, ["go home"], "sober")

    moved = world.move_entity("Wren", "the bar", "stools", posture="")
    assert (world.container(moved.container or 0).key, moved.slot, moved.posture) == (
        "bar",
        "stools",
        None,
    )
    assert world.move_entity(wren, "booth").slot is None

    edge = world.set_edge(tobias, wren, affinity=0.4, summary="buys the cider")
    assert (edge.from_, edge.to, edge.affinity, edge.trust) == (tobias, wren, 0.4, 0.0)
    again = world.set_edge("Tobias", "Wren", trust=-0.5, knowledge=["asks questions"])
    assert (again.affinity, again.trust, again.summary) == (0.4, -0.5, "buys the cider")
    assert again.knowledge == ["asks questions"]
    world.remove_edge(tobias, wren)
    assert world.edges(from_=tobias, to=wren) == []

    cellar = world.create_container(
        "the cellar", key="cellar", parent="tavern", slots=["floor", ("barrel", 1)], facts="Damp."
    )
    assert [(s.name, s.capacity) for s in cellar.slots] == [("floor", None), ("barrel", 1)]
    assert world.container(cellar.parent or 0).key == "tavern"
    renamed = world.edit_container("cellar", name="the wine cellar", public=True, audible_range=2)
    assert (renamed.name, renamed.public, renamed.audible_range, renamed.facts) == (
        "the wine cellar",
        True,
        2,
        "Damp.",
    )
    head = world.remove_container(cellar.id)
    assert head == world.head
    with pytest.raises(NotFound):
        world.container("cellar")

    world.advance_time(90_000)
    assert world.now == 90_000
    ghost = world.create_entity("a ghost")
    world.remove_entity(ghost.id)
    with pytest.raises(NotFound):
        world.entity("a ghost")


def test_removing_an_entity_takes_its_edges(world: World, mira: int) -> None:
    world.remove_entity("Tobias Reed")
    assert all(mira != e.from_ or e.to != mira for e in world.edges())
    assert {e.name for e in world.entities()} == {"Wren", "Mira Holt", "the sealed letter"}


BadEdit = Callable[[World], Any]


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (lambda w: w.create_entity("Mira Holt"), Conflict),
        (lambda w: w.create_entity("x", key="mira"), Conflict),
        (lambda w: w.create_entity(""), InvalidInput),
        (lambda w: w.create_entity("x", facts="$if (: $respond"), FactSyntaxError),
        (lambda w: w.create_entity("x", container="the moon"), NotFound),
        (lambda w: w.create_entity("x", container="booth", slot="window seat"), CapacityError),
        (lambda w: w.create_entity("x", container="booth", slot="roof"), NotFound),
        (lambda w: w.create_entity("x", slot="bench"), InvalidInput),
        (lambda w: w.edit_entity("Wren", name="mira holt"), Conflict),
        (lambda w: w.edit_entity("Nobody", name="x"), NotFound),
        (lambda w: w.move_entity("Wren", "booth", "window seat"), CapacityError),
        (lambda w: w.move_entity("Wren", "nowhere"), NotFound),
        (lambda w: w.remove_entity("Wren"), Conflict),
        (lambda w: w.create_container("x", parent="the moon"), NotFound),
        (lambda w: w.create_container("x", slots=["a", "a"]), InvalidInput),
        (lambda w: w.remove_container("tavern"), Conflict),
        (lambda w: w.edit_container("booth", parent="booth"), InvalidInput),
        (lambda w: w.set_edge("Wren", "Wren", affinity=0.5), InvalidInput),
        (lambda w: w.set_edge("Wren", "Mira Holt", affinity=1.5), InvalidInput),
        (lambda w: w.set_edge("Wren", "Nobody"), NotFound),
        (lambda w: w.remove_edge("Wren", "Tobias Reed"), NotFound),
        (lambda w: w.advance_time(-1), InvalidInput),
    ],
)
def test_a_refused_edit_raises_its_kind_and_changes_nothing(
    world: World, edit: BadEdit, error: type[RpError]
) -> None:
    with unchanged(world), pytest.raises(error):
        edit(world)


def test_a_fact_syntax_error_says_where(world: World) -> None:
    with unchanged(world), pytest.raises(FactSyntaxError) as raised:
        world.create_entity("Bram", facts="A smith.\n\n$if mentioned &&: $respond")
    assert (raised.value.owner, raised.value.line) == ("Bram", 3)
    assert raised.value.column > 1


def test_events_read_back_in_the_form_append_takes(world: World) -> None:
    events = world.events()
    assert [e["seq"] for e in events] == list(range(1, world.head + 1))
    assert list(events[0]["event"]) == ["world_created"]
    assert events[0]["event"]["world_created"]["name"] == "The Crooked Lantern"
    created = [e["event"]["entity_created"] for e in events if "entity_created" in e["event"]]
    assert [e["name"] for e in created][:2] == ["Wren", "Mira Holt"]
    assert world.events(3, 4) == events[2:4]
    assert world.events(world.head + 5) == []

    # An event read back appends again, once its ids are fresh.
    entity = dict(created[0], id=world.next_id, key=None, name="Wren's twin")
    head = world.append([{"entity_created": entity}])
    assert world.entity("Wren's twin").facts == world.entity("Wren").facts
    assert world.events(head)[0]["event"]["entity_created"]["name"] == "Wren's twin"


def test_append_commits_a_batch_whole(world: World, wren: int, tobias: int) -> None:
    new = world.next_id
    head = world.append(
        [
            {"entity_created": {"id": new, "name": "Bram"}},
            {
                "edge_updated": {
                    "edge": {"from": new, "to": tobias, "affinity": -0.5, "summary": "a rival"}
                },
            },
            {"time_advanced": {"to": 30_000}},
        ]
    )
    assert head == world.head
    assert world.edge("Bram", tobias).affinity == -0.5
    assert world.now == 30_000


@pytest.mark.parametrize(
    ("events", "error", "message"),
    [
        ([{"to": 5}], InvalidInput, "unknown variant `to`"),
        ([{"kind": "time_advanced", "to": 5}], InvalidInput, "events\\[0\\]"),
        ([{"no_such_event": {}}], InvalidInput, "unknown variant"),
        ([{"time_advanced": {}}], InvalidInput, "missing field"),
        ([{"time_advanced": {"to": "soon"}}], InvalidInput, r"events\[0\] \(time_advanced\): to:"),
        ([{"time_advanced": {"to": 5, "by": 1}}], InvalidInput, "unknown field `by`"),
        ([{"entity_removed": {"id": 987_654}}], NotFound, "987654"),
        ([{"entity_created": {"id": 1, "name": "X"}}], Conflict, "already taken"),
    ],
)
def test_append_refuses_bad_events_and_changes_nothing(
    world: World, events: list[dict[str, Any]], error: type[RpError], message: str
) -> None:
    with unchanged(world), pytest.raises(error, match=message):
        world.append(events)


def test_a_batch_with_one_bad_event_appends_none(world: World) -> None:
    good = {"time_advanced": {"to": 10_000}}
    bad = {"edge_removed": {"from": 1, "to": 2}}
    with unchanged(world), pytest.raises(NotFound):
        world.append([good, bad])
    with unchanged(world), pytest.raises(TypeError):
        world.append([good, {"time_advanced": {"to": object()}}])
    with unchanged(world), pytest.raises(TypeError):
        world.append(good)  # type: ignore[arg-type]


def test_the_host_applies_reports_as_a_pass_would(world: World, wren: int, tobias: int) -> None:
    head = world.apply_reports(
        [
            {"type": "feeling", "who": "Tobias Reed", "toward": "Wren", "affinity": "warmer"},
            {"type": "state", "who": "Tobias Reed", "mood": "grateful"},
            {"type": "learned", "who": "Mira Holt", "about": "Wren", "fact": "pays in silver"},
        ],
        step=0.25,
    )
    assert head == world.head
    assert world.edge(tobias, wren).affinity == 0.2 + 0.25, "the world file's, one step warmer"
    assert world.entity(tobias).mood == "grateful"
    assert world.edge("Mira Holt", wren).knowledge == ["pays in silver"]
    assert list(world.events(head)[0]["event"]) == ["reports_judged"]


def test_a_refused_report_is_an_invalid_report_and_applies_nothing(world: World) -> None:
    good = {"type": "state", "who": "Tobias Reed", "mood": "grateful"}
    with unchanged(world), pytest.raises(InvalidReport) as raised:
        world.apply_reports([good, {"type": "feeling", "who": "Nobody", "toward": "Wren"}])
    assert raised.value.reasons[0] is None
    assert "Nobody" in (raised.value.reasons[1] or "")
    assert isinstance(raised.value, InvalidInput)

    # Only those present may be "who".
    with unchanged(world), pytest.raises(InvalidReport):
        world.apply_reports([good], present=["Wren"])
    with unchanged(world), pytest.raises(InvalidReport, match="unknown"):
        world.apply_reports([{"type": "dance", "who": "Wren"}])
    with unchanged(world), pytest.raises(InvalidInput, match="step"):
        world.apply_reports([good], step=0)
    with unchanged(world), pytest.raises(NotFound):
        world.apply_reports([good], present=["Nobody"])


def test_the_state_is_the_whole_world_as_a_dict(world: World) -> None:
    state = world.state()
    assert state["meta"]["name"] == "The Crooked Lantern"
    assert state["seq"] == world.head
    assert [e["name"] for e in state["entities"]][0] == "Wren"
    assert len(state["edges"]) == 5
