"""Turns for asyncio: ``await world.aturn(...)`` with an ``async def`` or a
plain function as the generator, and the text streamed as a callback
(``on_token``) or as an async iterator (``world.stream_turn``)."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from rp_engine import GenerationError, Token, TurnStream, World

MINUTE = 60_000
ASK = "Seen anything odd on the marsh, Tobias?"
CHUNKS = ["Lights, ", "moving where ", "no boat can go."]
ANSWER = "".join(CHUNKS)


def test_aturn_with_an_async_def_generator(world: World, wren: int, tobias: int) -> None:
    seen: list[str] = []

    async def generate(request: dict[str, Any]) -> str:
        seen.append(request["purpose"]["kind"])
        await asyncio.sleep(0)
        return ANSWER

    outcome = asyncio.run(world.aturn(wren, ASK, MINUTE, generate))
    assert seen == ["reply"]
    assert [(r["speaker"], r["text"]) for r in outcome["replies"]] == [(tobias, ANSWER)]
    assert outcome["seq"] == world.head


def test_aturn_with_a_plain_function_generator(world: World, wren: int, tobias: int) -> None:
    def generate(request: dict[str, Any]) -> dict[str, Any]:
        return {"text": ANSWER, "model": "plain"}

    outcome = asyncio.run(world.aturn(wren, ASK, MINUTE, generate))
    assert outcome["replies"][0]["text"] == ANSWER


def test_aturn_streams_an_async_generator_to_on_token(world: World, wren: int) -> None:
    tokens: list[tuple[str, str]] = []

    async def generate(request: dict[str, Any]) -> AsyncIterator[str]:
        for chunk in CHUNKS:
            await asyncio.sleep(0)
            yield chunk

    def on_token(purpose: dict[str, Any], text: str) -> None:
        tokens.append((purpose["kind"], text))

    outcome = asyncio.run(world.aturn(wren, ASK, MINUTE, generate, on_token=on_token))
    assert tokens == [("reply", chunk) for chunk in CHUNKS]
    assert outcome["replies"][0]["text"] == ANSWER


def test_aturn_leaves_the_event_loop_free_while_the_model_works(
    world: World, wren: int
) -> None:
    ticks: list[int] = []

    async def ticker() -> None:
        for i in range(3):
            ticks.append(i)
            await asyncio.sleep(0)

    async def generate(request: dict[str, Any]) -> str:
        await asyncio.sleep(0.05)
        return ANSWER

    async def main() -> dict[str, Any]:
        ticking = asyncio.ensure_future(ticker())
        outcome = await world.aturn(wren, ASK, MINUTE, generate)
        await ticking
        return outcome

    outcome = asyncio.run(main())
    assert ticks == [0, 1, 2]
    assert outcome["replies"][0]["text"] == ANSWER


def test_stream_turn_yields_tokens_then_keeps_the_outcome(
    world: World, wren: int, tobias: int
) -> None:
    async def generate(request: dict[str, Any]) -> AsyncIterator[str]:
        for chunk in CHUNKS:
            await asyncio.sleep(0)
            yield chunk

    called: list[str] = []

    async def on_token(purpose: dict[str, Any], text: str) -> None:
        called.append(text)

    async def main() -> tuple[list[Token], TurnStream]:
        stream = world.stream_turn(wren, ASK, MINUTE, generate, on_token=on_token)
        assert isinstance(stream, TurnStream)
        with pytest.raises(RuntimeError, match="not over"):
            _ = stream.outcome
        tokens = [token async for token in stream]
        return tokens, stream

    tokens, stream = asyncio.run(main())
    assert [t.text for t in tokens] == CHUNKS
    assert called == CHUNKS, "on_token sees the chunks too"
    assert all(t.speaker == tobias and t.purpose["kind"] == "reply" for t in tokens)
    purpose, text = tokens[0]
    assert (purpose, text) == ({"kind": "reply", "speaker": tobias}, CHUNKS[0])
    assert stream.outcome["replies"][0]["text"] == ANSWER
    assert world.dialogue()[-1]["text"] == ANSWER


def test_stream_turn_takes_a_plain_function(world: World, wren: int) -> None:
    def generate(request: dict[str, Any]) -> Iterator[str]:
        yield from CHUNKS

    async def main() -> list[str]:
        async with world.stream_turn(wren, ASK, MINUTE, generate) as stream:
            return [token.text async for token in stream]

    assert asyncio.run(main()) == CHUNKS


def test_stream_turn_marks_tokens_of_the_state_update_pass(world: World, wren: int) -> None:
    def generate(request: dict[str, Any]) -> str:
        if request["purpose"]["kind"] == "state_update":
            return '{"reports": []}'
        return ANSWER

    async def main() -> list[Token]:
        stream = world.stream_turn(
            wren, ASK, MINUTE, generate, options={"updates": {"enabled": True}}
        )
        return [token async for token in stream]

    tokens = asyncio.run(main())
    assert [(t.purpose["kind"], t.speaker) for t in tokens] == [
        ("reply", world.entity_id("Tobias Reed")),
        ("state_update", None),
    ]


def test_nothing_begins_before_the_stream_is_read(world: World, wren: int) -> None:
    head = world.head
    stream = world.stream_turn(wren, ASK, MINUTE, lambda request: ANSWER)
    assert world.head == head
    asyncio.run(stream.aclose())
    assert world.head == head


def test_leaving_a_stream_early_keeps_only_the_input(world: World, wren: int) -> None:
    head = world.head
    dialogue = world.dialogue()
    finished: list[bool] = []

    async def generate(request: dict[str, Any]) -> AsyncIterator[str]:
        try:
            for chunk in CHUNKS:
                yield chunk
                await asyncio.sleep(0.01)
            finished.append(True)
        finally:
            finished.append(False)

    async def main() -> str:
        async with world.stream_turn(wren, ASK, MINUTE, generate) as stream:
            async for token in stream:
                return token.text
        raise AssertionError("no token")

    assert asyncio.run(main()) == CHUNKS[0]
    assert finished == [False], "the model's stream was closed"
    # The input (its utterance, the clock and the decisions) stays; no reply.
    assert world.head > head
    assert [line["text"] for line in world.dialogue()] == [d["text"] for d in dialogue] + [ASK]
    assert "assistant_turn" not in world.events(world.head)[0]["event"]


def test_an_error_of_the_generator_is_raised_from_the_stream(world: World, wren: int) -> None:
    async def generate(request: dict[str, Any]) -> AsyncIterator[str]:
        yield CHUNKS[0]
        raise ConnectionError("the model went away")

    async def main() -> list[str]:
        return [token.text async for token in world.stream_turn(wren, ASK, MINUTE, generate)]

    with pytest.raises(GenerationError) as raised:
        asyncio.run(main())
    assert isinstance(raised.value.__cause__, ConnectionError)
    assert [line["text"] for line in world.dialogue()][-1] == ASK, "only the input stays"
