"""Scoped events and threads from Python: ``World.plan_event``,
``start_event``, ``complete_event``, ``cancel_event``, ``expire_event``,
``run_due``, ``open_thread``, ``resolve_thread``, ``drop_thread``, and the
typed snapshots ``ScopedEvent`` and ``Thread``.

The picnic: Wren and Mira take a basket and a blanket to the meadow; when it
completes only what the promotion names survives (the letter Wren carried
goes to Mira, and Mira keeps a gist of the afternoon), and no prompt shows
the props again. Wrong transitions and bad input are refused with the
exception of their kind and change nothing.
"""

import re
from pathlib import Path
from typing import Any

import pytest

from rp_engine import (
    Conflict,
    FactSyntaxError,
    InvalidInput,
    NotFound,
    RpError,
    ScopedEvent,
    ScriptedGenerator,
    Thread,
    World,
)

ROOT = Path(__file__).resolve().parents[2]
MINUTE = 60_000
HOUR = 60 * MINUTE
BASKET = "a wicker basket of bread"
BLANKET = "a red checked blanket"
PROPS = {"basket": BASKET, "blanket": BLANKET}
LEDGER = "Who took the ledger from behind the bar?"


def prompt(world: World, speaker: int) -> str:
    """The system message ``speaker``'s prompt would hold now."""
    text = world.inspect_prompt(speaker)["messages"][0]["content"]
    assert isinstance(text, str)
    return text


def picnic(world: World, now: int = 0, **extra: Any) -> int:
    """Plans the picnic for Wren and Mira (named as a caller would)."""
    extra.setdefault("significance", 0.6)
    return world.plan_event(
        "the picnic", participants=["Wren", "Mira Holt"], props=PROPS, now=now, **extra
    )


def test_the_picnic(world: World, wren: int, mira: int, tobias: int) -> None:
    letter = world.entity_id("letter")
    head = world.head
    event = picnic(world, now=MINUTE)
    assert world.head == head + 2, "the clock and the plan, one commit"
    planned = world.scoped_event(event)
    assert (planned.status, planned.participants) == ("planned", [wren, mira])
    assert BASKET not in prompt(world, mira)

    world.start_event(event, now=2 * MINUTE)
    assert world.scoped_event(event).started == 2 * MINUTE
    text = prompt(world, mira)
    assert f"# Happening now\nthe picnic (basket: {BASKET}; blanket: {BLANKET})" in text
    assert BASKET in prompt(world, wren)
    assert BASKET not in prompt(world, tobias), "Tobias does not take part"

    # A few lines at the picnic, then it completes with one item promoted.
    model = ScriptedGenerator()
    model.script(mira, ["Pass the bread.", "What a day for it."])
    world.run_turn(wren, "Mira, the sun is out!", 3 * MINUTE, model)
    world.complete_event(
        event,
        promotion={
            "items": [{"item": letter, "to": mira}],
            "gists": [
                {"witness": mira, "text": "Wren gave me a sealed letter on the grass."}
            ],
        },
        now=4 * MINUTE,
    )
    done = world.scoped_event(event)
    assert (done.status, done.closed) == ("completed", 4 * MINUTE)
    assert done.props == PROPS, "the closed record keeps the props for the host"
    for t in range(5):
        world.run_turn(wren, f"Mira, later, line {t}.", (5 + t) * MINUTE, model)
        for who in (wren, mira, tobias):
            text = prompt(world, who).lower()
            assert "basket" not in text and "blanket" not in text
            assert "# happening now" not in text
    assert world.entity(mira).inventory == [letter]
    assert world.entity(wren).inventory == []
    assert world.entity(letter).carrier == mira
    gists = [m for m in world.memories(mira) if m.kind == "event_gist"]
    assert [m.text for m in gists] == ["Wren gave me a sealed letter on the grass."]
    assert gists[0].significance == 0.6, "the event's, as the gist gave none"


def test_wrong_transitions_are_conflicts_and_change_nothing(world: World) -> None:
    event = picnic(world)

    def refused(
        error: type[RpError], words: list[str], call: Any, event: int, now: int = 0
    ) -> None:
        head, state = world.head, world.state()
        with pytest.raises(error) as raised:
            call(event, now=now)
        for word in words:
            assert word in str(raised.value)
        assert (world.head, world.state()) == (head, state)

    refused(Conflict, ["the picnic", "is planned; it cannot complete"], world.complete_event, event)
    world.start_event(event, now=0)
    refused(Conflict, ["cannot start again"], world.start_event, event)
    world.complete_event(event, now=0)
    refused(Conflict, ["cannot complete again", "closed for good"], world.complete_event, event)
    refused(Conflict, ["cannot be cancelled"], world.cancel_event, event)
    refused(Conflict, ["cannot expire"], world.expire_event, event)

    other = picnic(world)
    world.cancel_event(other, now=0)
    assert world.scoped_event(other).status == "cancelled"
    refused(Conflict, ["is cancelled; it cannot start"], world.start_event, other)
    refused(NotFound, ["event#999999"], world.start_event, 999999)
    refused(NotFound, ["event#999999"], world.cancel_event, 999999)

    third = picnic(world)
    world.expire_event(third, now=MINUTE)
    assert world.scoped_event(third).status == "expired"
    refused(InvalidInput, ["before the world's clock"], world.start_event, picnic(world, MINUTE))

    # The clock is at midnight.
    day = picnic(world, MINUTE, preconditions=["time.is_day"])
    refused(
        Conflict, ["the precondition `time.is_day` does not hold"], world.start_event, day, MINUTE
    )
    with pytest.raises(NotFound, match="event#424242"):
        world.scoped_event(424242)


@pytest.mark.parametrize(
    ("extra", "error", "words"),
    [
        ({"preconditions": ["time.is_day &&"]}, FactSyntaxError, "`time.is_day &&`"),
        ({"start_when": "present.includes("}, FactSyntaxError, "the picnic"),
        ({"significance": 1.5}, InvalidInput, "significance"),
        ({"start_at": 10, "expire_at": 5}, InvalidInput, "expires"),
        ({"on_start": [{"type": "sytem_line", "text": "hi"}]}, InvalidInput, "sytem_line"),
        ({"on_start": [{"type": "system_line"}]}, InvalidInput, "on_start effect: effect 0"),
        (
            {"on_complete": [{"type": "give_item", "item": 999999, "to": 1}]},
            NotFound,
            "entity#999999",
        ),
    ],
)
def test_bad_plans_are_refused_and_change_nothing(
    world: World, extra: dict[str, Any], error: type[RpError], words: str
) -> None:
    head, state = world.head, world.state()
    with pytest.raises(error, match=words.replace("(", r"\(").replace(".", r"\.")):
        picnic(world, **extra)
    assert (world.head, world.state()) == (head, state)
    assert world.scoped_events() == []


def test_bad_inputs_are_refused_and_change_nothing(
    world: World, tobias: int, mira: int
) -> None:
    event = picnic(world)
    world.start_event(event, now=0)
    head, state = world.head, world.state()

    with pytest.raises(InvalidInput, match="name"):
        world.plan_event("  ", participants=[mira], now=0)
    with pytest.raises(InvalidInput, match="no participants"):
        world.plan_event("x", participants=[], now=0)
    with pytest.raises(NotFound, match="the Ferryman"):
        world.plan_event("x", participants=["the Ferryman"], now=0)
    with pytest.raises(TypeError):
        world.plan_event("x", participants="Mira", now=0)
    with pytest.raises(InvalidInput, match="invalid promotion"):
        world.complete_event(event, promotion={"trinkets": []}, now=0)
    with pytest.raises(InvalidInput, match="invalid promotion"):
        world.complete_event(event, promotion={"items": [{"item": "letter"}]}, now=0)
    with pytest.raises(InvalidInput, match="is not a participant of the picnic"):
        world.complete_event(
            event, promotion={"gists": [{"witness": tobias, "text": "I watched."}]}, now=0
        )
    with pytest.raises(InvalidInput, match="two gists"):
        world.complete_event(
            event,
            promotion={"gists": [{"witness": mira, "text": "a"}, {"witness": mira, "text": "b"}]},
            now=0,
        )
    with pytest.raises(TypeError):
        world.complete_event(event, promotion={"items": [object()]}, now=0)
    with pytest.raises(InvalidInput, match="at least one participant"):
        world.open_thread(LEDGER, [], now=0)
    with pytest.raises(InvalidInput):
        world.open_thread("   ", [mira], now=0)
    with pytest.raises(NotFound):
        world.open_thread(LEDGER, [mira, 999999], now=0)

    assert (world.head, world.state()) == (head, state)
    assert world.scoped_event(event).status == "active"
    assert world.threads() == []


def test_run_due_moves_events_on_by_time(world: World, wren: int, mira: int) -> None:
    letter = world.entity_id("letter")
    timed = picnic(world, start_at=HOUR, expire_at=3 * HOUR)
    # Due at once, but held until day comes (the clock starts at midnight).
    day = picnic(world, start_at=0, preconditions=["time.is_day"])

    due = world.run_due(now=HOUR // 2)
    assert (due["started"], due["expired"]) == ([], [])
    [(held, why)] = due["held"]
    assert held == day and "the precondition `time.is_day` does not hold" in why
    assert world.scoped_event(timed).status == "planned"

    assert world.run_due(now=HOUR) == {"started": [timed], "expired": [], "held": due["held"]}
    assert world.scoped_event(timed).started == HOUR
    assert world.now == HOUR
    assert BASKET in prompt(world, mira)

    due = world.run_due(now=3 * HOUR)
    assert due["expired"] == [timed]
    assert world.scoped_event(timed).status == "expired"
    assert BASKET not in prompt(world, mira)
    assert world.entity(wren).inventory == [letter], "an expiry promotes nothing"

    head = world.head
    with pytest.raises(InvalidInput, match="before the world's clock"):
        world.run_due(now=HOUR)
    assert world.head == head
    assert world.run_due(now=12 * HOUR)["started"] == [day], "checked again at noon"


def test_threads_stay_in_prompts_until_closed(
    world: World, wren: int, mira: int, tobias: int
) -> None:
    head = world.head
    ledger = world.open_thread(LEDGER, ["Mira Holt", mira], now=MINUTE)
    assert world.head == head + 2
    [thread] = world.threads()
    assert (thread.id, thread.text, thread.participants) == (ledger, LEDGER, [mira])
    assert (thread.opened, thread.status, thread.event) == (MINUTE, "open", None)

    assert f"# Unresolved\n{LEDGER}" in prompt(world, mira)
    assert LEDGER not in prompt(world, tobias)
    piece = [p for p in world.inspect_prompt(mira)["pieces"] if p["section"] == "threads"]
    assert [p["text"] for p in piece] == [LEDGER]
    # It stays through turns.
    model = ScriptedGenerator()
    model.script(mira, ["Not now."])
    world.run_turn(wren, "Mira, a word?", 2 * MINUTE, model)
    assert LEDGER in prompt(world, mira)

    rain = world.open_thread("  Will the rain stop?  ", ["Tobias"], now=2 * MINUTE)
    assert world.threads()[1].text == "Will the rain stop?"
    world.resolve_thread(ledger, now=3 * MINUTE)
    assert LEDGER not in prompt(world, mira)
    head = world.head
    with pytest.raises(Conflict, match="already closed"):
        world.drop_thread(ledger, now=3 * MINUTE)
    with pytest.raises(NotFound, match="thread#999999"):
        world.resolve_thread(999999, now=3 * MINUTE)
    assert world.head == head
    world.drop_thread(rain, now=3 * MINUTE)
    assert "rain" not in prompt(world, tobias)
    assert [t.status for t in world.threads()] == ["resolved", "dropped"]


def test_the_typed_objects(world: World, wren: int, mira: int) -> None:
    event = world.plan_event(
        "the duel",
        participants=[wren, "mira"],
        props={"pistols": "a pair of duelling pistols"},
        preconditions=["time.is_night"],
        on_start=[{"type": "open_thread", "text": "Who will fire first?"}],
        on_complete=[{"type": "close_thread", "status": "resolved"}],
        start_when='present.includes("Mira Holt")',
        expire_at=HOUR,
        now=0,
    )
    e = world.scoped_event(event)
    assert isinstance(e, ScopedEvent)
    assert (e.id, e.name, e.status) == (event, "the duel", "planned")
    assert e.props == {"pistols": "a pair of duelling pistols"}
    assert e.participants == [wren, mira]
    assert e.preconditions == ["time.is_night"]
    assert e.on_start == [{"type": "open_thread", "text": "Who will fire first?"}]
    assert e.on_complete == [{"type": "close_thread", "thread": None, "status": "resolved"}]
    assert e.significance == 0.5
    assert (e.start_at, e.start_when, e.expire_at) == (None, 'present.includes("Mira Holt")', HOUR)
    assert (e.started, e.closed) == (None, None)
    assert repr(e) == (
        f'ScopedEvent(id={event}, name="the duel", status="planned", '
        f"participants=[{wren}, {mira}])"
    )
    assert e == world.scoped_events()[0]
    assert e.to_dict()["status"] == "planned"
    with pytest.raises(AttributeError):
        e.name = "x"  # type: ignore[misc]

    world.start_event(event, now=MINUTE)
    assert e.status == "planned", "a snapshot does not change"
    assert world.scoped_event(event) != e
    [thread] = world.threads()
    assert isinstance(thread, Thread)
    assert (thread.event, thread.participants) == (event, [wren, mira])
    assert repr(thread) == (
        f'Thread(id={thread.id}, text="Who will fire first?", status="open")'
    )
    assert thread.to_dict()["event"] == event
    world.complete_event(event, now=2 * MINUTE)
    assert world.threads()[0].status == "resolved", "the on_complete hook closed it"


def test_the_python_snippet_of_docs_story_md(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    section = (ROOT / "docs" / "story.md").read_text().split("## From Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    monkeypatch.chdir(ROOT)
    exec(compile(match.group(1), "docs/story.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "cannot complete again" in printed
    assert "Thread(id=" in printed and "Who took the ledger?" in printed
