"""A property, checked with hypothesis: replay equals the live world.

Random sequences of operations through the Python API (creating, moving and
removing entities, edges, moods, memories, the clock, decisions, turns,
host reports, rewinds and branch switches) run on a world kept in a save
file, with snapshots every few events or never. Operations the world refuses
must raise an RpError and change nothing. Then the save is closed and opened
again, which loads the latest snapshot and replays the events after it: the
reopened world must equal the live one, down to its whole state."""

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rp_engine import RpError, ScriptedGenerator, World

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"
CONTAINERS = ["tavern", "booth", "bar"]
SLOTS = [None, "floor", "hearth", "bench", "window seat", "behind the bar", "stools"]
MOODS = ["", "wary", "merry", "tired"]

Operation = tuple[Any, ...]

index = st.integers(min_value=0, max_value=50)
unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False).map(lambda x: round(x, 3))
operations: st.SearchStrategy[Operation] = st.one_of(
    st.tuples(st.just("create"), index, st.sampled_from(CONTAINERS), st.sampled_from(SLOTS)),
    st.tuples(st.just("move"), index, st.sampled_from(CONTAINERS), st.sampled_from(SLOTS)),
    st.tuples(st.just("remove"), index),
    st.tuples(st.just("edge"), index, index, unit, unit),
    st.tuples(st.just("unedge"), index, index),
    st.tuples(st.just("mood"), index, st.sampled_from(MOODS)),
    st.tuples(st.just("remember"), index, st.sampled_from(["lights", "a debt", "the ferry"])),
    st.tuples(st.just("forget"), index),
    st.tuples(st.just("time"), st.integers(min_value=-1000, max_value=120_000)),
    st.tuples(st.just("decide"), index),
    st.tuples(st.just("turn"), st.sampled_from(["Tobias?", "Mira, a cider.", "Hello."])),
    st.tuples(st.just("report"), index, index, st.sampled_from(["warmer", "colder"])),
    st.tuples(st.just("rewind"), st.integers(min_value=0, max_value=8)),
    st.tuples(st.just("switch"), index),
)


def run(world: World, operation: Operation, counter: list[int]) -> None:
    """Carries out one operation, naming entities by their index in the
    world as it is now."""
    entities = world.entities()

    def who(i: int) -> int:
        return entities[i % len(entities)].id if entities else 999_999

    kind = operation[0]
    counter[0] += 1
    n = counter[0]
    actions: dict[str, Callable[[], object]] = {
        "create": lambda: world.create_entity(
            f"patron {n}", container=operation[2], slot=operation[3]
        ),
        "move": lambda: world.move_entity(who(operation[1]), operation[2], operation[3]),
        "remove": lambda: world.remove_entity(who(operation[1])),
        "edge": lambda: world.set_edge(
            who(operation[1]), who(operation[2]), affinity=operation[3], trust=operation[4]
        ),
        "unedge": lambda: world.remove_edge(who(operation[1]), who(operation[2])),
        "mood": lambda: world.set_entity_state(who(operation[1]), mood=operation[2]),
        "remember": lambda: world.add_memory(who(operation[1]), f"{operation[2]} ({n})"),
        "forget": lambda: world.remove_memory(
            world.memories()[operation[1] % len(world.memories())].id
            if world.memories()
            else 999_999
        ),
        "time": lambda: world.advance_time(world.now + operation[1]),
        "decide": lambda: world.decide(who(operation[1]), content="Mira? Tobias?"),
        "turn": lambda: world.run_turn(
            world.entity_id("Wren"),
            operation[1],
            world.now + 1000,
            ScriptedGenerator(),
            options={"updates": {"enabled": True}},
        ),
        "report": lambda: world.apply_reports(
            [
                {
                    "type": "feeling",
                    "who": world.entity(who(operation[1])).name,
                    "toward": world.entity(who(operation[2])).name,
                    "affinity": operation[3],
                }
            ]
        ),
        "rewind": lambda: world.rewind(max(1, world.head - operation[1])),
        "switch": lambda: world.switch_branch(
            world.branches()[operation[1] % len(world.branches())].name
        ),
    }
    head, state = world.head, world.state()
    try:
        actions[kind]()
    except RpError:
        # Refused: nothing may have changed.
        assert world.head == head, operation
        assert world.state() == state, operation


def observed(world: World) -> dict[str, Any]:
    """Everything the Python API shows of a world."""
    return {
        "head": world.head,
        "branch": world.branch,
        "branches": world.branches(),
        "now": world.now,
        "state": world.state(),
        "entities": world.entities(),
        "containers": world.containers(),
        "edges": world.edges(),
        "memories": world.memories(),
        "dialogue": world.dialogue(),
        "world_file": world.export_world_file(),
    }


@settings(max_examples=60, deadline=None, database=None)
@given(
    ops=st.lists(operations, max_size=25),
    snapshot_every=st.sampled_from([0, 1, 4, 1000]),
    durability=st.sampled_from(["immediate", "eventual"]),
)
def test_replay_equals_the_live_world(
    ops: list[Operation], snapshot_every: int, durability: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        save = Path(folder) / "world.rp"
        counter = [0]
        with World.create(
            save, TAVERN, durability=durability, snapshot_every=snapshot_every
        ) as world:
            for operation in ops:
                run(world, operation, counter)
            live = observed(world)
        with World.open(save, snapshot_every=snapshot_every) as reopened:
            assert observed(reopened) == live
            # Every branch replays to what it was, too.
            for branch in live["branches"]:
                reopened.switch_branch(branch.name)
                assert reopened.head == branch.head
