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
``provide``, ``finish``), and ``World.run_turn_async`` takes async callables.

Errors are subclasses of ``RpError``, one per kind of engine error.
``ActionRefused`` is the host's own: an ``on_action`` callable raises it to
refuse a host action.
"""

from rp_engine._rp import (
    ActionRefused,
    CapacityError,
    Condition,
    Conflict,
    CorruptSave,
    Decision,
    FactSyntaxError,
    GenerationError,
    InvalidInput,
    NotASave,
    NotFound,
    Recalled,
    RpError,
    ScriptedGenerator,
    StorageError,
    Turn,
    UnsupportedVersion,
    World,
    WorldFileError,
    check_sheet,
    version,
)

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
