"""Tools during generation from Python: a reply request offers roll_dice and
roll_effects; a result with ``"tool_calls"`` (through ``Turn.provide`` or
returned by a ``run_turn`` callable) is run by the engine with the world's
seeded generator, and the next request ends with the results; with
``{"tools": False}`` no tool is offered.

In the tavern, Wren (the player) and Tobias sit in the corner booth.
"""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rp_engine import InvalidInput, World

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"
ASK = "Tobias, roll for the storm."
REPLY = "Thunder, then. No hail."

# A roll_dice call, a roll_effects call (one sure effect, one impossible) and
# a call of a tool that does not exist.
CALLS: list[dict[str, Any]] = [
    {"id": "a", "name": "roll_dice", "arguments": {"notation": "2d6+1"}},
    {
        "id": "b",
        "name": "roll_effects",
        "arguments": {
            "effects": [
                {"chance": 1.0, "desc": "thunder"},
                {"chance": 0.0, "desc": "hail"},
            ]
        },
    },
    {"id": "c", "name": "summon_dragon", "arguments": {}},
]


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in request.get("tools", [])]


def assert_ends_with_the_results(request: dict[str, Any], before: int) -> None:
    """The messages after the first ``before``: the assistant's calls, then
    one tool message per call, in order."""
    tail = request["messages"][before:]
    assert [m["role"] for m in tail] == ["assistant", "tool", "tool", "tool"]
    assert [call["id"] for call in tail[0]["tool_calls"]] == ["a", "b", "c"]
    assert tail[0]["tool_calls"][0]["arguments"] == {"notation": "2d6+1"}
    assert [m["tool_call_id"] for m in tail[1:]] == ["a", "b", "c"]
    dice, effects, unknown = (json.loads(m["content"]) for m in tail[1:])
    assert 3 <= dice["total"] <= 13
    assert len(dice["dice"]) == 2
    assert effects["results"] == [True, False]
    assert [e["desc"] for e in effects["effects"]] == ["thunder", "hail"]
    assert "summon_dragon" in unknown["error"]


def test_the_poll_form_runs_tool_calls_and_asks_again(world: World, wren: int) -> None:
    turn = world.begin_turn(wren, ASK, 1_000)
    first = turn.step()
    assert first["step"] == "generate"
    assert tool_names(first) == ["roll_dice", "roll_effects"]
    assert all("parameters" in tool for tool in first["tools"])

    turn.provide({"text": "", "tool_calls": CALLS})
    second = turn.step()
    assert second["step"] == "generate"
    assert second["purpose"] == first["purpose"]
    assert_ends_with_the_results(second, len(first["messages"]))
    assert tool_names(second) == ["roll_dice", "roll_effects"]

    # Arguments as a JSON text, as some servers send them, work the same.
    as_text = {"id": "d", "name": "roll_dice", "arguments": '{"notation": "d20"}'}
    turn.provide({"tool_calls": [as_text]})
    third = turn.step()
    last = third["messages"][-1]
    assert (last["role"], last["tool_call_id"]) == ("tool", "d")
    assert 1 <= json.loads(last["content"])["total"] <= 20

    # A call without a name is not a result: refused, the turn unchanged.
    with pytest.raises(InvalidInput):
        turn.provide({"tool_calls": [{"id": "e"}]})
    assert turn.step() == third

    turn.provide(REPLY)
    assert turn.step() == {"step": "done"}
    outcome = turn.finish()
    assert [r["text"] for r in outcome["replies"]] == [REPLY]


def test_after_three_rounds_the_tools_are_withdrawn(world: World, wren: int) -> None:
    turn = world.begin_turn(wren, ASK, 1_000)
    offered = [tool_names(turn.step())]
    for _ in range(3):
        d6 = {"id": "x", "name": "roll_dice", "arguments": {"notation": "d6"}}
        turn.provide({"tool_calls": [d6]})
        offered.append(tool_names(turn.step()))
    assert offered == [["roll_dice", "roll_effects"]] * 3 + [[]]
    turn.provide(REPLY)
    assert turn.finish()["replies"][0]["text"] == REPLY


def test_the_same_seed_rolls_the_same_dice(wren: int) -> None:
    def roll() -> str:
        content = ""
        with World.in_memory("The Crooked Lantern") as world:
            world.load_world_file(TAVERN)
            turn = world.begin_turn(wren, ASK, 1_000)
            turn.step()
            turn.provide({"tool_calls": CALLS})
            content = turn.step()["messages"][-3]["content"]
            turn.abandon()
        return content

    first = roll()
    assert "total" in first
    assert roll() == first


def test_without_tools_none_are_offered_and_calls_are_not_run(world: World, wren: int) -> None:
    turn = world.begin_turn(wren, ASK, 1_000, options={"tools": False})
    request = turn.step()
    assert request["step"] == "generate"
    assert "tools" not in request
    turn.provide({"text": "No dice tonight.", "tool_calls": CALLS[:1]})
    assert turn.step() == {"step": "done"}
    assert turn.finish()["replies"][0]["text"] == "No dice tonight."


class Roller:
    """A ``generate`` callable: calls the tools while they are offered and
    it has not seen their results, then answers with the reply."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        if "tools" in request and len(self.requests) == 1:
            return {"tool_calls": CALLS, "model": "roller"}
        return {"text": REPLY, "model": "roller"}


def test_run_turn_takes_tool_calls_from_a_callable(world: World, wren: int) -> None:
    roller = Roller()
    tokens: list[str] = []
    outcome = world.run_turn(
        wren, ASK, 1_000, roller, on_token=lambda purpose, text: tokens.append(text)
    )
    assert [r["text"] for r in outcome["replies"]] == [REPLY]
    assert len(roller.requests) == 2
    first, second = roller.requests
    assert tool_names(first) == ["roll_dice", "roll_effects"]
    assert_ends_with_the_results(second, len(first["messages"]))
    # The calls carry no text: only the reply is streamed.
    assert tokens == [REPLY]


def test_run_turn_async_takes_tool_calls_from_a_coroutine(world: World, wren: int) -> None:
    roller = Roller()

    async def generate(request: dict[str, Any]) -> dict[str, Any]:
        return roller(request)

    outcome = asyncio.run(world.run_turn_async(wren, ASK, 1_000, generate))
    assert [r["text"] for r in outcome["replies"]] == [REPLY]
    assert_ends_with_the_results(roller.requests[1], len(roller.requests[0]["messages"]))


def test_run_turn_without_tools_offers_none(world: World, wren: int) -> None:
    roller = Roller()
    outcome = world.run_turn(wren, ASK, 1_000, roller, options={"tools": False})
    assert [r["text"] for r in outcome["replies"]] == [REPLY]
    assert len(roller.requests) == 1
    assert "tools" not in roller.requests[0]


def test_requests_carry_the_tool_schemas_in_rp_cores_shape(world: World, wren: int) -> None:
    turn = world.begin_turn(wren, ASK, 1_000)
    first = turn.step()
    assert set(first) == {"step", "purpose", "messages", "params", "tools"}
    dice, effects = first["tools"]
    assert dice["name"] == "roll_dice"
    assert dice["parameters"]["required"] == ["notation"]
    assert dice["parameters"]["additionalProperties"] is False
    assert effects["parameters"]["properties"]["effects"]["items"]["required"] == [
        "chance",
        "desc",
    ]
    # The schemas are made once and shared (read-only); each request has its own list.
    turn.provide({"text": "", "tool_calls": CALLS})
    second = turn.step()
    assert second["tools"] == first["tools"]
    assert second["tools"] is not first["tools"]
    assert all(a is b for a, b in zip(second["tools"], first["tools"], strict=True))
    # Serialised, the request is exactly the JSON the engine writes for C hosts.
    assert json.loads(json.dumps(first["tools"])) == first["tools"]
