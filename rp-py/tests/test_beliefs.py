"""Beliefs about people from Python (docs/beliefs.md): ``World.beliefs``,
``observe_belief`` and ``mention_person``.

Tobias comes to believe Wren is tired; the belief's confidence halves every
half-life of host time, read at any ``now`` without anything committed. Wren's
mother, only talked about, is a lightweight entity beliefs can name. Bad input
raises the exception of its kind (the same kind C's result code and Rust's
``ErrorKind`` give) and changes nothing.
"""

import pytest

from rp_engine import Conflict, InvalidInput, NotFound, World

MINUTE = 60_000
HOUR = 60 * MINUTE


def test_a_belief_fades_by_half_every_half_life(world: World, tobias: int, wren: int) -> None:
    world.configure_drives({"belief_half_life_hours": 2, "trait_half_life_hours": 100})
    head = world.observe_belief(
        {
            "observer": "Tobias Reed",
            "about": wren,
            "mood": "tired",
            "energy": 0.2,
            "traits": ["stubborn"],
            "confidence": 0.8,
            "source": "observed",
        },
        now=HOUR,
    )
    assert head == world.head
    for hours in (0, 1, 2, 6):
        [about_wren] = [
            b for b in world.beliefs(tobias, now=HOUR + hours * HOUR) if b["about"] == wren
        ]
        assert about_wren["name"] == "Wren"
        assert about_wren["mentioned"] is False
        mood = about_wren["mood"]
        assert mood["value"] == "tired"
        assert mood["observed_confidence"] == 0.8
        assert mood["source"] == "observed"
        assert mood["at"] == HOUR
        assert mood["confidence"] == pytest.approx(0.8 * 0.5 ** (hours / 2), rel=1e-12)
        assert about_wren["energy"]["confidence"] == pytest.approx(mood["confidence"])
        [trait] = about_wren["traits"]
        assert trait["confidence"] == pytest.approx(0.8 * 0.5 ** (hours / 100), rel=1e-12)
    # Reading commits nothing; Mira believes nothing of Wren's mood.
    assert world.head == head
    assert all(b["mood"] is None for b in world.beliefs("Mira Holt", now=HOUR))


def test_a_mentioned_person_can_be_believed_of_and_has_no_drives(
    world: World, tobias: int, wren: int, mira: int
) -> None:
    mother = world.mention_person("Wren's mother", now=0, facts="A seamstress.", by="Wren")
    assert world.entity_id("Wren's mother") == mother
    assert world.entity(mother).mentioned
    assert world.entity(mother).container is None
    assert not world.entity("Wren").mentioned
    with pytest.raises(InvalidInput, match="only mentioned"):
        world.drives(mother, now=0)
    with pytest.raises(Conflict):
        world.mention_person("Wren's mother", now=0)
    world.observe_belief(
        {
            "observer": tobias,
            "about": "Wren",
            "feelings": [{"toward": "Wren's mother", "sentiment": -0.5, "text": "resents"}],
            "source": {"told_by": "Mira Holt"},
            "confidence": 0.7,
        },
        now=0,
    )
    [about_wren] = [b for b in world.beliefs(tobias, now=0) if b["about"] == wren]
    [felt] = about_wren["feelings"]
    assert felt["value"] == {
        "toward": mother,
        "toward_name": "Wren's mother",
        "sentiment": -0.5,
        "text": "resents",
    }
    assert felt["source"] == {"told_by": mira}
    # A mentioned person believes nothing.
    with pytest.raises(InvalidInput, match="only mentioned"):
        world.observe_belief({"observer": mother, "about": "Wren", "mood": "proud"}, now=0)


@pytest.mark.parametrize(
    ("belief", "error", "says"),
    [
        ({"observer": "Tobias Reed", "about": "Wren", "energy": 1.5}, InvalidInput, "energy"),
        (
            {"observer": "Tobias Reed", "about": "Wren", "mood": "ok", "confidence": -0.1},
            InvalidInput,
            "confidence",
        ),
        (
            {
                "observer": "Tobias Reed",
                "about": "Wren",
                "feelings": [{"toward": "Mira Holt", "sentiment": 2}],
            },
            InvalidInput,
            "sentiment",
        ),
        ({"observer": "Tobias Reed", "about": "Wren", "mood": "x" * 201}, InvalidInput, "200"),
        ({"observer": "Tobias Reed", "about": "Wren", "mood": "a\nb"}, InvalidInput, "line"),
        ({"observer": "Tobias Reed", "about": "Wren"}, InvalidInput, "needs"),
        ({"observer": "Tobias Reed", "about": "Tobias Reed", "mood": "ok"}, InvalidInput, "else"),
        ({"observer": "Tobias Reed", "about": "Wren", "mood": "ok", "x": 1}, InvalidInput, "x"),
        ({"observer": "Nobody", "about": "Wren", "mood": "ok"}, NotFound, "Nobody"),
        ({"observer": 999_999, "about": "Wren", "mood": "ok"}, NotFound, "999999"),
    ],
)
def test_bad_beliefs_raise_their_kind_and_change_nothing(
    world: World, belief: dict[str, object], error: type[Exception], says: str
) -> None:
    head = world.head
    with pytest.raises(error, match=says):
        world.observe_belief(belief, now=0)
    assert world.head == head


def test_time_never_goes_back_and_unknown_observers_are_not_found(world: World) -> None:
    world.advance_time(MINUTE)
    head = world.head
    with pytest.raises(InvalidInput, match="before the world's clock"):
        world.observe_belief({"observer": "Tobias Reed", "about": "Wren", "mood": "ok"}, now=0)
    with pytest.raises(InvalidInput):
        world.mention_person("Ada", now=0)
    with pytest.raises(NotFound):
        world.beliefs("Nobody", now=0)
    with pytest.raises(NotFound):
        world.mention_person("Ada", now=MINUTE, by="Nobody")
    assert world.head == head
