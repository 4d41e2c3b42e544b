"""The drivers behind ``World.run_turn_async`` (and its other name
``World.aturn``) and ``World.stream_turn`` (``TurnStream``).

They run the poll form of the turn (``World.begin_turn``, then
``Turn.step``/``provide``/``provide_embeddings`` until ``"done"``, then
``Turn.finish``) with the host's callables answering each step, awaited on
the caller's event loop, so they work inside a loop that is already running
(a notebook's). Call them through the ``World`` methods; this module is not
public. ``World.run_turn``, the sync form, is driven from Rust
(``rp-py/src/run_turn.rs``) by the same rules, except that it refuses
awaitables and async iterables (``TypeError``: they are ``World.aturn``'s).

What ``generate`` may return (after awaiting):

- ``str``: the whole text; ``on_token`` sees it once;
- a ``dict`` (any mapping) such as ``{"text": ...}``: a result as
  ``Turn.provide`` takes it; ``on_token`` sees its text once (not at all
  when it is empty). A result with ``"tool_calls"`` answers a request that
  offers ``"tools"``: the next step is the same request with the calls'
  results, and ``generate`` is called again;
- an iterable of ``str`` chunks (a generator that streams), or an async
  iterable of them: ``on_token`` sees each chunk as it arrives and the
  chunks are joined into the text.

What ``on_action`` may return (after awaiting): what the game did, any
JSON-like value (``None`` is recorded as ``{}``); it refuses by raising
``ActionRefused``, recorded as the action's rejection. Without
``on_action`` every action is refused, saying so.

An exception raised by ``generate``, ``embed`` or ``on_action`` (when called,
awaited or iterated), ``ActionRefused`` aside, abandons the turn and becomes a
``GenerationError`` whose ``__cause__`` is that exception. Any other exception abandons the turn and
propagates unchanged. Either way the input stays committed: ``begin_turn``
committed it.

``TurnStream`` runs the async driver as a task of the caller's event loop
and hands each chunk of text to the ``async for`` that reads it, as a
``Token``; the outcome is kept on the stream once the turn is committed.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import closing
from types import TracebackType
from typing import Any, NamedTuple, Optional, Union, cast

from rp_engine._rp import ActionRefused, GenerationError, InvalidInput, Turn, World

_Request = dict[str, Any]
_Result = Union[str, dict[str, Any]]
_OnToken = Optional[Callable[[dict[str, Any], str], object]]
_OnAction = Optional[Callable[[dict[str, Any]], object]]


async def run_turn_async(
    world: World,
    speaker: int,
    text: str,
    now: int,
    generate: Callable[[_Request], object],
    *,
    on_token: _OnToken = None,
    embed: Optional[Callable[[list[str]], object]] = None,
    on_action: _OnAction = None,
    witnesses: Optional[Sequence[int]] = None,
    options: Optional[dict[str, Any]] = None,
) -> dict[str, Any]:
    """Runs a whole turn with sync or async callables; see
    ``World.run_turn_async``."""
    _require_embed(options, embed)
    turn = world.begin_turn(speaker, text, now, witnesses=witnesses, options=options)
    try:
        while True:
            step = turn.step()
            kind = step.pop("step")
            if kind == "generate":
                turn.provide(await _generate_async(generate, step, on_token))
            elif kind == "embed":
                turn.provide_embeddings(await _embed_async(embed, step["texts"]))
            elif kind == "act":
                _provide_action(turn, await _act_async(on_action, step))
            else:
                return turn.finish()
    finally:
        turn.abandon()


def _require_embed(options: object, embed: object) -> None:
    """Refuses, before anything is committed, a semantic turn without an
    ``embed`` callable."""
    if embed is None and isinstance(options, Mapping) and options.get("semantic"):
        raise InvalidInput('options turn on "semantic", which needs an embed callable')


def _failed(name: str, error: Exception) -> GenerationError:
    return GenerationError(f"{name} raised {type(error).__name__}: {error}")


def _whole(result: object) -> Optional[tuple[_Result, str]]:
    """A result given whole (text or dict) and its text; None when
    ``result`` is neither."""
    if isinstance(result, str):
        return result, result
    if isinstance(result, Mapping):
        whole = dict(result)
        text = whole.get("text")
        return whole, text if isinstance(text, str) else ""
    return None


def _chunks(result: object) -> Generator[str, None, None]:
    """The chunks of a streaming ``generate``, its failures as
    ``GenerationError``; closes the iterator it reads, also when abandoned."""
    if not isinstance(result, Iterable):
        raise TypeError(
            "generate must return the text (str), a result dict or an iterable of str "
            f"chunks, not {type(result).__name__}"
        )
    chunks: Iterator[object] = iter(result)
    try:
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            except Exception as error:
                raise _failed("generate", error) from error
            yield _chunk(chunk)
    finally:
        close = getattr(chunks, "close", None)
        if callable(close):
            close()


def _chunk(chunk: object) -> str:
    if not isinstance(chunk, str):
        raise TypeError(f"generate streamed a {type(chunk).__name__}; chunks must be str")
    return chunk


async def _generate_async(
    generate: Callable[[_Request], object], request: _Request, on_token: _OnToken
) -> _Result:
    purpose: dict[str, Any] = request["purpose"]
    try:
        result = generate(request)
        if inspect.isawaitable(result):
            result = await result
    except Exception as error:
        raise _failed("generate", error) from error
    whole = _whole(result)
    if whole is not None:
        if whole[1]:
            await _token(on_token, purpose, whole[1])
        return whole[0]
    parts: list[str] = []
    if isinstance(result, AsyncIterable):
        chunks = result.__aiter__()
        try:
            while True:
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    break
                except Exception as error:
                    raise _failed("generate", error) from error
                parts.append(_chunk(chunk))
                await _token(on_token, purpose, parts[-1])
        finally:
            aclose = getattr(chunks, "aclose", None)
            if callable(aclose):
                await aclose()
    else:
        with closing(_chunks(result)) as sync_chunks:
            for sync_chunk in sync_chunks:
                parts.append(sync_chunk)
                await _token(on_token, purpose, sync_chunk)
    return "".join(parts)


async def _token(on_token: _OnToken, purpose: dict[str, Any], text: str) -> None:
    if on_token is not None:
        done = on_token(purpose, text)
        if inspect.isawaitable(done):
            await done


async def _embed_async(
    embed: Optional[Callable[[list[str]], object]], texts: list[str]
) -> Sequence[Sequence[float]]:
    if embed is None:
        raise GenerationError("the turn asks for vectors and no embed callable was given")
    try:
        vectors = embed(texts)
        if inspect.isawaitable(vectors):
            vectors = await vectors
    except Exception as error:
        raise _failed("embed", error) from error
    return cast(Sequence[Sequence[float]], vectors)


# An action's answer, or the reason it was refused.
_Answer = tuple[object, Optional[str]]


def _provide_action(turn: Turn, answer: _Answer) -> None:
    value, refusal = answer
    if refusal is not None:
        turn.provide_action(refusal=refusal)
    else:
        turn.provide_action({} if value is None else value)


def _no_action(call: dict[str, Any]) -> _Answer:
    return None, (
        f'no on_action callable was given to run the turn, so the action "{call["name"]}" '
        "was not carried out"
    )


async def _act_async(on_action: _OnAction, call: dict[str, Any]) -> _Answer:
    if on_action is None:
        return _no_action(call)
    try:
        answer = on_action(call)
        if inspect.isawaitable(answer):
            answer = await answer
    except ActionRefused as refusal:
        return None, str(refusal)
    except Exception as error:
        raise _failed("on_action", error) from error
    return answer, None


class Token(NamedTuple):
    """A chunk of generated text, as ``World.stream_turn`` yields it."""

    purpose: dict[str, Any]
    """Why it was generated: ``{"kind": "reply", "speaker": id}``, ``{"kind":
    "state_update"}``, ..."""
    text: str
    """The chunk."""

    @property
    def speaker(self) -> Optional[int]:
        """Whose reply it is part of (an entity id); None for other purposes."""
        speaker = self.purpose.get("speaker")
        return speaker if isinstance(speaker, int) else None


class _End:
    """What the turn's task puts last in the queue of tokens."""


_END = _End()


class TurnStream:
    """A turn whose text streams as an async iterator (``World.stream_turn``).

    ``async for token in stream`` yields a ``Token`` for each chunk of text as
    ``generate`` produces it; the turn is committed when the iteration ends,
    and its outcome dict is then ``stream.outcome``. Nothing begins (not
    even the input's commit) before the first ``__anext__``. An error of the
    turn is raised from the ``async for``, as ``World.run_turn_async`` raises
    it. Closing the stream early (``aclose()``, leaving ``async with``)
    abandons the turn: its input stays committed, nothing else.
    """

    def __init__(
        self,
        world: World,
        speaker: int,
        text: str,
        now: int,
        generate: Callable[[_Request], object],
        *,
        on_token: _OnToken = None,
        embed: Optional[Callable[[list[str]], object]] = None,
        on_action: _OnAction = None,
        witnesses: Optional[Sequence[int]] = None,
        options: Optional[dict[str, Any]] = None,
    ) -> None:
        self._world = world
        self._args = (speaker, text, now, generate)
        self._embed = embed
        self._on_action = on_action
        self._witnesses = witnesses
        self._options = options
        self._on_token = on_token
        self._outcome: Optional[dict[str, Any]] = None
        self._tokens: Optional[AsyncGenerator[Token, None]] = None

    def __aiter__(self) -> TurnStream:
        return self

    async def __anext__(self) -> Token:
        if self._tokens is None:
            self._tokens = self._stream()
        return await self._tokens.__anext__()

    async def aclose(self) -> None:
        """Stops the stream; a turn still running is abandoned (its input
        stays committed)."""
        if self._tokens is not None:
            await self._tokens.aclose()

    async def __aenter__(self) -> TurnStream:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        await self.aclose()

    @property
    def outcome(self) -> dict[str, Any]:
        """The outcome of the committed turn (as ``World.run_turn`` returns
        it). Raises ``RuntimeError`` before the iteration has ended."""
        if self._outcome is None:
            raise RuntimeError("the turn is not over: iterate the stream to its end first")
        return self._outcome

    async def _stream(self) -> AsyncGenerator[Token, None]:
        queue: asyncio.Queue[Union[Token, _End]] = asyncio.Queue()
        user_on_token = self._on_token

        async def on_token(purpose: dict[str, Any], text: str) -> None:
            queue.put_nowait(Token(purpose, text))
            await _token(user_on_token, purpose, text)

        speaker, text, now, generate = self._args
        task = asyncio.ensure_future(
            run_turn_async(
                self._world,
                speaker,
                text,
                now,
                generate,
                on_token=on_token,
                embed=self._embed,
                on_action=self._on_action,
                witnesses=self._witnesses,
                options=self._options,
            )
        )
        task.add_done_callback(lambda _: queue.put_nowait(_END))
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _End):
                    break
                yield item
            self._outcome = task.result()
        finally:
            if not task.done():
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
