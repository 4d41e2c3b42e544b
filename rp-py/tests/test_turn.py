"""The turn from Python: the poll form (World.begin_turn, Turn), run_turn with
sync callables, run_turn_async with async ones, semantic turns, prompts and
the scripted generator, on the tavern world.

In the tavern, Wren (the player) and Tobias sit in the corner booth, whose
voices do not carry; Mira stands behind the bar, out of earshot.
"""

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from rp_engine import (
    Conflict,
    GenerationError,
    InvalidInput,
    NotFound,
    RpError,
    ScriptedGenerator,
    Turn,
    World,
)

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"
MINUTE = 60_000
ASK = "Seen anything odd on the marsh, Tobias?"
ANSWER = "Lights, moving where no boat can go."


def test_poll_form_end_to_end(world: World, wren: int, tobias: int, mira: int) -> None:
    head = world.head
    # The outcome carries the prompts only when the options ask for them.
    turn = world.begin_turn(wren, ASK, MINUTE, options={"outcome_prompts": True})
    assert isinstance(turn, Turn)
    assert turn.active
    assert turn.world is world
    assert turn.speaker == wren

    # The input is committed when the turn begins, heard by the booth only.
    assert world.head > head
    began = world.head
    said = world.dialogue()[-1]
    assert said["id"] == turn.input
    assert (said["speaker"], said["text"], said["at"]) == (wren, ASK, MINUTE)
    assert said["witnesses"] == sorted([wren, tobias])

    # Only those who heard decide; Mira, at the bar, neither hears nor answers.
    assert [d["entity"] for d in turn.decisions] == [tobias]
    decision = turn.decisions[0]
    assert decision["mentioned"] is True
    assert decision["decision"]["respond"] is True
    assert "Owes Mira more than he can pay." in decision["decision"]["facts"]
    assert turn.responders == [tobias]

    step = turn.step()
    assert step["step"] == "generate"
    assert step["purpose"] == {"kind": "reply", "speaker": tobias}
    assert [m["role"] for m in step["messages"]] == ["system", "user"]
    system = step["messages"][0]["content"]
    assert system.startswith("You are Tobias Reed")
    assert f"Wren: {ASK}" in system
    assert "Mira Holt: in" not in system, "Mira is not within earshot"
    assert step["params"] == {}
    # Asking again without answering gives the same request.
    assert turn.step() == step

    # A dict result is recorded as given; an echoed name is dropped.
    turn.provide({"text": f"  Tobias Reed: {ANSWER} ", "model": "test-model"})
    assert turn.step() == {"step": "done"}
    outcome = turn.finish()
    assert not turn.active

    assert outcome["seq"] == world.head > began
    assert outcome["input"] == turn.input
    assert [d["entity"] for d in outcome["decisions"]] == [tobias]
    assert len(outcome["replies"]) == 1
    reply = outcome["replies"][0]
    assert (reply["speaker"], reply["text"]) == (tobias, ANSWER)
    assert outcome["silent"] == []
    assert outcome["wake"] == []
    assert [p["speaker"] for p in outcome["prompts"]] == [tobias]
    assert outcome["prompts"][0]["messages"] == step["messages"]

    line = world.dialogue()[-1]
    assert line["id"] == reply["utterance"]
    assert (line["speaker"], line["text"], line["model"]) == (tobias, ANSWER, "test-model")
    assert line["witnesses"] == sorted([wren, tobias])

    # Each witness remembers the exchange; Mira, who heard nothing, does not.
    assert any(ANSWER in r.text for r in world.recall(tobias, "lights marsh", now=MINUTE))
    assert any(ANSWER in r.text for r in world.recall(wren, "lights marsh", now=MINUTE))
    assert not any(ANSWER in r.text for r in world.recall(mira, "lights marsh", now=MINUTE))

    # The properties outlive the turn.
    assert turn.responders == [tobias]
    assert "over" in repr(turn)


def test_a_name_from_out_of_earshot_is_not_heard(
    world: World, wren: int, tobias: int, mira: int
) -> None:
    turn = world.begin_turn(wren, "Mira, a cider!", MINUTE)
    # Mira is named but cannot hear the booth; Tobias (no $respond line) answers.
    assert [d["entity"] for d in turn.decisions] == [tobias]
    assert turn.decisions[0]["mentioned"] is False
    assert turn.responders == [tobias]
    turn.abandon()


def test_the_host_may_say_who_hears(world: World, wren: int, tobias: int, mira: int) -> None:
    turn = world.begin_turn(wren, "Mira, a cider!", MINUTE, witnesses=[mira])
    assert [d["entity"] for d in turn.decisions] == [mira]
    assert turn.decisions[0]["mentioned"] is True
    assert turn.responders == [mira]
    assert world.dialogue()[-1]["witnesses"] == sorted([wren, mira])
    assert turn.step()["purpose"] == {"kind": "reply", "speaker": mira}
    turn.provide("Coming up.")
    outcome = turn.finish()
    assert [(r["speaker"], r["text"]) for r in outcome["replies"]] == [(mira, "Coming up.")]


def test_an_empty_reply_is_silence(world: World, wren: int, tobias: int) -> None:
    turn = world.begin_turn(wren, ASK, MINUTE)
    turn.step()
    turn.provide("   ")
    outcome = turn.finish()
    assert outcome["replies"] == []
    assert outcome["silent"] == [tobias]
    assert world.dialogue()[-1]["text"] == ASK


def test_a_retry_asks_for_a_wake_up_turn(world: World, wren: int, tobias: int) -> None:
    # Asked about the Ferryman, Tobias goes quiet ($retry 30000) ...
    asked = world.run_turn(wren, "Do you know the Ferryman?", MINUTE, lambda request: "no")
    assert asked["replies"] == []
    assert asked["wake"] == [{"entity": tobias, "at": MINUTE + 30_000}]
    decision = asked["decisions"][0]["decision"]
    assert (decision["respond"], decision["retry_ms"]) == (False, 30_000)
    assert decision["trace"][0]["action"] == "$retry 30000"

    # ... and answers in the wake-up turn the host starts then (nothing is said).
    turn = world.begin_turn(wren, "", MINUTE + 30_000)
    assert turn.input is None
    assert turn.responders == [tobias]
    step = turn.step()
    assert "Wren: Do you know the Ferryman?" in step["messages"][0]["content"]
    turn.provide("The Ferryman... aye. Not here.")
    outcome = turn.finish()
    assert outcome["input"] is None
    assert outcome["replies"][0]["text"] == "The Ferryman... aye. Not here."
    assert [line["text"] for line in world.dialogue()] == [
        "Do you know the Ferryman?",
        "The Ferryman... aye. Not here.",
    ]
    with pytest.raises(InvalidInput, match="wake-up"):
        world.begin_turn(wren, "", 2 * MINUTE, witnesses=[tobias])


def test_run_turn_with_the_scripted_generator(world: World, wren: int, tobias: int) -> None:
    model = ScriptedGenerator()
    model.script(tobias, [ANSWER])
    tokens: list[tuple[dict[str, Any], str]] = []
    outcome = world.run_turn(
        wren, ASK, MINUTE, model, on_token=lambda purpose, text: tokens.append((purpose, text))
    )
    assert [(r["speaker"], r["text"]) for r in outcome["replies"]] == [(tobias, ANSWER)]
    assert outcome["seq"] == world.head
    # A whole result reaches on_token once.
    assert tokens == [({"kind": "reply", "speaker": tobias}, ANSWER)]
    assert len(model.requests) == 1
    assert model.requests[0]["purpose"] == {"kind": "reply", "speaker": tobias}
    assert world.dialogue()[-1]["model"] == "scripted"

    # Unscripted, it falls back: "{name} nods. ({n})".
    again = world.run_turn(wren, "Tobias?", 2 * MINUTE, model)
    assert again["replies"][0]["text"] == "Tobias Reed nods. (2)"


def test_run_turn_with_a_plain_function(world: World, wren: int, tobias: int) -> None:
    seen: list[dict[str, Any]] = []

    def generate(request: dict[str, Any]) -> str:
        seen.append(request)
        return ANSWER

    tokens: list[str] = []
    outcome = world.run_turn(
        wren, ASK, MINUTE, generate, on_token=lambda purpose, text: tokens.append(text)
    )
    assert outcome["replies"][0]["text"] == ANSWER
    assert tokens == [ANSWER]
    assert len(seen) == 1
    assert "step" not in seen[0], "generate gets the request, not the step"
    assert seen[0]["purpose"] == {"kind": "reply", "speaker": tobias}


def test_run_turn_streams_the_chunks_of_a_generator(world: World, wren: int, tobias: int) -> None:
    chunks = ["Lights, ", "moving where ", "no boat ", "can go."]
    tokens: list[tuple[dict[str, Any], str]] = []

    def generate(request: dict[str, Any]) -> Iterator[str]:
        for chunk in chunks:
            # Each chunk reaches on_token before the next is generated.
            assert len(tokens) == chunks.index(chunk)
            yield chunk

    outcome = world.run_turn(
        wren, ASK, MINUTE, generate, on_token=lambda purpose, text: tokens.append((purpose, text))
    )
    assert [text for _, text in tokens] == chunks
    assert all(purpose == {"kind": "reply", "speaker": tobias} for purpose, _ in tokens)
    assert outcome["replies"][0]["text"] == ANSWER
    assert world.dialogue()[-1]["text"] == ANSWER


def test_run_turn_async_with_async_callables(world: World, wren: int, tobias: int) -> None:
    tokens: list[str] = []

    async def generate(request: dict[str, Any]) -> str:
        await asyncio.sleep(0)
        return ANSWER

    async def on_token(purpose: dict[str, Any], text: str) -> None:
        tokens.append(text)

    async def main() -> dict[str, Any]:
        # Inside a running loop, as in a notebook.
        return await world.run_turn_async(wren, ASK, MINUTE, generate, on_token=on_token)

    outcome = asyncio.run(main())
    assert [(r["speaker"], r["text"]) for r in outcome["replies"]] == [(tobias, ANSWER)]
    assert tokens == [ANSWER]
    assert world.head == outcome["seq"]


def test_run_turn_async_streams_an_async_generator(world: World, wren: int) -> None:
    chunks = ["Lights, ", "moving where ", "no boat ", "can go."]
    tokens: list[str] = []

    async def generate(request: dict[str, Any]) -> AsyncIterator[str]:
        for chunk in chunks:
            await asyncio.sleep(0)
            yield chunk

    outcome = asyncio.run(
        world.run_turn_async(
            wren, ASK, MINUTE, generate, on_token=lambda purpose, text: tokens.append(text)
        )
    )
    assert tokens == chunks
    assert outcome["replies"][0]["text"] == ANSWER


def test_run_turn_async_takes_sync_callables_too(world: World, wren: int, tobias: int) -> None:
    model = ScriptedGenerator()
    model.script(tobias, [ANSWER])
    outcome = asyncio.run(
        world.run_turn_async(
            wren, ASK, MINUTE, model, embed=model.embed, options={"semantic": True}
        )
    )
    assert outcome["replies"][0]["text"] == ANSWER


def test_a_failing_generator_abandons_the_turn_and_keeps_the_input(
    world: World, wren: int, tobias: int
) -> None:
    def generate(request: dict[str, Any]) -> str:
        raise ConnectionError("the model server is down")

    with pytest.raises(GenerationError, match="the model server is down") as raised:
        world.run_turn(wren, ASK, MINUTE, generate)
    assert isinstance(raised.value, RpError)
    cause = raised.value.__cause__
    assert isinstance(cause, ConnectionError)
    assert str(cause) == "the model server is down"

    head = world.head
    lines = world.dialogue()
    assert lines[-1]["text"] == ASK, "the input stays committed"
    assert all(line["speaker"] != tobias for line in lines), "no reply"

    # The world goes on: the next turn runs.
    outcome = world.run_turn(wren, "Tobias?", 2 * MINUTE, lambda request: ANSWER)
    assert outcome["replies"][0]["text"] == ANSWER
    assert world.head > head


def test_a_stream_that_fails_midway_commits_no_reply(world: World, wren: int) -> None:
    tokens: list[str] = []

    def generate(request: dict[str, Any]) -> Iterator[str]:
        yield "Lights, "
        raise TimeoutError("stream cut")

    with pytest.raises(GenerationError) as raised:
        world.run_turn(wren, ASK, MINUTE, generate, on_token=lambda p, t: tokens.append(t))
    assert isinstance(raised.value.__cause__, TimeoutError)
    assert tokens == ["Lights, "]
    assert [line["text"] for line in world.dialogue()] == [ASK]


def test_a_failing_async_generator_is_a_generation_error(world: World, wren: int) -> None:
    async def generate(request: dict[str, Any]) -> str:
        raise ValueError("bad gateway")

    with pytest.raises(GenerationError) as raised:
        asyncio.run(world.run_turn_async(wren, ASK, MINUTE, generate))
    assert isinstance(raised.value.__cause__, ValueError)
    assert [line["text"] for line in world.dialogue()] == [ASK]


def test_an_exception_of_on_token_propagates_as_it_is(world: World, wren: int) -> None:
    def on_token(purpose: dict[str, Any], text: str) -> None:
        raise KeyError("display")

    with pytest.raises(KeyError, match="display"):
        world.run_turn(wren, ASK, MINUTE, lambda request: ANSWER, on_token=on_token)
    assert [line["text"] for line in world.dialogue()] == [ASK]


def test_run_turn_refuses_async_callables(world: World, wren: int) -> None:
    async def generate(request: dict[str, Any]) -> str:
        return ANSWER

    async def stream(request: dict[str, Any]) -> AsyncIterator[str]:
        yield ANSWER

    async def on_token(purpose: dict[str, Any], text: str) -> None:
        pass

    # The coroutine is closed, not left unawaited (warnings are errors here).
    with pytest.raises(TypeError, match="run_turn_async"):
        world.run_turn(wren, ASK, MINUTE, generate)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="run_turn_async"):
        world.run_turn(wren, ASK, 2 * MINUTE, stream)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="run_turn_async"):
        world.run_turn(wren, ASK, 3 * MINUTE, lambda r: ANSWER, on_token=on_token)
    assert [line["text"] for line in world.dialogue()] == [ASK, ASK, ASK]


def test_run_turn_refuses_a_result_of_the_wrong_type(world: World, wren: int) -> None:
    with pytest.raises(TypeError, match="not int"):
        world.run_turn(wren, ASK, MINUTE, lambda request: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidInput):
        world.run_turn(wren, ASK, 2 * MINUTE, lambda request: {"text": 42})
    # A misspelt field is refused, not read as an empty (silent) reply.
    with pytest.raises(InvalidInput, match="unknown field `txt`"):
        world.run_turn(wren, ASK, 3 * MINUTE, lambda request: {"txt": "Aye."})
    assert [line["text"] for line in world.dialogue()] == [ASK, ASK, ASK]


def test_a_semantic_turn_asks_for_vectors(world: World, wren: int, tobias: int) -> None:
    model = ScriptedGenerator()
    model.script(tobias, [ANSWER])
    turn = world.begin_turn(wren, ASK, MINUTE, options={"semantic": True})

    # First the vector of the line heard, for recall.
    step = turn.step()
    assert step == {"step": "embed", "texts": [ASK]}
    with pytest.raises(Conflict):
        turn.provide(ANSWER)
    with pytest.raises(InvalidInput, match="2 vectors for 1 texts"):
        turn.provide_embeddings(model.embed([ASK, ASK]))
    turn.provide_embeddings(model.embed(step["texts"]))

    step = turn.step()
    assert step["step"] == "generate"
    turn.provide(model(step))

    # Then one vector per line remembered, before the commit.
    step = turn.step()
    assert step == {"step": "embed", "texts": [f"Wren: {ASK}", f"Tobias Reed: {ANSWER}"]}
    vectors = model.embed(step["texts"])
    assert len(vectors) == 2 and all(len(v) == 64 for v in vectors)
    turn.provide_embeddings(vectors)
    assert turn.step() == {"step": "done"}
    outcome = turn.finish()
    assert outcome["replies"][0]["text"] == ANSWER

    # The remembered lines carry their vectors: a query vector finds them.
    query = model.embed(["moving lights"])[0]
    found = world.recall(tobias, "boat", now=MINUTE, query_embedding=query, semantic=1.0)
    assert any(ANSWER in r.text for r in found)


def test_run_turn_calls_embed_in_a_semantic_turn(world: World, wren: int, tobias: int) -> None:
    model = ScriptedGenerator()
    asked: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        asked.append(texts)
        return model.embed(texts)

    outcome = world.run_turn(wren, ASK, MINUTE, model, embed=embed, options={"semantic": True})
    assert len(outcome["replies"]) == 1
    assert asked[0] == [ASK]
    assert len(asked) == 2 and len(asked[1]) == 2


def test_a_failing_embed_is_a_generation_error(world: World, wren: int) -> None:
    def embed(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("no embedding model")

    with pytest.raises(GenerationError) as raised:
        world.run_turn(
            wren, ASK, MINUTE, lambda r: ANSWER, embed=embed, options={"semantic": True}
        )
    assert isinstance(raised.value.__cause__, RuntimeError)
    assert [line["text"] for line in world.dialogue()] == [ASK]

    def not_vectors(texts: list[str]) -> Any:
        return "vectors"

    with pytest.raises(TypeError):
        world.run_turn(
            wren, ASK, 2 * MINUTE, lambda r: ANSWER, embed=not_vectors, options={"semantic": True}
        )


def test_a_semantic_turn_without_embed_is_refused_before_it_begins(
    world: World, wren: int
) -> None:
    head = world.head
    with pytest.raises(InvalidInput, match="embed"):
        world.run_turn(wren, ASK, MINUTE, lambda r: ANSWER, options={"semantic": True})
    assert world.head == head
    assert world.dialogue() == []


def test_inspect_prompt_says_why_each_piece_is_there(
    world: World, wren: int, tobias: int, mira: int
) -> None:
    boat = world.add_memory(tobias, "No boat can go where the lights were moving.")
    world.run_turn(wren, ASK, MINUTE, lambda request: ANSWER)
    head = world.head
    prompt = world.inspect_prompt(tobias)
    assert world.head == head, "inspecting changes nothing"
    assert [m["role"] for m in prompt["messages"]] == ["system", "user"]
    assert prompt["budget_tokens"] == 4096
    assert 0 < prompt["tokens"] <= prompt["budget_tokens"]
    assert prompt["trimmed"] == []
    pieces = prompt["pieces"]
    assert all(p["why"] and p["tokens"] > 0 for p in pieces)
    sections = [p["section"] for p in pieces]
    assert sections[0] == "identity"
    assert {"identity", "edges", "world", "scene", "activity", "dialogue"} <= set(sections)
    dialogue = [p for p in pieces if p["section"] == "dialogue"]
    assert [p["text"] for p in dialogue] == [f"Wren: {ASK}", f"Tobias Reed: {ANSWER}"]
    assert dialogue[0]["entity"] == wren
    assert dialogue[0]["why"] == "a line the speaker witnessed in its current scene"
    # Memories recalled for the query say so, with their score; remembered lines still in
    # the dialogue section are not repeated there.
    recalled = [p for p in pieces if p["section"] == "memories"]
    assert [p["memory"] for p in recalled] == [boat]
    assert all("score" in p for p in recalled)
    assert all(p["why"].startswith("recalled for the line heard") for p in recalled)

    # Mira's prompt holds nothing she did not witness.
    theirs = world.inspect_prompt(mira, "lights on the marsh")
    assert not any(ANSWER in p["text"] or ASK in p["text"] for p in theirs["pieces"])


def test_inspect_prompt_options_and_budget(world: World, wren: int, tobias: int) -> None:
    world.run_turn(wren, ASK, MINUTE, lambda request: ANSWER)
    plain = world.inspect_prompt(tobias, query=ASK, now=2 * MINUTE)
    halves = world.inspect_prompt(tobias, query=ASK, now=2 * MINUTE, options={"chars_per_token": 2})
    assert abs(halves["tokens"] - 2 * plain["tokens"]) <= 2, "tokens are counted as asked"
    small = world.inspect_prompt(tobias, query=ASK, now=2 * MINUTE, options={"budget_tokens": 60})
    assert small["budget_tokens"] == 60
    assert small["trimmed"], "a small budget drops pieces"
    assert all(p["why"] for p in small["trimmed"])
    kept = {p["section"] for p in small["pieces"]}
    assert "identity" in kept, "the identity is never dropped"

    with pytest.raises(InvalidInput, match="budget_tokens"):
        world.inspect_prompt(tobias, options={"budget_tokens": 0})
    with pytest.raises(InvalidInput, match="budget"):
        world.inspect_prompt(tobias, options={"budget": 100})
    with pytest.raises(NotFound):
        world.inspect_prompt(987_654_321)


def test_turn_options_are_read_from_a_dict(world: World, wren: int, tobias: int) -> None:
    options = {
        "sampling": {"temperature": 0.7, "max_tokens": 80, "stop": ["\n"]},
        "prompt": {"template": {"system": "You are {{name}}.\n{{dialogue}}", "user": ""}},
        "remember_dialogue": False,
        "max_responders": 1,
    }
    turn = world.begin_turn(wren, ASK, MINUTE, options=options)
    step = turn.step()
    assert step["params"] == {"temperature": 0.7, "max_tokens": 80, "stop": ["\n"]}
    heard = f"# What you heard (most recent last)\nWren: {ASK}"
    assert step["messages"] == [{"role": "system", "content": f"You are Tobias Reed.\n{heard}"}]
    turn.provide(ANSWER)
    turn.finish()
    assert not any(ANSWER in r.text for r in world.recall(tobias, "lights", now=MINUTE))

    head = world.head
    for bad in ({"max_responders": 0}, {"shout": True}, {"sampling": {"temperature": "hot"}}):
        with pytest.raises(InvalidInput):
            world.begin_turn(wren, ASK, 2 * MINUTE, options=bad)
    with pytest.raises(TypeError):
        not_a_dict: Any = [("semantic", True)]
        world.begin_turn(wren, ASK, 2 * MINUTE, options=not_a_dict)
    with pytest.raises(TypeError):
        world.begin_turn(wren, ASK, 2 * MINUTE, options={"sampling": {"stop": [object()]}})
    assert world.head == head, "bad options commit nothing"


def test_the_outcome_leaves_the_prompts_out_unless_asked(
    world: World, wren: int, tobias: int
) -> None:
    outcome = world.run_turn(wren, ASK, MINUTE, lambda request: ANSWER)
    assert outcome["prompts"] == []
    seen: list[dict[str, Any]] = []

    def generate(request: dict[str, Any]) -> str:
        seen.append(request)
        return ANSWER

    outcome = world.run_turn(
        wren, "Tobias?", 2 * MINUTE, generate, options={"outcome_prompts": True}
    )
    assert [p["speaker"] for p in outcome["prompts"]] == [tobias]
    assert outcome["prompts"][0]["messages"] == seen[0]["messages"]
    assert outcome["prompts"][0]["pieces"]

    turn = world.begin_turn(wren, "Tobias?", 3 * MINUTE, options={"outcome_prompts": False})
    assert turn.step()["step"] == "generate"
    turn.provide(ANSWER)
    assert turn.finish()["prompts"] == []
    again = asyncio.run(
        world.aturn(wren, "Tobias?", 4 * MINUTE, generate, options={"outcome_prompts": True})
    )
    assert [p["speaker"] for p in again["prompts"]] == [tobias]

    head = world.head
    for bad in (1, None, "yes"):
        with pytest.raises(InvalidInput, match="outcome_prompts"):
            world.begin_turn(wren, ASK, 5 * MINUTE, options={"outcome_prompts": bad})
        with pytest.raises(InvalidInput, match="outcome_prompts"):
            world.run_turn(
                wren, ASK, 5 * MINUTE, lambda request: ANSWER, options={"outcome_prompts": bad}
            )
    assert world.head == head, "bad options commit nothing"


def test_the_turn_values_are_plain_json_with_sorted_keys(
    world: World, wren: int, tobias: int
) -> None:
    seen: list[dict[str, Any]] = []

    def generate(request: dict[str, Any]) -> str:
        seen.append(request)
        return '{"reports": []}' if request["purpose"]["kind"] == "state_update" else ANSWER

    outcome = world.run_turn(
        wren, ASK, MINUTE, generate, options={"outcome_prompts": True, "updates": {"enabled": True}}
    )
    step = world.begin_turn(wren, "Tobias?", 2 * MINUTE).step()
    prompt = world.inspect_prompt(tobias)

    def check(value: object) -> None:
        if isinstance(value, dict):
            assert list(value) == sorted(value), "keys in the order of a serde_json::Value"
            for item in value.values():
                check(item)
        elif isinstance(value, list):
            for item in value:
                check(item)
        else:
            assert value is None or isinstance(value, (bool, int, float, str)), repr(value)

    for value in (*seen, outcome, step, prompt):
        check(value)
        assert json.loads(json.dumps(value)) == value
    assert [request["purpose"]["kind"] for request in seen] == ["reply", "state_update"]


def test_who_may_start_a_turn(world: World, wren: int, tobias: int) -> None:
    head = world.head
    with pytest.raises(NotFound):
        world.begin_turn(987_654_321, ASK, MINUTE)
    with pytest.raises(InvalidInput, match="not host-controlled"):
        world.begin_turn(tobias, ASK, MINUTE)
    with pytest.raises(NotFound):
        world.run_turn(987_654_321, ASK, MINUTE, lambda r: ANSWER)
    assert world.head == head, "a refused turn commits nothing"

    world.run_turn(wren, ASK, 2 * MINUTE, lambda r: ANSWER)
    with pytest.raises(InvalidInput, match="before the world's clock"):
        world.begin_turn(wren, ASK, MINUTE)


def test_the_turn_refuses_calls_out_of_order(world: World, wren: int, tobias: int) -> None:
    turn = world.begin_turn(wren, ASK, MINUTE)
    with pytest.raises(Conflict, match="vectors"):
        turn.provide_embeddings([[1.0, 0.0]])

    # Finishing too early is refused and the turn goes on.
    with pytest.raises(Conflict, match="still needs a generation"):
        turn.finish()
    assert turn.active

    # Results of the wrong kind are refused and change nothing.
    with pytest.raises(TypeError, match="not int"):
        turn.provide(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        turn.provide(["Lights"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="generation result"):
        turn.provide({"text": 42})
    assert turn.step()["step"] == "generate"

    turn.provide(ANSWER)
    with pytest.raises(Conflict, match="not waiting for a generation"):
        turn.provide(ANSWER)
    turn.finish()

    # After finish, every call is refused; the properties still answer.
    for call in (turn.step, turn.finish, lambda: turn.provide(ANSWER)):
        with pytest.raises(Conflict, match="the turn is over"):
            call()
    with pytest.raises(Conflict, match="the turn is over"):
        turn.provide_embeddings([[1.0]])
    turn.abandon()  # does nothing on a finished turn
    assert turn.responders == [tobias]


def test_an_abandoned_turn_keeps_its_input_only(world: World, wren: int) -> None:
    turn = world.begin_turn(wren, ASK, MINUTE)
    head = world.head
    turn.step()
    turn.provide(ANSWER)
    turn.abandon()
    assert not turn.active
    assert world.head == head
    assert [line["text"] for line in world.dialogue()] == [ASK]
    with pytest.raises(Conflict, match="the turn is over"):
        turn.step()


def test_a_turn_refuses_to_go_on_when_the_world_moved(
    world: World, wren: int, mira: int
) -> None:
    turn = world.begin_turn(wren, ASK, MINUTE)
    world.decide(mira, content="Mira?")
    with pytest.raises(Conflict, match="world changed"):
        turn.step()
    turn.abandon()


def test_a_closed_world_refuses_its_turn() -> None:
    with World.in_memory("closing") as world:
        world.load_world_file(TAVERN)
        turn = world.begin_turn(world.entity_id("Wren"), ASK, MINUTE)
    with pytest.raises(RpError, match="closed"):
        turn.step()


def test_the_scripted_generator(world: World, tobias: int) -> None:
    model = ScriptedGenerator("{name} shrugs. ({n}) after {heard}")
    model.script(tobias, ["One.", "Two."])
    request = {
        "purpose": {"kind": "reply", "speaker": tobias},
        "messages": [
            {"role": "system", "content": "You are Tobias Reed, a fisherman.\nWren: hello"}
        ],
    }
    assert model(request)["text"] == "One."
    assert model(request)["text"] == "Two."
    result = model(request)
    assert result["text"] == "Tobias Reed shrugs. (3) after Wren: hello"
    assert result["model"] == "scripted"
    assert result["prompt_tokens"] > 0 and result["completion_tokens"] > 0
    assert len(model.requests) == 3
    assert model.requests[0]["messages"] == request["messages"]
    assert "3 requests" in repr(model)

    assert model.embed(["a b", "a b"])[0] == model.embed(["a b"])[0]
    assert model.embed([]) == []

    with pytest.raises(InvalidInput, match="generate request"):
        model({"messages": []})
    with pytest.raises(TypeError):
        model.script(tobias, "One.")


def test_the_new_names_are_exported() -> None:
    assert issubclass(GenerationError, RpError)
    assert GenerationError.__module__ == "rp_engine"
    assert Turn.__module__ == "rp_engine"
    assert ScriptedGenerator.__module__ == "rp_engine"
