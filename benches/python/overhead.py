"""The per-call overhead of the Python binding (issue 8, item 8).

Each operation runs through the Python API (``World.head``, ``World.recall``,
``World.run_turn`` with a plain Python ``generate``) and, in the same process,
on the same ``World``, in Rust through ``rp_engine._rp._bench_native``: a
private function of the extension module that takes the World's lock once,
with the GIL released, and runs the same rp-core call ``n`` times (the Rust
peer; not part of the API). Python and Rust blocks alternate, the first of each
round rotating, so they share the machine's noise; the figures are medians of
the rounds (no-op, retrieval) or percentiles of the turns, and the differences
and ratios are from the same run.

- **No-op**: the ``World.head`` property against ``Engine::head()``, in blocks
  of many calls. The Python figure is also given net of the ``for`` loop's own
  cost (an empty loop over the same ``range``), which a Rust loop does not
  pay; the target compares the net figure. Target: Python − Rust ≤ 60 ns.
- **Retrieval**: ``World.recall(tobias, query, now=..., k=10)`` against
  ``Engine::recall`` with the same options, over 1,000 memories of Tobias.
- **Turn**: Wren says the same line through ``World.run_turn`` (the turn
  driven from Rust, calling a Python ``generate`` that returns a fixed text;
  the outcome dict without the prompts, as by default) and through
  ``Engine::run_turn_blocking`` (a Rust generator returning the same text),
  default options on both, turn by turn on one world, so both see the same
  world. Target: overhead ≤ 10 % at p50. After the comparison, the same turns
  in the poll form (``World.begin_turn``, ``Turn.step``/``provide``/``finish``),
  each call timed, show what a turn's crossings cost one by one.

Wall time is ``time.perf_counter_ns``; thread CPU is ``time.thread_time_ns``
around each Python block and around each ``_bench_native`` call (which adds
that one call's cost, under a microsecond, to the Rust side's CPU figure).

Run it from the repository root, with the module built in release mode into a
virtual environment::

    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install maturin==1.16.0
    VIRTUAL_ENV=$PWD/target/bench-venv PATH=$PWD/target/bench-venv/bin:$PATH \\
        maturin develop --release --manifest-path rp-py/Cargo.toml
    target/bench-venv/bin/python benches/python/overhead.py          # ~1 min
    target/bench-venv/bin/python benches/python/overhead.py --quick  # smoke

Every result line starts with ``RESULT python:``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rp_engine import World, _rp, version

WORLD_FILE = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"
LINE = "Tobias, Mira, what news tonight?"
REPLY = "Lights on the marsh again, and not a soul believes me."
QUERY = "lights on the marsh and the ferry"
K = 10
MINUTE = 60_000
MEMORIES = 1_000


def report(line: str) -> None:
    print(f"RESULT python: {line}", flush=True)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile, as benches/src/lib.rs computes it."""
    s = sorted(values)
    return s[min(len(s), max(1, math.ceil(p * len(s)))) - 1]


class Block:
    """Wall and thread CPU time of one block, in ns."""

    def __init__(self) -> None:
        self.wall0 = time.perf_counter_ns()
        self.cpu0 = time.thread_time_ns()

    def stop(self) -> tuple[int, int]:
        wall = time.perf_counter_ns() - self.wall0
        return wall, time.thread_time_ns() - self.cpu0


def interleaved(
    rounds: int, contenders: dict[str, Callable[[], tuple[float, float]]]
) -> dict[str, tuple[list[float], list[float]]]:
    """Runs each contender once per round, the first rotating; each returns
    (wall, cpu) per call in ns."""
    names = list(contenders)
    out: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in names}
    for r in range(rounds):
        for i in range(len(names)):
            name = names[(r + i) % len(names)]
            wall, cpu = contenders[name]()
            out[name][0].append(wall)
            out[name][1].append(cpu)
    return out


# ---------------------------------------------------------------------------
# The no-op.


def no_op(rounds: int, calls: int) -> None:
    world = World.load(WORLD_FILE)
    loop = range(calls)

    class Plain:
        @property
        def head(self) -> int:
            return 0

    plain = Plain()

    def python_head() -> tuple[float, float]:
        b = Block()
        for _ in loop:
            world.head  # noqa: B018 (the call being timed)
        wall, cpu = b.stop()
        return wall / calls, cpu / calls

    def empty_loop() -> tuple[float, float]:
        b = Block()
        for _ in loop:
            pass
        wall, cpu = b.stop()
        return wall / calls, cpu / calls

    def python_property() -> tuple[float, float]:
        b = Block()
        for _ in loop:
            plain.head  # noqa: B018
        wall, cpu = b.stop()
        return wall / calls, cpu / calls

    def rust_head() -> tuple[float, float]:
        cpu0 = time.thread_time_ns()
        wall, head = _rp._bench_native(world, "head", calls)
        cpu = time.thread_time_ns() - cpu0
        assert head == world.head
        return wall / calls, cpu / calls

    for f in (python_head, empty_loop, python_property, rust_head):
        f()  # warm up
    got = interleaved(
        rounds,
        {
            "python": python_head,
            "loop": empty_loop,
            "property": python_property,
            "rust": rust_head,
        },
    )
    med = {n: (statistics.median(w), statistics.median(c)) for n, (w, c) in got.items()}
    py, lp, prop, rs = med["python"], med["loop"], med["property"], med["rust"]
    net = (py[0] - lp[0], py[1] - lp[1])
    diff = (net[0] - rs[0], net[1] - rs[1])
    report(f"no-op: {rounds} rounds of {calls} calls, medians of the rounds (wall / thread CPU)")
    report(f"no-op: python world.head              {py[0]:7.1f} / {py[1]:7.1f} ns/call")
    report(f"no-op: python empty for loop           {lp[0]:7.1f} / {lp[1]:7.1f} ns/iteration")
    report(f"no-op: python world.head, net of loop  {net[0]:7.1f} / {net[1]:7.1f} ns/call")
    report(
        f"no-op: (a pure-Python @property, net)  {prop[0] - lp[0]:7.1f} / "
        f"{prop[1] - lp[1]:7.1f} ns/call"
    )
    report(f"no-op: rust Engine::head               {rs[0]:7.2f} / {rs[1]:7.2f} ns/call")
    report(
        f"no-op: python (net) - rust {diff[0]:+.1f} / {diff[1]:+.1f} ns/call "
        f"(with the loop {py[0] - rs[0]:+.1f} / {py[1] - rs[1]:+.1f}) | target <= 60 ns: "
        f"{'met' if diff[0] <= 60 else 'missed'}"
    )


# ---------------------------------------------------------------------------
# The retrieval.


def vocabulary() -> tuple[list[str], list[float]]:
    """Words, the query's first, with Zipf weights."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    rng = random.Random(3)
    made_up = sorted({rng.choice(syllables) + rng.choice(syllables) for _ in range(600)})
    words = ["lights", "marsh", "ferry", "cider", "storm", "letter", "debt", "heron", *made_up]
    return words, [1.0 / (rank + 1) for rank in range(len(words))]


def retrieval(rounds: int, calls: int) -> None:
    world = World.load(WORLD_FILE)
    tobias = world.entity_id("Tobias Reed")
    words, weights = vocabulary()
    rng = random.Random(7)
    for _ in range(MEMORIES):
        text = " ".join(rng.choices(words, weights, k=rng.randint(10, 30)))
        world.add_memory(tobias, text, significance=round(rng.random(), 2))
    now = world.now + MINUTE

    def python_recall() -> tuple[float, float]:
        b = Block()
        for _ in range(calls):
            found = world.recall(tobias, QUERY, now=now, k=K)
        wall, cpu = b.stop()
        assert len(found) == K
        return wall / calls, cpu / calls

    def rust_recall() -> tuple[float, float]:
        cpu0 = time.thread_time_ns()
        wall, found = _rp._bench_native(
            world, "recall", calls, speaker=tobias, query=QUERY, now=now, k=K
        )
        cpu = time.thread_time_ns() - cpu0
        assert found == K
        return wall / calls, cpu / calls

    python_recall()  # the first recall builds the index
    rust_recall()
    got = interleaved(rounds, {"python": python_recall, "rust": rust_recall})
    py = (statistics.median(got["python"][0]), statistics.median(got["python"][1]))
    rs = (statistics.median(got["rust"][0]), statistics.median(got["rust"][1]))
    report(
        f"recall: {rounds} rounds of {calls} calls, k={K}, over {MEMORIES} memories of "
        f"Tobias, medians of the rounds (wall / thread CPU)"
    )
    report(f"recall: python world.recall  {py[0] / 1e3:8.2f} / {py[1] / 1e3:8.2f} us/call")
    report(f"recall: rust Engine::recall  {rs[0] / 1e3:8.2f} / {rs[1] / 1e3:8.2f} us/call")
    report(
        f"recall: python - rust {(py[0] - rs[0]) / 1e3:+.2f} / {(py[1] - rs[1]) / 1e3:+.2f} "
        f"us/call ({(py[0] / rs[0] - 1) * 100:+.1f} % / {(py[1] / rs[1] - 1) * 100:+.1f} %)"
    )


# ---------------------------------------------------------------------------
# The turn.


def turn(warmup: int, rounds: int) -> None:
    world = World.load(WORLD_FILE)
    wren = world.entity_id("Wren")

    def generate(request: dict[str, Any]) -> str:
        return REPLY

    py_wall: list[float] = []
    py_cpu: list[float] = []
    rs_wall: list[float] = []
    rs_cpu: list[float] = []
    py_replies = rs_replies = 0
    now = world.now

    def python_turn(at: int) -> tuple[int, int, int]:
        b = Block()
        outcome = world.run_turn(wren, LINE, at, generate)
        wall, cpu = b.stop()
        return wall, cpu, len(outcome["replies"])

    def rust_turn(at: int) -> tuple[int, int, int]:
        cpu0 = time.thread_time_ns()
        wall, replies = _rp._bench_native(
            world, "turn", 1, speaker=wren, text=LINE, now=at, reply=REPLY
        )
        return wall, time.thread_time_ns() - cpu0, replies

    for r in range(warmup + rounds):
        first, second = (python_turn, rust_turn) if r % 2 == 0 else (rust_turn, python_turn)
        now += MINUTE
        a = first(now)
        now += MINUTE
        b = second(now)
        p, q = (a, b) if first is python_turn else (b, a)
        assert p[2] == q[2], f"round {r}: Python gave {p[2]} replies, Rust {q[2]}"
        if r >= warmup:
            py_wall.append(p[0])
            py_cpu.append(p[1])
            rs_wall.append(q[0])
            rs_cpu.append(q[1])
            py_replies += p[2]
            rs_replies += q[2]

    def ms(ns: float) -> str:
        return f"{ns / 1e6:.3f}"

    pw, pc = percentile(py_wall, 0.5), percentile(py_cpu, 0.5)
    rw, rc = percentile(rs_wall, 0.5), percentile(rs_cpu, 0.5)
    report(
        f'turn: {rounds} rounds after {warmup} warm-up, "{LINE}" said by Wren, default '
        f"options; replies Python {py_replies}, Rust {rs_replies}; head {world.head}"
    )
    report(
        f"turn: python world.run_turn   wall p50 {ms(pw)} p99 {ms(percentile(py_wall, 0.99))} "
        f"ms | CPU p50 {ms(pc)} p99 {ms(percentile(py_cpu, 0.99))} ms"
    )
    report(
        f"turn: rust run_turn_blocking  wall p50 {ms(rw)} p99 {ms(percentile(rs_wall, 0.99))} "
        f"ms | CPU p50 {ms(rc)} p99 {ms(percentile(rs_cpu, 0.99))} ms"
    )
    overhead = (pw / rw - 1) * 100
    report(
        f"turn: overhead at p50: wall {overhead:+.1f} % ({(pw - rw) / 1e3:+.1f} us), "
        f"CPU {(pc / rc - 1) * 100:+.1f} % ({(pc - rc) / 1e3:+.1f} us) | target <= 10 %: "
        f"{'met' if overhead <= 10 else 'missed'}"
    )
    phases(world, wren, now, generate, warmup + rounds)


def phases(
    world: World, wren: int, now: int, generate: Callable[[dict[str, Any]], str], turns: int
) -> None:
    """Where a Python turn's time goes: the same turns in the poll form (as
    ``World.run_turn_async`` drives them; ``World.run_turn`` steps the same
    machine from Rust), each call timed alone (thread CPU, medians over the
    turns), each turn followed by a Rust turn on the same world for
    reference. Run after the comparison, on the same world; also gives the
    size of the request and outcome as JSON."""
    calls: dict[str, list[int]] = {}
    rust: list[int] = []
    sizes: tuple[int, int] = (0, 0)

    def timed(name: str, f: Callable[[], Any]) -> Any:
        cpu0 = time.thread_time_ns()
        out = f()
        calls.setdefault(name, []).append(time.thread_time_ns() - cpu0)
        return out

    for _ in range(turns):
        now += MINUTE
        turn = timed("world.begin_turn", lambda: world.begin_turn(wren, LINE, now))
        while True:
            step = timed("turn.step", turn.step)
            if step["step"] == "done":
                break
            assert step["step"] == "generate", step["step"]
            text = timed("generate (Python)", lambda: generate(step))
            timed("turn.provide", lambda: turn.provide(text))
            request_bytes = len(json.dumps(step))
        outcome = timed("turn.finish", turn.finish)
        timed("turn.abandon", turn.abandon)
        sizes = (request_bytes, len(json.dumps(outcome)))
        now += MINUTE
        cpu0 = time.thread_time_ns()
        _rp._bench_native(world, "turn", 1, speaker=wren, text=LINE, now=now, reply=REPLY)
        rust.append(time.thread_time_ns() - cpu0)
    parts = []
    total = 0.0
    for name, samples in calls.items():
        per_turn = statistics.median(samples) * len(samples) / turns
        total += per_turn
        parts.append(f"{name} {per_turn / 1e3:.1f}")
    report(
        f"turn: the poll form's calls, thread CPU per turn, medians of {turns} turns (us): "
        + ", ".join(parts)
        + f"; sum {total / 1e3:.1f}; a Rust turn between them {statistics.median(rust) / 1e3:.1f}"
    )
    report(
        f"turn: as JSON, the last generate request is {sizes[0]} bytes and the outcome "
        f"{sizes[1]} bytes"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument(
        "--only",
        choices=["no-op", "recall", "turn"],
        help="run one measurement (to profile it)",
    )
    args = parser.parse_args()
    quick = args.quick
    report(f"rp_engine {version()}; load average before {loadavg()}")
    if args.only in (None, "no-op"):
        no_op(rounds=3 if quick else 30, calls=10_000 if quick else 1_000_000)
    if args.only in (None, "recall"):
        retrieval(rounds=2 if quick else 20, calls=20 if quick else 1_000)
    if args.only in (None, "turn"):
        turn(warmup=2 if quick else 20, rounds=4 if quick else 400)
    report(f"load average after {loadavg()}")


if __name__ == "__main__":
    main()
