"""Long work shows its progress (docs/progress.md): ``World.open(path, progress=...)``
reports the snapshot and the replay of the tail on the caller's thread, and an exception the
callable raises abandons the open; the World keeps the callable, and ``set_progress`` sets it,
for the replay to a past point and the memory index's build, where an exception it raises is
raised when the call returns."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rp_engine import Conflict, World

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"

Report = tuple[str, int, int]


class Recorder:
    """A progress callable that keeps what it hears, and on which thread."""

    def __init__(self) -> None:
        self.reports: list[Report] = []
        self.threads: set[int] = set()

    def __call__(self, phase: str, done: int, total: int) -> None:
        self.reports.append((phase, done, total))
        self.threads.add(threading.get_ident())

    def take(self) -> list[Report]:
        taken, self.reports = self.reports, []
        return taken


def check_phases(reports: list[Report]) -> list[tuple[str, int]]:
    """Each phase starts at 0, never goes back, stays within its total and ends with done ==
    total; returns the phases in order with their totals."""
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(reports):
        phase, _, total = reports[i]
        run = []
        while i < len(reports) and reports[i][0] == phase:
            run.append(reports[i])
            i += 1
        assert run[0][1] == 0, run
        assert len(run) >= 2, run
        assert all(t == total for _, _, t in run), run
        assert all(d <= total for _, d, _ in run), run
        assert [d for _, d, _ in run] == sorted(d for _, d, _ in run), run
        assert run[-1][1] == total, run
        assert len(run) <= 103, len(run)
        out.append((phase, total))
    return out


def make_save(path: Path, memories: int, snapshot_every: int = 1000) -> int:
    """The tavern in a save at ``path`` with Mira's ``memories``; returns the head."""
    with World.create(path, TAVERN, snapshot_every=snapshot_every) as world:
        mira = world.entity_id("Mira Holt")
        for n in range(memories):
            world.add_memory(mira, f"Lights on the marsh, night {n}")
        head: int = world.head
    return head


def test_opening_reports_the_snapshot_then_the_replay_on_the_callers_thread(
    tmp_path: Path,
) -> None:
    save = tmp_path / "tavern.rp"
    head = make_save(save, 120, snapshot_every=0)
    heard = Recorder()
    with World.open(save, progress=heard) as world:
        assert world.head == head
        assert check_phases(heard.take()) == [("open.snapshot", 1), ("open.replay", head)]
        assert heard.threads == {threading.get_ident()}


def test_a_snapshot_leaves_only_the_tail_to_replay(tmp_path: Path) -> None:
    save = tmp_path / "tavern.rp"
    head = make_save(save, 80, snapshot_every=30)
    heard = Recorder()
    World.open(save, progress=heard).close()
    (snapshot, one), (replay, tail) = check_phases(heard.take())
    assert (snapshot, one, replay) == ("open.snapshot", 1, "open.replay")
    assert 0 < tail < head


def test_the_world_keeps_the_callable_for_later_phases(tmp_path: Path) -> None:
    save = tmp_path / "tavern.rp"
    head = make_save(save, 40, snapshot_every=0)
    heard = Recorder()
    with World.open(save, progress=heard) as world:
        heard.take()
        mira = world.entity_id("Mira Holt")
        assert len(world.memories_at(mira, seq=head - 1)) >= 39
        [(phase, total)] = check_phases(heard.take())
        assert phase == "history.replay" and total > 0

        found = world.recall(mira, "marsh", now=world.now)
        assert found
        [(phase, total)] = check_phases(heard.take())
        assert phase == "index.build" and total >= 40

        world.set_progress(None)
        world.memories_at(mira, seq=head - 2)
        assert heard.take() == []


def test_set_progress_on_a_world_in_memory(world: World, tobias: int) -> None:
    heard = Recorder()
    world.set_progress(heard)
    world.recall(tobias, "ale", now=world.now)
    [(phase, _)] = check_phases(heard.take())
    assert phase == "index.build"
    with pytest.raises(TypeError):
        world.set_progress(42)  # type: ignore[arg-type]


def test_an_exception_from_the_callable_abandons_the_open(tmp_path: Path) -> None:
    save = tmp_path / "tavern.rp"
    make_save(save, 10)

    def refuse(phase: str, done: int, total: int) -> None:
        raise KeyError(phase)

    with pytest.raises(KeyError, match="open.snapshot"):
        World.open(save, progress=refuse)
    with pytest.raises(TypeError):
        World.open(save, progress="not callable")  # type: ignore[arg-type]
    # The abandoned open lets the file go: it opens again (once the thread that was opening it
    # has dropped it).
    for _ in range(100):
        try:
            World.open(save).close()
            break
        except Exception:
            threading.Event().wait(0.05)
    else:
        pytest.fail("the save stayed open after an abandoned open")


def test_an_exception_in_a_later_phase_is_raised_when_the_call_returns(
    world: World, tobias: int
) -> None:
    calls: list[Report] = []

    def fail(phase: str, done: int, total: int) -> None:
        calls.append((phase, done, total))
        raise ValueError(f"stop at {phase}")

    world.set_progress(fail)
    with pytest.raises(ValueError, match="stop at index.build"):
        world.recall(tobias, "ale", now=world.now)
    # Called once: the call's later reports were skipped.
    assert len(calls) == 1
    # The call happened whole: the index is built, so the next recall reports nothing.
    assert world.recall(tobias, "ale", now=world.now) is not None
    assert len(calls) == 1


def test_a_call_on_the_same_world_from_the_callable_is_refused(
    world: World, tobias: int
) -> None:
    seen: list[BaseException] = []

    def peek(phase: str, done: int, total: int) -> None:
        try:
            world.entities()
        except Conflict as e:
            seen.append(e)

    world.set_progress(peek)
    world.recall(tobias, "ale", now=world.now)
    assert seen and all(isinstance(e, Conflict) for e in seen)
