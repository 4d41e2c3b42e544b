"""The same bad inputs as test_the_same_bad_inputs_are_refused_as_in_python in
rp-ffi/tests/c/test_world.c, refused with the same kinds (InvalidInput here is
RP_RESULT_INVALID there, NotFound is RP_RESULT_NOT_FOUND) and the same words:
rp-core decides, both bindings convert."""

from __future__ import annotations

import pytest

from rp_engine import InvalidInput, NotFound, World


def test_a_misspelt_event_field_is_refused(world: World, wren: int) -> None:
    booth = world.container("booth").id
    head = world.head
    event = {"activity_changed": {"entity": wren, "activity": {"postion": {"container": booth}}}}
    with pytest.raises(InvalidInput) as raised:
        world.append([event])
    assert (
        "invalid event: events[0] (activity_changed): unknown field `activity.postion`"
        in str(raised.value)
    )
    assert world.head == head


def test_an_alias_two_entities_share_names_neither(world: World) -> None:
    first = world.next_id
    world.append(
        [
            {"entity_created": {"id": first, "name": "Ann", "aliases": ["the twin"]}},
            {"entity_created": {"id": first + 1, "name": "Bea", "aliases": ["The Twin"]}},
        ]
    )
    with pytest.raises(InvalidInput, match="names more than one entity") as raised:
        world.entity_id("the twin")
    assert "Ann (" in str(raised.value) and "Bea (" in str(raised.value)
    with pytest.raises(NotFound):
        world.entity_id("Nobody")


def test_an_unknown_turn_option_is_refused(world: World, wren: int) -> None:
    head = world.head
    with pytest.raises(InvalidInput, match="max_responder"):
        world.begin_turn(wren, "Evening.", 60_000, options={"max_responder": 2})
    assert world.head == head
