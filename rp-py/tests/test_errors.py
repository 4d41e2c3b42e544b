"""Errors from Python: the exception hierarchy against the core error kinds,
and an exception raised inside the host's generator, which propagates with
its own traceback while the turn commits nothing but its input."""

import asyncio
import traceback
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import rp_engine
from rp_engine import (
    FactSyntaxError,
    GenerationError,
    InvalidInput,
    InvalidReport,
    NotFound,
    RpError,
    StorageError,
    World,
)

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"
MINUTE = 60_000
ASK = "Seen anything odd on the marsh, Tobias?"


def test_every_error_is_an_rp_error_of_the_package() -> None:
    for name in rp_engine.__all__:
        value = getattr(rp_engine, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert value.__module__ == "rp_engine", name
            if name != "ActionRefused":
                assert issubclass(value, RpError), name
    assert issubclass(InvalidReport, InvalidInput)
    assert not issubclass(rp_engine.ActionRefused, RpError)


def test_the_errors_the_issue_names_carry_what_locates_them(world: World) -> None:
    with pytest.raises(FactSyntaxError) as syntax:
        world.edit_entity("Tobias Reed", facts="Fine.\n$if retry_ms <: $respond")
    assert (syntax.value.owner, syntax.value.line) == ("Tobias Reed", 2)
    assert syntax.value.column >= 1
    with pytest.raises(NotFound):
        world.entity("the Ferryman")
    with pytest.raises(InvalidReport) as report:
        world.apply_reports([{"type": "feeling", "who": "Wren"}])
    assert len(report.value.reasons) == 1
    with pytest.raises(StorageError):
        World.create(TAVERN.parent / "no-such-folder" / "x.rp", TAVERN)


def failing_turns() -> list[tuple[str, Callable[[World, int], Any]]]:
    """Turns whose generator raises ValueError("the model broke") from a
    function named ``broken_model``, run each way a host can run one."""

    def broken_model(request: dict[str, Any]) -> str:
        raise ValueError("the model broke")

    async def async_broken_model(request: dict[str, Any]) -> str:
        await asyncio.sleep(0)
        return broken_model(request)

    def streaming_broken_model(request: dict[str, Any]) -> Iterator[str]:
        yield "Lights, "
        broken_model(request)

    async def async_streaming_broken_model(request: dict[str, Any]) -> AsyncIterator[str]:
        yield "Lights, "
        broken_model(request)

    async def stream(world: World, wren: int) -> None:
        async for _ in world.stream_turn(wren, ASK, MINUTE, async_streaming_broken_model):
            pass

    return [
        ("run_turn", lambda w, wren: w.run_turn(wren, ASK, MINUTE, broken_model)),
        (
            "run_turn streaming",
            lambda w, wren: w.run_turn(wren, ASK, MINUTE, streaming_broken_model),
        ),
        ("aturn", lambda w, wren: asyncio.run(w.aturn(wren, ASK, MINUTE, async_broken_model))),
        (
            "aturn streaming",
            lambda w, wren: asyncio.run(w.aturn(wren, ASK, MINUTE, async_streaming_broken_model)),
        ),
        ("stream_turn", lambda w, wren: asyncio.run(stream(w, wren))),
    ]


@pytest.mark.parametrize(("form", "run"), failing_turns(), ids=[f for f, _ in failing_turns()])
def test_the_generators_exception_propagates_with_its_traceback(
    world: World, wren: int, form: str, run: Callable[[World, int], Any]
) -> None:
    with pytest.raises(GenerationError) as raised:
        run(world, wren)
    original = raised.value.__cause__
    assert isinstance(original, ValueError)
    assert str(original) == "the model broke"
    assert "ValueError: the model broke" in str(raised.value)
    # The original's traceback reaches the line that raised, in the
    # host's function, and is printed with the error.
    frames = traceback.extract_tb(original.__traceback__)
    assert frames[-1].name == "broken_model"
    assert frames[-1].line == 'raise ValueError("the model broke")'
    printed = "".join(traceback.format_exception(raised.type, raised.value, raised.tb))
    assert "The above exception was the direct cause" in printed
    assert 'raise ValueError("the model broke")' in printed


@pytest.mark.parametrize(("form", "run"), failing_turns(), ids=[f for f, _ in failing_turns()])
def test_a_failed_turn_commits_nothing_but_its_input(
    form: str, run: Callable[[World, int], Any]
) -> None:
    # Two equal worlds: in one the turn fails, in the other only its input
    # is committed (begin_turn, then abandon). They must stay equal.
    with World.in_memory("twins") as failed, World.in_memory("twins") as input_only:
        for world in (failed, input_only):
            world.load_world_file(TAVERN)
        wren = failed.entity_id("Wren")
        with pytest.raises(GenerationError):
            run(failed, wren)
        input_only.begin_turn(wren, ASK, MINUTE).abandon()
        assert failed.head == input_only.head
        assert failed.state() == input_only.state()
        assert failed.dialogue()[-1]["text"] == ASK


def test_an_interrupt_inside_the_generator_is_not_wrapped(world: World, wren: int) -> None:
    head = world.head

    def interrupted(request: dict[str, Any]) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        world.run_turn(wren, ASK, MINUTE, interrupted)
    assert world.head > head
    assert world.dialogue()[-1]["text"] == ASK
    # The abandoned turn left the world usable.
    outcome = world.run_turn(wren, "Tobias?", 2 * MINUTE, lambda request: "Aye.")
    assert outcome["replies"][0]["text"] == "Aye."
