"""Stubs of the native module rp_engine._rp (rp-py/src)."""

import os
from types import TracebackType
from collections.abc import (
    AsyncIterable,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from typing import Any, Optional, Union, final

__all__ = [
    "__version__",
    "version",
    "World",
    "Decision",
    "Condition",
    "Recalled",
    "Turn",
    "ScriptedGenerator",
    "check_sheet",
    "RpError",
    "NotFound",
    "InvalidInput",
    "Conflict",
    "CapacityError",
    "WorldFileError",
    "StorageError",
    "CorruptSave",
    "UnsupportedVersion",
    "NotASave",
    "FactSyntaxError",
    "GenerationError",
    "ActionRefused",
]

__version__: str

_Path = Union[str, "os.PathLike[str]"]

# What a ``generate`` callable returns: the text, a result dict, or str chunks
# (a generator that streams).
_Generated = Union[str, Mapping[str, Any], Iterable[str]]
_Generate = Callable[[dict[str, Any]], _Generated]
_AsyncGenerate = Callable[
    [dict[str, Any]], Union[_Generated, Awaitable[_Generated], AsyncIterable[str]]
]
_OnToken = Callable[[dict[str, Any], str], object]
_Vectors = Sequence[Sequence[float]]
_Embed = Callable[[list[str]], _Vectors]
_AsyncEmbed = Callable[[list[str]], Union[_Vectors, Awaitable[_Vectors]]]
_OnAction = Callable[[dict[str, Any]], object]

def version() -> str:
    """The version of the rp engine, such as ``"0.1.0"``."""

def check_sheet(text: str) -> None:
    """Checks a fact sheet (one fact per line) without a world.

    Raises FactSyntaxError with ``.line`` and ``.column`` (1-based, every line of
    ``text`` counted, blank ones included; ``.owner`` is None).
    """

@final
class Condition:
    """A compiled condition: the expression of a ``$if`` line on its own."""

    def __new__(cls, source: str) -> "Condition": ...
    @property
    def source(self) -> str:
        """The source it was compiled from."""
    def test(
        self,
        *,
        name: str = "",
        content: str = "",
        author: str = "",
        mentioned: bool = False,
        response_ms: Optional[float] = None,
        retry_ms: float = 0.0,
        unread_count: int = 0,
        interaction_type: Optional[str] = None,
        present: Optional[Sequence[str]] = None,
        hour: float = 12.0,
        seed: int = 0,
    ) -> bool:
        """Whether the condition holds in this context (draws from ``seed``)."""
    def test_traced(
        self,
        *,
        name: str = "",
        content: str = "",
        author: str = "",
        mentioned: bool = False,
        response_ms: Optional[float] = None,
        retry_ms: float = 0.0,
        unread_count: int = 0,
        interaction_type: Optional[str] = None,
        present: Optional[Sequence[str]] = None,
        hour: float = 12.0,
        seed: int = 0,
    ) -> tuple[bool, list[dict[str, Any]]]:
        """``test``, with a dict per random draw, dice roll and runtime error."""

@final
class Recalled:
    """A memory a speaker recalled, and why it ranked where it did."""

    @property
    def id(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def relevance(self) -> float: ...
    @property
    def recency(self) -> float: ...
    @property
    def significance(self) -> float: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Decision:
    """Whether a character responds to a message, and why (``World.decide``)."""

    @property
    def respond(self) -> bool:
        """Whether the character responds now."""
    @property
    def retry_ms(self) -> Optional[int]:
        """When a ``$retry`` fired: decide again after this many ms; else None."""
    @property
    def facts(self) -> list[str]:
        """The facts that apply: plain lines and the text of conditional lines that fired."""
    @property
    def trace(self) -> list[dict[str, Any]]:
        """Why, in order: dicts with ``"line"``, ``"kind"`` and that kind's fields."""
    @property
    def draws(self) -> list[float]:
        """Every random number drawn, in order."""
    def explain(self) -> str:
        """The trace as text a writer can read, then the outcome."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Turn:
    """A turn in progress, begun by ``World.begin_turn`` (the input is committed).

    Call ``step()`` until it returns ``{"step": "done"}``, answering each
    ``"generate"`` step with ``provide()`` and each ``"embed"`` step with
    ``provide_embeddings()``; then ``finish()``. ``abandon()`` drops the turn.
    """

    def step(self) -> dict[str, Any]:
        """What the turn needs next: a dict whose ``"step"`` is generate, embed, act or done.

        A reply request offers ``"tools"`` (``roll_dice``, ``roll_effects``)
        unless the options say ``"tools": False``; after a result with
        ``"tool_calls"`` it is asked again, its messages ending with the
        calls and one ``"tool"`` message per result.
        """
    def provide(self, result: Union[str, dict[str, Any]]) -> None:
        """Answers the last ``"generate"`` step with the text or a result dict.

        The dict has ``"text"`` and optionally ``"tool_calls"`` (``[{"id",
        "name", "arguments"}]``, run by the engine), ``"prompt_tokens"``,
        ``"completion_tokens"``, ``"model"``.
        """
    def provide_embeddings(self, vectors: _Vectors) -> None:
        """Answers the last ``"embed"`` step: one vector per text, in order."""
    def provide_action(self, answer: Any = None, *, refusal: Optional[str] = None) -> None:
        """Answers the last ``"act"`` step: what the game did, or ``refusal=`` why not.

        Exactly one of the two; ``answer`` is JSON-like (``{}`` for nothing to
        say), and a dict with a ``"system_line"`` str injects that line.
        """
    def finish(self) -> dict[str, Any]:
        """Commits the turn in one transaction and returns its outcome (with ``"reports"``)."""
    def abandon(self) -> None:
        """Drops the turn; the input stays committed. Does nothing on a turn that is over."""
    @property
    def active(self) -> bool:
        """Whether the turn goes on (False after ``finish()`` or ``abandon()``)."""
    @property
    def world(self) -> "World":
        """The world the turn runs in."""
    @property
    def speaker(self) -> int:
        """The entity id of the input's speaker."""
    @property
    def input(self) -> Optional[int]:
        """The input's utterance id; None for a wake-up turn."""
    @property
    def decisions(self) -> list[dict[str, Any]]:
        """The response decision of every character who heard the input."""
    @property
    def responders(self) -> list[int]:
        """Who will answer, in order."""

@final
class ScriptedGenerator:
    """A stand-in for a model: scripted lines per speaker or purpose, then a fallback."""

    def __new__(cls, fallback: str = "{name} nods. ({n})") -> "ScriptedGenerator": ...
    def script(self, speaker: int, lines: Sequence[str]) -> None:
        """Queues ``lines`` for the replies of ``speaker``, in order."""
    def script_purpose(self, purpose: str, answers: Sequence[str]) -> None:
        """Queues ``answers`` for requests of ``purpose`` (``"state_update"``, ``"summary"``,
        ``"query"`` or ``"reply"``), in order."""
    def __call__(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Answers a generate request with a result dict."""
    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request answered so far, in order."""
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One deterministic vector per text, in order."""

@final
class World:
    """A world and the save file that keeps its event log."""

    @classmethod
    def create(cls, path: _Path, world_file: _Path, now: int = 0) -> "World":
        """Creates a save file at ``path`` from the world file ``world_file``."""
    @classmethod
    def open(cls, path: _Path) -> "World":
        """Opens the save file at ``path`` on its current branch."""
    @classmethod
    def in_memory(cls, name: str, now: int = 0) -> "World":
        """A new world in memory, with no save file."""
    def apply_world_file(self, name: str, text: str) -> int:
        """Applies a world file given as text; returns the number of events appended."""
    def load_world_file(self, path: _Path) -> int:
        """Reads and applies the world file at ``path``; returns the events appended."""
    def entity_id(self, name_or_key: str) -> int:
        """The id of the entity with this world-file key or (ignoring case) name."""
    @property
    def head(self) -> int:
        """The seq of the last event on the current branch."""
    def decide(
        self,
        entity: int,
        *,
        content: str = "",
        author: str = "",
        mentioned: Optional[bool] = None,
        response_ms: Optional[float] = None,
        retry_ms: float = 0.0,
        unread_count: int = 0,
        interaction_type: Optional[str] = None,
        hour: Optional[float] = None,
    ) -> Decision:
        """Decides whether ``entity`` responds to a message and records the decision."""
    def add_memory(
        self,
        owner: int,
        text: str,
        *,
        witnesses: Optional[Sequence[int]] = None,
        kind: str = "utterance",
        significance: float = 0.5,
        created: Optional[int] = None,
        pinned: bool = False,
        embedding: Optional[Sequence[float]] = None,
    ) -> int:
        """Forms a memory of ``owner`` and returns its id."""
    def always_loaded(self, speaker: int, recent_scenes: int = 3) -> list[int]:
        """Pinned memories, then the most recent scene summaries, of ``speaker``."""
    def remove_memory(self, memory: int) -> None:
        """Removes a memory."""
    def recall(
        self,
        speaker: int,
        query: str,
        *,
        now: int,
        k: int = 10,
        candidates: int = 8,
        relevance: float = 1.0,
        recency: float = 1.0,
        significance: float = 1.0,
        half_life_ms: Optional[float] = None,
        query_embedding: Optional[Sequence[float]] = None,
        semantic: float = 0.5,
    ) -> list[Recalled]:
        """The memories ``speaker`` recalls for ``query`` at ``now``, best first."""
    def mark_recalled(self, memories: Sequence[int], at: int) -> int:
        """Records that ``memories`` were recalled at ``at``; returns the new head."""
    def search_entities(self, query: str, k: int = 10) -> list[tuple[int, str, float]]:
        """The entities whose names, aliases or facts best match ``query``."""
    def begin_turn(
        self,
        speaker: int,
        text: str,
        now: int,
        *,
        witnesses: Optional[Sequence[int]] = None,
        options: Optional[dict[str, Any]] = None,
    ) -> Turn:
        """Commits ``speaker``'s line and starts a turn; drive it with ``step``/``provide``."""
    def run_turn(
        self,
        speaker: int,
        text: str,
        now: int,
        generate: _Generate,
        *,
        on_token: Optional[_OnToken] = None,
        embed: Optional[_Embed] = None,
        on_action: Optional[_OnAction] = None,
        witnesses: Optional[Sequence[int]] = None,
        options: Optional[dict[str, Any]] = None,
    ) -> dict[str, Any]:
        """Runs a whole turn with ``generate`` as the model; returns the outcome.

        ``generate`` returns the text, a result dict (which may hold
        ``"tool_calls"``: then it is called again with their results) or
        ``str`` chunks. ``on_action`` carries out the options' host actions:
        it returns what the game did or raises ``ActionRefused``.
        """
    def run_turn_async(
        self,
        speaker: int,
        text: str,
        now: int,
        generate: _AsyncGenerate,
        *,
        on_token: Optional[_OnToken] = None,
        embed: Optional[_AsyncEmbed] = None,
        on_action: Optional[_OnAction] = None,
        witnesses: Optional[Sequence[int]] = None,
        options: Optional[dict[str, Any]] = None,
    ) -> Coroutine[Any, Any, dict[str, Any]]:
        """``run_turn`` for asyncio, with sync or async callables: await the result."""
    def inspect_prompt(
        self,
        speaker: int,
        query: Optional[str] = None,
        now: Optional[int] = None,
        options: Optional[dict[str, Any]] = None,
    ) -> dict[str, Any]:
        """The prompt ``speaker`` would be given, with why each piece is there."""
    def dialogue(self) -> list[dict[str, Any]]:
        """The recent lines of dialogue, oldest first."""
    def inject_system_line(self, text: str, audience: Optional[Sequence[int]] = None) -> int:
        """Puts ``[SYSTEM: text]`` in the next prompts of ``audience`` (None: everyone)."""
    def system_lines(self) -> list[dict[str, Any]]:
        """The system lines no turn has shown yet, oldest first."""
    def export_world_file(self) -> str:
        """The current world in world-file form (TOML)."""
    def close(self) -> None:
        """Closes the world and its save file; closing twice does nothing."""
    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
    def __enter__(self) -> "World": ...
    def __exit__(
        self,
        _exc_type: Optional[type[BaseException]],
        _exc_value: Optional[BaseException],
        _traceback: Optional[TracebackType],
    ) -> bool: ...

class RpError(Exception):
    """The base class of every error rp raises."""

class NotFound(RpError):
    """An id, name, key or branch that does not exist."""

class InvalidInput(RpError):
    """An argument or event that is malformed or out of range."""

class Conflict(RpError):
    """A request that contradicts the current state."""

class CapacityError(RpError):
    """A slot that is already full."""

class WorldFileError(RpError):
    """A world file (TOML) with a syntax, type or reference error."""

    file: str
    line: int
    column: int
    field: str

class StorageError(RpError):
    """An I/O failure of the save file, a full disk included."""

class CorruptSave(RpError):
    """A save file whose content is damaged."""

class UnsupportedVersion(RpError):
    """A save file written by a newer format version."""

class NotASave(RpError):
    """A file that is not an rp save at all."""

class FactSyntaxError(RpError):
    """A fact sheet that does not compile."""

    owner: Optional[str]
    line: int
    column: int

class GenerationError(RpError):
    """The host's generator failed during a turn; the turn is abandoned, its input kept."""

class ActionRefused(Exception):
    """Raised by an ``on_action`` callable to refuse a host action (the reason is recorded)."""
