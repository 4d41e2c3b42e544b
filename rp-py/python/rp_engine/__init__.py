"""rp_engine: an embeddable engine that runs LLM-driven characters.

The engine holds every bit of the simulated world's state; the LLM only
renders it. This package is the Python binding of the Rust crate rp-core.

Decide whether a character responds to a message::

    from rp_engine import World

    with World.in_memory("The Crooked Lantern") as world:
        world.load_world_file("examples/tavern.toml")
        mira = world.entity_id("Mira Holt")
        print(world.decide(mira, content="Mira, another cider?").explain())

Errors are subclasses of ``RpError``, one per kind of engine error.
"""

from rp_engine._rp import (
    CapacityError,
    Condition,
    Conflict,
    CorruptSave,
    Decision,
    FactSyntaxError,
    InvalidInput,
    NotASave,
    NotFound,
    Recalled,
    RpError,
    StorageError,
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
]
