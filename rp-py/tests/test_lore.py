"""What lorebooks and cards put in a prompt, from Python (docs/cards.md): a sticky
entry stays in a character's prompt for the messages it is sticky and its timers
are readable (``World.lore_timers``); a card's macros expanded as the speaker's
prompt expands them (``World.expand_macros``); unknown entities raise NotFound
and change nothing."""

import json

import pytest

from rp_engine import NotFound, ScriptedGenerator, World

BOOK = json.dumps(
    {
        "entries": {
            "0": {
                "uid": 0,
                "key": ["bell"],
                "content": "The bell is cracked.",
                "sticky": 4,
            }
        }
    }
)


def test_a_sticky_entry_holds_and_its_timer_is_read(
    world: World, wren: int, tobias: int
) -> None:
    world.import_lorebook(BOOK.encode(), now=world.now)
    assert world.lore_timers(tobias) == []
    world.run_turn(wren, "Did you hear the bell, Tobias?", world.now + 1000, ScriptedGenerator())
    timers = world.lore_timers("Tobias Reed")
    assert [(t["entry"], t["kind"], t["end"] - t["start"]) for t in timers] == [(0, "sticky", 4)]
    # A line later, no bell named: the entry is still in his prompt, and says why.
    world.run_turn(wren, "Any soup tonight?", world.now + 1000, ScriptedGenerator())
    pieces = world.inspect_prompt(tobias)["pieces"]
    sticky = [p for p in pieces if p["text"] == "The bell is cracked."]
    assert sticky and sticky[0]["why"].startswith("sticky"), pieces


def test_macros_expand_as_the_prompt_expands_them(
    world: World, wren: int, tobias: int
) -> None:
    greeting = "*waves at {{user}}* I am {{char}}.{{// a note}} {{roll:d6}}"
    text = world.expand_macros(greeting, speaker=tobias, user="Wren")
    assert text.startswith("*waves at Wren* I am Tobias Reed. ")
    assert 1 <= int(text.rsplit(" ", 1)[1]) <= 6
    assert world.expand_macros(greeting, speaker=tobias, user=wren) == text, "the same draw"


def test_unknown_entities_raise_not_found_and_change_nothing(world: World, tobias: int) -> None:
    head = world.head
    with pytest.raises(NotFound):
        world.lore_timers(99999)
    with pytest.raises(NotFound):
        world.expand_macros("{{char}}", speaker="Nobody", user=tobias)
    with pytest.raises(NotFound):
        world.expand_macros("{{char}}", speaker=tobias, user=99999)
    assert world.head == head
