"""Worlds, world files and response control from Python (rp_engine.World)."""

import threading
from pathlib import Path
from typing import Iterator

import pytest

import rp_engine
from rp_engine import (
    Conflict,
    Decision,
    FactSyntaxError,
    NotASave,
    NotFound,
    RpError,
    World,
    WorldFileError,
    check_sheet,
)

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"


@pytest.fixture
def world() -> Iterator[World]:
    with World.in_memory("test") as world:
        assert world.load_world_file(TAVERN) > 0
        yield world


@pytest.fixture
def mira(world: World) -> int:
    return world.entity_id("Mira Holt")


def test_mira_responds_when_mentioned(world: World, mira: int) -> None:
    decision = world.decide(mira, content="Mira, another cider?", author="Wren")
    assert isinstance(decision, Decision)
    assert decision.respond is True
    assert decision.retry_ms is None
    assert "Her brother vanished on the marsh ten winters ago." in decision.facts
    assert decision.trace == [{"line": 4, "kind": "fired", "action": "$respond true"}]
    assert decision.draws == []
    assert decision.explain() == "line 4: fired: $respond true\n→ responds\n"


def test_mira_stays_silent_otherwise(world: World, mira: int) -> None:
    decision = world.decide(mira, content="the rain will not stop tonight")
    assert decision.respond is False
    assert decision.trace == []
    assert decision.explain().endswith("→ stays silent\n")


def test_the_host_may_say_whether_she_is_mentioned(world: World, mira: int) -> None:
    assert world.decide(mira, content="hey", mentioned=True).respond
    assert not world.decide(mira, content="Mira!", mentioned=False).respond
    # Every message field is optional.
    assert not world.decide(mira).respond


def test_every_message_field_is_accepted(world: World, mira: int) -> None:
    decision = world.decide(
        mira,
        content="Mira",
        author="Wren",
        mentioned=None,
        response_ms=60_000.0,
        retry_ms=10.0,
        unread_count=3,
        interaction_type="use",
        hour=21.5,
    )
    assert decision.respond


def test_decisions_are_recorded_and_compare_by_value(world: World, mira: int) -> None:
    head = world.head
    first = world.decide(mira, content="Mira?")
    second = world.decide(mira, content="Mira?")
    assert world.head == head + 2
    assert first == second
    assert first != world.decide(mira, content="nothing")
    assert repr(first) == "Decision(respond=True, retry_ms=None, facts=3, trace=1, draws=0)"


def test_entities_are_found_by_key_or_name(world: World, mira: int) -> None:
    assert world.entity_id("mira") == mira
    assert world.entity_id("mira holt") == mira
    assert world.entity_id("Tobias Reed") != mira


def test_an_unknown_entity_is_not_found(world: World) -> None:
    with pytest.raises(NotFound, match="Nobody At All"):
        world.entity_id("Nobody At All")
    with pytest.raises(NotFound):
        world.decide(987_654_321, content="hello")
    # Every engine error is an RpError.
    with pytest.raises(RpError):
        world.entity_id("nobody")


def test_bad_arguments_are_type_errors(world: World, mira: int) -> None:
    with pytest.raises(TypeError):
        world.decide(mira, "positional content")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        world.decide(mira, shout=True)  # type: ignore[call-arg]
    with pytest.raises(OverflowError):
        world.decide(mira, unread_count=-1)


def test_a_world_file_error_has_its_location(world: World) -> None:
    head = world.head
    with pytest.raises(WorldFileError) as raised:
        world.apply_world_file("bad.toml", '[[entities]]\nid = "x"\nname = 3\n')
    error = raised.value
    assert error.file == "bad.toml"
    assert error.line == 3
    assert error.column >= 1
    assert isinstance(error.field, str)
    assert str(error).startswith("bad.toml:3:")
    assert world.head == head, "the world is unchanged"


def test_a_sheet_error_in_a_world_file_names_the_sheet_line(world: World) -> None:
    text = (
        '[world]\nname = "The Crooked Lantern"\n'
        '[[entities]]\nid = "x"\nname = "X"\nfacts = """\n$if (: $respond\n"""\n'
    )
    with pytest.raises(WorldFileError) as raised:
        world.apply_world_file("sheet.toml", text)
    error = raised.value
    assert (error.file, error.line, error.column, error.field) == (
        "sheet.toml",
        7,
        6,
        "entities.facts",
    )
    assert "line 1 of the fact sheet" in str(error)


def test_an_unreadable_world_file_is_a_world_file_error(world: World, tmp_path: Path) -> None:
    with pytest.raises(WorldFileError) as raised:
        world.load_world_file(tmp_path / "missing.toml")
    assert raised.value.file.endswith("missing.toml")


def test_applying_the_same_file_again_changes_nothing(world: World) -> None:
    head = world.head
    assert world.apply_world_file("tavern.toml", TAVERN.read_text(encoding="utf-8")) == 0
    assert world.head == head


def test_an_exported_world_loads_into_another(world: World) -> None:
    text = world.export_world_file()
    assert "Mira Holt" in text
    with World.in_memory("copy") as copy:
        assert copy.apply_world_file("export.toml", text) > 0
        assert copy.entity_id("Tobias Reed") >= 0


def test_check_sheet_accepts_a_good_sheet() -> None:
    check_sheet("A fisherman.\n$if mentioned: $respond\n")
    check_sheet("")


def test_check_sheet_places_errors_on_the_lines_of_the_text() -> None:
    with pytest.raises(FactSyntaxError) as raised:
        check_sheet("A fisherman.\n\n$if mentioned &&: $respond\n")
    error = raised.value
    assert error.line == 3
    assert error.column > 1
    assert error.owner is None
    assert str(error).startswith("line 3, column ")

    with pytest.raises(FactSyntaxError, match="unknown directive") as raised:
        check_sheet("$shout loudly")
    assert (raised.value.line, raised.value.column) == (1, 1)


def test_a_save_file_keeps_the_world(tmp_path: Path) -> None:
    save = tmp_path / "tavern.rp"
    with World.create(save, TAVERN) as world:
        mira = world.entity_id("Mira Holt")
        assert world.decide(mira, content="Mira?").respond
        head = world.head
    assert save.is_file()

    with pytest.raises(Conflict, match="already exists"):
        World.create(save, TAVERN)

    with World.open(str(save)) as reopened:
        assert reopened.head == head
        assert reopened.entity_id("mira") == mira


def test_a_world_file_that_fails_creates_no_save(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[world]\nname = 3\n", encoding="utf-8")
    save = tmp_path / "broken.rp"
    with pytest.raises(WorldFileError) as raised:
        World.create(save, broken)
    assert raised.value.line == 2
    assert not save.exists()


def test_a_file_that_is_not_a_save_is_refused() -> None:
    with pytest.raises(NotASave):
        World.open(TAVERN)


def test_a_closed_world_refuses_every_call() -> None:
    world = World.in_memory("closing")
    assert not world.closed
    assert "closing" in repr(world)
    world.close()
    assert world.closed
    assert repr(world) == "<World (closed)>"
    with pytest.raises(RpError, match="closed"):
        _ = world.head
    with pytest.raises(RpError, match="closed"):
        world.entity_id("mira")
    with pytest.raises(RpError, match="closed"):
        world.decide(1)
    with pytest.raises(RpError, match="closed"):
        world.export_world_file()
    world.close()  # closing twice does nothing


def test_the_context_manager_closes_even_on_error() -> None:
    with pytest.raises(ValueError, match="inside"):
        with World.in_memory("ctx") as world:
            raise ValueError("inside")
    assert world.closed


def test_the_exception_hierarchy_mirrors_the_error_kinds() -> None:
    kinds = [
        rp_engine.NotFound,
        rp_engine.InvalidInput,
        rp_engine.Conflict,
        rp_engine.CapacityError,
        rp_engine.WorldFileError,
        rp_engine.StorageError,
        rp_engine.CorruptSave,
        rp_engine.UnsupportedVersion,
        rp_engine.NotASave,
        rp_engine.FactSyntaxError,
        rp_engine.GenerationError,
    ]
    assert issubclass(RpError, Exception)
    assert len(set(kinds)) == 11
    for kind in kinds:
        assert issubclass(kind, RpError), kind
        assert kind.__module__ == "rp_engine"


def test_threads_share_a_world(world: World, mira: int) -> None:
    head = world.head
    results: list[bool] = []
    lock = threading.Lock()

    def decide_repeatedly() -> None:
        for _ in range(10):
            respond = world.decide(mira, content="Mira").respond
            with lock:
                results.append(respond)

    threads = [threading.Thread(target=decide_repeatedly) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [True] * 40
    assert world.head == head + 40


def test_load_makes_in_memory_what_create_saves(tmp_path: Path) -> None:
    with World.load(TAVERN) as loaded, World.create(tmp_path / "t.rp", TAVERN) as created:
        assert loaded.name == "The Crooked Lantern"
        assert "memory" in repr(loaded)
        assert loaded.head == created.head
        assert loaded.state() == created.state()


def test_load_refuses_a_bad_world_file(tmp_path: Path) -> None:
    with pytest.raises(WorldFileError):
        World.load(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text('[world]\nname = "x"\n[[entities]]\nname = 3\n', encoding="utf-8")
    with pytest.raises(WorldFileError) as raised:
        World.load(broken)
    assert raised.value.line == 4
