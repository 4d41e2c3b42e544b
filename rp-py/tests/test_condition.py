"""Condition: one condition of the fact language, compiled once, tested often."""

import pytest

from rp_engine import Condition, FactSyntaxError, InvalidInput


def test_a_condition_holds_or_not_in_a_context() -> None:
    night_door = Condition("time.is_night && !content.match(/knock/i)")
    assert night_door.source == "time.is_night && !content.match(/knock/i)"
    assert night_door.test(hour=23, content="Hello?")
    assert not night_door.test(hour=23, content="*Knock knock*")
    assert not night_door.test()  # noon by default


def test_every_variable_of_the_context_reaches_the_condition() -> None:
    c = Condition(
        'name === "Aria" && author === "Wren" && mentioned && response_ms > 5000'
        " && retry_ms === 250 && unread_count === 3"
        ' && interaction_type === "use" && present.includes("Wren") && time.hour === 7'
    )
    kwargs = dict(
        name="Aria",
        author="Wren",
        mentioned=True,
        response_ms=6000.0,
        retry_ms=250.0,
        unread_count=3,
        interaction_type="use",
        present=["Aria", "Wren"],
        hour=7.0,
    )
    assert c.test(**kwargs)  # type: ignore[arg-type]
    for key, other in [("name", "Mira"), ("unread_count", 2), ("present", ["Aria"])]:
        assert not c.test(**{**kwargs, key: other})  # type: ignore[arg-type]
    # response_ms None is "never responded": infinitely long ago.
    assert Condition("response_ms > 1e300").test(response_ms=None)


def test_drives_reach_the_condition_as_they_reach_a_sheet() -> None:
    tired = Condition('drives.energy < 0.3 && drives.mode === "relaxed"')
    assert not tired.test()  # full energy by default
    assert tired.test(drives={"energy": 0.2})
    assert not tired.test(drives={"energy": 0.2, "mode": "sleep"})
    assert Condition("drives.asleep").test(drives={"asleep": True})
    # The same refusals as C's JSON: an unknown member, a mode that is not one.
    for bad in ({"stamina": 1.0}, {"mode": "dozing"}):
        with pytest.raises(InvalidInput):
            tired.test(drives=bad)


def test_the_seed_decides_the_draws() -> None:
    chatter = Condition("random() < 0.5")
    answers = {seed: chatter.test(seed=seed) for seed in range(40)}
    assert answers == {seed: chatter.test(seed=seed) for seed in range(40)}
    assert set(answers.values()) == {True, False}
    holds, trace = chatter.test_traced(seed=3)
    assert holds == answers[3]
    assert trace[0]["kind"] == "random"
    assert (trace[0]["value"] < 0.5) == holds


def test_a_runtime_error_is_false_and_traced() -> None:
    c = Condition("interaction_type.length > 0")
    assert c.test() is False
    holds, trace = c.test_traced()
    assert holds is False
    assert trace[-1]["kind"] == "error"
    assert "undefined" in trace[-1]["message"]


@pytest.mark.parametrize(
    "source",
    ["mentioned &&", "eval(content)", "$if mentioned", "mentioned: $respond", ""],
)
def test_what_does_not_compile_is_a_fact_syntax_error(source: str) -> None:
    with pytest.raises(FactSyntaxError) as caught:
        Condition(source)
    assert caught.value.line == 1
    assert caught.value.column >= 1
    assert caught.value.owner == "condition"


def test_bad_arguments_are_type_errors() -> None:
    c = Condition("mentioned")
    with pytest.raises(TypeError):
        c.test(mentioned="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        c.test(present="Aria")  # a str is not a list of names
    with pytest.raises(TypeError):
        c.test(colour="red")  # type: ignore[call-arg]
    with pytest.raises(OverflowError):
        c.test(seed=-1)
