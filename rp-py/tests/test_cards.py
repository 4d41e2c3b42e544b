"""Character cards from Python (docs/cards.md): ``World.import_card`` (bytes or a
path; JSON or PNG), ``World.card`` and ``World.export_card`` (V2, V3, PNG by
format or extension); a card comes back as it was given, byte for byte; bad
cards raise the exception of their kind and change nothing."""

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest

from rp_engine import Conflict, InvalidInput, NotFound, ScriptedGenerator, World

CARD = json.dumps(
    {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": "Aria Vell",
            "description": "{{char}} is a bard with a cracked lute.",
            "personality": "wry",
            "scenario": "",
            "first_mes": "*tunes her lute* Evening.",
            "mes_example": "",
            "alternate_greetings": ["Oh. You again."],
            "extensions": {"fav": True, "depth_prompt": {"depth": 4}},
        },
    },
    separators=(",", ":"),
).encode()


def chunks(png: bytes) -> dict[bytes, bytes]:
    """The text chunks of a PNG, read with Python's own zlib CRC check."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, out = 8, {}
    while at < len(png):
        (n,) = struct.unpack(">I", png[at : at + 4])
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + n]
        (crc,) = struct.unpack(">I", png[at + 8 + n : at + 12 + n])
        assert zlib.crc32(kind + data) == crc
        if kind == b"tEXt":
            key, _, text = data.partition(b"\0")
            out[key] = text
        if kind == b"IDAT":
            assert zlib.decompress(data) == b"\x00\x80"  # the 1x1 placeholder
        at += 12 + n
    return out


def test_a_card_comes_in_as_a_character_and_goes_out_unchanged(
    world: World, tmp_path: Path
) -> None:
    aria = world.import_card(CARD, now=world.now)
    entity = world.entity(aria)
    assert entity.name == "Aria Vell"
    assert entity.facts == "Aria Vell is a bard with a cracked lute.\npersonality: wry"
    card = world.card(aria)
    assert card is not None
    assert card["data"]["alternate_greetings"] == ["Oh. You again."]
    assert world.export_card(aria, format="v2") == CARD
    v3 = json.loads(world.export_card(aria, tmp_path / "aria.json"))
    assert v3["spec"] == "chara_card_v3"
    assert v3["data"]["extensions"]["depth_prompt"] == {"depth": 4}
    assert json.loads((tmp_path / "aria.json").read_bytes()) == v3
    png = world.export_card(aria, tmp_path / "aria.png")
    text = chunks(png)
    assert base64.b64decode(text[b"chara"]) == CARD
    assert json.loads(base64.b64decode(text[b"ccv3"]))["spec"] == "chara_card_v3"
    other = World.in_memory("Other")
    back = other.import_card(tmp_path / "aria.png", now=0)
    assert other.entity(back).facts == entity.facts
    assert world.card("Tobias Reed") is None


def test_bad_cards_raise_their_kind_and_change_nothing(world: World, tmp_path: Path) -> None:
    world.import_card(CARD, now=world.now)
    head = world.head
    png = bytearray(world.export_card("Tobias Reed", format="png"))
    png[-30] ^= 0x20
    with pytest.raises(InvalidInput, match="CRC"):
        world.import_card(bytes(png), now=world.now)
    with pytest.raises(InvalidInput, match="a JSON object"):
        world.import_card(b"[1, 2]", now=world.now)
    with pytest.raises(InvalidInput, match="no name"):
        world.import_card(b'{"spec": "chara_card_v2", "data": {"name": ""}}', now=world.now)
    with pytest.raises(Conflict, match="already"):
        world.import_card(CARD, now=world.now)
    with pytest.raises(OSError):
        world.import_card(tmp_path / "missing.png", now=world.now)
    with pytest.raises(InvalidInput, match="not a card format"):
        world.export_card("Tobias Reed", format="gif")
    with pytest.raises(NotFound):
        world.export_card("Nobody")
    assert world.head == head


def test_a_lorebook_comes_into_the_prompt_of_who_heard_it(
    world: World, wren: int, tobias: int, tmp_path: Path
) -> None:
    book = tmp_path / "marsh.json"
    book.write_text(
        json.dumps(
            {
                "entries": {
                    "0": {"uid": 0, "key": ["ferryman"], "content": "The Ferryman crosses at dawn."},
                    "1": {"uid": 1, "key": ["/lights?/i"], "content": "Green lights mean drowned men."},
                }
            }
        )
    )
    world.import_lorebook(book, now=world.now)
    world.import_lorebook(
        b'{"entries": [{"keys": ["letter"], "content": "Tobias fears sealed letters."}]}',
        entity="Tobias Reed",
        now=world.now,
    )
    world.run_turn(wren, "I carry a sealed letter. Seen any lights?", world.now + 1000, ScriptedGenerator())
    texts = [piece["text"] for piece in world.inspect_prompt(tobias)["pieces"]]
    assert "Green lights mean drowned men." in texts
    assert "Tobias fears sealed letters." in texts
    assert "The Ferryman crosses at dawn." not in texts
    with pytest.raises(InvalidInput, match="not a JavaScript regular expression"):
        world.import_lorebook(b'{"entries": [{"keys": ["/(x/"]}]}', now=world.now)
    with pytest.raises(NotFound):
        world.import_lorebook(b'{"entries": []}', entity="Nobody", now=world.now)


def test_lorebooks_are_listed_and_go_out_in_both_formats(world: World, tmp_path: Path) -> None:
    wi = '{"entries": {"0": {"uid": 0, "key": ["ferryman"], "content": "Dawn crossings."}}}'
    book = world.import_lorebook(wi.encode(), now=world.now)
    aria = world.import_card(CARD, now=world.now)
    assert {b["id"]: (b["owner"], b["entries"]) for b in world.lorebooks()} == {book: (None, 1)}
    assert world.export_lorebook(book, format="world_info") == wi
    v3 = json.loads(world.export_lorebook(book, tmp_path / "marsh.json"))
    assert v3["spec"] == "lorebook_v3"
    assert v3["data"]["entries"][0]["keys"] == ["ferryman"]
    assert json.loads((tmp_path / "marsh.json").read_text()) == v3
    with pytest.raises(NotFound):
        world.export_lorebook(999_999)
    with pytest.raises(InvalidInput, match="not a lorebook format"):
        world.export_lorebook(book, format="yaml")
    assert world.card(aria) is not None


def test_a_charx_goes_out_and_comes_back(world: World, tmp_path: Path) -> None:
    import zipfile

    aria = world.import_card(CARD, now=world.now)
    world.export_card(aria, tmp_path / "aria.charx")
    with zipfile.ZipFile(tmp_path / "aria.charx") as z:
        card = json.loads(z.read("card.json"))
    assert card["spec"] == "chara_card_v3"
    other = World.in_memory("Other")
    back = other.import_card(tmp_path / "aria.charx", now=0)
    assert other.entity(back).name == "Aria Vell"
    bomb = tmp_path / "bomb.charx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("card.json", b" " * (16 << 20))
    with pytest.raises(InvalidInput, match="200 to 1"):
        other.import_card(bomb, now=0)


def png_of(pixels: bytes, texts: dict[bytes, bytes]) -> bytes:
    """A ``len(pixels)``x1 grey PNG with ``texts`` as tEXt chunks (Python's own zlib)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    head = struct.pack(">IIBBBBB", len(pixels), 1, 8, 0, 0, 0, 0)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head)
    out += chunk(b"IDAT", zlib.compress(b"\0" + pixels))
    for key, text in texts.items():
        out += chunk(b"tEXt", key + b"\0" + text)
    return out + chunk(b"IEND", b"")


def png_chunks(png: bytes, kind: bytes) -> list[bytes]:
    at, out = 8, []
    while at < len(png):
        (n,) = struct.unpack(">I", png[at : at + 4])
        if png[at + 4 : at + 8] == kind:
            out.append(png[at + 8 : at + 8 + n])
        at += 12 + n
    return out


def test_a_cards_files_and_image_are_kept(world: World, tmp_path: Path) -> None:
    import zipfile

    original = png_of(b"\x01\x02\x03", {b"chara": base64.b64encode(CARD)})
    aria = world.import_card(original, now=world.now)
    assets = world.card_assets(aria)
    assert list(assets) == ["assets/icon/image/main.png"]
    image = assets["assets/icon/image/main.png"]
    assert png_chunks(image, b"tEXt") == []
    out = world.export_card(aria, format="png")
    assert png_chunks(out, b"IDAT") == png_chunks(original, b"IDAT")
    texts = [t.partition(b"\0")[0] for t in png_chunks(out, b"tEXt")]
    assert sorted(texts) == [b"ccv3", b"chara"]

    # A CHARX's files, in and out again.
    v3 = json.loads(CARD)
    v3["spec"], v3["spec_version"] = "chara_card_v3", "3.0"
    v3["data"]["name"] = "Odile"
    v3["data"]["assets"] = [
        {
            "type": "icon",
            "uri": "embeded://assets/icon/image/odile.png",
            "name": "main",
            "ext": "png",
        }
    ]
    icon = png_of(b"\x09\x08", {})
    charx = tmp_path / "odile.charx"
    with zipfile.ZipFile(charx, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("card.json", json.dumps(v3))
        z.writestr("assets/icon/image/odile.png", icon)
        z.writestr("assets/other/hum.ogg", b"OggS")
    odile = world.import_card(charx, now=world.now)
    files = {"assets/icon/image/odile.png": icon, "assets/other/hum.ogg": b"OggS"}
    assert world.card_assets(odile) == files
    assert png_chunks(world.export_card(odile, format="png"), b"IDAT") == png_chunks(icon, b"IDAT")
    world.export_card(odile, tmp_path / "out.charx")
    with zipfile.ZipFile(tmp_path / "out.charx") as z:
        assert {n: z.read(n) for n in z.namelist() if n != "card.json"} == files
    other = World.in_memory("Other")
    assert other.card_assets(other.import_card(tmp_path / "out.charx", now=0)) == files

    # The host's image, from bytes or a path, on an entity of no card.
    (tmp_path / "host.png").write_bytes(png_of(b"\x07", {}))
    world.set_card_image("tobias", tmp_path / "host.png", now=world.now)
    out = world.export_card("tobias", format="png")
    assert png_chunks(out, b"IDAT") == png_chunks(png_of(b"\x07", {}), b"IDAT")
    head = world.head
    with pytest.raises(InvalidInput, match="not a PNG"):
        world.set_card_image("tobias", b"GIF89a", now=world.now)
    broken = bytearray(original)
    broken[-20] ^= 1
    with pytest.raises(InvalidInput, match="CRC"):
        world.set_card_image(aria, bytes(broken), now=world.now)
    with pytest.raises(NotFound):
        world.set_card_image(999_999, original, now=world.now)
    with pytest.raises(NotFound):
        world.card_assets(999_999)
    with pytest.raises(InvalidInput, match="climbs out"):
        bad = tmp_path / "bad.charx"
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("card.json", json.dumps(v3).replace("Odile", "Other"))
            z.writestr("assets/../../x", b"x")
        world.import_card(bad, now=world.now)
    assert world.head == head


def test_a_world_files_cards_are_loaded_beside_it(tmp_path: Path) -> None:
    from rp_engine import WorldFileError

    (tmp_path / "aria.png").write_bytes(png_of(b"\x04\x05", {b"chara": base64.b64encode(CARD)}))
    text = (
        '[world]\nname = "Inn"\n'
        '[[containers]]\nid = "booth"\nname = "the booth"\nslots = [{ name = "bench" }]\n'
        '[[cards]]\nfile = "aria.png"\nid = "aria"\ncontainer = "booth"\nslot = "bench"\n'
    )
    (tmp_path / "inn.toml").write_text(text)
    with World.load(tmp_path / "inn.toml") as world:
        aria = world.entity("aria")
        assert aria.name == "Aria Vell"
        assert list(world.card_assets("aria")) == ["assets/icon/image/main.png"]
        entry = '[[cards]]\nfile = "aria.png"\nid = "aria"\ncontainer = "booth"\nslot = "bench"\n'
        assert entry in world.export_world_file()
    with World.in_memory("Inn") as world:
        world.apply_world_file(str(tmp_path / "inn.toml"), text)
        assert world.entity("aria").name == "Aria Vell"
        head = world.head
        with pytest.raises(WorldFileError, match="cards.file: gone.png: cannot read the card"):
            world.apply_world_file(str(tmp_path / "inn.toml"), text.replace("aria.png", "gone.png"))
        assert world.head == head
