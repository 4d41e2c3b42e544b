"""Scenes and time skips from Python: ``World.open_scene``, ``scenes``,
``scene``, ``current_scene``, ``scene_of``, ``due_scenes``, the poll form
``Job`` of ``begin_scene_close``, ``begin_close_current_scene`` and
``begin_time_skip``, and the one-call forms ``close_scene``,
``close_current_scene`` and ``time_skip`` driven by a plain function.

The inn: Wren (the player) asks Mira for a room while Tobias sits by; the
scene closes with a summary per witness, each written from that witness's
point of view and kept in that witness's own memories. A night passes: the
skip closes the open scene, fires the scoped events scheduled in between in
time order, and rewinding to before it gives the world back as it was.
Bad input is refused with the exception of its kind and changes nothing.
"""

from collections.abc import Iterator
from typing import Any

import pytest

from rp_engine import (
    Conflict,
    GenerationError,
    InvalidInput,
    Job,
    NotFound,
    Scene,
    ScriptedGenerator,
    World,
)

MINUTE = 60_000
HOUR = 60 * MINUTE
ROOM = "Common Room"


@pytest.fixture
def inn() -> Iterator[World]:
    """One room with Wren (the player), Mira (who answers everything) and
    Tobias (who never answers)."""
    with World.in_memory("The Inn") as world:
        world.create_container(ROOM, key="room")
        world.create_container("Cellar", key="cellar")
        world.create_entity("Wren", host_controlled=True, container=ROOM)
        world.create_entity("Mira", facts="$respond", container=ROOM)
        world.create_entity("Tobias", facts="$respond false", container=ROOM)
        yield world


def say(world: World, text: str, now: int, reply: str = "Mind the step.") -> dict[str, Any]:
    """Wren says ``text`` at ``now``; Mira answers ``reply``."""
    model = ScriptedGenerator(reply)
    return world.run_turn(
        world.entity_id("Wren"), text, now, model, options={"remember_dialogue": False}
    )


def witness_of(request: dict[str, Any]) -> str:
    """Whose summary a request asks for: the name its prompt opens with."""
    system = request["messages"][0]["content"]
    assert isinstance(system, str) and system.startswith("You are ")
    return system[len("You are ") :].split(".", 1)[0]


def summaries_of(world: World, who: str) -> list[str]:
    """The texts of the scene summaries ``who`` holds."""
    return [m.text for m in world.memories(who) if m.kind == "scene_summary"]


def view(name: str) -> str:
    return f"{name} remembers Wren asking for a room."


def summarise(request: dict[str, Any]) -> str:
    """A plain generate function: each witness's own summary."""
    assert request["purpose"] == {"kind": "summary"}
    return view(witness_of(request))


def test_a_scene_closed_by_a_job_keeps_a_summary_per_witness_in_its_own_memories(
    inn: World,
) -> None:
    wren, mira, tobias = (inn.entity_id(n) for n in ("Wren", "Mira", "Tobias"))
    say(inn, "Is there a room for the night?", MINUTE)
    scene = inn.current_scene(ROOM)
    assert isinstance(scene, Scene) and scene.is_open
    assert (scene.opened, scene.closed, scene.lines) == (MINUTE, None, 2)
    assert scene.witnesses == [wren, mira, tobias]
    assert inn.scene_of("Wren") == scene == inn.scene(scene.id)

    head = inn.head
    job = inn.begin_scene_close(scene.id, now=2 * MINUTE)
    assert isinstance(job, Job)
    assert (job.kind, job.active) == ("scene_close", True)
    assert job.progress() == {
        "kind": "scene_close",
        "scene": scene.id,
        "witnesses": [wren, mira, tobias],
        "done": False,
    }
    texts = {
        "Wren": "Mira found me a room; the stairs creak.",
        "Mira": "A traveller took the room over the stable.",
        "Tobias": "A stranger came in from the rain.",
    }
    asked = []
    while (step := job.step())["step"] == "generate":
        assert step["purpose"] == {"kind": "summary"}
        assert job.step() == step, "asking again gives the same request"
        who = witness_of(step)
        asked.append(who)
        if who == "Mira":
            job.provide({"text": texts[who], "model": "test-model"})
        else:
            job.provide(texts[who])
    assert asked == ["Wren", "Mira", "Tobias"], "one request per witness, in id order"
    assert inn.head == head, "nothing is committed before finish()"

    outcome = job.finish()
    assert outcome["scene"] == scene.id and outcome["group"] is not None
    assert [w for w, _ in outcome["summaries"]] == [wren, mira, tobias]
    assert outcome["seq"] == inn.head > head
    for name in ("Wren", "Mira", "Tobias"):
        assert summaries_of(inn, name) == [texts[name]], f"{name} holds only its own"
    for witness, memory in outcome["summaries"]:
        assert inn.memory(memory).owner == witness
    closed = inn.scene(scene.id)
    assert (closed.closed, closed.is_open) == (2 * MINUTE, False)
    assert inn.current_scene(ROOM) is None and inn.scene_of("Wren") is None
    assert inn.scenes(open_only=True) == [] and inn.scenes() == [closed]
    assert not job.active


def test_close_scene_with_a_plain_generator(inn: World) -> None:
    say(inn, "Is there a room for the night?", MINUTE)
    scene = inn.current_scene("room")
    assert scene is not None
    outcome = inn.close_scene(scene.id, now=2 * MINUTE, generate=summarise)
    assert len(outcome["summaries"]) == 3
    for name in ("Wren", "Mira", "Tobias"):
        assert summaries_of(inn, name) == [view(name)]
    assert inn.scene(scene.id).closed == 2 * MINUTE


def test_close_current_scene_takes_the_container_and_scripted_summaries(inn: World) -> None:
    say(inn, "Is there a room for the night?", MINUTE)
    model = ScriptedGenerator("unused")
    model.script_purpose("summary", ["Wren's night.", "Mira's night.", "Tobias's night."])
    outcome = inn.close_current_scene(ROOM, now=3 * MINUTE, generate=model)
    assert outcome["seq"] == inn.head
    assert summaries_of(inn, "Mira") == ["Mira's night."]
    with pytest.raises(NotFound, match="open scene"):
        inn.begin_close_current_scene(ROOM, now=3 * MINUTE)


def test_opening_reading_and_closing_an_empty_scene(inn: World) -> None:
    head = inn.head
    scene = inn.open_scene("cellar", now=MINUTE)
    assert inn.head == head + 2, "the clock and the scene, one commit"
    assert inn.now == MINUTE
    found = inn.scene(scene)
    assert (found.container, found.opened, found.witnesses, found.lines) == (
        inn.container("cellar").id,
        MINUTE,
        [],
        0,
    )
    assert found.last_line is None
    assert found.to_dict()["id"] == scene
    assert repr(found) == (
        f"Scene(id={scene}, container={found.container}, opened={MINUTE}, open, "
        "witnesses=[], lines=0)"
    )
    with pytest.raises(Conflict, match="already has an open scene"):
        inn.open_scene("cellar", now=MINUTE)
    assert inn.scenes(open_only=True) == [found]

    # Due by time: nothing said in it for an hour (the default gap).
    assert inn.due_scenes(now=MINUTE) == []
    assert inn.due_scenes(now=MINUTE + HOUR) == [
        {"scene": scene, "reason": "gap", "since": MINUTE}
    ]
    assert inn.due_scenes(now=MINUTE + HOUR, options={"max_gap_ms": 0}) == []

    # Nothing was said: it closes with no summaries, and asks for none.
    job = inn.begin_scene_close(scene, now=2 * MINUTE)
    assert job.step() == {"step": "done"}
    assert job.progress()["witnesses"] == []
    assert job.finish()["summaries"] == []
    assert inn.scene(scene).closed == 2 * MINUTE


def test_a_time_jump_fires_scheduled_events_in_order_and_rewinding_restores_the_world(
    inn: World,
) -> None:
    say(inn, "Is there a room for the night?", MINUTE)
    scene = inn.current_scene(ROOM)
    assert scene is not None
    now = inn.now
    # Planned in an order that is not their time order.
    market = inn.plan_event("the market", participants=["Mira"], start_at=9 * HOUR, now=now)
    dawn = inn.plan_event(
        "the dawn bell", participants=["Wren", "Mira"], start_at=6 * HOUR, now=now
    )
    ferry = inn.plan_event("the ferry", participants=["Wren"], start_at=7 * HOUR, now=now)
    later = inn.plan_event("the evening", participants=["Wren"], start_at=20 * HOUR, now=now)

    head, state, exported = inn.head, inn.state(), inn.export_world_file()
    outcome = inn.time_skip(to=10 * HOUR, generate=summarise)
    assert (outcome["from"], outcome["to"]) == (now, 10 * HOUR)
    assert inn.now == 10 * HOUR
    assert outcome["due"]["started"] == [dawn, ferry, market]
    assert outcome["due"]["expired"] == []
    statuses = {e.id: e.status for e in inn.scoped_events()}
    assert statuses == {dawn: "active", ferry: "active", market: "active", later: "planned"}
    starts = [
        e["event"]["scoped_event_started"]["at"]
        for e in inn.events(head + 1)
        if "scoped_event_started" in e["event"]
    ]
    assert starts == [6 * HOUR, 7 * HOUR, 9 * HOUR]
    kinds = [kind for e in inn.events(head + 1) for kind in e["event"]]
    assert kinds.index("scene_closed") < kinds.index("time_skipped")
    assert [c["scene"] for c in outcome["closed_scenes"]] == [scene.id]
    assert inn.scene(scene.id).closed == now, "closed when the skip began"
    assert summaries_of(inn, "Tobias") == [view("Tobias")]

    # Rewinding to the head before the skip gives the world back.
    assert inn.rewind(head) is not None
    assert inn.head == head
    assert inn.state() == state
    assert inn.export_world_file() == exported
    assert inn.scene(scene.id).is_open
    assert summaries_of(inn, "Tobias") == []


def test_a_time_skip_as_a_job(inn: World) -> None:
    say(inn, "Is there a room for the night?", MINUTE)
    scene = inn.current_scene(ROOM)
    assert scene is not None
    job = inn.begin_time_skip(to=8 * HOUR, options={"significance": 0.9})
    assert job.kind == "time_skip"
    assert job.progress() == {"kind": "time_skip", "to": 8 * HOUR, "scenes": [scene.id], "done": False}
    while (step := job.step())["step"] == "generate":
        job.provide(view(witness_of(step)))
    outcome = job.finish()
    assert outcome["to"] == inn.now == 8 * HOUR
    assert {m.significance for m in inn.memories() if m.kind == "scene_summary"} == {0.9}

    # Without scenes, a skip closes none and asks for nothing.
    say(inn, "Morning, Mira.", 9 * HOUR)
    quiet = inn.time_skip(to=10 * HOUR, generate=summarise, options={"enabled": False})
    assert quiet["closed_scenes"] == []
    assert inn.current_scene(ROOM) is not None


def test_an_elision_skips_to_the_end_of_an_action(inn: World) -> None:
    mira = inn.entity_id("Mira")
    inn.advance_time(MINUTE)
    room = inn.container(ROOM).id
    activity = {
        "position": {"container": room, "slot": None},
        "action": {
            "verb": "scrubbing the floor",
            "started": MINUTE,
            "duration_ms": 2 * HOUR,
            "interruptible": True,
            "attention_required": False,
        },
        "status": "busy",
        "posture": "kneeling",
    }
    inn.append([{"activity_changed": {"entity": mira, "activity": activity}}])
    assert inn.entity("Mira").action == "scrubbing the floor"

    outcome = inn.time_skip(elide="Mira", generate=summarise)
    assert (outcome["from"], outcome["to"]) == (MINUTE, MINUTE + 2 * HOUR)
    assert outcome["reset"] == [mira]
    after = inn.entity(mira)
    assert (after.action, after.status, after.posture) == (None, None, "kneeling")
    assert after.container == room

    with pytest.raises(InvalidInput, match="doing nothing"):
        inn.begin_time_skip(elide=mira)


def test_bad_ids_and_options_are_refused_and_change_nothing(inn: World) -> None:
    say(inn, "Is there a room for the night?", MINUTE)
    scene = inn.current_scene(ROOM)
    assert scene is not None
    head, state = inn.head, inn.state()
    with pytest.raises(NotFound, match="scene"):
        inn.begin_scene_close(999_999, now=2 * MINUTE)
    with pytest.raises(NotFound):
        inn.open_scene("the attic", now=2 * MINUTE)
    with pytest.raises(NotFound):
        inn.current_scene(999_999)
    with pytest.raises(NotFound):
        inn.scene_of("Nobody")
    with pytest.raises(NotFound):
        inn.scene(999_999)
    with pytest.raises(InvalidInput, match="before the world's clock"):
        inn.begin_scene_close(scene.id, now=0)
    with pytest.raises(InvalidInput, match="unknown field"):
        inn.begin_scene_close(scene.id, now=2 * MINUTE, options={"max_gap": 5})
    with pytest.raises(InvalidInput, match="significance"):
        inn.close_scene(scene.id, now=2 * MINUTE, generate=summarise, options={"significance": 2.0})
    with pytest.raises(InvalidInput, match="summary_lines"):
        inn.due_scenes(now=2 * MINUTE, options={"summary_lines": 0})
    with pytest.raises(TypeError, match="exactly one of to= .* and elide="):
        inn.begin_time_skip(to=HOUR, elide="Mira")
    with pytest.raises(TypeError, match="exactly one"):
        inn.time_skip(generate=summarise)
    with pytest.raises(InvalidInput, match="a skip goes forward"):
        inn.begin_time_skip(to=MINUTE)
    with pytest.raises(NotFound):
        inn.begin_time_skip(elide="Nobody")
    with pytest.raises(InvalidInput, match="scene options"):
        inn.begin_time_skip(to=HOUR, options={"max_gap_ms": -1})
    assert (inn.head, inn.state()) == (head, state)

    # Closed already.
    inn.close_scene(scene.id, now=2 * MINUTE, generate=summarise)
    with pytest.raises(Conflict, match="already closed"):
        inn.begin_scene_close(scene.id, now=3 * MINUTE)


def test_a_job_finished_twice_or_too_early_or_abandoned(inn: World) -> None:
    say(inn, "Is there a room for the night?", MINUTE)
    scene = inn.current_scene(ROOM)
    assert scene is not None
    head = inn.head

    job = inn.begin_scene_close(scene.id, now=2 * MINUTE)
    with pytest.raises(Conflict, match="still needs a generation"):
        job.finish()
    assert job.active, "finishing too early leaves the job going"
    with pytest.raises(InvalidInput, match="empty"):
        job.provide("   ")
    assert witness_of(job.step()) == "Wren", "a refused summary changes nothing"
    with pytest.raises(TypeError, match="str"):
        job.provide(42)  # type: ignore[arg-type]
    # The host's model failed: the job asks for nothing more, and finishing commits nothing.
    job.fail("no model")
    assert job.step() == {"step": "done"}
    with pytest.raises(GenerationError, match="no model"):
        job.finish()
    assert not job.active and inn.head == head
    job.abandon()
    assert not job.active and inn.head == head
    assert repr(job) == "<Job scene_close, over>"
    for call in (job.step, job.finish, job.progress):
        with pytest.raises(Conflict, match="the job is over"):
            call()
    with pytest.raises(Conflict, match="the job is over"):
        job.provide("late")
    job.abandon()  # does nothing

    job = inn.begin_scene_close(scene.id, now=2 * MINUTE)
    while (step := job.step())["step"] == "generate":
        job.provide(view(witness_of(step)))
    job.finish()
    with pytest.raises(Conflict, match="the job is over"):
        job.finish()


def test_a_job_refuses_to_go_on_once_its_world_changed(inn: World) -> None:
    say(inn, "Is there a room for the night?", MINUTE)
    scene = inn.current_scene(ROOM)
    assert scene is not None
    job = inn.begin_scene_close(scene.id, now=2 * MINUTE)
    inn.advance_time(90_000)
    head = inn.head
    with pytest.raises(Conflict, match="changed since"):
        job.step()
    with pytest.raises(Conflict, match="changed since"):
        job.finish()
    assert inn.head == head


def test_an_exception_in_the_generator_commits_nothing(inn: World) -> None:
    say(inn, "Is there a room for the night?", MINUTE)
    scene = inn.current_scene(ROOM)
    assert scene is not None
    head, state = inn.head, inn.state()
    calls: list[str] = []

    def flaky(request: dict[str, Any]) -> str:
        calls.append(witness_of(request))
        if len(calls) == 2:
            raise ValueError("the model went away")
        return "I remember."

    with pytest.raises(GenerationError, match="generate raised ValueError") as raised:
        inn.close_scene(scene.id, now=2 * MINUTE, generate=flaky)
    cause = raised.value.__cause__
    assert isinstance(cause, ValueError) and cause.__traceback__ is not None
    assert calls == ["Wren", "Mira"]
    assert (inn.head, inn.state()) == (head, state)
    assert inn.scene(scene.id).is_open

    calls.clear()
    with pytest.raises(GenerationError):
        inn.time_skip(to=HOUR, generate=flaky)
    assert calls == ["Wren", "Mira"]
    assert (inn.head, inn.state()) == (head, state)

    # An empty summary is refused: nothing committed either.
    with pytest.raises(InvalidInput, match="empty"):
        inn.close_scene(scene.id, now=2 * MINUTE, generate=lambda request: "")
    assert inn.head == head

    async def coroutine(request: dict[str, Any]) -> str:
        return "never"

    with pytest.raises(TypeError, match="poll form"):
        inn.close_scene(scene.id, now=2 * MINUTE, generate=coroutine)  # type: ignore[arg-type]
    assert inn.head == head
