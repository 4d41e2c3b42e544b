"""Threads and signals: a World shared between threads (its calls run one at
a time, each whole), the GIL released while the engine works, and Ctrl-C
interrupting a long open.

A FIFO stands in for a slow disk: opening one for reading blocks until a
writer comes, so the engine's call is held inside storage for as long as a
test wants. (POSIX only.)"""

import _thread
import faulthandler
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rp_engine import NotASave, World

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="needs FIFOs")


@pytest.fixture
def watchdog() -> Iterator[None]:
    """Ends the test run (with every thread's traceback) if a test hangs,
    which is how a call that kept the GIL while blocked would show."""
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def test_threads_edit_one_world_concurrently(world: World) -> None:
    head = world.head
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(10):
                name = f"patron {n}-{i}"
                entity = world.create_entity(name, container="tavern", slot="floor")
                world.set_edge(entity.id, "Mira Holt", affinity=0.1 * (i % 10))
                assert world.entity(name).id == entity.id
                world.entities()
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    patrons = [e for e in world.entities() if e.name.startswith("patron")]
    assert len(patrons) == 40
    assert len({e.id for e in patrons}) == 40
    # Each creation is two events in one commit, each edge one: nothing torn.
    assert world.head == head + 40 * 3
    assert world.container("tavern").slots[0].occupancy == 40


def test_other_calls_come_between_the_steps_of_a_turn(world: World, wren: int) -> None:
    turn = world.begin_turn(wren, "Tobias?", 60_000)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.append(world.entity("Mira Holt").name))
    reader.start()
    reader.join()
    assert seen == ["Mira Holt"]
    turn.provide("Aye?")
    assert turn.finish()["replies"][0]["text"] == "Aye?"


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


@posix_only
def test_the_gil_is_released_while_the_engine_reads(
    world: World, tmp_path: Path, watchdog: None
) -> None:
    # load_world_file blocks in the engine until a writer opens the FIFO;
    # the writer is a Python thread, which can only run if the GIL is free.
    fifo = _fifo(tmp_path, "patch.toml")
    text = TAVERN.read_text(encoding="utf-8").replace("maudlin", "cheered up")

    def writer() -> None:
        time.sleep(0.1)
        with open(fifo, "w", encoding="utf-8") as out:
            out.write(text)

    thread = threading.Thread(target=writer)
    thread.start()
    assert world.load_world_file(fifo) > 0
    thread.join()
    assert world.entity("Tobias Reed").mood == "cheered up"


@posix_only
def test_ctrl_c_interrupts_a_long_open(tmp_path: Path, watchdog: None) -> None:
    # The open blocks in storage (a FIFO with no writer); Ctrl-C comes
    # 0.2 s later and must be raised at once, not when the open ends.
    fifo = _fifo(tmp_path, "slow.rp")
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        World.open(fifo)
    assert time.monotonic() - started < 10
    timer.join()

    # The abandoned open is still waiting: give it what it reads, and it
    # ends on its own (this is not a save) without touching anything.
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    os.write(writer, b"not an rp save at all")
    os.close(writer)

    # Opening works as before once the interrupt is handled.
    save = tmp_path / "tavern.rp"
    World.create(save, TAVERN).close()
    with World.open(save) as world:
        assert world.entity("Wren").host_controlled


def test_an_open_that_fails_still_says_why(tmp_path: Path) -> None:
    not_a_save = tmp_path / "notes.txt"
    not_a_save.write_text("hello", encoding="utf-8")
    with pytest.raises(NotASave):
        World.open(not_a_save)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_process_forked_after_opening_saves_opens_its_own(
    tmp_path: Path, watchdog: None
) -> None:
    """multiprocessing forks by default on Linux: the threads rp uses to load a
    save are started for the load, not kept in a pool whose threads a forked
    child would not have, so the child's own opens do not hang."""
    path = tmp_path / "tavern.rp"
    world = World.create(path, TAVERN, snapshot_every=2)
    world.advance_time(60_000)
    world.close()
    # Opened from its snapshot in the parent, before the fork.
    World.open(path).close()
    pid = os.fork()
    if pid == 0:
        status = 2
        try:
            child = World.open(path)
            status = 0 if child.head > 0 else 1
            child.close()
        finally:
            os._exit(status)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's open hung")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
