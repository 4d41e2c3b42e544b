"""Durability from Python: ``World.set_durability`` by name (``"immediate"``,
``"eventual"``), the ``durability`` property and ``flush``. Eventual commits are held and
written together; they read back before they reach the disk, and a flush or closing writes
them, so the save reopens at the same head. A bad name raises ``InvalidInput`` and changes
nothing, as from Rust and C."""

from __future__ import annotations

from pathlib import Path

import pytest

from rp_engine import InvalidInput, World

ROOT = Path(__file__).resolve().parents[2]
TAVERN = ROOT / "examples" / "tavern.toml"


def tick(world: World, n: int) -> None:
    """``n`` one-event commits moving the clock on by a second each."""
    for _ in range(n):
        world.advance_time(world.now + 1000)


def test_eventual_commits_read_back_and_survive_flush_and_close(tmp_path: Path) -> None:
    save = tmp_path / "tavern.rp"
    world = World.create(save, TAVERN)
    assert world.durability == "immediate"
    world.set_durability("eventual")
    assert world.durability == "eventual"
    tick(world, 20)
    head = world.head
    # Held, not yet written: read back all the same.
    assert [e["seq"] for e in world.events()] == list(range(1, head + 1))
    world.flush()
    tick(world, 5)
    head = world.head
    world.close()  # closing writes what is held
    world = World.open(save)
    assert world.head == head
    assert world.durability == "immediate"
    world.set_durability("eventual")
    tick(world, 3)
    head = world.head
    world.set_durability("immediate")  # flushes first
    world.close()
    assert World.open(save).head == head


def test_a_bad_durability_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    world = World.create(tmp_path / "tavern.rp", TAVERN, durability="eventual")
    assert world.durability == "eventual"
    with pytest.raises(InvalidInput, match="durability"):
        world.set_durability("sometimes")
    assert world.durability == "eventual"
    with pytest.raises(InvalidInput, match="durability"):
        World.open(tmp_path / "tavern.rp", durability="sometimes")
