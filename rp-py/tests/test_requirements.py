"""Requirements from Python (docs/requirements.md): ``World.add_requirement``,
``remove_requirement``, ``requirements`` and ``check_action``.

Wren must settle the bill before she leaves the booth: while her
``fare_paid`` fact is false, moving her out (``move_entity``, a batch of
events through ``append``), a time skip and the host action ``board`` raise
``RequirementUnmet`` with the requirement's id, name and text, and nothing
changes; the prompt of Tobias beside her carries the warning and one system
line announced it. A state report (``apply_reports``) that sets the fact
settles it, and then she goes. Bad requirements raise the exception of their
kind (the same kind C's result code and Rust's ``ErrorKind`` give) and change
nothing.
"""

from typing import Any

import pytest

from rp_engine import (
    Conflict,
    FactSyntaxError,
    InvalidInput,
    NotFound,
    RequirementUnmet,
    RpError,
    World,
)

HOUR = 3_600_000
WARNING = "DECISION REQUIRED: The fare: Wren must settle the bill before leaving the booth."


def fare() -> dict[str, Any]:
    return {
        "id": "fare",
        "name": "The fare",
        "subject": "Wren",
        "condition": "self.fare_paid == true",
        "guards": [{"leave": "booth"}, {"time_skip": True}, {"action": "board"}],
        "text": "Wren must settle the bill before leaving the booth.",
    }


@pytest.fixture
def with_fare(world: World) -> World:
    world.edit_entity("Wren", facts="A traveller.\nfare_paid: false")
    world.add_requirement(fare())
    return world


def test_a_requirement_is_added_read_and_announced(world: World, wren: int) -> None:
    head = world.head
    made = world.add_requirement(fare())
    assert made["id"] == "fare"
    assert made["subject"] == wren
    assert {"leave": {"container": world.container("booth").id}} in made["guards"]
    # Added and announced in one commit.
    assert world.head == head + 2
    [view] = world.requirements()
    assert view["pending"] is True
    assert view["announced"] is True
    kinds = [e["event"] for e in world.events(head + 1)]
    assert "requirement_announced" in kinds[1]
    assert WARNING in kinds[1]["requirement_announced"]["line"]["text"]


def test_guarded_transitions_raise_and_change_nothing(with_fare: World, wren: int) -> None:
    world = with_fare
    head = world.head
    before = world.entity("Wren")
    with pytest.raises(RequirementUnmet) as unmet:
        world.move_entity("Wren", "bar")
    assert (unmet.value.requirement, unmet.value.name) == ("fare", "The fare")
    assert unmet.value.text.startswith("Wren must settle the bill")
    assert "Wren" in unmet.value.transition
    assert isinstance(unmet.value, RpError)
    bar = world.container("bar").id
    move = {"activity_changed": {"entity": wren, "activity": {"position": {"container": bar}}}}
    pay = {"entity_edited": {"id": wren, "facts": ["A traveller.", "fare_paid: true"]}}
    # Moving first and paying after, in one batch: refused whole.
    with pytest.raises(RequirementUnmet):
        world.append([move, pay])
    now = world.now
    skip = {"time_skipped": {"from": now, "to": now + HOUR, "skip": {"kind": "jump", "to": now + HOUR}}}
    with pytest.raises(RequirementUnmet):
        world.append([skip])
    with pytest.raises(RequirementUnmet):
        world.check_action("board", "Wren")
    with pytest.raises(RequirementUnmet):
        world.check_action("board")
    world.check_action("board", "Tobias Reed")
    world.check_action("sing", "Wren")
    assert world.head == head
    assert world.entity("Wren") == before
    # Paying first, then moving, in one batch: accepted.
    world.append([pay, move])
    assert world.requirements()[0]["pending"] is False
    world.check_action("board", "Wren")


def test_the_prompts_of_those_present_carry_the_warning(with_fare: World) -> None:
    world = with_fare
    tobias = world.inspect_prompt(world.entity_id("Tobias Reed"), "hello")
    assert any(WARNING in p["text"] for p in tobias["pieces"])
    mira = world.inspect_prompt(world.entity_id("Mira Holt"), "hello")
    assert not any(WARNING in p["text"] for p in mira["pieces"])


def test_a_state_report_settles_it(with_fare: World) -> None:
    world = with_fare
    with pytest.raises(RpError):
        world.apply_reports([{"type": "activity", "who": "Wren", "move_to": "the bar"}])
    world.apply_reports(
        [
            {"type": "state", "who": "Wren", "facts": {"fare_paid": True}},
            {"type": "activity", "who": "Wren", "move_to": "the bar"},
        ]
    )
    assert "fare_paid: true" in world.entity("Wren").facts
    assert world.requirements()[0]["pending"] is False


def test_bad_requirements_raise_and_change_nothing(with_fare: World) -> None:
    world = with_fare
    head = world.head
    base = fare()
    cases: list[tuple[Any, type[Exception]]] = [
        ("not json", InvalidInput),
        ([1], InvalidInput),
        ({**base, "id": "x", "subject": "nobody"}, NotFound),
        ({**base, "id": "x", "guards": [{"leave": "the moon"}]}, NotFound),
        ({**base, "id": "x", "condition": "self.a ==="}, FactSyntaxError),
        ({**base, "id": "x", "subject": None, "guards": [{"time_skip": True}]}, InvalidInput),
        ({**base, "id": "x", "guards": []}, InvalidInput),
        ({**base, "id": "x", "colour": "red"}, InvalidInput),
        (base, Conflict),
    ]
    for requirement, error in cases:
        with pytest.raises(error):
            world.add_requirement(requirement)
    with pytest.raises(NotFound):
        world.remove_requirement("nope")
    with pytest.raises(NotFound):
        world.check_action("board", "nobody")
    assert world.head == head
    # Removed: she leaves freely.
    world.remove_requirement("fare")
    assert world.requirements() == []
    world.move_entity("Wren", "bar")
