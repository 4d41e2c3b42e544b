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


def test_an_index_built_again_takes_in_each_speaker_on_its_first_recall(tmp_path: Path) -> None:
    save = tmp_path / "tavern.rp"
    with World.create(save, TAVERN) as world:
        wren = world.entity_id("Wren")
        tobias = world.entity_id("Tobias Reed")
        for n in range(3):
            world.run_turn(wren, f"The ferry, the letter, {n}.", world.now + 1000, ScriptedGenerator())
        first = [m.id for m in world.recall(tobias, "ferry letter", now=world.now)]
    shutil.rmtree(f"{save}.index")
    heard: list[tuple[str, int, int]] = []

    def progress(phase: str, done: int, total: int) -> None:
        heard.append((phase, done, total))

    with World.open(save, progress=progress) as world:
        assert [m.id for m in world.recall(tobias, "ferry letter", now=world.now)] == first
        builds = [total for phase, done, total in heard if phase == "index.build" and done == 0]
        # Tobias's memories only, not the world's.
        assert builds == [len(world.memories(tobias))], builds
        assert len(world.memories()) > builds[0]
        heard.clear()
        world.recall(tobias, "letter", now=world.now)
        assert not [h for h in heard if h[0] == "index.build"], "taken in once"
        world.recall(wren, "letter", now=world.now)
        assert [t for p, d, t in heard if p == "index.build" and d == 0] == [
            len(world.memories(wren))
        ]
