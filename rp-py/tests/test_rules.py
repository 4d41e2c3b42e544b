"""Rules from Python (docs/rules.md): ``World.add_rule``, ``remove_rule`` and
``rules``, and what a character learns from how its initiations are answered.

Tobias is given a rule to ask Wren about the letter at an hour: the tick at
that hour fires it, and his intention makes him speak to Wren. A rule to talk
to Mira, who is out of earshot, stays in his mind as an intention. When Wren
answers him curtly ("ok", classified ``negative``), he learns to speak up
less to her, and ``initiation_candidates`` says so in words. Bad rules raise
the exception of their kind (the same kind C's result code and Rust's
``ErrorKind`` give) and change nothing. And a crash Tobias hears climbs the
processing layers to a thought of his own (docs/drives.md, "Layers").
"""

from typing import Any

import pytest

from rp_engine import FactSyntaxError, InvalidInput, NotFound, ScriptedGenerator, World

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR

LINE = "About that letter, Wren?"


@pytest.fixture
def of_one_mind(world: World) -> World:
    """The tavern with only an intention pushing Tobias to speak (its weight 1),
    his personality even (threshold 0.75), no tiring and no night for him, and
    Wren's availability no gate."""
    world.set_personality("Tobias Reed", {})
    world.configure_drives(
        {
            "weights": {
                "social_debt": 0,
                "task": 0,
                "curiosity": 0,
                "availability": 0,
                "intent": 1,
            },
            "energy_drain_per_hour": 0,
            "night_start": 0,
            "night_end": 0,
            "availability_gate": 0,
        },
        entity="Tobias Reed",
    )
    return world


def letter(at: int) -> dict[str, Any]:
    return {
        "description": "ask Wren about the letter",
        "on": {"at": at},
        "intent": {"initiate": "Wren", "about": "the letter"},
        "weight": 1.0,
    }


class Model:
    """A generate callable: Tobias's line for an initiation, ``sentiment`` for a
    classification (each one recorded), the scripted generator for the rest."""

    def __init__(self, sentiment: str) -> None:
        self.sentiment = sentiment
        self.scripted = ScriptedGenerator()
        self.classified: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> Any:
        kind = request["purpose"]["kind"]
        if kind == "initiate":
            return LINE
        if kind == "classify":
            self.classified.append(request)
            return f'{{"sentiment": "{self.sentiment}"}}'
        return self.scripted(request)


def test_a_rule_is_read_with_its_weight_at_any_time(
    of_one_mind: World, tobias: int, wren: int
) -> None:
    world = of_one_mind
    head = world.head
    rule = world.add_rule("Tobias", letter(HOUR), now=0)
    assert world.head == head + 1
    [view] = world.rules(tobias, now=0)
    assert view["rule"] == {
        "id": rule,
        "owner": tobias,
        "description": "ask Wren about the letter",
        "trigger": {"at": HOUR},
        "condition": None,
        "intent": {"initiate": {"to": wren, "about": "the letter"}},
        "weight": 1.0,
        "since": 0,
        "uses": 0,
        "last_used": None,
        "checked": None,
        "created_at": 0,
        "source": "host",
    }
    assert view["weight_now"] == 1.0
    # Unused, it halves every week (the default half-life) and is forgotten
    # below 0.05; reading commits nothing.
    [later] = world.rules("Tobias Reed", now=7 * DAY)
    assert later["weight_now"] == pytest.approx(0.5, rel=1e-12)
    assert later["forgotten_at"] > 28 * DAY
    assert world.head == head + 1
    # The player and Mira hold none.
    assert world.rules("Wren", now=0) == []
    assert world.rules("Mira Holt", now=0) == []


def test_a_rule_at_a_time_fires_in_a_tick_and_he_speaks(
    of_one_mind: World, tobias: int, wren: int
) -> None:
    world = of_one_mind
    rule = world.add_rule(tobias, letter(HOUR), now=0)
    assert world.next_tick_at(now=0) == {"at": HOUR, "entity": tobias, "reason": {"kind": "rule"}}
    model = Model("neutral")
    [outcome] = world.advance(until=HOUR, generate=model)
    assert outcome["rules_fired"] == [[tobias, rule]]
    [initiation] = outcome["initiations"]
    candidate = initiation["candidate"]
    assert (candidate["speaker"], candidate["to"]) == (tobias, wren)
    assert candidate["about"] == "intent"
    assert candidate["rules"] == [rule]
    assert candidate["pushed_over_by"] == "intent"
    assert initiation["turn"]["replies"][0]["text"] == LINE
    # Spent but held, used once; the intention fulfilled, his answer awaited.
    [view] = world.rules(tobias, now=HOUR)
    assert (view["rule"]["uses"], view["rule"]["last_used"]) == (1, HOUR)
    drives = world.drives(tobias, now=HOUR)
    assert drives["intentions"] == []
    [awaiting] = drives["awaiting"]
    assert (awaiting["to"], awaiting["at"], awaiting["rules"]) == (wren, HOUR, [rule])


def test_an_intention_toward_someone_out_of_earshot_stays_in_mind(
    of_one_mind: World, tobias: int, mira: int
) -> None:
    world = of_one_mind
    rule = world.add_rule(
        tobias,
        '{"description": "settle the tab", "on": {"in_hours": 1},'
        ' "intent": {"initiate": "Mira", "about": "the tab"}, "weight": 0.9}',
        now=0,
    )
    [outcome] = world.advance(until=HOUR, generate=Model("neutral"))
    assert outcome["rules_fired"] == [[tobias, rule]]
    assert outcome["initiations"] == []
    [intention] = world.drives(tobias, now=HOUR)["intentions"]
    assert intention["rule"] == rule
    assert intention["to"] == mira
    assert "the tab" in intention["text"]
    # The rule's weight when it fired: 0.9, faded for an hour (a week's half-life).
    assert intention["weight"] == pytest.approx(0.9 * 0.5 ** (1 / (7 * 24)), rel=1e-12)
    assert intention["at"] == HOUR


def approach(world: World, tobias: int, wren: int, when: int, model: Model) -> dict[str, Any]:
    """Tobias speaks to Wren at ``when`` (a rule's intention), Wren answers "ok"
    a minute later, and the tick at her answer learns from it."""
    world.add_rule(tobias, letter(when), now=world.now)
    outcomes = world.advance(until=when, generate=model)
    [spoke] = [i for outcome in outcomes for i in outcome["initiations"]]
    assert spoke["candidate"]["about"] == "intent"
    world.run_turn(wren, "ok", when + MINUTE, model)
    due = world.next_tick_at(now=world.now)
    assert due is not None
    assert (due["entity"], due["reason"]) == (tobias, {"kind": "feedback"})
    job = world.begin_tick(now=due["at"])
    while (step := job.step())["step"] != "done":
        job.provide(model(step))
    return job.finish()


def test_curt_answers_make_him_speak_up_less_and_candidates_say_why(
    of_one_mind: World, tobias: int, wren: int
) -> None:
    world = of_one_mind
    model = Model("negative")
    outcome = approach(world, tobias, wren, HOUR, model)
    [classified] = model.classified
    assert classified["purpose"] == {"kind": "classify", "speaker": tobias}
    assert 'Wren answered: "ok"' in classified["messages"][-1]["content"]
    [learned] = outcome["learned"]
    assert (learned["entity"], learned["from"]) == (tobias, wren)
    assert learned["reason"].startswith("Wren answered curtly: 1 words after 1 min, negative")
    [term] = [c for c in learned["changes"] if c["target"]["kind"] == "term"]
    assert term["target"] == {"kind": "term", "to": wren, "term": "intent"}
    assert term["to"] < term["from"] == 1.0
    drives = world.drives(tobias, now=world.now)
    assert drives["awaiting"] == []
    [factor] = drives["learned"]
    assert (factor["to"], factor["term"]) == (wren, "intent")
    assert factor["factor"] == pytest.approx(term["to"])
    [feedback] = drives["feedback"]
    assert (feedback["from"], feedback["words"], feedback["sentiment"]) == (wren, 1, "negative")

    approach(world, tobias, wren, 3 * HOUR, model)
    [candidate] = world.initiation_candidates(tobias, now=world.now)
    why = candidate["learned"]
    assert why.startswith("Tobias Reed speaks up less to Wren (learned × 0.")
    assert why.endswith("since Wren twice answered curtly")
    assert why in candidate["explanation"]
    [intent] = [t for t in candidate["terms"] if t["name"] == "intent"]
    assert intent["learned"] < 1.0


def test_a_rule_taken_away_is_gone_and_a_rewind_brings_it_back(
    of_one_mind: World, tobias: int
) -> None:
    world = of_one_mind
    rule = world.add_rule(
        "Tobias Reed",
        {
            "description": "the bell means customers",
            "on": {"stimulus": "sound"},
            "condition": "content.includes('bell')",
            "intent": {"drive": "task", "amount": 0.5},
        },
        now=0,
    )
    [view] = world.rules(tobias, now=0)
    assert view["rule"]["trigger"] == {"stimulus": "sound"}
    assert view["rule"]["intent"] == {"drive": {"drive": "task", "amount": 0.5}}
    assert view["rule"]["weight"] == 0.8
    head = world.head
    world.remove_rule(rule, now=10 * MINUTE)
    assert world.head == head + 2
    assert world.rules(tobias, now=10 * MINUTE) == []
    with pytest.raises(NotFound):
        world.remove_rule(rule, now=10 * MINUTE)
    world.rewind(head)
    assert [v["rule"]["id"] for v in world.rules(tobias, now=0)] == [rule]


NOTE = {"description": "x", "on": {"in_hours": 1}, "intent": {"note": "y"}}


@pytest.mark.parametrize(
    ("rule", "error", "says"),
    [
        ("{", InvalidInput, "JSON"),
        ("[1, 2]", InvalidInput, "object"),
        (5, InvalidInput, "object"),
        ({**NOTE, "weight": 5}, InvalidInput, "weight"),
        ({**NOTE, "on": {"stimulus": "smell"}}, InvalidInput, "smell"),
        ({**NOTE, "on": {"in_hours": 1, "at": 5}}, InvalidInput, "on:"),
        ({**NOTE, "description": ""}, InvalidInput, "empty"),
        ({**NOTE, "typo": 1}, InvalidInput, "typo"),
        ({**NOTE, "intent": {"drive": "task", "amount": 2}}, InvalidInput, "amount"),
        ({**NOTE, "intent": {"initiate": "Tobias"}}, InvalidInput, "someone else"),
        ({**NOTE, "intent": {"initiate": "Nobody"}}, NotFound, "Nobody"),
        ({**NOTE, "condition": "content.("}, FactSyntaxError, "rule condition"),
    ],
)
def test_a_bad_rule_raises_its_kind_and_changes_nothing(
    of_one_mind: World, rule: Any, error: type[Exception], says: str
) -> None:
    world = of_one_mind
    head, state = world.head, world.state()
    with pytest.raises(error, match=says):
        world.add_rule("Tobias Reed", rule, now=0)
    assert world.head == head
    assert world.state() == state


def test_owners_times_and_unknown_ids_are_refused(of_one_mind: World, tobias: int) -> None:
    world = of_one_mind
    head = world.head
    with pytest.raises(InvalidInput, match="only the engine's characters hold rules"):
        world.add_rule("Wren", NOTE, now=0)
    with pytest.raises(NotFound):
        world.add_rule("Nobody", NOTE, now=0)
    with pytest.raises(NotFound):
        world.add_rule(999_999, NOTE, now=0)
    with pytest.raises(NotFound):
        world.remove_rule(999_999, now=0)
    with pytest.raises(NotFound):
        world.rules("Nobody", now=0)
    with pytest.raises(NotFound):
        world.rules(999_999, now=0)
    with pytest.raises(TypeError):
        world.add_rule(tobias, object(), now=0)  # type: ignore[arg-type]
    assert world.head == head
    # Time never goes back.
    rule = world.add_rule(tobias, NOTE, now=HOUR)
    head = world.head
    with pytest.raises(InvalidInput, match="before the world's clock"):
        world.add_rule(tobias, NOTE, now=0)
    with pytest.raises(InvalidInput, match="before the world's clock"):
        world.remove_rule(rule, now=0)
    assert world.head == head


def test_a_character_holds_at_most_64_rules(of_one_mind: World, tobias: int) -> None:
    world = of_one_mind
    for n in range(64):
        world.add_rule(tobias, {**NOTE, "description": f"rule {n}"}, now=0)
    head = world.head
    with pytest.raises(InvalidInput, match="already holds 64 rules"):
        world.add_rule(tobias, NOTE, now=0)
    assert world.head == head
    assert len(world.rules(tobias, now=0)) == 64


def test_a_crash_climbs_to_a_thought_of_his_own(
    of_one_mind: World, tobias: int, wren: int
) -> None:
    """Stimuli climbing the layers (docs/drives.md, "Layers"): a CRITICAL crash is
    more than arithmetic is sure of, so the fast model classifies it; it matters,
    so the smart model thinks it over; the thought is Tobias's memory alone."""
    world = of_one_mind
    asked: list[str] = []

    def model(request: dict[str, Any]) -> Any:
        kind = request["purpose"]["kind"]
        asked.append(kind)
        if kind == "classify":
            return (
                '{"intent": "trouble", "sentiment": "negative", '
                '"confidence": 0.9, "significance": 0.9}'
            )
        if kind == "think":
            return '{"thought": "Something broke. Mira will need a hand.", "task": "more"}'
        return LINE

    now = world.now + MINUTE
    world.notify(tobias, "sound", "critical", "a crash in the kitchen", now=now)
    job = world.begin_tick(now=now)
    while (step := job.step())["step"] != "done":
        job.provide(model(step))
    outcome = job.finish()
    assert asked[:2] == ["classify", "think"]
    assert outcome["layers"] == {"reflex": 0, "rules": 0, "classify": 0, "think": 1}
    [hoist] = outcome["classified"]
    assert hoist["reason"] == "arithmetic is not confident: 0.30 below 0.50"
    assert hoist["thought"].startswith("it matters: significance 0.90")
    [(owner, memory)] = outcome["thoughts"]
    assert owner == tobias
    thought = world.memory(memory)
    assert (thought.kind, thought.witnesses) == ("thought", [tobias])
    assert all(m.id != memory for m in world.memories(wren))
    assert world.drives(tobias, now=now)["task"] >= 0.25  # "more": one step


def test_a_bad_thought_is_asked_again_then_refused(of_one_mind: World, tobias: int) -> None:
    world = of_one_mind
    asked: list[str] = []

    def model(request: dict[str, Any]) -> Any:
        kind = request["purpose"]["kind"]
        asked.append(kind)
        if kind == "classify":
            return (
                '{"intent": "trouble", "sentiment": "negative", '
                '"confidence": 0.9, "significance": 0.9}'
            )
        return '{"thought": "x", "speak_to": "Nobody"}'

    now = world.now + MINUTE
    world.notify(tobias, "sound", "critical", "a crash", now=now)
    job = world.begin_tick(now=now)
    while (step := job.step())["step"] != "done":
        job.provide(model(step))
    outcome = job.finish()
    assert asked == ["classify", "think", "think"]
    assert outcome["thoughts"] == []
    assert all(m.kind != "thought" for m in world.memories(tobias))
