"""History from Python: rewind, its preview, fork, branches, switch, rename,
delete; kept in the save file across a reopen."""

from pathlib import Path

import pytest

from rp_engine import (
    Branch,
    Conflict,
    InvalidInput,
    NotFound,
    RewindPreview,
    ScriptedGenerator,
    World,
)

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"


def test_a_new_world_has_one_branch(world: World) -> None:
    assert world.branch == "main"
    (main,) = world.branches()
    assert isinstance(main, Branch)
    assert (main.name, main.head, main.current) == ("main", world.head, True)
    assert (main.forked_from, main.forked_at) == (None, None)
    assert repr(main) == f'Branch(name="main", head={world.head}, current)'


def test_preview_then_rewind_keeps_the_tail_as_a_branch(world: World, tobias: int) -> None:
    start = world.head
    world.set_edge(tobias, "Wren", affinity=0.5)
    world.move_entity("Wren", "the bar", "stools")
    world.advance_time(60_000)
    end = world.head

    preview = world.preview_rewind(start)
    assert isinstance(preview, RewindPreview)
    assert (preview.from_seq, preview.to_seq, preview.event_count) == (end, start, 3)
    assert preview.events_by_kind == {
        "edge_updated": 1,
        "activity_changed": 1,
        "time_advanced": 1,
    }
    wren = world.entity_id("Wren")
    assert preview.edges == [(tobias, wren)]
    assert preview.entities == [wren]
    assert (preview.containers, preview.groups, preview.memories) == ([], [], [])
    assert world.head == end, "a preview changes nothing"

    kept = world.rewind(start)
    assert kept == "main~2"
    assert world.head == start
    assert world.branch == "main"
    assert world.edge(tobias, wren).affinity == 0.2, "the world file's"
    assert world.entity("Wren").slot == "bench"
    branches = {b.name: b for b in world.branches()}
    assert branches["main~2"].head == end
    assert not branches["main~2"].current
    assert (branches["main"].forked_from, branches["main"].forked_at) == ("main~2", start)

    world.switch_branch("main~2")
    assert world.branch == "main~2"
    assert world.head == end
    assert world.edge(tobias, wren).affinity == 0.5

    assert world.rewind(world.head) is None, "nothing to undo"


def test_fork_rename_and_delete(world: World) -> None:
    head = world.head
    branch = world.fork("what-if")
    assert (branch.name, branch.head, branch.current) == ("what-if", head, False)
    assert (branch.forked_from, branch.forked_at) == ("main", head)
    early = world.fork("early", at_seq=3)
    assert early.head == 3
    assert world.branch == "main", "forking does not switch"

    world.switch_branch("early")
    assert world.head == 3
    assert world.entities() == []

    world.rename_branch("what-if", "if-only")
    assert [b.name for b in world.branches()] == ["main", "if-only", "early"]
    world.delete_branch("if-only")
    assert [b.name for b in world.branches()] == ["main", "early"]
    world.switch_branch("main")
    assert world.head == head


def test_branch_errors_change_nothing(world: World) -> None:
    world.fork("other")
    head, branches = world.head, world.branches()
    with pytest.raises(InvalidInput):
        world.preview_rewind(world.head + 1)
    with pytest.raises(InvalidInput):
        world.rewind(0)
    with pytest.raises(Conflict):
        world.fork("other")
    with pytest.raises(InvalidInput):
        world.fork(" spaced ")
    with pytest.raises(InvalidInput):
        world.fork("late", at_seq=world.head + 1)
    with pytest.raises(NotFound):
        world.switch_branch("nope")
    with pytest.raises(NotFound):
        world.rename_branch("nope", "x")
    with pytest.raises(Conflict):
        world.rename_branch("other", "main")
    with pytest.raises(Conflict, match="current branch"):
        world.delete_branch("main")
    with pytest.raises(NotFound):
        world.delete_branch("nope")
    assert (world.head, world.branches()) == (head, branches)


def test_a_turn_in_progress_refuses_to_go_on_after_a_rewind(
    world: World, wren: int, tobias: int
) -> None:
    start = world.head
    turn = world.begin_turn(wren, "Tobias?", 60_000)
    world.rewind(start)
    with pytest.raises(Conflict):
        turn.provide("Aye?")
    turn.abandon()


def test_branches_live_in_the_save_file(tmp_path: Path) -> None:
    save = tmp_path / "tavern.rp"
    with World.create(save, TAVERN) as world:
        wren, tobias = world.entity_id("Wren"), world.entity_id("Tobias Reed")
        start = world.head
        model = ScriptedGenerator()
        model.script(tobias, ["Lights on the marsh."])
        world.run_turn(wren, "Seen anything, Tobias?", 60_000, model)
        after_turn = world.head
        world.rewind(start)
        world.fork("side", at_seq=start - 1)
        state = world.state()

    with World.open(save) as reopened:
        assert reopened.branch == "main"
        assert reopened.head == start
        assert reopened.state() == state
        assert {b.name: b.head for b in reopened.branches()} == {
            "main~2": after_turn,
            "main": start,
            "side": start - 1,
        }
        reopened.switch_branch("main~2")
        assert reopened.dialogue()[-1]["text"] == "Lights on the marsh."

    # The branch switched to is current when the save is opened again.
    with World.open(save) as again:
        assert again.branch == "main~2"
        assert again.head == after_turn
