"""rp_engine: an embeddable engine that runs LLM-driven characters.

The engine holds every bit of the simulated world's state; the LLM only
renders it. This package is the Python binding of the Rust crate rp-core.

Decide whether a character responds to a message::

    from rp_engine import World

    with World.in_memory("The Crooked Lantern") as world:
        world.load_world_file("examples/tavern.toml")
        mira = world.entity_id("Mira Holt")
        print(world.decide(mira, content="Mira, another cider?").explain())

Run a turn: the player speaks, the characters who heard decide whether to
answer, and the host's model writes their lines. Any callable that takes a
request dict and returns the text can be the model; ``ScriptedGenerator``
stands in for one::

    from rp_engine import ScriptedGenerator

    with World.in_memory("The Crooked Lantern") as world:
        world.load_world_file("examples/tavern.toml")
        wren, tobias = world.entity_id("Wren"), world.entity_id("Tobias Reed")
        model = ScriptedGenerator()
        model.script(tobias, ["Lights on the marsh, I tell you."])
        outcome = world.run_turn(wren, "Seen anything odd, Tobias?", 60_000, model)
        print(outcome["replies"])

``World.begin_turn`` gives the same turn in its poll form (``Turn.step``,
``provide``, ``finish``); ``await World.aturn(...)`` takes ``async def``
callables, and ``World.stream_turn`` streams the text as an async iterator.

The world reads as typed snapshots (``world.entities()``,
``world.entity("Mira")``, ``world.containers()``, ``world.edges(from_=...)``,
``world.memories()``) and changes through validated events
(``world.append([...])``, ``world.create_entity(...)``,
``world.move_entity(...)``, ``world.set_edge(...)``). History branches:
``rewind``, ``fork``, ``branches``, ``switch_branch``. In a notebook a world
shows itself as HTML, and ``world.graph()`` draws the relationships (SVG)::

    print(world.entity("Mira Holt").mood)
    world.set_edge("Tobias Reed", "Wren", affinity=0.4)
    world.graph().save("tavern.svg")

Scoped events (a picnic, a duel) put their props in their participants'
prompts only while active, and keep only what their promotion names when
they complete; threads stay in their participants' prompts until resolved::

    mira = world.entity_id("Mira Holt")
    picnic = world.plan_event("the picnic", participants=["Wren", mira],
                              props={"basket": "a wicker basket"}, now=60_000)
    world.start_event(picnic, now=60_000)
    gist = {"witness": mira, "text": "Wren brought bread to the meadow."}
    world.complete_event(picnic, promotion={"gists": [gist]}, now=120_000)
    world.open_thread("Who took the ledger?", ["Mira"], now=120_000)

Scenes close with one summary memory per witness, time skips move the
clock past what nobody wants to play (closing the open scenes and running
what falls due in between), and world queries ask the model about the world.
Each needs the host's model: ``world.close_scene(scene, now=..., generate=model)``,
``world.time_skip(to=..., generate=model)``, ``world.ask(text, now=...,
generate=model)`` run in one call, and ``begin_scene_close``,
``begin_time_skip`` and ``begin_query`` give the poll form (a ``Job``).
The relationship graph answers ``relationships_of``, ``connected``,
``path``, ``shared_connections`` and ``graph_stats``::

    outcome = world.ask("Who runs the tavern?", now=180_000, generate=model)
    print(outcome["query"]["answer"]["content"])
    print(world.path("Wren", "Mira Holt"))

Characters have drives between turns: energy that drains with the hours,
social debt toward those they know, task pressure, curiosity. When the
pressure toward someone within earshot crosses its threshold, a tick lets
the character speak first (a request of purpose ``"initiate"``).
``world.next_tick_at(now=...)`` says when that next happens,
``world.begin_tick(now=...)`` gives the tick as a ``Job``, and
``world.advance(until=..., generate=model)`` plays host time in one call::

    world.configure_drives({"social_debt_per_hour": 2.0})
    print(world.drives("Mira Holt", now=0)["energy"])
    for tick in world.advance(until=3 * 3_600_000, generate=model):
        for initiation in tick["initiations"]:
            print(initiation["explanation"])

Errors are subclasses of ``RpError``, one per kind of engine error.
``ActionRefused`` is the host's own: an ``on_action`` callable raises it to
refuse a host action.
"""

from rp_engine._notebook import Graph, GraphNode
from rp_engine._rp import (
    ActionRefused,
    Branch,
    CapacityError,
    Condition,
    Conflict,
    Container,
    CorruptSave,
    Decision,
    Edge,
    Entity,
    FactSyntaxError,
    GenerationError,
    Group,
    InvalidInput,
    InvalidReport,
    Job,
    Memory,
    NotASave,
    NotFound,
    Recalled,
    RequirementUnmet,
    RewindPreview,
    RpError,
    Scene,
    ScopedEvent,
    ScriptedGenerator,
    Slot,
    StorageError,
    Thread,
    Turn,
    UnsupportedVersion,
    World,
    WorldFileError,
    check_sheet,
    version,
)
from rp_engine._turn import Token, TurnStream

__version__: str = version()
"""The version of the rp engine, such as ``"0.1.0"``."""

__all__ = [
    "__version__",
    "version",
    "World",
    "Decision",
    "Condition",
    "Recalled",
    "Turn",
    "Job",
    "TurnStream",
    "Token",
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
    "Graph",
    "GraphNode",
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
