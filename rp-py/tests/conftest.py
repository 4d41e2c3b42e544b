"""Fixtures shared by the tests: the demo tavern in memory and the ids of its people."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rp_engine import World

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"


@pytest.fixture
def world() -> Iterator[World]:
    with World.in_memory("The Crooked Lantern") as world:
        world.load_world_file(TAVERN)
        yield world


@pytest.fixture
def wren(world: World) -> int:
    return world.entity_id("Wren")


@pytest.fixture
def tobias(world: World) -> int:
    return world.entity_id("Tobias Reed")


@pytest.fixture
def mira(world: World) -> int:
    return world.entity_id("Mira Holt")
