"""Compaction from Python (docs/history.md#compaction): ``World.compact`` drops the
snapshots no branch opens from any more and shrinks the save file, while every branch keeps
its world; it reports what it did as a dict, ``"compact"`` reaches the progress callable, and
a world in memory reports sizes of 0; a save written before format 2 is upgraded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import shutil

import pytest

from rp_engine import Conflict, RpError, World

ROOT = Path(__file__).resolve().parents[2]
TAVERN = ROOT / "examples" / "tavern.toml"
# A save written before format 2 (rp-core's compatibility fixture).
FORMAT_1 = ROOT / "rp-core" / "tests" / "fixtures" / "save-1.rp"

KEYS = {
    "file_bytes_before",
    "file_bytes_after",
    "allocated_bytes_before",
    "allocated_bytes_after",
    "snapshots_dropped",
    "compacted",
    "records_upgraded",
}


def grow(world: World, n: int) -> None:
    """Creates ``n`` entities with a long status each: the world, and each snapshot, grows."""
    for _ in range(n):
        world.create_entity(f"e{world.next_id}", status="a long day " * 200)


def worlds(world: World) -> dict[str, tuple[int, object]]:
    """Every branch's head and state, switching through them, then back."""
    current = world.branch
    out: dict[str, tuple[int, object]] = {}
    for b in world.branches():
        world.switch_branch(b.name)
        out[b.name] = (world.head, world.state())
    world.switch_branch(current)
    return out


def test_a_save_shrinks_and_keeps_every_branch_s_world(tmp_path: Path) -> None:
    save = tmp_path / "save.rp"
    with World.create(save, TAVERN, snapshot_every=8) as world:
        grow(world, 60)
        world.fork("side", at_seq=world.head - 3)
        grow(world, 60)
        world.switch_branch("side")
        grow(world, 20)
        world.switch_branch("main")
        before = worlds(world)
        size = save.stat().st_size

        done = world.compact()
        assert set(done) == KEYS
        assert done["file_bytes_before"] == size
        assert done["file_bytes_after"] == save.stat().st_size
        assert done["file_bytes_after"] < done["file_bytes_before"]
        assert done["allocated_bytes_after"] <= done["allocated_bytes_before"]
        assert done["snapshots_dropped"] > 0
        assert done["compacted"] is True
        assert worlds(world) == before

        # Compacting again is harmless.
        again = world.compact()
        assert again["snapshots_dropped"] == 0
        assert again["file_bytes_after"] <= done["file_bytes_after"]
        assert worlds(world) == before

    with World.open(save) as reopened:
        assert worlds(reopened) == before
        grow(reopened, 1)  # and it plays on


def test_a_save_of_format_1_is_upgraded(tmp_path: Path) -> None:
    save = tmp_path / "old.rp"
    shutil.copy(FORMAT_1, save)
    with World.open(save) as world:
        before = worlds(world)
        done = world.compact()
        assert done["records_upgraded"] > 100
        assert done["allocated_bytes_after"] < done["allocated_bytes_before"]
        assert worlds(world) == before
        assert world.compact()["records_upgraded"] == 0
    with World.open(save) as reopened:
        assert worlds(reopened) == before
        grow(reopened, 1)  # and it plays on


def test_a_world_in_memory_reports_zeros(world: World) -> None:
    state, head = world.state(), world.head
    assert world.compact() == {
        "file_bytes_before": 0,
        "file_bytes_after": 0,
        "allocated_bytes_before": 0,
        "allocated_bytes_after": 0,
        "snapshots_dropped": 0,
        "compacted": False,
        "records_upgraded": 0,
    }
    assert (world.state(), world.head) == (state, head)


def test_compaction_reports_its_phase_and_refuses_a_call_from_the_callable(
    world: World,
) -> None:
    heard: list[tuple[str, int, int]] = []
    refused: list[BaseException] = []

    def progress(phase: str, done: int, total: int) -> None:
        heard.append((phase, done, total))
        try:
            world.compact()
        except Conflict as e:
            refused.append(e)

    world.set_progress(progress)
    world.compact()
    assert heard == [("compact", i, 4) for i in range(5)]
    assert len(refused) == 5


def test_a_closed_world_cannot_compact(tmp_path: Path) -> None:
    world = World.create(tmp_path / "save.rp", TAVERN)
    world.close()
    with pytest.raises(RpError, match="closed"):
        world.compact()


def test_a_turn_in_progress_goes_on_after_a_compaction(world: World, wren: int) -> None:
    # run_turn calls generate without holding the world (as between the steps of begin_turn):
    # a compaction then is allowed, and changes nothing the turn prepared.
    reports: list[dict[str, Any]] = []

    def generate(request: dict[str, Any]) -> str:
        reports.append(dict(world.compact()))
        return "Aye."

    outcome = world.run_turn(wren, "Tobias, what news?", 60_000, generate)
    assert reports and all(r["snapshots_dropped"] == 0 for r in reports)
    assert [r["text"] for r in outcome["replies"]] == ["Aye."] * len(reports)
    assert world.dialogue()[-1]["text"] == "Aye."
