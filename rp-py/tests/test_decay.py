"""Memory that fades and reflects, from Python (docs/memory.md).

``World.retention`` reads a memory's retention at any time on FSRS's curve,
``(1 + 19/81 · t/S)^-0.5``, changing nothing; the tick (``begin_tick`` driven
step by step, or ``advance`` with a generate callable) moves a memory full →
summary (the fast model's JSON answer, purpose ``"summary"``) → residue (its
feeling on the owner's edge, ``Edge.imprints``) → forgotten (out of recall),
and a rewind brings it back; a character whose new memories weigh enough
reflects (purpose ``"reflect"``), its insights stored as memories of kind
``"reflection"`` with their ``sources``; hostile answers are asked again once,
then rejected with nothing applied; memory settings out of range raise
``InvalidInput``, the class every other invalid input raises, and change
nothing.

The tavern's drives are made quiet (no one speaks, tires or sleeps) so that
only memory work is ever due.
"""

import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from rp_engine import InvalidInput, NotFound, ScriptedGenerator, World

HOUR = 3_600_000
DAY = 24 * HOUR
# The stability of a memory of significance 0.5 under the default settings.
STABILITY = 24 * HOUR

QUIET: dict[str, Any] = {
    "weights": {"social_debt": 0, "task": 0, "curiosity": 0, "availability": 0},
    "energy_drain_per_hour": 0,
    "night_start": 0,
    "night_end": 0,
}

SHIPWRECK = "Wren told me about the shipwreck off the northern cape, and the cargo of silver bells"
WRECK = "Wren told me of a wreck full of silver"

Answer = Callable[[dict[str, Any]], str]


def fsrs(elapsed: float, stability: float) -> float:
    """FSRS's retention: 1 at once, 0.9 after one stability."""
    return float((1 + 19 / 81 * elapsed / stability) ** -0.5)


def due(r: float, stability: float) -> int:
    """When retention falls to ``r`` after the last review (ms, rounded up)."""
    return math.ceil(stability / (19 / 81) * (1 / r**2 - 1))


def never(request: dict[str, Any]) -> str:
    raise AssertionError(f"nothing should be asked, not {request['purpose']}")


def tick(
    world: World, now: int, answer: Answer = never
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Runs the tick at ``now`` through its Job, answering each request with ``answer``;
    returns the outcome and the requests asked."""
    job = world.begin_tick(now=now)
    assert job.kind == "tick"
    asked = []
    while (step := job.step())["step"] != "done":
        assert step["step"] == "generate"
        asked.append(step)
        job.provide(answer(step))
    return job.finish(), asked


def recalled(world: World, who: int, query: str, now: int) -> list[int]:
    return [r.id for r in world.recall(who, query, now=now)]


def event_kinds(world: World, first: int = 1) -> list[str]:
    return [next(iter(e["event"])) for e in world.events(first)]


@pytest.fixture
def quiet(world: World) -> World:
    world.configure_drives(QUIET)
    return world


@pytest.fixture
def reflective(world: World) -> World:
    """Tobias reflects once his new memories weigh 1 × (1.5 − his curiosity, 0.6) = 0.9."""
    world.configure_drives({**QUIET, "reflect_threshold": 1})
    return world


def test_retention_follows_fsrs_and_reading_it_changes_nothing(
    quiet: World, tobias: int, wren: int
) -> None:
    world = quiet
    paid = world.add_memory(tobias, "Wren paid for the ale in silver", witnesses=[wren])
    head, state = world.head, world.state()
    assert world.memory(paid).stability == 0.0
    for days in [0.0, 0.5, 1.0, 7.0, 30.0, 90.0]:
        now = int(days * DAY)
        assert world.retention(paid, now=now) == pytest.approx(fsrs(now, STABILITY), abs=1e-12)
    assert world.retention(paid, now=0) == 1.0
    assert world.retention(paid, now=DAY) == pytest.approx(0.9, abs=1e-12)
    assert world.head == head
    assert world.state() == state

    # Significance sets the curve: four times the stability at 1, four times less at 0.
    grave = world.add_memory(tobias, "Wren saved my life", witnesses=[wren], significance=1.0)
    idle = world.add_memory(tobias, "the rain on the window", significance=0.0)
    month = 30 * DAY
    assert world.retention(grave, now=month) == pytest.approx(fsrs(month, 4 * STABILITY), abs=1e-12)
    assert world.retention(idle, now=month) == pytest.approx(fsrs(month, STABILITY / 4), abs=1e-12)
    # Pinned memories and event gists never fade.
    vow = world.add_memory(tobias, "I swore never to sail again", pinned=True)
    gist = world.add_memory(tobias, "The festival ended in rain", kind="event_gist")
    assert world.retention(vow, now=1000 * DAY) == 1.0
    assert world.retention(gist, now=1000 * DAY) == 1.0

    # A recall a month on: whole again, its stability recorded and raised, its curve flatter.
    world.mark_recalled([paid], month)
    assert world.retention(paid, now=month) == 1.0
    reinforced = world.memory(paid).stability
    assert reinforced > 3 * STABILITY
    assert world.retention(paid, now=month + 10 * DAY) == pytest.approx(
        fsrs(10 * DAY, reinforced), abs=1e-12
    )
    # Recall weighs it by the same number.
    [found] = world.recall(tobias, "ale", now=month + 10 * DAY, relevance=0.0, significance=0.0)
    assert found.id == paid
    assert found.retention == world.retention(paid, now=month + 10 * DAY)
    assert found.score == pytest.approx(found.retention)

    with pytest.raises(NotFound):
        world.retention(999_999, now=0)
    with pytest.raises(NotFound):
        world.retention(tobias, now=0)  # an entity, not a memory
    with pytest.raises(TypeError):
        world.retention(None, now=0)  # type: ignore[arg-type]


def test_a_memory_fades_in_stages_and_a_rewind_brings_it_back(
    quiet: World, tobias: int, wren: int, mira: int
) -> None:
    world = quiet
    wreck = world.add_memory(tobias, SHIPWRECK, witnesses=[wren])
    before_decay = world.head
    summary_at = due(0.6, STABILITY)
    next_tick = world.next_tick_at(now=0)
    assert next_tick is not None
    assert next_tick["entity"] is None
    assert next_tick["reason"] == {"kind": "decay"}
    assert abs(next_tick["at"] - summary_at) <= 1
    summary_at = next_tick["at"]
    assert world.retention(wreck, now=summary_at) < 0.6 <= world.retention(wreck, now=summary_at - 1)

    # Before then a tick asks for nothing and fades nothing.
    early, _ = tick(world, summary_at - 1)
    assert (early["faded"], early["summarized"], early["reflections"]) == ([], [], [])

    def summarize(request: dict[str, Any]) -> str:
        assert request["purpose"] == {"kind": "summary"}
        assert request["json_schema"] is not None
        assert "shipwreck off the northern cape" in request["messages"][0]["content"]
        return json.dumps(
            {"summaries": [{"id": wreck, "summary": WRECK, "feeling": "fond", "about": "Wren"}]}
        )

    outcome, asked = tick(world, summary_at, summarize)
    assert len(asked) == 1
    assert outcome["summarized"] == [wreck]
    assert outcome["faded"] == []
    memory = world.memory(wreck)
    assert memory.decay == "summary"
    assert memory.text == SHIPWRECK
    assert (memory.summary, memory.feeling, memory.about) == (WRECK, "fond", wren)
    # Still recalled, shown as its summary.
    [found] = world.recall(tobias, "shipwreck", now=summary_at)
    assert (found.id, found.text) == (wreck, WRECK)

    # Then a residue, without a model: its feeling on Tobias's edge toward Wren.
    next_tick = world.next_tick_at(now=summary_at)
    assert next_tick is not None and next_tick["reason"] == {"kind": "decay"}
    assert abs(next_tick["at"] - due(0.35, STABILITY)) <= 1
    residue_at = next_tick["at"]
    outcome, _ = tick(world, residue_at)
    assert outcome["faded"] == [{"id": wreck, "stage": "residue"}]
    assert world.memory(wreck).decay == "residue"
    assert world.edge(tobias, wren).imprints == ["fond"]
    assert world.edge(tobias, wren).to_dict()["imprints"] == ["fond"]
    assert world.edge(tobias, mira).imprints == []
    assert recalled(world, tobias, "shipwreck silver wreck", residue_at) == []

    # Then forgotten; nothing more can fade.
    next_tick = world.next_tick_at(now=residue_at)
    assert next_tick is not None
    assert abs(next_tick["at"] - due(0.2, STABILITY)) <= 1
    outcome, _ = tick(world, next_tick["at"])
    assert outcome["faded"] == [{"id": wreck, "stage": "forgotten"}]
    assert world.memory(wreck).decay == "forgotten"
    assert recalled(world, tobias, "shipwreck silver wreck", next_tick["at"]) == []
    assert world.next_tick_at(now=next_tick["at"]) is None
    kinds = event_kinds(world, before_decay + 1)
    assert kinds.count("memories_summarized") == 1
    assert kinds.count("decay_passed") >= 2

    # Still in the log: a rewind brings it back whole.
    world.rewind(before_decay)
    memory = world.memory(wreck)
    assert (memory.decay, memory.summary) == ("full", None)
    assert world.edge(tobias, wren).imprints == []
    assert recalled(world, tobias, "shipwreck", 0) == [wreck]


def test_advance_summarizes_through_a_generate_callable(
    quiet: World, tobias: int, wren: int
) -> None:
    world = quiet
    song = world.add_memory(tobias, "Wren hummed the old ferry song by the fire", witnesses=[wren])
    model = ScriptedGenerator()
    model.script_purpose(
        "summary", [json.dumps({"summaries": [{"id": song, "summary": "Wren hummed"}]})]
    )
    # Due for its summary after about seven and a half days; a residue only after thirty.
    until = 10 * DAY
    outcomes = world.advance(until=until, generate=model)
    assert world.now == until
    assert [s for o in outcomes for s in o["summarized"]] == [song]
    assert [r["purpose"] for r in model.requests] == [{"kind": "summary"}]
    assert world.memory(song).summary == "Wren hummed"
    assert world.memory(song).decay == "summary"


def test_a_summary_of_another_s_memory_is_asked_again_once_then_left(
    quiet: World, tobias: int, wren: int, mira: int
) -> None:
    world = quiet
    song = world.add_memory(tobias, "Wren sang by the fire", witnesses=[wren])
    # Graver: not yet due when Tobias's is.
    bread = world.add_memory(mira, "Mira burned the bread", witnesses=[wren], significance=1.0)
    next_tick = world.next_tick_at(now=0)
    assert next_tick is not None
    hostile = json.dumps({"summaries": [{"id": bread, "summary": "bread"}]})
    outcome, asked = tick(world, next_tick["at"], lambda _: hostile)
    assert len(asked) == 2, "one request and exactly one retry"
    feedback = asked[1]["messages"][-1]["content"]
    assert "could not be used" in feedback
    assert f"id {bread}: not one of the memories listed" in feedback
    assert all("burned the bread" not in m["content"] for r in asked for m in r["messages"])
    assert outcome["summarized"] == []
    assert world.memory(song).decay == "full"
    assert world.memory(bread).decay == "full"
    assert world.memory(bread).summary is None
    # Asked again in an hour, not in a loop.
    again = world.next_tick_at(now=next_tick["at"])
    assert again is not None
    assert (again["at"], again["reason"]) == (next_tick["at"] + HOUR, {"kind": "decay"})


def test_a_character_reflects_once_its_memories_weigh_enough(
    reflective: World, tobias: int, wren: int, mira: int
) -> None:
    world = reflective
    brother = world.add_memory(
        tobias, "Wren asked about my brother", witnesses=[wren], significance=0.4
    )
    next_tick = world.next_tick_at(now=0)
    assert next_tick is None or next_tick["reason"] != {"kind": "reflect"}
    harbour = world.add_memory(
        tobias, "Wren asked about the harbour", witnesses=[wren], significance=0.7
    )
    recipe = world.add_memory(mira, "my secret recipe for the stew", significance=0.6)
    assert world.next_tick_at(now=0) == {"at": 0, "entity": tobias, "reason": {"kind": "reflect"}}

    def reflect(request: dict[str, Any]) -> str:
        assert request["purpose"] == {"kind": "reflect", "speaker": tobias}
        assert request["json_schema"] is not None
        prompt = request["messages"][0]["content"]
        assert "my brother" in prompt and "harbour" in prompt
        assert "secret recipe" not in prompt, "only Tobias's own memories"
        return json.dumps(
            {
                "insights": [
                    {
                        "text": "Wren is curious about my past",
                        "sources": [harbour, brother],
                        "significance": 0.8,
                    }
                ]
            }
        )

    outcome, asked = tick(world, 0, reflect)
    assert len(asked) == 1
    [reflection] = outcome["reflections"]
    assert (reflection["entity"], reflection["rejected"]) == (tobias, None)
    [insight] = reflection["insights"]
    memory = world.memory(insight)
    assert memory.kind == "reflection"
    assert memory.owner == tobias
    assert memory.witnesses == [tobias]
    assert memory.text == "Wren is curious about my past"
    assert memory.sources == [brother, harbour]
    assert memory.significance == 0.8
    # Its sources are reinforced; Mira's memory is untouched.
    assert world.memory(brother).access_count == 1
    assert world.memory(recipe).access_count == 0
    # Recalled like any memory of his, and only his; the count starts again.
    assert insight in recalled(world, tobias, "curious past", 0)
    assert insight not in recalled(world, mira, "curious past", 0)
    after = world.next_tick_at(now=0)
    assert after is None or after["reason"] != {"kind": "reflect"}
    assert event_kinds(world).count("reflected") == 1


@pytest.mark.parametrize(
    "label",
    ["another's memory", "out of range", "no source", "unknown field", "not JSON"],
)
def test_a_hostile_reflection_is_rejected_with_nothing_applied(
    reflective: World, tobias: int, wren: int, mira: int, label: str
) -> None:
    world = reflective
    own = world.add_memory(
        tobias, "Wren asked about my brother", witnesses=[wren], significance=0.6
    )
    world.add_memory(tobias, "Wren asked about the harbour", witnesses=[wren], significance=0.6)
    other = world.add_memory(mira, "my secret recipe for the stew", significance=0.6)
    answer = {
        "another's memory": json.dumps(
            {"insights": [{"text": "the recipe is cumin", "sources": [own, other]}]}
        ),
        "out of range": json.dumps(
            {"insights": [{"text": "hm", "sources": [own], "significance": 5}]}
        ),
        "no source": json.dumps({"insights": [{"text": "hm", "sources": []}]}),
        "unknown field": json.dumps({"insights": [], "mood": "x"}),
        "not JSON": "I think Wren likes me.",
    }[label]
    memories = world.memories()
    other_before = world.memory(other)

    outcome, asked = tick(world, 0, lambda _: answer)
    assert len(asked) == 2, "exactly one retry"
    assert all(r["purpose"] == {"kind": "reflect", "speaker": tobias} for r in asked)
    feedback = asked[1]["messages"][-1]["content"]
    assert "could not be used" in feedback
    if label == "another's memory":
        assert f"{other} is not a memory of" in feedback
        assert "recipe" not in feedback and "stew" not in feedback, "the reason names no content"
    [reflection] = outcome["reflections"]
    assert reflection["entity"] == tobias
    assert reflection["insights"] == []
    assert isinstance(reflection["rejected"], str) and reflection["rejected"]
    assert world.memories() == memories
    assert world.memory(other) == other_before
    # The rejection is recorded: Tobias is not asked again at once.
    after = world.next_tick_at(now=0)
    assert after is None or after["reason"] != {"kind": "reflect"}
    assert event_kinds(world).count("reflected") == 1


@pytest.mark.parametrize(
    "config",
    [
        {"summary_below": 2},
        {"reflect_memories": 0},
        {"summary_below": 0.3, "residue_below": 0.5, "forget_below": 0.1},
        {"memory_stability_hours": 0},
        {"forget_below": -0.1},
        {"consolidated_days": -1},
        {"reflect_threshold": 0},
        {"summary_batch": 101},
        {"keep_recalls": -1},
        {"summary_below": "low"},
    ],
)
def test_bad_memory_settings_raise_invalid_input_and_change_nothing(
    quiet: World, tobias: int, wren: int, config: dict[str, Any]
) -> None:
    world = quiet
    fire = world.add_memory(tobias, "Wren sang by the fire", witnesses=[wren])
    # The class every other invalid input raises (here, a move of the clock backwards).
    world.advance_time(HOUR)
    with pytest.raises(InvalidInput) as other:
        world.advance_time(0)
    head, state = world.head, world.state()
    with pytest.raises(InvalidInput) as raised:
        world.configure_drives(config)
    assert type(raised.value) is type(other.value)
    assert next(iter(config)) in str(raised.value)
    with pytest.raises(InvalidInput):
        world.configure_drives(config, entity="Tobias Reed")
    assert world.head == head
    assert world.state() == state
    assert world.retention(fire, now=3 * DAY) == pytest.approx(fsrs(3 * DAY, STABILITY), abs=1e-12)


def test_memory_settings_laid_over_each_other_are_checked_together(
    quiet: World, tobias: int, wren: int
) -> None:
    world = quiet
    fire = world.add_memory(tobias, "Wren sang by the fire", witnesses=[wren])
    world.configure_drives({**QUIET, "summary_below": 0.5})
    head, state = world.head, world.state()
    # Fine alone, but above the world's summary threshold once laid over it.
    with pytest.raises(InvalidInput, match="residue_below"):
        world.configure_drives({"residue_below": 0.55}, entity="Tobias Reed")
    with pytest.raises(InvalidInput, match="host-controlled"):
        world.configure_drives({"summary_below": 0.5}, entity="Wren")
    with pytest.raises(NotFound):
        world.configure_drives({"summary_below": 0.5}, entity="Nobody")
    assert (world.head, world.state()) == (head, state)

    # Settings in range take: a longer stability, a flatter curve; the entity's over the world's.
    world.configure_drives({**QUIET, "memory_stability_hours": 48})
    assert world.retention(fire, now=3 * DAY) == pytest.approx(fsrs(3 * DAY, 2 * STABILITY), abs=1e-12)
    world.configure_drives({"memory_stability_hours": 12}, entity="Tobias Reed")
    assert world.retention(fire, now=3 * DAY) == pytest.approx(fsrs(3 * DAY, STABILITY / 2), abs=1e-12)
