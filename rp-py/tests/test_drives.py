"""Drives from Python: ``World.drives``, ``initiation_candidates``,
``next_tick_at``, the tick as a ``Job`` (``begin_tick``) and played over host
time in one call (``advance``), and what the host records: ``notify``,
``configure_drives``, ``set_personality``, ``report_availability``.

The tavern: Mira, behind the bar, has an edge to Wren (the player). With
Wren moved to a stool at the bar, Mira hears and is heard by Wren, so her
social debt toward Wren grows until she speaks first. Energy drains with the
hours. Bad input is refused with the exception of its kind (the one every
other invalid input raises) and changes nothing.
"""

from typing import Any

import pytest

from rp_engine import (
    Conflict,
    GenerationError,
    InvalidInput,
    NotFound,
    ScriptedGenerator,
    World,
)

MINUTE = 60_000
HOUR = 60 * MINUTE


@pytest.fixture
def at_the_bar(world: World) -> World:
    """The tavern with Wren on a stool at the bar, within earshot of Mira, and
    Mira quick to miss company (her social debt grows 20 a hour)."""
    world.move_entity("Wren", "bar", "stools")
    world.configure_drives({"social_debt_per_hour": 20}, entity="Mira Holt")
    return world


def test_a_character_starts_rested_and_its_energy_drains_with_the_hours(
    world: World, mira: int
) -> None:
    start = world.drives("Mira Holt", now=0)
    assert start["entity"] == mira
    assert start["at"] == 0
    assert start["energy"] == 1.0
    assert start["mode"] in ("alert", "normal", "relaxed")
    traits = start["personality"]
    assert set(traits) == {
        "humor",
        "formality",
        "curiosity",
        "patience",
        "empathy",
        "shyness",
        "independence",
    }
    assert all(0.0 <= value <= 1.0 for value in traits.values())
    # Her debts, toward everyone she has an edge to, as [entity, debt] pairs.
    assert [pair[0] for pair in start["social_debt"]] == sorted(
        [world.entity_id("Tobias Reed"), world.entity_id("Wren")]
    )
    assert start["inbox"] == []

    later = world.drives(mira, now=3 * HOUR)
    assert later["energy"] < start["energy"]
    assert later["at"] == 3 * HOUR
    # Reading changes nothing: the clock stays where it was.
    assert world.now == 0


def test_drives_of_the_player_or_before_the_clock_are_refused(world: World) -> None:
    with pytest.raises(InvalidInput, match="host-controlled"):
        world.drives("Wren", now=0)
    with pytest.raises(NotFound):
        world.drives("Nobody", now=0)
    world.advance_time(MINUTE)
    with pytest.raises(InvalidInput):
        world.drives("Mira Holt", now=0)


def test_a_bad_personality_raises_invalid_input_and_changes_nothing(world: World) -> None:
    # The class every other invalid input raises (here, a move of the clock backwards).
    world.advance_time(MINUTE)
    with pytest.raises(InvalidInput) as other:
        world.advance_time(0)
    head, state = world.head, world.state()
    before = world.drives("Mira Holt", now=MINUTE)["personality"]

    with pytest.raises(InvalidInput) as raised:
        world.set_personality("Mira Holt", {"shyness": 1.5})
    assert type(raised.value) is type(other.value)
    assert "shyness" in str(raised.value)
    with pytest.raises(InvalidInput, match="charm"):
        world.set_personality("Mira Holt", {"charm": 0.5})
    assert world.head == head
    assert world.state() == state
    assert world.drives("Mira Holt", now=MINUTE)["personality"] == before

    seq = world.set_personality("Mira Holt", {"shyness": 0.9, "empathy": 0.8})
    assert seq == world.head
    traits = world.drives("Mira Holt", now=MINUTE)["personality"]
    assert traits["shyness"] == 0.9
    assert traits["empathy"] == 0.8
    # A trait not given is 0.5: the call sets the whole personality.
    assert traits["humor"] == 0.5


def test_drive_settings_out_of_range_or_unknown_are_refused(world: World) -> None:
    head = world.head
    threshold = world.drives("Mira Holt", now=0)["threshold"]
    with pytest.raises(InvalidInput, match="social_debt_per_hour"):
        world.configure_drives({"social_debt_per_hour": -1.0})
    with pytest.raises(InvalidInput, match="social_debt_per_hour"):
        world.configure_drives({"social_debt_per_hour": -1.0}, entity="Mira Holt")
    with pytest.raises(InvalidInput, match="bedtime"):
        world.configure_drives({"bedtime": 22})
    with pytest.raises(NotFound):
        world.configure_drives({"threshold": 0.5}, entity="Nobody")
    assert world.head == head

    assert world.drives("Mira Holt", now=0)["threshold"] == threshold

    assert world.configure_drives({"threshold": 0.1}, entity="Mira Holt") == world.head
    assert world.drives("Mira Holt", now=0)["threshold"] < threshold


def test_a_stimulus_of_a_kind_the_world_adds_reaches_the_inbox(world: World) -> None:
    head = world.head
    with pytest.raises(InvalidInput, match="door"):
        world.notify("Mira Holt", "door", "high", "The door slams.", now=MINUTE)
    with pytest.raises(InvalidInput, match="priority"):
        world.notify("Mira Holt", "sound", "urgent", "A crash.", now=MINUTE)
    assert world.head == head
    assert world.now == 0

    world.configure_drives({"stimulus_kinds": ["door"]})
    stimulus = world.notify("Mira Holt", "door", "high", "The door slams.", now=MINUTE)
    assert world.now == MINUTE
    inbox = world.drives("Mira Holt", now=MINUTE)["inbox"]
    assert [(s["id"], s["kind"], s["priority"], s["payload"]) for s in inbox] == [
        (stimulus, "door", "high", "The door slams.")
    ]


def test_an_availability_report_is_recorded_and_refused_out_of_range(world: World) -> None:
    with pytest.raises(InvalidInput):
        world.report_availability("Wren", 1.5, now=MINUTE)
    assert world.now == 0
    seq = world.report_availability("Wren", 0.0, now=MINUTE)
    assert seq == world.head
    assert world.now == MINUTE


def test_next_tick_at_before_the_clock_is_refused(world: World) -> None:
    world.advance_time(HOUR)
    with pytest.raises(InvalidInput):
        world.next_tick_at(now=0)
    next_tick = world.next_tick_at(now=HOUR)
    assert next_tick is None or next_tick["at"] >= HOUR


def test_a_character_whose_pressure_crosses_speaks_first_in_a_tick(
    at_the_bar: World, mira: int, wren: int
) -> None:
    world = at_the_bar
    [candidate] = world.initiation_candidates("Mira Holt", now=0)
    assert (candidate["speaker"], candidate["to"]) == (mira, wren)
    assert candidate["score"] < candidate["threshold"]
    assert "pressure" in candidate["explanation"]

    next_tick = world.next_tick_at(now=0)
    assert next_tick is not None
    assert next_tick["entity"] == mira
    assert next_tick["reason"] == {"kind": "pressure", "to": wren}
    assert 0 < next_tick["at"] < HOUR

    job = world.begin_tick(now=next_tick["at"])
    assert job.kind == "tick"
    step = job.step()
    assert step["step"] == "generate"
    assert step["purpose"] == {"kind": "initiate", "speaker": mira}
    job.provide("Another cider, traveller?")
    while (step := job.step())["step"] != "done":
        assert step["step"] == "generate"
        job.provide("...")
    outcome = job.finish()
    assert not job.active

    assert outcome["at"] == next_tick["at"]
    [initiation] = outcome["initiations"]
    assert initiation["candidate"]["speaker"] == mira
    assert initiation["candidate"]["to"] == wren
    assert "pressure" in initiation["explanation"]
    assert "Mira Holt → Wren" in initiation["explanation"]
    assert initiation["turn"]["replies"][0]["text"] == "Another cider, traveller?"
    assert world.dialogue()[-1]["text"] == "Another cider, traveller?"
    assert world.now == next_tick["at"]


def test_a_tick_whose_turn_recalls_semantically_asks_for_vectors(at_the_bar: World) -> None:
    world = at_the_bar
    model = ScriptedGenerator()
    next_tick = world.next_tick_at(now=0)
    assert next_tick is not None
    job = world.begin_tick(now=next_tick["at"], options={"turn": {"semantic": True}})
    asked = []
    while (step := job.step())["step"] != "done":
        asked.append(step["step"])
        if step["step"] == "embed":
            job.provide_embeddings(model.embed(step["texts"]))
        else:
            job.provide("Evening.")
    assert asked[0] == "generate"
    assert "embed" in asked
    # It asks for no host action: answering one is refused.
    with pytest.raises(Conflict):
        job.provide_action({})
    [initiation] = job.finish()["initiations"]
    assert initiation["turn"]["replies"][0]["text"] == "Evening."


def test_initiations_are_scripted_by_purpose_and_other_purposes_refused() -> None:
    model = ScriptedGenerator()
    model.script_purpose("initiate", ["You look lost."])
    with pytest.raises(InvalidInput, match="initiate"):
        model.script_purpose("gossip", ["Did you hear?"])


def test_a_tick_with_nothing_due_asks_for_nothing_and_commits_nothing(world: World) -> None:
    head = world.head
    job = world.begin_tick(now=0, options={"max_initiations": 1})
    assert job.step() == {"step": "done"}
    outcome = job.finish()
    assert outcome["initiations"] == []
    assert outcome["seq"] == head == world.head
    with pytest.raises(InvalidInput, match="max_turns"):
        world.begin_tick(now=0, options={"max_turns": 1})


def test_advance_plays_host_time_and_initiates_through_generate(
    at_the_bar: World, mira: int
) -> None:
    world = at_the_bar
    model = ScriptedGenerator()
    model.script_purpose("initiate", ["Quiet tonight, isn't it?"])
    until = 3 * HOUR
    outcomes = world.advance(until=until, generate=model)

    assert world.now == until
    initiations = [i for outcome in outcomes for i in outcome["initiations"]]
    assert initiations
    first = initiations[0]
    assert first["candidate"]["speaker"] == mira
    assert "pressure" in first["explanation"]
    assert first["turn"]["replies"][0]["text"] == "Quiet tonight, isn't it?"
    assert [o["at"] for o in outcomes] == sorted(o["at"] for o in outcomes)
    assert all(o["at"] <= until for o in outcomes)
    purposes = {request["purpose"]["kind"] for request in model.requests}
    assert "initiate" in purposes

    # Nothing left to play: the clock moves, nothing else happens.
    assert world.advance(until=until, generate=model) == []
    with pytest.raises(InvalidInput):
        world.advance(until=0, generate=model)


def test_advance_with_a_plain_function_that_raises(at_the_bar: World) -> None:
    world = at_the_bar

    def broken(request: dict[str, Any]) -> str:
        raise ValueError("the model is down")

    with pytest.raises(GenerationError) as raised:
        world.advance(until=HOUR, generate=broken)
    assert isinstance(raised.value.__cause__, ValueError)
    # The initiation is held back (recorded), so the clock stands at that tick.
    assert 0 < world.now < HOUR
    assert world.drives("Mira Holt", now=world.now)["held_until"] is not None


def test_generate_may_not_call_the_world_it_advances(at_the_bar: World) -> None:
    world = at_the_bar

    def nosy(request: dict[str, Any]) -> str:
        return f"It is {world.now} o'clock."

    with pytest.raises(GenerationError) as raised:
        world.advance(until=HOUR, generate=nosy)
    assert isinstance(raised.value.__cause__, Conflict)
    # The World is usable again once advance returns.
    assert world.now > 0
    assert not world.closed
