"""The player's hand on the story from Python (docs/edits.md): ``World.preview_edit``,
``edit_line`` and ``delete_line`` keep the rest of the story and the old history as a branch;
``regenerate``, ``alternatives`` and ``choose`` (swipes) keep every alternative and put only
the chosen one in memories and prompts; bad input raises the exception of its kind and changes
nothing."""

from typing import Any

import pytest

from rp_engine import Conflict, InvalidInput, NotFound, ScriptedGenerator, World


def say(world: World, wren: int, text: str, reply: str) -> dict[str, Any]:
    return world.run_turn(wren, text, world.now + 60_000, ScriptedGenerator(reply))


def memories(world: World, who: int) -> list[str]:
    return [m.text for m in world.memories(who)]


def test_a_line_is_edited_and_deleted_with_the_story_kept(
    world: World, wren: int, tobias: int
) -> None:
    first = say(world, wren, "I carry a sealed letter.", "For whom?")
    say(world, wren, "For the ferryman.", "He crosses at dawn.")
    line = first["input"]
    preview = world.preview_edit(line, "I carry a wet letter.")
    assert preview["invalid"] == []
    assert any(n["kind"] == "user_turn" for n in preview["edited"])
    done = world.edit_line(line, "I carry a wet letter.")
    assert done["old_branch"].startswith("main~")
    texts = memories(world, tobias)
    assert "Wren: I carry a wet letter." in texts
    assert not any("sealed" in t for t in texts)
    assert "Wren: For the ferryman." in texts, "the rest of the story is kept"

    reply = first["replies"][0]["utterance"]
    world.delete_line(reply, on_invalid="drop")
    assert not any("For whom?" in t for t in memories(world, tobias))


def test_swipes_keep_alternatives_and_only_the_chosen_is_remembered(
    world: World, wren: int, tobias: int
) -> None:
    turn = say(world, wren, "May I sit?", "No.")
    line = turn["replies"][0]["utterance"]
    seen: list[dict[str, Any]] = []

    def other(request: dict[str, Any]) -> str:
        seen.append(request)
        return "Sit down, stranger."

    assert world.regenerate(other) == 1
    assert any("May I sit?" in m["content"] for m in seen[0]["messages"])
    assert world.alternatives(line) == {"texts": ["No.", "Sit down, stranger."], "chosen": 0}
    assert not any("Sit down" in t for t in memories(world, tobias))
    world.choose(line, 1, ScriptedGenerator())
    assert "Tobias Reed: Sit down, stranger." in memories(world, tobias)
    assert "Tobias Reed: No." not in memories(world, tobias)
    assert world.alternatives(line) == {"texts": ["No.", "Sit down, stranger."], "chosen": 1}


def test_bad_edits_and_swipes_raise_and_change_nothing(
    world: World, wren: int, tobias: int
) -> None:
    turn = say(world, wren, "Evening.", "Evening.")
    head = world.head
    with pytest.raises(NotFound):
        world.edit_line(999_999, "x")
    with pytest.raises(InvalidInput):
        world.edit_line(turn["input"], "   ")
    with pytest.raises(InvalidInput):
        world.delete_line(turn["input"], on_invalid="explode")
    with pytest.raises(Conflict):
        world.regenerate(ScriptedGenerator(), line=turn["input"])
    with pytest.raises(InvalidInput):
        world.regenerate(lambda request: "   ")
    with pytest.raises(NotFound):
        world.choose(turn["replies"][0]["utterance"], 3, ScriptedGenerator())
    assert world.head == head
