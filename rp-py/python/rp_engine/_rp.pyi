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
from typing import Any, Optional, TypedDict, Union, final

from rp_engine._notebook import Graph
from rp_engine._turn import TurnStream

__all__ = [
    "__version__",
    "version",
    "World",
    "Decision",
    "Condition",
    "Recalled",
    "Turn",
    "Job",
    "ScriptedGenerator",
    "Entity",
    "Container",
    "Slot",
    "Edge",
    "Memory",
    "Group",
    "Branch",
    "RewindPreview",
    "ScopedEvent",
    "Thread",
    "Scene",
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
    "InvalidReport",
    "RequirementUnmet",
    "ActionRefused",
]

__version__: str

_Path = Union[str, "os.PathLike[str]"]

class _Compaction(TypedDict):
    """What ``World.compact`` did (docs/history.md#compaction)."""

    file_bytes_before: int
    file_bytes_after: int
    allocated_bytes_before: int
    allocated_bytes_after: int
    snapshots_dropped: int
    compacted: bool
    records_upgraded: int

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
# A progress callable: (phase, done, total) (docs/progress.md).
_Progress = Callable[[str, int, int], object]
# An entity or container as a call names it: an id, or a key or name.
_Named = Union[int, str]
# A slot as create_container takes it: a name, or a name and a capacity.
_SlotArg = Union[str, tuple[str, Optional[int]]]

def version() -> str:
    """The version of the rp engine, such as ``"0.1.0"``."""

def check_sheet(text: str) -> None:
    """Checks a fact sheet (one fact per line) without a world.

    Raises FactSyntaxError with ``.line`` and ``.column`` (1-based, every line of
    ``text`` counted, blank ones included; ``.owner`` is None).
    """

def _bench_native(
    world: "World",
    op: str,
    n: int,
    *,
    speaker: int = 0,
    query: str = "",
    now: int = 0,
    k: int = 10,
    text: str = "",
    reply: str = "",
    now_step: int = 0,
) -> tuple[int, int]:
    """The Rust peer of benches/python/overhead.py, not part of the API: runs
    ``op`` (``"head"``, ``"recall"`` or ``"turn"``) ``n`` times in Rust on
    ``world``'s engine; returns ``(elapsed_ns, check)``."""

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
        drives: Optional[dict[str, Any]] = None,
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
        drives: Optional[dict[str, Any]] = None,
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
    def retention(self) -> float: ...
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
        calls and one ``"tool"`` message per result. The tool dicts are made
        once and shared by every request (each gets its own list): treat
        them as read-only.
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
class Job:
    """A scene close, a time skip, a world query or a tick in progress, begun by
    ``World.begin_scene_close``, ``begin_close_current_scene``,
    ``begin_time_skip``, ``begin_query`` or ``begin_tick``; nothing is committed
    before ``finish()`` (but a tick's arithmetic, at its beginning, and each of its
    initiations, as its turn ends).

    Call ``step()`` until it returns ``{"step": "done"}``, answering each
    ``"generate"`` step with ``provide()`` (and a tick's ``"embed"`` and ``"act"``
    steps with ``provide_embeddings()`` and ``provide_action()``); then
    ``finish()``. ``abandon()`` drops the job, committing nothing more.
    """

    def step(self) -> dict[str, Any]:
        """What the job needs next: ``{"step": "generate", ...}`` (a request) or ``{"step": "done"}``."""
    def provide(self, result: Union[str, dict[str, Any]]) -> None:
        """Answers the last ``"generate"`` step with the text or a result dict."""
    def provide_embeddings(self, vectors: _Vectors) -> None:
        """Answers the last ``"embed"`` step (a tick's turn): one vector per text, in order."""
    def provide_action(self, answer: Any = None, *, refusal: Optional[str] = None) -> None:
        """Answers the last ``"act"`` step (a tick's turn): what the game did, or ``refusal=``."""
    def fail(self, reason: str) -> None:
        """The host's model could not answer: the job asks for nothing more; ``finish()`` then
        records a query as failed, or raises ``GenerationError`` for a scene close or a time
        skip, committing nothing, and for a tick (its initiation in progress held back)."""
    def finish(self) -> dict[str, Any]:
        """Commits the job in one transaction and returns what it did (with ``"seq"``)."""
    def abandon(self) -> None:
        """Drops the job, committing nothing. Does nothing on a job that is over."""
    def progress(self) -> dict[str, Any]:
        """Where the job stands: ``"kind"``, ``"done"`` and the machine's own fields."""
    @property
    def kind(self) -> str:
        """``"scene_close"``, ``"time_skip"``, ``"query"`` or ``"tick"``."""
    @property
    def active(self) -> bool:
        """Whether the job goes on (False after ``finish()`` or ``abandon()``)."""
    @property
    def world(self) -> "World":
        """The world the job runs in."""

@final
class ScriptedGenerator:
    """A stand-in for a model: scripted lines per speaker or purpose, then a fallback."""

    def __new__(cls, fallback: str = "{name} nods. ({n})") -> "ScriptedGenerator": ...
    def script(self, speaker: int, lines: Sequence[str]) -> None:
        """Queues ``lines`` for the replies of ``speaker``, in order."""
    def script_purpose(self, purpose: str, answers: Sequence[str]) -> None:
        """Queues ``answers`` for requests of ``purpose`` (``"state_update"``, ``"summary"``,
        ``"query"``, ``"reply"``, ``"initiate"``, ``"reflect"``, ``"classify"`` or
        ``"think"``), in order."""
    def __call__(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Answers a generate request with a result dict."""
    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request answered so far, in order."""
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One deterministic vector per text, in order."""

@final
class Entity:
    """An entity: a character, the player, an item (a snapshot, taken when read)."""

    @property
    def id(self) -> int: ...
    @property
    def key(self) -> Optional[str]:
        """The key a world file gives it, or None."""
    @property
    def name(self) -> str: ...
    @property
    def aliases(self) -> list[str]: ...
    @property
    def facts(self) -> str:
        """Its fact sheet, one fact per line."""
    @property
    def host_controlled(self) -> bool:
        """Whether the host speaks for it (the player)."""
    @property
    def mentioned(self) -> bool:
        """Whether it is a person only talked about (no place, mind or lines)."""
    @property
    def mood(self) -> Optional[str]: ...
    @property
    def goals(self) -> list[str]: ...
    @property
    def status(self) -> Optional[str]: ...
    @property
    def container(self) -> Optional[int]:
        """The id of the container it is in, or None."""
    @property
    def slot(self) -> Optional[str]: ...
    @property
    def posture(self) -> Optional[str]: ...
    @property
    def action(self) -> Optional[str]:
        """What it is doing ("polishing tankards"), or None."""
    @property
    def holding(self) -> list[int]: ...
    @property
    def attention(self) -> Optional[int]: ...
    @property
    def inventory(self) -> list[int]:
        """The ids of the items it carries."""
    @property
    def carrier(self) -> Optional[int]:
        """The id of who carries it, or None."""
    def to_dict(self) -> dict[str, Any]:
        """Every field, as the JSON rp-core writes."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Slot:
    """A named place within a container, how many fit (None: no limit) and how many are there."""

    @property
    def name(self) -> str: ...
    @property
    def capacity(self) -> Optional[int]: ...
    @property
    def occupancy(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Container:
    """A container: a room, a booth, a car (a snapshot, taken when read)."""

    @property
    def id(self) -> int: ...
    @property
    def key(self) -> Optional[str]: ...
    @property
    def name(self) -> str: ...
    @property
    def facts(self) -> str: ...
    @property
    def parent(self) -> Optional[int]:
        """The id of the container it sits in, or None."""
    @property
    def slots(self) -> list[Slot]: ...
    @property
    def public(self) -> bool: ...
    @property
    def moving(self) -> bool: ...
    @property
    def audible_range(self) -> int: ...
    def to_dict(self) -> dict[str, Any]:
        """Every field, as the JSON rp-core writes."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Edge:
    """What ``from_`` feels about, and knows of, ``to`` (a snapshot)."""

    @property
    def from_(self) -> int: ...
    @property
    def to(self) -> int: ...
    @property
    def affinity(self) -> float:
        """Liking, in [-1, 1]."""
    @property
    def trust(self) -> float:
        """Trust, in [-1, 1]."""
    @property
    def summary(self) -> str: ...
    @property
    def knowledge(self) -> list[str]: ...
    @property
    def private_moments(self) -> list[str]: ...
    @property
    def last_interaction(self) -> Optional[int]: ...
    @property
    def imprints(self) -> list[str]:
        """The feelings faded memories about ``to`` left behind, oldest first."""
    def to_dict(self) -> dict[str, Any]:
        """Every field, as the JSON rp-core writes."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Memory:
    """A memory held by one entity, its owner (a snapshot)."""

    @property
    def id(self) -> int: ...
    @property
    def owner(self) -> int: ...
    @property
    def witnesses(self) -> list[int]: ...
    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def significance(self) -> float: ...
    @property
    def created(self) -> int: ...
    @property
    def last_accessed(self) -> Optional[int]: ...
    @property
    def access_count(self) -> int: ...
    @property
    def decay(self) -> str: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def embedding(self) -> Optional[list[float]]: ...
    @property
    def stability(self) -> float: ...
    @property
    def summary(self) -> Optional[str]: ...
    @property
    def feeling(self) -> Optional[str]: ...
    @property
    def about(self) -> Optional[int]: ...
    @property
    def sources(self) -> list[int]: ...
    def to_dict(self) -> dict[str, Any]:
        """Every field, as the JSON rp-core writes."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Group:
    """A group node: three or more entities that share scenes (a snapshot)."""

    @property
    def id(self) -> int: ...
    @property
    def members(self) -> list[int]: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def summary(self) -> str: ...
    @property
    def shared(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]:
        """Every field, as the JSON rp-core writes."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Branch:
    """A branch of the world's history."""

    @property
    def name(self) -> str: ...
    @property
    def head(self) -> int: ...
    @property
    def forked_from(self) -> Optional[str]: ...
    @property
    def forked_at(self) -> Optional[int]: ...
    @property
    def current(self) -> bool: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class RewindPreview:
    """What ``World.rewind`` to ``to_seq`` would undo."""

    @property
    def from_seq(self) -> int: ...
    @property
    def to_seq(self) -> int: ...
    @property
    def events_by_kind(self) -> dict[str, int]: ...
    @property
    def event_count(self) -> int: ...
    @property
    def entities(self) -> list[int]: ...
    @property
    def containers(self) -> list[int]: ...
    @property
    def edges(self) -> list[tuple[int, int]]: ...
    @property
    def groups(self) -> list[int]: ...
    @property
    def memories(self) -> list[int]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class ScopedEvent:
    """A scoped event: something with a beginning and an end whose props are in its
    participants' prompts only while it is active (a snapshot)."""

    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str:
        """``"planned"``, ``"active"``, ``"completed"``, ``"cancelled"`` or ``"expired"``."""
    @property
    def props(self) -> dict[str, str]:
        """Name → description; kept in the closed record, shown in no prompt then."""
    @property
    def participants(self) -> list[int]: ...
    @property
    def preconditions(self) -> list[str]: ...
    @property
    def on_start(self) -> list[dict[str, Any]]:
        """The effects run when it starts, as dicts with a ``"type"``."""
    @property
    def on_complete(self) -> list[dict[str, Any]]:
        """The effects run when it completes, as dicts with a ``"type"``."""
    @property
    def significance(self) -> float: ...
    @property
    def start_at(self) -> Optional[int]: ...
    @property
    def start_when(self) -> Optional[str]: ...
    @property
    def expire_at(self) -> Optional[int]: ...
    @property
    def started(self) -> Optional[int]: ...
    @property
    def closed(self) -> Optional[int]: ...
    def to_dict(self) -> dict[str, Any]:
        """Every field, as the JSON rp-core writes."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Thread:
    """An unresolved tension, in its participants' prompts until resolved or dropped
    (a snapshot)."""

    @property
    def id(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def participants(self) -> list[int]: ...
    @property
    def opened(self) -> int: ...
    @property
    def status(self) -> str:
        """``"open"``, ``"resolved"`` or ``"dropped"``."""
    @property
    def event(self) -> Optional[int]:
        """The id of the scoped event whose hook opened it, or None."""
    def to_dict(self) -> dict[str, Any]:
        """Every field, as the JSON rp-core writes."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Scene:
    """A stretch of story in one container, compressed into one summary memory per
    witness when it closes (a snapshot)."""

    @property
    def id(self) -> int: ...
    @property
    def container(self) -> int: ...
    @property
    def opened(self) -> int: ...
    @property
    def closed(self) -> Optional[int]:
        """When it closed, or None while it is open."""
    @property
    def is_open(self) -> bool: ...
    @property
    def witnesses(self) -> list[int]:
        """Who was there (present when it opened, or heard one of its lines), in id order."""
    @property
    def lines(self) -> int: ...
    @property
    def last_line(self) -> Optional[int]: ...
    def to_dict(self) -> dict[str, Any]:
        """Every field, as the JSON rp-core writes."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class World:
    """A world and the save file that keeps its event log."""

    @classmethod
    def create(
        cls,
        path: _Path,
        world_file: _Path,
        now: int = 0,
        *,
        durability: str = "immediate",
        snapshot_every: int = 1000,
    ) -> "World":
        """Creates a save file at ``path`` from the world file ``world_file``."""
    @classmethod
    def open(
        cls,
        path: _Path,
        *,
        durability: str = "immediate",
        snapshot_every: int = 1000,
        progress: Optional[_Progress] = None,
    ) -> "World":
        """Opens the save file at ``path`` on its current branch (Ctrl-C interrupts it).

        ``progress(phase, done, total)`` hears ``"open.snapshot"`` then
        ``"open.replay"``, on this thread; an exception it raises abandons the
        open. The World keeps it for later phases (``set_progress``).
        """
    def set_progress(self, progress: Optional[_Progress]) -> None:
        """Sets (None: removes) the callable hearing ``"history.replay"``,
        ``"index.build"`` and ``"compact"``; an exception it raises is raised when the call
        returns."""
    @classmethod
    def load(cls, world_file: _Path, now: int = 0) -> "World":
        """A new world in memory (no save file) from the world file ``world_file``."""
    @classmethod
    def in_memory(cls, name: str, now: int = 0) -> "World":
        """A new world in memory, with no save file."""
    def apply_world_file(self, name: str, text: str) -> int:
        """Applies a world file given as text; returns the number of events appended."""
    def load_world_file(self, path: _Path) -> int:
        """Reads and applies the world file at ``path``; returns the events appended."""
    def entity_id(self, name_or_key: str) -> int:
        """The id of the entity with this world-file key, or (ignoring case) name or alias."""
    @property
    def head(self) -> int:
        """The seq of the last event on the current branch.

        It takes no lock and never waits: while a call on the world runs in
        another thread, it is the head as that call found it, and the new
        head once the call has returned.
        """
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
        sources: Optional[Sequence[int]] = None,
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
        retention: float = 1.0,
        significance: float = 1.0,
        query_embedding: Optional[Sequence[float]] = None,
        semantic: float = 0.5,
    ) -> list[Recalled]:
        """The memories ``speaker`` recalls for ``query`` at ``now``, best first."""
    def retention(self, memory: int, *, now: int) -> float:
        """How well ``memory`` is kept at ``now``: its retention, 0–1."""
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
    def preview_edit(
        self,
        line: int,
        text: Optional[str] = None,
        *,
        with_replies: bool = False,
        on_invalid: str = "cancel",
    ) -> dict[str, Any]:
        """What editing (``text``) or deleting (``None``) line ``line`` would do, changing
        nothing: ``"kept"``, ``"edited"``, ``"dropped"``, ``"invalid"`` (docs/edits.md)."""
    def edit_line(
        self, line: int, text: str, *, with_replies: bool = False, on_invalid: str = "cancel"
    ) -> dict[str, Any]:
        """Edits a past line, keeping the rest of the story; the old history stays as a
        branch. Raises Conflict (later events would no longer apply), NotFound, InvalidInput."""
    def delete_line(
        self, line: int, *, with_replies: bool = False, on_invalid: str = "cancel"
    ) -> dict[str, Any]:
        """Deletes a past line, keeping the rest of the story; as ``edit_line``."""
    def regenerate(
        self,
        generate: _Generate,
        *,
        line: Optional[int] = None,
        options: Optional[Mapping[str, Any]] = None,
    ) -> int:
        """Asks for the last reply again and records the answer as an alternative; returns
        its index."""
    def memory_index_origin(self) -> Any:
        """Where the memory index came from: None, "memory", {"loaded": {"caught_up": n}} or
        {"built": {"reason": ...}} (docs/memory.md, "The index beside the save")."""
    def alternatives(self, line: int) -> Optional[dict[str, Any]]:
        """``{"texts": [...], "chosen": n}`` of ``line``, or None."""
    def choose(
        self,
        line: int,
        n: int,
        generate: _Generate,
        *,
        options: Optional[Mapping[str, Any]] = None,
    ) -> dict[str, Any]:
        """Makes alternative ``n`` of the last reply the line and asks for its turn's
        state-update pass again; returns that pass's outcome."""
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
    def aturn(
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
        """``await world.aturn(...)``: a whole turn with sync or async callables."""
    def stream_turn(
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
    ) -> TurnStream:
        """A turn whose text streams: ``async for token in world.stream_turn(...)``."""
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
    def plan_event(
        self,
        name: str,
        *,
        participants: Sequence[_Named],
        props: Optional[Mapping[str, str]] = None,
        preconditions: Optional[Sequence[str]] = None,
        on_start: Optional[Sequence[dict[str, Any]]] = None,
        on_complete: Optional[Sequence[dict[str, Any]]] = None,
        significance: float = 0.5,
        start_at: Optional[int] = None,
        start_when: Optional[str] = None,
        expire_at: Optional[int] = None,
        now: int,
    ) -> int:
        """Plans a scoped event; its id."""
    def start_event(self, event: int, *, now: int) -> None:
        """Starts a planned event: its preconditions must hold, then ``on_start`` runs."""
    def complete_event(
        self, event: int, *, promotion: Optional[dict[str, Any]] = None, now: int
    ) -> None:
        """Completes an active event, keeping only what ``promotion`` names."""
    def cancel_event(self, event: int, *, now: int) -> None:
        """Cancels a planned or active event: nothing promoted."""
    def expire_event(self, event: int, *, now: int) -> None:
        """Expires a planned or active event: nothing promoted."""
    def run_due(self, *, now: int) -> dict[str, Any]:
        """Runs the scoped-event transitions due by ``now``; what started, expired, was held."""
    def open_thread(self, text: str, participants: Sequence[_Named], *, now: int) -> int:
        """Opens a thread in the prompts of ``participants``; its id."""
    def resolve_thread(self, thread: int, *, now: int) -> None:
        """Resolves an open thread: it leaves every prompt."""
    def drop_thread(self, thread: int, *, now: int) -> None:
        """Drops an open thread unresolved: it leaves every prompt."""
    def scoped_events(self) -> list[ScopedEvent]:
        """Every scoped event, open and closed, in id order."""
    def scoped_event(self, event: int) -> ScopedEvent:
        """The scoped event with this id."""
    def threads(self) -> list[Thread]:
        """Every thread, open and closed, in id order."""
    def export_world_file(self) -> str:
        """The current world in world-file form (TOML)."""
    def open_scene(self, container: _Named, *, now: int) -> int:
        """Opens a scene in ``container`` at ``now``; its id."""
    def scenes(self, *, open_only: bool = False) -> list[Scene]:
        """Every scene (or only the open ones), in id order."""
    def scene(self, scene: int) -> Scene:
        """The scene with this id."""
    def current_scene(self, container: _Named) -> Optional[Scene]:
        """The open scene of ``container``, or None."""
    def scene_of(self, entity: _Named) -> Optional[Scene]:
        """The open scene where ``entity`` stands, or None."""
    def due_scenes(
        self, *, now: int, options: Optional[dict[str, Any]] = None
    ) -> list[dict[str, Any]]:
        """The open scenes due to close at ``now``, with why (``"scene"``, ``"reason"``)."""
    def begin_scene_close(
        self, scene: int, *, now: int, options: Optional[dict[str, Any]] = None
    ) -> Job:
        """Starts closing ``scene`` (one summary per witness); drive the Job."""
    def begin_close_current_scene(
        self, container: _Named, *, now: int, options: Optional[dict[str, Any]] = None
    ) -> Job:
        """Starts closing the open scene of ``container``; drive the Job."""
    def close_scene(
        self,
        scene: int,
        *,
        now: int,
        generate: _Generate,
        options: Optional[dict[str, Any]] = None,
    ) -> dict[str, Any]:
        """Closes ``scene`` with ``generate`` writing the summaries; the outcome."""
    def close_current_scene(
        self,
        container: _Named,
        *,
        now: int,
        generate: _Generate,
        options: Optional[dict[str, Any]] = None,
    ) -> dict[str, Any]:
        """Closes the open scene of ``container`` with ``generate``; the outcome."""
    def begin_time_skip(
        self,
        *,
        to: Optional[int] = None,
        elide: Optional[_Named] = None,
        options: Optional[dict[str, Any]] = None,
    ) -> Job:
        """Starts a jump ``to`` a time or an elision of ``elide``'s action; drive the Job."""
    def time_skip(
        self,
        *,
        to: Optional[int] = None,
        elide: Optional[_Named] = None,
        generate: _Generate,
        options: Optional[dict[str, Any]] = None,
    ) -> dict[str, Any]:
        """A whole time skip, ``generate`` writing the summaries; the outcome."""
    def begin_query(
        self,
        text: str,
        *,
        now: int,
        as_entity: Optional[_Named] = None,
        config: Optional[dict[str, Any]] = None,
        as_of: Optional[dict[str, Any]] = None,
    ) -> Job:
        """Starts a world query; drive the Job. ``as_of`` (``{"seq": n}`` or ``{"time": ms}``,
        optionally with ``"branch"``) asks it about the world as it was then."""
    def ask(
        self,
        text: str,
        *,
        now: int,
        generate: _Generate,
        as_entity: Optional[_Named] = None,
        config: Optional[dict[str, Any]] = None,
        as_of: Optional[dict[str, Any]] = None,
    ) -> dict[str, Any]:
        """Asks a world query with ``generate`` as the model; the outcome."""
    def get_query(self, query: int) -> dict[str, Any]:
        """The record of a query, as a dict."""
    def recent_queries(self, limit: int = 10) -> list[dict[str, Any]]:
        """The most recent query records, newest first."""
    def relationships_of(
        self, entities: Sequence[_Named], *, direction: str = "both", limit: int = 100
    ) -> list[Edge]:
        """The edges of ``entities`` along ``direction``, each once."""
    def connected(
        self,
        entity: _Named,
        *,
        max_hops: int = 2,
        direction: str = "outgoing",
        limit: int = 100,
    ) -> list[tuple[int, int]]:
        """``(entity, hops)`` of who is reachable from ``entity``, nearest first."""
    def path(self, a: _Named, b: _Named, *, max_hops: int = 4) -> Optional[list[int]]:
        """The shortest chain of edges from ``a`` to ``b``, both ends included, or None."""
    def shared_connections(self, entity: _Named, *, limit: int = 20) -> list[tuple[int, int]]:
        """``(entity, shared)`` of who shares neighbours with ``entity``, most first."""
    def graph_stats(self) -> dict[str, Any]:
        """Figures of the relationship graph."""
    @property
    def name(self) -> str:
        """The world's name."""
    @property
    def now(self) -> int:
        """The world's clock (host time, ms)."""
    def entities(self) -> list[Entity]:
        """Every entity, in id order."""
    def entity(self, entity: _Named) -> Entity:
        """The entity with this id, key, name or alias."""
    def containers(self) -> list[Container]:
        """Every container, in id order."""
    def container(self, container: _Named) -> Container:
        """The container with this id, key or name."""
    def edges(
        self, *, from_: Optional[_Named] = None, to: Optional[_Named] = None
    ) -> list[Edge]:
        """The directed edges, in (from_, to) order; only those from/to the ones given."""
    def edge(self, from_: _Named, to: _Named) -> Edge:
        """The edge ``from_ → to``."""
    def memories(self, owner: Optional[_Named] = None) -> list[Memory]:
        """Every memory (the host's view), or those ``owner`` holds and witnessed."""
    def memory(self, memory: int) -> Memory:
        """The memory with this id."""
    def memories_at(
        self,
        entity: _Named,
        *,
        seq: Optional[int] = None,
        time: Optional[int] = None,
        branch: Optional[str] = None,
    ) -> list[Memory]:
        """What ``entity`` could recall at ``seq`` or ``time`` (exactly one) of ``branch``
        (default: the current one), oldest first (docs/history.md)."""
    def beliefs_at(
        self,
        entity: _Named,
        *,
        seq: Optional[int] = None,
        time: Optional[int] = None,
        branch: Optional[str] = None,
    ) -> dict[str, Any]:
        """What ``entity`` believed then: ``"entity"``, ``"branch"``, ``"seq"``, ``"now"``,
        ``"beliefs"`` (as ``beliefs()`` gives them at that clock) and ``"edges"``."""
    def groups(self) -> list[Group]:
        """Every group node, in id order."""
    def state(self) -> dict[str, Any]:
        """The whole state as a dict: equal for two worlds with the same history."""
    def events(self, first: int = 1, last: Optional[int] = None) -> list[dict[str, Any]]:
        """The events of the current branch from ``first`` to ``last``: ``{"seq", "event"}`` dicts."""
    def append(self, events: Sequence[dict[str, Any]]) -> int:
        """Validates, commits and applies ``events`` (``{"time_advanced": {"to": 60000}}``); returns the head."""
    @property
    def next_id(self) -> int:
        """The id the next created thing takes."""
    def create_entity(
        self,
        name: str,
        *,
        key: Optional[str] = None,
        aliases: Optional[Sequence[str]] = None,
        facts: str = "",
        host_controlled: bool = False,
        container: Optional[_Named] = None,
        slot: Optional[str] = None,
        posture: Optional[str] = None,
        mood: Optional[str] = None,
        goals: Optional[Sequence[str]] = None,
        status: Optional[str] = None,
    ) -> Entity:
        """Creates an entity (placed in ``container`` when given) and returns it."""
    def edit_entity(
        self,
        entity: _Named,
        *,
        name: Optional[str] = None,
        aliases: Optional[Sequence[str]] = None,
        facts: Optional[str] = None,
        host_controlled: Optional[bool] = None,
    ) -> Entity:
        """Edits an entity's identity (None keeps a field) and returns it."""
    def set_entity_state(
        self,
        entity: _Named,
        *,
        mood: Optional[str] = None,
        goals: Optional[Sequence[str]] = None,
        status: Optional[str] = None,
    ) -> Entity:
        """Sets mood, goals or status (None keeps, "" clears) and returns the entity."""
    def move_entity(
        self,
        entity: _Named,
        container: _Named,
        slot: Optional[str] = None,
        *,
        posture: Optional[str] = None,
    ) -> Entity:
        """Moves an entity into ``container`` and ``slot``; returns it."""
    def remove_entity(self, entity: _Named) -> int:
        """Removes an entity with its edges and memories; returns the head."""
    def create_container(
        self,
        name: str,
        *,
        key: Optional[str] = None,
        parent: Optional[_Named] = None,
        slots: Optional[Sequence[_SlotArg]] = None,
        facts: str = "",
        public: bool = False,
        moving: bool = False,
        audible_range: int = 0,
    ) -> Container:
        """Creates a container and returns it."""
    def edit_container(
        self,
        container: _Named,
        *,
        name: Optional[str] = None,
        parent: Optional[_Named] = None,
        slots: Optional[Sequence[_SlotArg]] = None,
        facts: Optional[str] = None,
        public: Optional[bool] = None,
        moving: Optional[bool] = None,
        audible_range: Optional[int] = None,
    ) -> Container:
        """Redefines a container (None keeps a field) and returns it."""
    def remove_container(self, container: _Named) -> int:
        """Removes an empty container; returns the head."""
    def set_edge(
        self,
        from_: _Named,
        to: _Named,
        *,
        affinity: Optional[float] = None,
        trust: Optional[float] = None,
        summary: Optional[str] = None,
        knowledge: Optional[Sequence[str]] = None,
        private_moments: Optional[Sequence[str]] = None,
        last_interaction: Optional[int] = None,
    ) -> Edge:
        """Creates or edits the edge ``from_ → to`` (None keeps a field) and returns it."""
    def remove_edge(self, from_: _Named, to: _Named) -> int:
        """Removes the edge ``from_ → to``; returns the head."""
    def advance_time(self, to: int) -> int:
        """Advances the world's clock to ``to``; returns the head."""
    def apply_reports(
        self,
        reports: Sequence[Mapping[str, Any]],
        *,
        present: Optional[Sequence[_Named]] = None,
        step: float = 0.1,
    ) -> int:
        """Judges and applies state-update reports, all or none; returns the head."""
    def drives(self, entity: _Named, *, now: int) -> dict[str, Any]:
        """The drives of a character at ``now`` (not before the world's clock); changes nothing.

        Keys: ``"entity"``, ``"at"``, ``"energy"``, ``"mode"``, ``"interval_ms"``,
        ``"disturbance"``, ``"wake_threshold"``, ``"social_debt"`` (``[entity, debt]``
        pairs), ``"task"``, ``"curiosity"``, ``"pressure"``, ``"threshold"``,
        ``"personality"``, ``"inbox"``, ``"noticed"``, ``"notes"``, ``"held_until"``, and
        what rules and feedback left (docs/rules.md): ``"intentions"``, ``"awaiting"``,
        ``"learned"`` (factors on the terms toward each addressee), ``"feedback"``.
        Raises NotFound, InvalidInput (``now`` before the clock, a host-controlled entity).
        """
    def initiation_candidates(self, entity: _Named, *, now: int) -> list[dict[str, Any]]:
        """A character's candidate initiations at ``now``, highest pressure first.

        Each has ``"speaker"``, ``"to"``, ``"about"``, ``"terms"`` (each with its
        ``"learned"`` factor), ``"score"``, ``"threshold"``, ``"pushed_over_by"``,
        ``"gates"``, ``"rules"`` (whose intentions weigh in), ``"learned"`` (what feedback
        taught it about ``"to"``, in words, or None) and ``"explanation"`` (words).
        """
    def next_tick_at(self, *, now: int) -> Optional[dict[str, Any]]:
        """When a tick next does something, from ``now``: ``{"at", "entity", "reason"}``.

        None while nothing will happen until the host changes something. Raises
        InvalidInput when ``now`` is before the world's clock.
        """
    def begin_tick(self, *, now: int, options: Optional[dict[str, Any]] = None) -> Job:
        """Starts a tick at ``now`` (its arithmetic committed at once); drive the Job.

        Answers to initiations ask for their tone (purpose ``classify``, JSON
        ``{"sentiment": ...}``), stimuli hoisted past arithmetic and rules for what they
        mean (purpose ``classify``) and, when they matter, a thought (purpose ``think``), faded memories for summaries (purpose ``summary``, JSON),
        characters due to reflect for insights (purpose ``reflect``, JSON); each initiation
        asks for a line of
        purpose ``{"kind": "initiate", "speaker": id}``.
        ``options``: ``"turn"`` (turn options) and ``"max_initiations"`` (default 2).
        """
    def advance(
        self,
        *,
        until: int,
        generate: _Generate,
        options: Optional[dict[str, Any]] = None,
    ) -> list[dict[str, Any]]:
        """Plays host time to ``until``, ticking at each ``next_tick_at``; the ticks' outcomes.

        ``generate`` answers every request, as for ``close_scene``; the clock ends at
        ``until``. The World is held for the whole call: calling it from ``generate``
        raises Conflict. When ``generate`` raises, GenerationError is raised from it
        (the ticks before it stay committed).
        """
    def notify(
        self, entity: _Named, kind: str, priority: str, payload: str, *, now: int
    ) -> int:
        """Delivers a stimulus to a character's inbox at ``now``; returns its id.

        ``kind``: a built-in kind (``"line"``, ``"sound"``, ``"sight"``, ``"touch"``,
        ``"message"``, ``"lore"``, ``"game"``) or one ``configure_drives`` adds;
        ``priority``: ``"critical"``, ``"high"``, ``"normal"``, ``"low"`` or ``"idle"``.
        Raises NotFound, InvalidInput (unknown kind or priority, ``now``).
        """
    def configure_drives(
        self, config: dict[str, Any], entity: Optional[_Named] = None
    ) -> int:
        """Sets the world's drive settings (or ``entity``'s, over the world's); returns the head.

        Raises InvalidInput (an unknown key, a value out of range) and changes nothing.
        """
    def set_personality(self, entity: _Named, personality: dict[str, float]) -> int:
        """Sets a character's personality (traits in [0, 1], 0.5 when not given); returns the head.

        Raises InvalidInput (an unknown trait, a trait outside [0, 1]) and changes nothing.
        """
    def report_availability(self, entity: _Named, availability: float, *, now: int) -> int:
        """Reports ``entity``'s availability (0–1) at ``now``, believed by every character;
        returns the head."""
    def beliefs(self, observer: _Named, *, now: int) -> list[dict[str, Any]]:
        """What ``observer`` believes about each person at ``now`` (docs/beliefs.md): per
        person ``"about"``, ``"name"``, ``"mentioned"``, ``"mood"``, ``"energy"``,
        ``"availability"``, ``"traits"``, ``"feelings"``, each aspect with its confidence at
        ``now``. Changes nothing."""
    def observe_belief(self, belief: dict[str, Any], *, now: int) -> int:
        """Records a belief (``"observer"``, ``"about"``, any of ``"mood"``, ``"energy"``,
        ``"availability"``, ``"traits"``, ``"feelings"``, and ``"confidence"``,
        ``"source"``) at ``now``; returns the head."""
    def mention_person(
        self,
        name: str,
        *,
        now: int,
        facts: Optional[str] = None,
        by: Optional[_Named] = None,
    ) -> int:
        """A person only talked about, as a lightweight entity (no place, mind or lines);
        returns its id."""
    def add_rule(
        self, entity: _Named, rule: Union[dict[str, Any], str], *, now: int
    ) -> int:
        """Gives a character a rule at ``now`` (docs/rules.md); returns its id.

        ``rule`` (a dict, or its JSON text): ``"description"``, ``"on"``
        (``{"day": d, "hour": h}``, ``{"in_hours": h}``, ``{"at": ms}`` or
        ``{"stimulus": kind}``), ``"intent"`` (``{"initiate": entity, "about": text}``,
        ``{"note": text}`` or ``{"drive": "task" | "curiosity", "amount": x}``), and
        optionally ``"condition"`` (an ``$if`` expression) and ``"weight"`` (0–1, default
        0.8). Raises InvalidInput (bad JSON, a value out of range, an unknown stimulus
        kind, a host-controlled entity, 64 rules held, ``now`` before the clock), NotFound
        (an entity), FactSyntaxError (the condition); the world is then unchanged.
        """
    def remove_rule(self, rule: int, *, now: int) -> None:
        """Takes a rule away at ``now`` (a rewind brings it back).

        Raises NotFound (no such rule), InvalidInput (``now`` before the clock).
        """
    def rules(self, entity: _Named, *, now: int) -> list[dict[str, Any]]:
        """The rules ``entity`` holds, in id order, with their weights at ``now``; changes
        nothing.

        Each is ``{"rule": {...}, "weight_now": float, "forgotten_at": ms | None}``; the
        rule has ``"id"``, ``"owner"``, ``"description"``, ``"trigger"``, ``"condition"``,
        ``"intent"``, ``"weight"``, ``"since"``, ``"uses"``, ``"last_used"``,
        ``"checked"``, ``"created_at"`` and ``"source"``. Raises NotFound (entity).
        """
    def add_requirement(
        self, requirement: Union[dict[str, Any], str]
    ) -> dict[str, Any]:
        """Adds a requirement (docs/requirements.md); returns it as the world keeps it.

        ``requirement`` (a dict, or its JSON text): ``"id"``, ``"name"``, ``"subject"``
        (optional entity), ``"condition"`` (an ``$if`` expression; pending while false),
        ``"guards"`` (``{"leave": container}``, ``{"start_event": event or True}``,
        ``{"complete_event": event or True}``, ``{"time_skip": True}``,
        ``{"scene_close": True}``, ``{"action": name}``) and ``"text"``. Raises InvalidInput,
        Conflict (the id is taken), NotFound, FactSyntaxError; the world is then unchanged.
        """
    def remove_requirement(self, id: str) -> None:
        """Removes a requirement (a rewind brings it back). Raises NotFound."""
    def requirements(self) -> list[dict[str, Any]]:
        """Every requirement, by id: ``{"requirement": {...}, "pending": bool,
        "announced": bool}``; changes nothing."""
    def check_action(self, name: str, subject: Optional[_Named] = None) -> None:
        """Raises RequirementUnmet while a requirement guarding action ``name`` (of
        ``subject``) is pending; changes nothing. Raises NotFound (subject)."""
    def import_card(
        self, source: Union[bytes, str, "os.PathLike[str]"], *, now: int
    ) -> int:
        """Imports a character card (bytes or a path: V1/V2/V3 JSON, or a PNG with a
        ``ccv3`` or ``chara`` chunk) at ``now`` as a new character; returns its id
        (docs/cards.md).

        Its facts are the card's prose; ``card(id)`` gives the card as given (its
        greetings). Raises InvalidInput (no card, a broken PNG, a text too long),
        Conflict (the name is taken), OSError (an unreadable path).
        """
    def import_lorebook(
        self,
        source: Union[bytes, str, "os.PathLike[str]"],
        *,
        entity: Optional[_Named] = None,
        now: int,
    ) -> int:
        """Adds a lorebook (bytes or a path: World Info JSON, ``lorebook_v3`` or a card's
        ``character_book``), every character's or ``entity``'s alone; returns its id.

        Raises InvalidInput (not a lorebook, a bad regex key), NotFound (entity), OSError.
        """
    def lorebooks(self) -> list[dict[str, Any]]:
        """Every lorebook: ``{"id", "owner", "name", "entries"}`` (owner None: everyone's)."""
    def lore_timers(self, entity: _Named) -> list[dict[str, Any]]:
        """The sticky and cooldown effects ``entity``'s lorebook entries hold, in messages it
        heard: ``{"book", "entry", "kind", "start", "end", "protected"}`` each (docs/cards.md,
        "Timed effects"). Raises NotFound (entity)."""
    def expand_macros(self, text: str, *, speaker: _Named, user: _Named) -> str:
        """``text`` with the card macros expanded as ``speaker``'s prompt expands them now
        (``{{char}}``, ``{{user}}``, ``{{random}}``, ``{{pick}}``, ``{{roll}}``, ``{{// }}``).
        Raises NotFound (speaker or user)."""
    def export_lorebook(
        self,
        lorebook: int,
        path: Union[str, "os.PathLike[str]", None] = None,
        *,
        format: str = "lorebook_v3",
    ) -> str:
        """Lorebook ``lorebook`` as JSON (``"lorebook_v3"`` or ``"world_info"``), written to
        ``path`` when given. Raises NotFound, InvalidInput (format), OSError.
        """
    def card(self, entity: _Named) -> Optional[dict[str, Any]]:
        """The card ``entity`` was made from, as given, or None. Raises NotFound (entity)."""
    def card_assets(self, entity: _Named) -> dict[str, bytes]:
        """The files of ``entity``'s card by path (a CHARX's assets, a PNG card's image, the
        image ``set_card_image`` set); empty for none. Raises NotFound (entity)."""
    def set_card_image(
        self, entity: _Named, source: Union[bytes, str, "os.PathLike[str]"], *, now: int
    ) -> None:
        """Sets ``entity``'s image to the PNG ``source`` (bytes or a path) at ``now``: a PNG
        export carries the card on it. Raises InvalidInput (not a valid PNG, ``now`` before
        the clock), NotFound (entity), OSError (an unreadable path)."""
    def export_card(
        self,
        entity: _Named,
        path: Union[str, "os.PathLike[str]", None] = None,
        *,
        format: Optional[str] = None,
    ) -> bytes:
        """``entity`` as a character card: ``format`` ``"v2"``, ``"v3"`` or ``"png"`` (else
        from ``path``'s extension, else V3); written to ``path`` when given, and returned.

        Raises NotFound (entity), InvalidInput (an unknown format), OSError (an unwritable
        path).
        """
    @property
    def branch(self) -> str:
        """The name of the current branch."""
    def branches(self) -> list[Branch]:
        """Every named branch, in creation order."""
    def preview_rewind(self, to_seq: int) -> RewindPreview:
        """What ``rewind(to_seq)`` would undo."""
    def rewind(self, to_seq: int) -> Optional[str]:
        """Moves the branch back to ``to_seq``; returns the name of the branch that keeps the tail."""
    def fork(self, name: str, at_seq: Optional[int] = None) -> Branch:
        """Creates a branch sharing history up to ``at_seq`` (default: the head)."""
    def switch_branch(self, name: str) -> None:
        """Makes the branch ``name`` current."""
    def rename_branch(self, old: str, new: str) -> None:
        """Renames a branch."""
    def delete_branch(self, name: str) -> None:
        """Deletes a branch (not the current one)."""
    def backup(self, path: _Path) -> None:
        """Writes a backup of the whole save (every branch) to a new save file at ``path``.

        Never replaces a file. Raises Conflict (``path`` exists), InvalidInput (it names no
        file), StorageError (it cannot be written); on error nothing changes, no file is left.
        """
    def export_branch(self, name: str, path: _Path) -> None:
        """Writes branch ``name``'s history to a new save file at ``path``, as its only branch.

        Raises NotFound (no such branch), and what ``backup`` raises.
        """
    def compact(self) -> _Compaction:
        """Compacts the save: drops the snapshots no branch opens from any more, then shrinks
        the file to what it holds; every branch keeps its world. Returns what was done (sizes
        0 for a world in memory). Raises StorageError, CorruptSave, Conflict (from a callback
        running on this world)."""
    def flush(self) -> None:
        """Makes every earlier commit durable."""
    @property
    def durability(self) -> str:
        """When commits reach stable storage."""
    def set_durability(self, durability: str) -> None:
        """Sets when the next commits reach stable storage; eventual commits are written
        together, with the next durable one. Going back to "immediate" flushes first. Raises
        InvalidInput (another name) or StorageError (the flush failed); nothing changes then."""
    def _repr_html_(self) -> str: ...
    def graph(self) -> Graph:
        """The relationship graph, drawn as SVG."""
    def graph_svg(self) -> str:
        """The relationship graph as an SVG document."""
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

class InvalidReport(InvalidInput):
    """A state-update report the engine refuses; nothing of the reports was applied."""

    reasons: list[Optional[str]]

class GenerationError(RpError):
    """The host's generator failed during a turn; the turn is abandoned, its input kept."""

class RequirementUnmet(RpError):
    """A transition guarded by a pending requirement (docs/requirements.md); nothing changed."""

    requirement: str
    name: str
    text: str
    transition: str

class ActionRefused(Exception):
    """Raised by an ``on_action`` callable to refuse a host action (the reason is recorded)."""
