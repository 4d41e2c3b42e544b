"""Memories: formed, recalled by their owner only, kept as their retention says
(FSRS's curve, docs/memory.md), reinforced by a recall, removed."""

from pathlib import Path

import pytest

from rp_engine import InvalidInput, NotFound, Recalled, World

HOUR = 3_600_000
DAY = 24 * HOUR
# The stability of a memory of significance 0.5 under the default settings.
STABILITY = 24 * HOUR


def fsrs(elapsed: float, stability: float) -> float:
    """FSRS's retention: 0.9 after one stability."""
    return float((1 + 19 / 81 * elapsed / stability) ** -0.5)


TAVERN = Path(__file__).resolve().parents[2] / "examples" / "tavern.toml"


@pytest.fixture
def world() -> World:
    w = World.in_memory("The Crooked Lantern")
    w.load_world_file(str(TAVERN))
    return w


def test_a_speaker_recalls_its_own_memories_best_first(world: World) -> None:
    mira = world.entity_id("Mira Holt")
    wren = world.entity_id("Wren")
    ale = world.add_memory(mira, "Wren ordered the dark ale", witnesses=[wren])
    world.add_memory(mira, "A ship came in from the south")
    more = world.add_memory(mira, "The ale ran out; more ale is coming", significance=0.1)
    secret = world.add_memory(wren, "I hid the letter behind the dark ale casks")

    found = world.recall(mira, "dark ale", now=0)
    assert [r.id for r in found] == [ale, more]
    assert all(isinstance(r, Recalled) for r in found)
    assert found[0].text == "Wren ordered the dark ale"
    assert found[0].kind == "utterance"
    assert found[0].relevance == 1.0
    assert found[0].score == pytest.approx(
        found[0].relevance + found[0].retention + found[0].significance
    )
    # Never another's memory, even asked with its exact words.
    asked = world.recall(mira, "I hid the letter behind the dark ale casks", now=0, k=50)
    assert secret not in [r.id for r in asked]
    # Words, not query syntax.
    assert [r.id for r in world.recall(wren, '"letter AND (casks:', now=0)] == [secret]


def test_retention_weighs_in_recall_and_a_recall_reinforces(world: World) -> None:
    mira = world.entity_id("Mira Holt")
    old = world.add_memory(mira, "the bard sang of the sea", created=0)
    new = world.add_memory(mira, "the bard sang again", created=500 * HOUR)
    retention_only = dict(relevance=0.0, significance=0.0)
    found = world.recall(mira, "bard", now=500 * HOUR, **retention_only)  # type: ignore[arg-type]
    assert [r.id for r in found] == [new, old]
    assert found[0].retention == 1.0
    assert found[1].retention == pytest.approx(fsrs(500 * HOUR, STABILITY), rel=1e-12)
    assert found[1].retention == world.retention(old, now=500 * HOUR)
    assert found[1].score == pytest.approx(found[1].retention)
    # The old memory's stability is what its significance gave it, until a recall.
    assert world.memory(old).stability == 0.0
    head = world.head
    assert world.mark_recalled([old], 500 * HOUR) == head + 1
    # Recalled now: fully kept again, and its curve flatter (FSRS: the lower its retention
    # when recalled, the more its stability grows).
    reinforced = world.memory(old).stability
    assert reinforced > 3 * STABILITY
    found = world.recall(mira, "bard", now=500 * HOUR, **retention_only)  # type: ignore[arg-type]
    assert found[0].retention == found[1].retention == 1.0
    later = 500 * HOUR + 10 * DAY
    assert world.retention(old, now=later) == pytest.approx(fsrs(10 * DAY, reinforced), rel=1e-12)
    assert world.retention(new, now=later) == pytest.approx(fsrs(10 * DAY, STABILITY), rel=1e-12)
    # Ten days on, the reinforced old memory beats the recent one never recalled.
    found = world.recall(mira, "bard", now=later, **retention_only)  # type: ignore[arg-type]
    assert [r.id for r in found] == [old, new]


def test_removed_memories_and_bad_input(world: World) -> None:
    mira = world.entity_id("Mira Holt")
    lantern = world.add_memory(mira, "a blue lantern hangs by the door")
    assert [r.id for r in world.recall(mira, "lantern", now=0)] == [lantern]
    world.remove_memory(lantern)
    assert world.recall(mira, "lantern", now=0) == []
    head = world.head
    with pytest.raises(NotFound):
        world.remove_memory(lantern)
    with pytest.raises(NotFound):
        world.add_memory(999_999, "x")
    with pytest.raises(InvalidInput):
        world.add_memory(mira, "   ")
    with pytest.raises(InvalidInput):
        world.add_memory(mira, "x", significance=2.0)
    with pytest.raises(InvalidInput):
        world.add_memory(mira, "x", kind="dream")
    with pytest.raises(InvalidInput):
        world.recall(mira, "x", now=0, k=0)
    with pytest.raises(InvalidInput):
        world.recall(mira, "x", now=0, retention=-1.0)
    with pytest.raises(NotFound):
        world.retention(lantern, now=0)
    with pytest.raises(NotFound):
        world.recall(999_999, "x", now=0)
    with pytest.raises(NotFound):
        world.mark_recalled([lantern], 0)
    assert world.head == head
    assert world.recall(mira, "", now=0) == []
    assert world.recall(mira, "x" * 1_000_000, now=0) == []


def test_entities_are_found_by_name(world: World) -> None:
    mira = world.entity_id("Mira Holt")
    found = world.search_entities("holt")
    assert found[0][0] == mira
    assert found[0][1] == "Mira Holt"
    assert found[0][2] > 0
    assert world.search_entities('"(holt:')[0][0] == mira
    assert world.search_entities("zzyzx") == []
    with pytest.raises(InvalidInput):
        world.search_entities("holt", k=0)


def test_pinned_memories_are_always_loaded(world: World) -> None:
    mira = world.entity_id("Mira Holt")
    vow = world.add_memory(mira, "I swore to keep the lantern lit", pinned=True)
    world.add_memory(mira, "an ordinary memory")
    scene = world.add_memory(mira, "the fight in the cellar", kind="scene_summary", created=9)
    assert world.always_loaded(mira) == [vow, scene]
    assert world.always_loaded(mira, recent_scenes=0) == [vow]
    with pytest.raises(NotFound):
        world.always_loaded(999_999)


def test_vectors_find_what_words_miss(world: World) -> None:
    mira = world.entity_id("Mira Holt")
    hops = world.add_memory(mira, "the cellar smells of hops", embedding=[1.0, 0.0, 0.0])
    world.add_memory(mira, "a ship came in", embedding=[0.0, 1.0, 0.0])
    assert world.recall(mira, "beer", now=0) == []
    found = world.recall(mira, "beer", now=0, query_embedding=[0.9, 0.1, 0.0], semantic=1.0)
    assert found[0].id == hops
    with pytest.raises(InvalidInput):
        world.recall(mira, "beer", now=0, query_embedding=[])
    with pytest.raises(InvalidInput):
        world.add_memory(mira, "x", embedding=[float("nan")])
