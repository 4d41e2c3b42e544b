"""The memory index kept beside a save, from Python (docs/memory.md, "The index beside
the save"): built beside the save by the first recall, read back when the save is opened
again, built again when deleted, the same answers each time."""

import shutil
from pathlib import Path

from rp_engine import ScriptedGenerator, World

TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"


def test_the_index_is_kept_beside_the_save_and_read_back(tmp_path: Path) -> None:
    save = tmp_path / "tavern.rp"
    with World.create(save, TAVERN) as world:
        wren = world.entity_id("Wren")
        tobias = world.entity_id("Tobias Reed")
        assert world.memory_index_origin() is None, "no recall yet"
        world.run_turn(wren, "I carry a sealed letter.", world.now + 1000, ScriptedGenerator())
        first = [m.id for m in world.recall(tobias, "sealed letter", now=world.now)]
        assert first
        origin = world.memory_index_origin()
        assert isinstance(origin, dict) and "built" in origin
    sidecar = Path(f"{save}.index")
    assert sidecar.is_dir()
    with World.open(save) as world:
        assert [m.id for m in world.recall(tobias, "sealed letter", now=world.now)] == first
        origin = world.memory_index_origin()
        assert isinstance(origin, dict) and "loaded" in origin
    shutil.rmtree(sidecar)
    with World.open(save) as world:
        assert [m.id for m in world.recall(tobias, "sealed letter", now=world.now)] == first
        origin = world.memory_index_origin()
        assert isinstance(origin, dict) and "built" in origin


def test_a_world_in_memory_keeps_its_index_in_memory() -> None:
    with World.in_memory("x") as world:
        world.load_world_file(TAVERN)
        tobias = world.entity_id("Tobias Reed")
        world.recall(tobias, "anything", now=world.now)
        assert world.memory_index_origin() == "memory"
