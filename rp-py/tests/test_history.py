"""The past from Python (docs/history.md): ``World.memories_at`` and
``World.beliefs_at`` at a seq and at a host time, on the current branch and
on the tail a rewind kept; ``as_of=`` on a world query; and bad points, each
raising the exception of the error kind Rust and C give.

Mira learns where the key is, the host reports Wren away an hour later, and
Mira forgets the key.
"""

import json
from typing import Any

import pytest

from rp_engine import InvalidInput, Memory, NotFound, World

HOUR = 3_600_000


def forget_the_key(world: World, mira: int, wren: int, tobias: int) -> tuple[int, int]:
    """Returns the head when the note was held, and the head at the end."""
    world.report_availability(tobias, 1.0, now=12 * HOUR)
    note = world.add_memory(mira, "The key is under the blue mat")
    noted = world.head
    world.report_availability(wren, 0.0, now=13 * HOUR)
    world.remove_memory(note)
    return noted, world.head


def texts(memories: list[Memory]) -> list[str]:
    return [m.text for m in memories]


def test_memories_and_beliefs_at_a_seq_and_a_time(
    world: World, mira: int, wren: int, tobias: int
) -> None:
    noted, end = forget_the_key(world, mira, wren, tobias)
    assert texts(world.memories_at(mira, seq=noted)) == ["The key is under the blue mat"]
    assert world.memories_at("Mira Holt", seq=end) == []
    assert world.head == end, "reading changes nothing"
    # At 12:59:59.999 the report about Wren had not come; at 13:00 it had.
    before = world.beliefs_at(mira, time=13 * HOUR - 1)
    assert (before["seq"], before["now"], before["branch"]) == (noted, 12 * HOUR, "main")
    assert [b["about"] for b in before["beliefs"]] == [tobias]
    after = world.beliefs_at(mira, time=13 * HOUR)
    assert after["seq"] == end
    assert sorted(b["about"] for b in after["beliefs"]) == sorted([tobias, wren])
    assert all(e["from"] == mira for e in after["edges"])
    # The present answers as the present does.
    assert after["beliefs"] == world.beliefs(mira, now=after["now"])


def test_a_rewound_tail_keeps_its_past(world: World, mira: int, wren: int, tobias: int) -> None:
    noted, end = forget_the_key(world, mira, wren, tobias)
    tail = world.rewind(noted)
    assert tail == "main~2"
    assert world.memories_at(mira, seq=end, branch=tail) == []
    assert texts(world.memories_at(mira, seq=noted, branch="main")) == [
        "The key is under the blue mat"
    ]
    with pytest.raises(InvalidInput, match="outside branch"):
        world.memories_at(mira, seq=end)


@pytest.mark.parametrize(
    ("point", "kind"),
    [
        ({"seq": 1, "branch": "nowhere"}, NotFound),
        ({"seq": 10**9}, InvalidInput),
        ({"seq": 0}, InvalidInput),
        ({"seq": -1}, InvalidInput),
        ({"time": -1}, InvalidInput),
        ({"seq": 1, "time": 1}, InvalidInput),
        ({}, InvalidInput),
        ({"seq": 1}, NotFound),  # Mira did not exist yet
    ],
)
def test_bad_points_raise_their_kinds(
    world: World, mira: int, point: dict[str, Any], kind: type[Exception]
) -> None:
    head = world.head
    with pytest.raises(kind):
        world.memories_at(mira, **point)
    with pytest.raises(kind):
        world.beliefs_at(mira, **point)
    assert world.head == head


def test_an_entity_unknown_then_is_not_found(world: World) -> None:
    with pytest.raises(NotFound):
        world.memories_at(999_999, seq=world.head)
    with pytest.raises(NotFound):
        world.beliefs_at("Nobody", seq=world.head)


def answer(content: str) -> str:
    return json.dumps(
        {"type": "answer", "content": content, "confidence": "high", "sources": []}
    )


def test_a_query_asked_about_the_past(world: World, mira: int, wren: int, tobias: int) -> None:
    noted, end = forget_the_key(world, mira, wren, tobias)
    job = world.begin_query(
        "Where is the key?", now=20 * HOUR, as_entity="Mira Holt", as_of={"seq": noted}
    )
    assert "The key is under the blue mat" in json.dumps(job.step())
    job.provide(answer("Under the blue mat."))
    outcome = job.finish()
    assert outcome["seq"] == world.head == end + 2, "recorded today"
    assert outcome["query"]["config"]["as_of"] == {"seq": noted}
    assert world.get_query(outcome["query"]["id"])["config"]["as_of"] == {"seq": noted}

    # Asked about today, the note is not in the context.
    seen: list[str] = []

    def model(request: dict[str, Any]) -> str:
        seen.append(json.dumps(request))
        return answer("I do not know.")

    world.ask("Where is the key?", now=20 * HOUR, generate=model, as_entity=mira)
    assert seen and "blue mat" not in seen[0]
    # The one-call form takes the same point, here by time (noon: the note was held).
    past = world.ask(
        "Where is the key?",
        now=20 * HOUR,
        generate=model,
        as_entity=mira,
        as_of={"time": 12 * HOUR, "branch": "main"},
    )
    assert "blue mat" in seen[1]
    assert past["query"]["config"]["as_of"] == {"time": 12 * HOUR, "branch": "main"}

    with pytest.raises(NotFound):
        world.begin_query("Where?", now=1, as_of={"seq": 1, "branch": "nowhere"})
    with pytest.raises(InvalidInput):
        world.begin_query("Where?", now=1, as_of={"time": -5})
    with pytest.raises(InvalidInput, match="twice"):
        world.begin_query(
            "Where?", now=1, as_of={"seq": 1}, config={"as_of": {"seq": 1}}
        )
    assert world.head == end + 6
