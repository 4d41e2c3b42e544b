"""Host actions from Python: the turn options declare the host's own report
types (``"updates": {"actions": [...]}``); each valid report of one comes back
after the state-update pass as an ``"act"`` step, which the host answers with
``Turn.provide_action`` (what the game did, or a refusal), or through the
``on_action`` callable of ``World.run_turn``/``run_turn_async``. The answer is
recorded in the outcome's ``"reports"``, and an answer's ``"system_line"``
is injected for the next prompts.

In the tavern, Wren (the player) and Tobias sit in the corner booth.
"""

import asyncio
import json
from typing import Any

import pytest

from rp_engine import (
    ActionRefused,
    Conflict,
    GenerationError,
    ScriptedGenerator,
    Turn,
    World,
)

OPEN_DOOR = {
    "name": "open_door",
    "description": "someone opens a door",
    "parameters": {
        "type": "object",
        "additionalProperties": False,
        "required": ["door"],
        "properties": {"door": {"enum": ["cellar", "front"]}},
    },
}
ACTIONS: dict[str, Any] = {"updates": {"enabled": True, "actions": [OPEN_DOOR]}}
CELLAR = {"type": "open_door", "who": "Tobias Reed", "door": "cellar"}
ATTIC = {"type": "open_door", "who": "Tobias Reed", "door": "attic"}
WARMER = {"type": "feeling", "who": "Tobias Reed", "toward": "Wren", "affinity": "warmer"}
CREAKS = {"opened": True, "system_line": "The door creaks."}


def answer(*reports: dict[str, Any]) -> str:
    return json.dumps({"reports": list(reports)})


def at_the_door(world: World, wren: int, now: int) -> Turn:
    """A turn with open_door declared, past the reply and the pass (whose
    answer holds a bad door, so it is asked once more): the next step is the
    action."""
    turn = world.begin_turn(wren, "Tobias, open the cellar.", now, options=ACTIONS)
    assert turn.step()["purpose"]["kind"] == "reply"
    turn.provide("Aye.")
    for _ in range(2):
        step = turn.step()
        assert step["purpose"] == {"kind": "state_update"}
        turn.provide(answer(CELLAR, ATTIC, WARMER))
    return turn


def test_a_valid_action_is_one_act_step_and_its_answer_is_recorded(
    world: World, wren: int, tobias: int
) -> None:
    turn = at_the_door(world, wren, 1_000)
    step = turn.step()
    assert step == {
        "step": "act",
        "name": "open_door",
        "who": tobias,
        "arguments": {"door": "cellar"},
        "report": 0,
    }
    with pytest.raises(Conflict, match="a host action's answer"):
        turn.finish()
    with pytest.raises(Conflict):
        turn.provide("not asked for")

    turn.provide_action(CREAKS)
    assert turn.step() == {"step": "done"}
    with pytest.raises(Conflict, match="not waiting for a host action"):
        turn.provide_action({})
    outcome = turn.finish()
    reports = outcome["reports"]
    assert len(reports) == 3
    assert reports[0]["rejected"] is None
    assert json.loads(reports[0]["answer"]) == CREAKS
    assert "must be one of" in reports[1]["rejected"]
    assert reports[1]["answer"] is None
    assert reports[2]["rejected"] is None and reports[2]["answer"] is None
    assert [line["text"] for line in world.system_lines()] == ["The door creaks."]


def test_a_refusal_is_recorded_as_rejected(world: World, wren: int) -> None:
    turn = at_the_door(world, wren, 1_000)
    assert turn.step()["step"] == "act"
    turn.provide_action(refusal="the cellar is locked")
    reports = turn.finish()["reports"]
    assert reports[0]["rejected"] == "the cellar is locked"
    assert reports[0]["answer"] is None
    assert world.system_lines() == []


def test_provide_action_takes_exactly_one_of_answer_and_refusal(
    world: World, wren: int
) -> None:
    turn = at_the_door(world, wren, 1_000)
    with pytest.raises(TypeError, match="not both"):
        turn.provide_action(CREAKS, refusal="locked")
    with pytest.raises(TypeError, match="needs an answer"):
        turn.provide_action()
    with pytest.raises(TypeError, match="cannot become JSON"):
        turn.provide_action({"door": object()})
    assert turn.step()["step"] == "act", "still waiting"
    turn.provide_action([1, "two"])
    assert json.loads(turn.finish()["reports"][0]["answer"]) == [1, "two"]


def scripted() -> ScriptedGenerator:
    model = ScriptedGenerator("Aye.")
    model.script_purpose("state_update", [answer(CELLAR, WARMER)])
    return model


def test_run_turn_hands_actions_to_on_action(world: World, wren: int, tobias: int) -> None:
    calls: list[dict[str, Any]] = []

    def on_action(call: dict[str, Any]) -> dict[str, Any]:
        calls.append(call)
        return CREAKS

    outcome = world.run_turn(
        wren, "Tobias, the cellar?", 1_000, scripted(), on_action=on_action, options=ACTIONS
    )
    assert calls == [
        {"name": "open_door", "who": tobias, "arguments": {"door": "cellar"}, "report": 0}
    ]
    assert json.loads(outcome["reports"][0]["answer"]) == CREAKS
    assert [line["text"] for line in world.system_lines()] == ["The door creaks."]


def test_on_action_refuses_by_raising_action_refused(world: World, wren: int) -> None:
    def on_action(call: dict[str, Any]) -> None:
        raise ActionRefused(f"the {call['arguments']['door']} is barred")

    outcome = world.run_turn(
        wren, "Tobias, the cellar?", 1_000, scripted(), on_action=on_action, options=ACTIONS
    )
    assert outcome["reports"][0]["rejected"] == "the cellar is barred"
    assert outcome["reports"][1]["rejected"] is None, "the feeling is applied"


def test_without_on_action_every_action_is_refused_saying_why(world: World, wren: int) -> None:
    outcome = world.run_turn(wren, "Tobias, the cellar?", 1_000, scripted(), options=ACTIONS)
    rejected = outcome["reports"][0]["rejected"]
    assert "no on_action callable" in rejected and "open_door" in rejected


def test_on_action_returning_none_records_an_empty_answer(world: World, wren: int) -> None:
    outcome = world.run_turn(
        wren,
        "Tobias, the cellar?",
        1_000,
        scripted(),
        on_action=lambda call: None,
        options=ACTIONS,
    )
    assert outcome["reports"][0]["answer"] == "{}"


def test_another_exception_of_on_action_abandons_the_turn(world: World, wren: int) -> None:
    def on_action(call: dict[str, Any]) -> object:
        raise KeyError("the door")

    head = world.head
    with pytest.raises(GenerationError, match="on_action raised KeyError") as raised:
        world.run_turn(
            wren, "Tobias, the cellar?", 1_000, scripted(), on_action=on_action, options=ACTIONS
        )
    assert isinstance(raised.value.__cause__, KeyError)
    assert world.head == head + 3, "the clock, the scene the line opens and the input only"
    assert world.system_lines() == []


def test_the_sync_driver_refuses_an_async_on_action(world: World, wren: int) -> None:
    async def on_action(call: dict[str, Any]) -> object:
        return CREAKS

    with pytest.raises(TypeError, match="run_turn_async"):
        world.run_turn(
            wren, "Tobias, the cellar?", 1_000, scripted(), on_action=on_action, options=ACTIONS
        )


def test_run_turn_async_awaits_on_action(world: World, wren: int) -> None:
    seen: list[str] = []

    async def on_action(call: dict[str, Any]) -> object:
        await asyncio.sleep(0)
        seen.append(call["name"])
        if len(seen) > 1:
            raise ActionRefused("only once")
        return CREAKS

    async def main() -> list[dict[str, Any]]:
        first = await world.run_turn_async(
            wren, "Tobias, the cellar?", 1_000, scripted(), on_action=on_action, options=ACTIONS
        )
        second = await world.run_turn_async(
            wren, "Tobias, again?", 2_000, scripted(), on_action=on_action, options=ACTIONS
        )
        return [first, second]

    first, second = asyncio.run(main())
    assert seen == ["open_door", "open_door"]
    assert json.loads(first["reports"][0]["answer"]) == CREAKS
    assert second["reports"][0]["rejected"] == "only once"
