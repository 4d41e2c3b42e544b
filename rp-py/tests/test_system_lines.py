"""System lines from Python: ``World.inject_system_line`` puts
``[SYSTEM: text]`` in the next prompts of its audience, never trimmed, until a
turn has shown it to a responder; ``World.system_lines`` lists the ones still
waiting. Bad input is refused and changes nothing.

In the tavern, Wren (the player) and Tobias sit in the corner booth; Mira
stands behind the bar, out of earshot.
"""

from pathlib import Path
from typing import Any

import pytest

from rp_engine import InvalidInput, NotFound, RpError, ScriptedGenerator, World

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"
MINUTE = 60_000
SLAM = "The cellar door slams shut. React to it."
CAT = "A cat knocks a tankard off the bar."
SYSTEM_LINE = "a system line to process (injected; never trimmed)"


def system_pieces(prompt: dict[str, Any]) -> list[str]:
    """The texts of the system lines a prompt carries."""
    return [p["text"] for p in prompt["pieces"] if p["why"] == SYSTEM_LINE]


def test_an_injected_line_reaches_its_audience_until_a_turn_shows_it(
    world: World, wren: int, tobias: int, mira: int
) -> None:
    assert world.system_lines() == []
    head = world.head
    to_tobias = world.inject_system_line(SLAM, [tobias])
    assert world.head == head + 1, "one event"
    to_mira = world.inject_system_line(f"  {CAT}\n", audience=[mira])
    assert to_mira != to_tobias
    assert world.system_lines() == [
        {"id": to_tobias, "text": SLAM, "audience": [tobias], "at": 0},
        {"id": to_mira, "text": CAT, "audience": [mira], "at": 0},
    ], "oldest first, the text without its surrounding whitespace"

    # Each prompt carries its own line only, in the dialogue section.
    prompt = world.inspect_prompt(tobias)
    assert system_pieces(prompt) == [f"[SYSTEM: {SLAM}]"]
    assert f"[SYSTEM: {SLAM}]" in prompt["messages"][0]["content"]
    assert all(
        p["section"] == "dialogue" for p in prompt["pieces"] if p["why"] == SYSTEM_LINE
    )
    assert system_pieces(world.inspect_prompt(mira)) == [f"[SYSTEM: {CAT}]"]
    # Never trimmed, even on a budget too small for a recalled memory.
    world.add_memory(tobias, "I saw green lights over the marsh")
    tiny = world.inspect_prompt(tobias, "green lights", options={"budget_tokens": 40})
    assert [p["section"] for p in tiny["trimmed"]] == ["memories"]
    assert system_pieces(tiny) == [f"[SYSTEM: {SLAM}]"]

    # A turn in the booth: Tobias answers, and his generation reads the line.
    model = ScriptedGenerator()
    model.script(tobias, ["The wind, most like."])
    outcome = world.run_turn(wren, "Tobias, what was that?", MINUTE, model)
    assert [r["speaker"] for r in outcome["replies"]] == [tobias]
    assert len(model.requests) == 1
    assert f"[SYSTEM: {SLAM}]" in model.requests[0]["messages"][0]["content"]

    # Shown to Tobias, his line is gone; Mira did not respond, hers waits.
    assert [line["id"] for line in world.system_lines()] == [to_mira]
    assert system_pieces(world.inspect_prompt(tobias)) == []
    assert system_pieces(world.inspect_prompt(mira)) == [f"[SYSTEM: {CAT}]"]


def test_without_an_audience_every_character_gets_it(
    world: World, tobias: int, mira: int
) -> None:
    line = world.inject_system_line("Thunder rolls over the marsh.")
    assert world.system_lines() == [
        {"id": line, "text": "Thunder rolls over the marsh.", "audience": None, "at": 0}
    ]
    for who in (tobias, mira):
        assert system_pieces(world.inspect_prompt(who)) == [
            "[SYSTEM: Thunder rolls over the marsh.]"
        ]


def test_bad_input_is_refused_and_changes_nothing(world: World, tobias: int) -> None:
    head = world.head
    with pytest.raises(InvalidInput, match="empty"):
        world.inject_system_line("")
    with pytest.raises(InvalidInput, match="empty"):
        world.inject_system_line(" \n\t ", [tobias])
    with pytest.raises(InvalidInput, match="longer than"):
        world.inject_system_line("a" * (64 * 1024 + 1))
    with pytest.raises(NotFound, match="999999"):
        world.inject_system_line(SLAM, [tobias, 999_999])
    with pytest.raises(TypeError):
        world.inject_system_line(SLAM, "tobias")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        world.inject_system_line(SLAM, ["tobias"])  # type: ignore[list-item]
    with pytest.raises(OverflowError):
        world.inject_system_line(SLAM, [-1])
    with pytest.raises(TypeError):
        world.inject_system_line(None)  # type: ignore[arg-type]
    assert world.head == head
    assert world.system_lines() == []
    assert system_pieces(world.inspect_prompt(tobias)) == []


def test_a_closed_world_refuses_system_lines() -> None:
    with World.in_memory("closing") as world:
        world.load_world_file(TAVERN)
    with pytest.raises(RpError, match="closed"):
        world.inject_system_line(SLAM)
    with pytest.raises(RpError, match="closed"):
        world.system_lines()
