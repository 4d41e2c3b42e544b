"""Backups from Python (docs/history.md#backups): ``World.backup`` copies the
save, every branch of it, to a new save file while the world plays on, and
``World.export_branch`` copies one branch's history; each opens as the world
it copied. Refusals raise the kinds Rust and C give, change nothing and leave
no file behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from rp_engine import Conflict, InvalidInput, NotFound, RpError, StorageError, World

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"


def tick(world: World) -> int:
    """Moves the clock a minute on; returns the head."""
    return world.advance_time(world.now + 60_000)


def branches(world: World) -> list[tuple[str, int, bool, str | None, int | None]]:
    return [(b.name, b.head, b.current, b.forked_from, b.forked_at) for b in world.branches()]


def test_a_backup_opens_as_the_world_it_copied(world: World, tmp_path: Path) -> None:
    start = world.head
    tick(world)
    world.fork("side", at_seq=start + 1)
    world.switch_branch("side")
    world.move_entity("Wren", "the bar", "stools")
    side_state, side_head = world.state(), world.head
    world.switch_branch("main")
    tick(world)
    state, head, listed = world.state(), world.head, branches(world)

    # A world in memory backs up to a save file (a str or a PathLike).
    world.backup(tmp_path / "backup.rp")
    world.backup(str(tmp_path / "again.rp"))
    assert (world.state(), world.head, branches(world)) == (state, head, listed)
    # ... and plays on.
    tick(world)
    assert world.head == head + 1

    for name in ("backup.rp", "again.rp"):
        with World.open(tmp_path / name) as copy:
            assert (copy.head, copy.branch) == (head, "main")
            assert copy.state() == state
            assert branches(copy) == listed
            copy.switch_branch("side")
            assert (copy.head, copy.state()) == (side_head, side_state)
            tick(copy)  # a save like any other
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.rp", "backup.rp"]


def test_a_save_backs_up_while_it_stays_open(tmp_path: Path) -> None:
    save = tmp_path / "save.rp"
    with World.create(save, TAVERN) as world:
        tick(world)
        state, head = world.state(), world.head
        world.backup(tmp_path / "backup.rp")
        tick(world)
        later = world.state()
    with World.open(tmp_path / "backup.rp") as copy:
        assert (copy.head, copy.state()) == (head, state)
    with World.open(save) as reopened:
        assert (reopened.head, reopened.state()) == (head + 1, later)


def test_an_exported_branch_holds_only_its_history(world: World, tmp_path: Path) -> None:
    start = world.head
    tick(world)
    world.fork("what-if")
    world.switch_branch("what-if")
    world.move_entity("Wren", "the bar", "stools")
    side_state, side_head = world.state(), world.head
    side_events = world.events()
    world.switch_branch("main")
    tick(world)
    tick(world)
    main_state = world.state()

    world.export_branch("what-if", tmp_path / "what-if.rp")
    assert (world.branch, world.state()) == ("main", main_state)
    with World.open(tmp_path / "what-if.rp") as copy:
        assert branches(copy) == [("what-if", side_head, True, None, None)]
        assert copy.state() == side_state
        assert copy.events() == side_events
        assert side_head > start

    world.export_branch("main", str(tmp_path / "main.rp"))
    with World.open(tmp_path / "main.rp") as copy:
        assert copy.state() == main_state
        assert [b.name for b in copy.branches()] == ["main"]


def test_refusals_change_nothing_and_leave_no_file(world: World, tmp_path: Path) -> None:
    world.fork("early", at_seq=2)
    taken = tmp_path / "taken.rp"
    taken.write_bytes(b"not yours")
    state, head, listed = world.state(), world.head, branches(world)

    for call in (world.backup, lambda p: world.export_branch("early", p)):
        with pytest.raises(Conflict, match="exists"):
            call(taken)
        with pytest.raises(Conflict):
            call(tmp_path)
        with pytest.raises(StorageError, match="backup.rp"):
            call(tmp_path / "missing" / "backup.rp")
        with pytest.raises(StorageError):
            call(taken / "backup.rp")
        with pytest.raises(InvalidInput, match="names no file"):
            call("")
        with pytest.raises(InvalidInput):
            call(tmp_path / "..")
    with pytest.raises(NotFound, match="nowhere"):
        world.export_branch("nowhere", tmp_path / "nowhere.rp")
    with pytest.raises(TypeError):
        world.backup(42)  # type: ignore[arg-type]

    assert [p.name for p in tmp_path.iterdir()] == ["taken.rp"]
    assert taken.read_bytes() == b"not yours"
    assert (world.state(), world.head, branches(world)) == (state, head, listed)
    tick(world)
    assert world.head == head + 1


def test_a_save_never_backs_up_onto_itself(tmp_path: Path) -> None:
    save = tmp_path / "save.rp"
    with World.create(save, TAVERN) as world:
        before = save.read_bytes()
        with pytest.raises(Conflict, match="own file"):
            world.backup(save)
        with pytest.raises(Conflict, match="own file"):
            world.export_branch("main", str(save))
        assert save.read_bytes() == before
        assert [p.name for p in tmp_path.iterdir()] == ["save.rp"]


def test_a_closed_world_refuses(tmp_path: Path) -> None:
    world = World.in_memory("Gone")
    world.close()
    with pytest.raises(RpError, match="closed"):
        world.backup(tmp_path / "b.rp")
    assert list(tmp_path.iterdir()) == []
