//! Character cards in and out (docs/cards.md): V1, V2 and V3 cards from JSON and from PNGs
//! with one chunk or both, each an entity whose facts are its prose, kept as given so an export
//! of the same version is the same bytes; entities out as V2, V3 and PNG, read back the same;
//! bad files refused with what is wrong and nothing changed; replay equal to the live world.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rp_core::cards::{CardFormat, png, read_card};
use rp_core::*;

const V2: &str = r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Aria Vell","description":"{{char}} is a bard with a cracked lute.\n$5 buys a song from her.\n\nShe hums when nervous.","personality":"wry,\nwarm","scenario":"A storm keeps travellers at the inn.","first_mes":"*tunes her lute* Evening, {{user}}.","mes_example":"<START>\n{{char}}: Another song?","creator_notes":"Best with slow scenes.","system_prompt":"","post_history_instructions":"","alternate_greetings":["*looks up* Oh. You again."],"tags":["bard","fantasy"],"creator":"someone","character_version":"1.2","extensions":{"depth_prompt":{"depth":4,"prompt":"She is tired."},"fav":true,"talkativeness":"0.5"},"character_book":{"entries":[]}}}"#;

const V3: &str = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Mireille","nickname":"Mire","description":"A ferrywoman.","personality":"","scenario":"","first_mes":"Fare?","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","alternate_greetings":[],"group_only_greetings":["The boat is full tonight."],"tags":[],"creator":"","character_version":"","extensions":{},"assets":[{"type":"icon","uri":"ccdefault:","name":"main","ext":"png"}],"creation_date":1700000000}}"#;

fn engine() -> Engine {
    Engine::in_memory("Inn", 1_000).unwrap()
}

fn png_with(chunks: &[(&str, &str)]) -> Vec<u8> {
    let texts: Vec<(String, String)> = chunks
        .iter()
        .map(|(k, json)| (k.to_string(), STANDARD.encode(json)))
        .collect();
    let refs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    png::with_text_chunks(&png::placeholder(), &refs).unwrap()
}

fn replay(engine: &Engine) -> World {
    let mut world = World::new();
    for (_, e) in engine.events(1, engine.head()).unwrap() {
        world.apply(&e).unwrap();
    }
    world
}

#[test]
fn a_v2_card_becomes_an_entity_of_its_prose_and_goes_out_byte_for_byte() {
    let mut e = engine();
    let imported = e.import_card(V2.as_bytes(), 2_000).unwrap();
    assert_eq!(imported.name, "Aria Vell");
    assert_eq!(
        imported.greetings.first,
        "*tunes her lute* Evening, {{user}}."
    );
    assert_eq!(
        imported.greetings.alternate,
        vec!["*looks up* Oh. You again.".to_owned()]
    );
    let aria = e.world().entity(imported.entity).unwrap();
    assert!(!aria.host_controlled);
    assert_eq!(
        aria.facts.lines(),
        &[
            "Aria Vell is a bard with a cracked lute.".to_owned(),
            "$5 buys a song from her.".to_owned(),
            "She hums when nervous.".to_owned(),
            "personality: wry, warm".to_owned(),
            "scenario: A storm keeps travellers at the inn.".to_owned(),
        ]
    );
    assert_eq!(
        e.export_card(imported.entity, CardFormat::V2).unwrap(),
        V2.as_bytes()
    );
    // As V3: every field and extension kept, the V3 fields added.
    let v3: serde_json::Value =
        serde_json::from_slice(&e.export_card(imported.entity, CardFormat::V3).unwrap()).unwrap();
    assert_eq!(v3["spec"], "chara_card_v3");
    assert_eq!(v3["data"]["extensions"]["depth_prompt"]["depth"], 4);
    assert_eq!(v3["data"]["creator_notes"], "Best with slow scenes.");
    assert_eq!(v3["data"]["group_only_greetings"], serde_json::json!([]));
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
}

#[test]
fn pngs_carry_cards_in_and_out_and_ccv3_is_preferred() {
    let mut e = engine();
    // One chunk, V2 in `chara`.
    let aria = e.import_card(&png_with(&[("chara", V2)]), 2_000).unwrap();
    assert_eq!(aria.name, "Aria Vell");
    // Both chunks: the `ccv3` one wins.
    let both = png_with(&[("chara", V2), ("ccv3", V3)]);
    let mire = e.import_card(&both, 2_000).unwrap();
    assert_eq!(mire.name, "Mireille");
    assert_eq!(
        mire.greetings.group_only,
        vec!["The boat is full tonight.".to_owned()]
    );
    assert_eq!(
        e.world().entity(mire.entity).unwrap().aliases,
        vec!["Mire".to_owned()]
    );
    // Out as a PNG with both chunks; each reads back as the card it was.
    let out = e.export_card(mire.entity, CardFormat::Png).unwrap();
    assert!(png::is_png(&out));
    let v3 = STANDARD
        .decode(png::text_chunk(&out, "ccv3").unwrap().unwrap())
        .unwrap();
    assert_eq!(v3, V3.as_bytes());
    let v2 = read_card(&png_with(&[(
        "chara",
        std::str::from_utf8(
            &STANDARD
                .decode(png::text_chunk(&out, "chara").unwrap().unwrap())
                .unwrap(),
        )
        .unwrap(),
    )]))
    .unwrap();
    assert_eq!(v2.data()["assets"][0]["uri"], "ccdefault:");
    assert_eq!(read_card(&out).unwrap().json(), V3);
}

#[test]
fn an_entity_of_no_card_goes_out_as_one_and_comes_back_the_same() {
    let mut e = engine();
    e.apply_world_file(
        "inn.toml",
        "[world]\nname = \"Inn\"\n[[entities]]\nid = \"tobias\"\nname = \"Tobias\"\nfacts = \"\"\"\nan old fisherman\n$if mentioned: $respond\nsees green lights\n\"\"\"\n",
    )
    .unwrap();
    let tobias = e.world().resolve_entity("tobias").unwrap();
    let out = e.export_card(tobias, CardFormat::Png).unwrap();
    let card = read_card(&out).unwrap();
    assert_eq!(
        card.text("description"),
        "an old fisherman\nsees green lights"
    );
    let mut other = engine();
    let back = other.import_card(&out, 2_000).unwrap();
    assert_eq!(
        other.world().entity(back.entity).unwrap().facts.lines(),
        &[
            "an old fisherman".to_owned(),
            "sees green lights".to_owned()
        ]
    );
}

#[test]
fn bad_cards_are_named_and_change_nothing() {
    let mut e = engine();
    e.import_card(V2.as_bytes(), 2_000).unwrap();
    let head = e.head();
    let mut bad_crc = png_with(&[("chara", V2)]);
    let at = bad_crc.len() - 30;
    bad_crc[at] ^= 0x20;
    let mut not_base64 =
        png::with_text_chunks(&png::placeholder(), &[("chara", "!!not base64!!")]).unwrap();
    not_base64.truncate(not_base64.len());
    let long = format!(
        r#"{{"name": "Longwinded", "description": "{}"}}"#,
        "a".repeat(10 << 20)
    );
    let cases: Vec<(Vec<u8>, ErrorKind, &str)> = vec![
        (bad_crc, ErrorKind::Invalid, "CRC"),
        (not_base64, ErrorKind::Invalid, "not base64"),
        (png::placeholder(), ErrorKind::Invalid, "holds no card"),
        (
            png::placeholder()[..20].to_vec(),
            ErrorKind::Invalid,
            "past the file's end",
        ),
        (b"[1, 2]".to_vec(), ErrorKind::Invalid, "a JSON object"),
        (
            b"\xff\xfe not utf-8".to_vec(),
            ErrorKind::Invalid,
            "neither a PNG nor UTF-8",
        ),
        (
            br#"{"spec": "chara_card_v2", "data": {"name": 5}}"#.to_vec(),
            ErrorKind::Invalid,
            "`name` is not a string",
        ),
        (
            V2.as_bytes().to_vec(),
            ErrorKind::Conflict,
            "named \"Aria Vell\" already",
        ),
        (long.into_bytes(), ErrorKind::Invalid, "longer than"),
    ];
    for (bytes, kind, why) in cases {
        let err = e.import_card(&bytes, 3_000).unwrap_err();
        assert_eq!(err.kind(), kind, "{err}");
        assert!(err.to_string().contains(why), "{why}: {err}");
    }
    assert_eq!(
        e.import_card(V3.as_bytes(), 10).unwrap_err().kind(),
        ErrorKind::Invalid,
        "before the clock"
    );
    assert_eq!(e.head(), head, "nothing was recorded");
    assert_eq!(
        e.export_card(EntityId(999), CardFormat::V2)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        CardFormat::from_name("card.gif").unwrap_err().kind(),
        ErrorKind::Invalid
    );
    assert_eq!(CardFormat::from_name("Card.PNG").unwrap(), CardFormat::Png);
    // A card record that is not a card is refused by the log itself.
    let aria = e.world().resolve_entity("Aria Vell").unwrap();
    assert!(
        e.append(vec![Event::CardAttached {
            entity: aria,
            card: "{}".into()
        }])
        .is_err()
    );
    assert!(
        e.append(vec![Event::CardAttached {
            entity: EntityId(999),
            card: V3.into()
        }])
        .is_err()
    );
}

#[test]
fn the_placeholder_is_a_valid_png() {
    // Its one IDAT chunk inflates (through the platform's zlib, in Python in the C and Python
    // tests; here: the chunk walk and the stored block's own checks).
    let p = png::placeholder();
    assert!(png::is_png(&p));
    assert_eq!(png::text_chunk(&p, "anything").unwrap(), None);
}

/// A world with Wren (the player) and Tobias in the booth, Mira at the bar out of earshot.
const INN: &str = r#"
[world]
name = "Inn"
[[containers]]
id = "booth"
name = "the booth"
[[containers]]
id = "bar"
name = "the bar"
[[entities]]
id = "wren"
name = "Wren"
player = true
container = "booth"
[[entities]]
id = "tobias"
name = "Tobias"
container = "booth"
[[entities]]
id = "mira"
name = "Mira"
container = "bar"
"#;

fn prompt(e: &mut Engine, who: EntityId) -> String {
    let now = e.world().now();
    e.inspect_prompt(who, None, now, &rp_core::turn::PromptOptions::default())
        .unwrap()
        .pieces
        .iter()
        .map(|p| p.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn lorebooks_activate_on_what_a_character_heard() {
    let mut e = engine();
    e.apply_world_file("inn.toml", INN).unwrap();
    let (wren, tobias, mira) = (
        e.world().resolve_entity("wren").unwrap(),
        e.world().resolve_entity("tobias").unwrap(),
        e.world().resolve_entity("mira").unwrap(),
    );
    // The world's book, as a World Info file; Tobias's own, as a card's.
    let world_info = r#"{"entries": {
        "0": {"uid": 0, "key": ["ferryman"], "content": "The Ferryman crosses at dawn.", "order": 10},
        "1": {"uid": 1, "key": ["/sea(l|led)? letter/i"], "keysecondary": ["wax"], "selectiveLogic": 2,
              "content": "Sealed letters are for the Ferryman.", "order": 20},
        "2": {"uid": 2, "key": ["always"], "constant": true, "content": "Rain never stops on the marsh."}}}"#;
    e.import_lorebook(world_info.as_bytes(), None, 2_000)
        .unwrap();
    let own = r#"{"entries": [{"keys": ["lights"], "content": "Tobias saw green lights over the reeds."}]}"#;
    e.import_lorebook(own.as_bytes(), Some(tobias), 2_000)
        .unwrap();
    let generator = rp_core::turn::ScriptedGenerator::new("Mm.");
    e.run_turn_blocking(
        rp_core::turn::TurnInput::say(wren, "I carry a sealed letter. Seen any lights?", 3_000),
        Default::default(),
        &generator,
        &mut rp_core::machine::NoSink,
    )
    .unwrap();
    let heard = prompt(&mut e, tobias);
    assert!(heard.contains("Rain never stops on the marsh."), "constant");
    assert!(
        heard.contains("Sealed letters are for the Ferryman."),
        "{heard}"
    );
    assert!(
        heard.contains("Tobias saw green lights over the reeds."),
        "his own book"
    );
    assert!(
        heard.contains("The Ferryman crosses at dawn."),
        "by recursion: {heard}"
    );
    // Mira heard none of it: only the constant entry, and never Tobias's book.
    let far = prompt(&mut e, mira);
    assert!(far.contains("Rain never stops on the marsh."));
    assert!(
        !far.contains("Sealed letters") && !far.contains("green lights"),
        "{far}"
    );
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
}

#[test]
fn a_cards_book_is_its_characters_and_bad_books_are_refused() {
    let mut e = engine();
    let card = r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Aria","description":"A bard.",
        "character_book":{"name":"Aria's songs","entries":[{"keys":["lute"],"content":"Her lute was her mother's.","enabled":true,"insertion_order":1}]}}}"#;
    let aria = e.import_card(card.as_bytes(), 2_000).unwrap().entity;
    let books: Vec<(u64, Option<EntityId>, String)> = e
        .world()
        .lorebooks()
        .map(|(id, owner, b)| (id, owner, b.name.clone()))
        .collect();
    assert_eq!(books.len(), 1);
    assert_eq!(
        (books[0].1, books[0].2.as_str()),
        (Some(aria), "Aria's songs")
    );
    let head = e.head();
    for (bad, why) in [
        (
            r#"{"entries": {"0": {"key": ["/(unclosed/"]}}}"#,
            "not a JavaScript regular expression",
        ),
        (r#"{"entries": 5}"#, "`entries`"),
        (r#"[]"#, "a JSON object"),
        (
            r#"{"entries": [{"keys": "a", "probability": 300}]}"#,
            "0 to 100",
        ),
    ] {
        let err = e.import_lorebook(bad.as_bytes(), None, 3_000).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert!(err.to_string().contains(why), "{why}: {err}");
    }
    assert_eq!(
        e.import_lorebook(b"{\"entries\": []}", Some(EntityId(999)), 3_000)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    // 100,001 entries: refused at once, never a stall.
    let many = format!("{{\"entries\": [{}]}}", vec!["{}"; 100_001].join(","));
    assert!(
        e.import_lorebook(many.as_bytes(), None, 3_000)
            .unwrap_err()
            .to_string()
            .contains("at most 100000")
    );
    assert_eq!(e.head(), head);
    // Removing the character removes its book.
    e.append(vec![Event::EntityRemoved { id: aria }]).unwrap();
    assert_eq!(e.world().lorebooks().count(), 0);
}

#[test]
fn lorebooks_go_out_as_lorebook_v3_and_world_info_and_come_back_the_same() {
    use rp_core::cards::LoreFormat;
    let mut e = engine();
    let wi = r#"{"entries": {"0": {"uid": 0, "key": ["dragon", "/wyrms?/i"], "keysecondary": ["fire"],
        "selectiveLogic": 2, "content": "Dragons fear salt.", "order": 50, "position": 4, "depth": 2,
        "caseSensitive": true, "matchWholeWords": true, "excludeRecursion": true, "scanDepth": 5,
        "group": "beasts", "groupWeight": 30, "sticky": 2, "cooldown": 1, "delay": 3,
        "probability": 60, "useProbability": true, "extra": {"kept": true}}}}"#;
    let id = e.import_lorebook(wi.as_bytes(), None, 2_000).unwrap();
    // The format it came in: byte for byte, unknown fields and all.
    assert_eq!(
        e.export_lorebook(id, LoreFormat::WorldInfo).unwrap(),
        wi.as_bytes()
    );
    // The other: every setting kept, so it reads back the same.
    let v3 = e.export_lorebook(id, LoreFormat::V3).unwrap();
    let back = e.import_lorebook(&v3, None, 2_000).unwrap();
    let again = e.export_lorebook(back, LoreFormat::WorldInfo).unwrap();
    let book = |json: &[u8]| {
        Lorebook::from_json(std::str::from_utf8(json).unwrap())
            .unwrap()
            .entries
    };
    assert_eq!(book(&again), book(wi.as_bytes()));
    // A card's book comes out as a lorebook_v3 holding it.
    let card = r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Aria",
        "character_book":{"entries":[{"keys":["lute"],"content":"Her mother's.","extensions":{"x":1}}]}}}"#;
    let book_id = e
        .import_card(card.as_bytes(), 2_000)
        .unwrap()
        .lorebook
        .unwrap();
    let out: serde_json::Value =
        serde_json::from_slice(&e.export_lorebook(book_id, LoreFormat::V3).unwrap()).unwrap();
    assert_eq!(out["spec"], "lorebook_v3");
    assert_eq!(out["data"]["entries"][0]["extensions"]["x"], 1);
    assert_eq!(
        e.export_lorebook(999, LoreFormat::V3).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        LoreFormat::from_name("yaml").unwrap_err().kind(),
        ErrorKind::Invalid
    );
}

#[test]
fn macros_are_expanded_in_the_prompt_and_the_same_world_builds_the_same_prompt() {
    let mut e = engine();
    e.apply_world_file("inn.toml", INN).unwrap();
    let tobias = e.world().resolve_entity("tobias").unwrap();
    let book = r#"{"entries": [{"keys": ["coat"], "constant": true,
        "content": "{{char}} remembers {{user}}'s {{pick:red,blue,green}} coat and <USER>'s {{random:wet,dry}} boots.{{// hidden}} Dice: {{roll:d6}}."}]}"#;
    e.import_lorebook(book.as_bytes(), None, 2_000).unwrap();
    let seen = prompt(&mut e, tobias);
    let line = seen
        .lines()
        .find(|l| l.starts_with("Tobias remembers Wren's"))
        .unwrap();
    assert!(
        line.contains(" coat and Wren's ") && !line.contains("{{") && !line.contains("hidden"),
        "{line}"
    );
    assert_eq!(
        prompt(&mut e, tobias),
        seen,
        "the same world, the same prompt"
    );
    // A host expands a greeting the same way.
    let wren = e.world().resolve_entity("wren").unwrap();
    assert_eq!(
        e.expand_macros("{{char}} nods to <USER>.{{// x}}", tobias, wren)
            .unwrap(),
        "Tobias nods to Wren."
    );
    assert_eq!(
        e.expand_macros("x", EntityId(999), wren)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn a_cards_instructions_and_examples_and_lore_positions_find_their_sections() {
    use rp_core::turn::Section;
    let mut e = engine();
    e.apply_world_file("inn.toml", INN).unwrap();
    let card = r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Aria",
        "description":"A bard.","system_prompt":"Write in the present tense. {{original}}",
        "post_history_instructions":"Keep replies short.","mes_example":"<START>\n{{char}}: Another song?"}}"#;
    let aria = e.import_card(card.as_bytes(), 2_000).unwrap().entity;
    let book = r#"{"entries": {
        "0": {"uid": 0, "key": ["x"], "constant": true, "position": 0, "content": "Before her description."},
        "1": {"uid": 1, "key": ["x"], "constant": true, "position": 4, "content": "At a depth."}}}"#;
    e.import_lorebook(book.as_bytes(), None, 2_000).unwrap();
    let now = e.world().now();
    let p = e
        .inspect_prompt(aria, None, now, &rp_core::turn::PromptOptions::default())
        .unwrap();
    let section = |text: &str| {
        p.pieces
            .iter()
            .find(|x| x.text.starts_with(text))
            .unwrap_or_else(|| panic!("{text:?} not in the prompt"))
            .section
    };
    assert_eq!(section("Write in the present tense."), Section::Identity);
    assert_eq!(section("Keep replies short."), Section::Identity);
    assert_eq!(
        section("How you speak:\n<START>\nAria: Another song?"),
        Section::Identity
    );
    assert_eq!(section("Before her description."), Section::Identity);
    assert_eq!(
        section("[At a depth."),
        Section::Dialogue,
        "among the lines"
    );
    assert!(p.pieces.iter().all(|x| !x.text.contains("{{original}}")));
}

/// A zip of `files` (name, bytes), deflated.
fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut out);
    for (name, bytes) in files {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        z.start_file(*name, options).unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap();
    out.into_inner()
}

#[test]
fn charx_cards_come_in_and_go_out_and_bombs_and_climbing_paths_are_refused() {
    let mut e = engine();
    let charx = zip_of(&[
        ("card.json", V3.as_bytes()),
        ("assets/icon/main.png", &png::placeholder()),
    ]);
    let mire = e.import_card(&charx, 2_000).unwrap();
    assert_eq!(mire.name, "Mireille");
    let out = e.export_card(mire.entity, CardFormat::Charx).unwrap();
    assert_eq!(
        read_card(&out).unwrap().json(),
        V3,
        "out as a CHARX, the V3 card as given"
    );
    assert_eq!(
        CardFormat::from_name("mire.CHARX").unwrap(),
        CardFormat::Charx
    );
    let head = e.head();
    // A zip bomb: 16 MiB of spaces in a few kilobytes.
    let bomb = zip_of(&[("card.json", &vec![b' '; 16 << 20])]);
    assert!(bomb.len() < 100_000);
    let climbing = zip_of(&[("card.json", V3.as_bytes()), ("../../etc/passwd", b"x")]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (bomb, "more than 200 to 1"),
        (climbing, "climbs out"),
        (
            zip_of(&[("cards/card.json", V3.as_bytes())]),
            "no card.json at its root",
        ),
        (
            b"PK\x03\x04 not a zip at all".to_vec(),
            "not a readable zip",
        ),
    ];
    for (bytes, why) in cases {
        let err = e.import_card(&bytes, 3_000).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert!(err.to_string().contains(why), "{why}: {err}");
    }
    assert_eq!(e.head(), head);
}

/// A PNG of `width`×1 grey pixels `pixels` (its own IDAT, split in two chunks to show they are
/// all kept), with `texts` as `tEXt` chunks.
fn png_of(pixels: &[u8], texts: &[(&str, &str)]) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut h = crc32fast::Hasher::new();
        h.update(kind);
        h.update(data);
        out.extend_from_slice(&h.finalize().to_be_bytes());
    }
    let mut out = vec![0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
    let w = (pixels.len() as u32).to_be_bytes();
    chunk(
        &mut out,
        b"IHDR",
        &[w[0], w[1], w[2], w[3], 0, 0, 0, 1, 8, 0, 0, 0, 0],
    );
    let mut row = vec![0u8];
    row.extend_from_slice(pixels);
    let n = row.len() as u16;
    let mut zlib = vec![0x78, 0x01, 0x01];
    zlib.extend_from_slice(&n.to_le_bytes());
    zlib.extend_from_slice(&(!n).to_le_bytes());
    zlib.extend_from_slice(&row);
    let (mut a, mut b) = (1u32, 0u32);
    for byte in &row {
        a = (a + u32::from(*byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let half = zlib.len() / 2;
    chunk(&mut out, b"IDAT", &zlib[..half]);
    chunk(&mut out, b"IDAT", &zlib[half..]);
    for (k, t) in texts {
        let mut data = k.as_bytes().to_vec();
        data.push(0);
        data.extend_from_slice(t.as_bytes());
        chunk(&mut out, b"tEXt", &data);
    }
    chunk(&mut out, b"IEND", &[]);
    out
}

fn idat(png_bytes: &[u8]) -> Vec<Vec<u8>> {
    png::chunk_data(png_bytes, b"IDAT")
        .unwrap()
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect()
}

fn assets_of(e: &Engine, who: EntityId) -> Vec<(String, Vec<u8>)> {
    e.card_assets(who)
        .unwrap()
        .into_iter()
        .map(|a| (a.path, a.bytes))
        .collect()
}

/// A V3 card whose icon and a voice are files of its CHARX, and whose background is a URL.
const V3_ASSETS: &str = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Odile","description":"A lamplighter.","first_mes":"Light?","alternate_greetings":[],"group_only_greetings":[],"tags":[],"extensions":{},"assets":[{"type":"background","uri":"https://example.com/bg.png","name":"main","ext":"png"},{"type":"icon","uri":"embeded://assets/icon/image/odile.png","name":"main","ext":"png"},{"type":"other","uri":"embedded://assets/other/audio/hum.ogg","name":"hum","ext":"ogg"}]}}"#;

#[test]
fn a_charxs_assets_are_kept_replayed_snapshotted_and_go_out_again() {
    let icon = png_of(&[10, 20, 30], &[]);
    let hum = b"OggS not really".to_vec();
    let charx = zip_of(&[
        ("card.json", V3_ASSETS.as_bytes()),
        ("assets/icon/image/odile.png", &icon),
        ("assets/other/audio/hum.ogg", &hum),
        ("notes/readme.txt", b"kept too"),
    ]);
    let dir = std::env::temp_dir().join(format!("rp-card-assets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let save = dir.join("w.rp");
    let options = EngineOptions {
        snapshot_every: 1,
        ..EngineOptions::default()
    };
    let mut e = Engine::create_with(&save, "Inn", 1_000, options.clone()).unwrap();
    let odile = e.import_card(&charx, 2_000).unwrap().entity;
    let want = vec![
        ("assets/icon/image/odile.png".to_owned(), icon.clone()),
        ("assets/other/audio/hum.ogg".to_owned(), hum.clone()),
        ("notes/readme.txt".to_owned(), b"kept too".to_vec()),
    ];
    assert_eq!(assets_of(&e, odile), want);
    // The icon is the card's image: a PNG export carries the card on it.
    assert_eq!(e.card_image(odile).unwrap(), Some(icon.clone()));
    let out_png = e.export_card(odile, CardFormat::Png).unwrap();
    assert_eq!(idat(&out_png), idat(&icon));
    // Replay and a snapshot (every event is snapshotted here) give the same world.
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
    let live = e.world().to_bytes();
    drop(e);
    let reopened = Engine::open_with(&save, options).unwrap();
    assert_eq!(reopened.world().to_bytes(), live);
    assert_eq!(assets_of(&reopened, odile), want);
    // Out as a CHARX and in again: the same card, the same files.
    let out = reopened.export_card(odile, CardFormat::Charx).unwrap();
    let mut other = engine();
    let again = other.import_card(&out, 2_000).unwrap().entity;
    assert_eq!(other.card(again).unwrap().unwrap().json(), V3_ASSETS);
    assert_eq!(assets_of(&other, again), want);
    // In the log as `bin`, not as an array of integers; in JSON as base64.
    let event = Event::CardAsset {
        entity: odile,
        path: "a.bin".into(),
        bytes: vec![0, 255, 7],
    };
    let json = serde_json::to_value(&event).unwrap();
    assert_eq!(json["card_asset"]["bytes"], "AP8H");
    assert_eq!(Event::from_json_value(&json).unwrap(), event);
    let record = rp_core::log::codec::encode_event(&event);
    assert!(record.windows(5).any(|w| w == [0xc4, 3, 0, 255, 7]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn charx_bounds_name_the_file_and_change_nothing() {
    let mut e = engine();
    let head = e.head();
    let card = V3_ASSETS.as_bytes();
    let stored = |files: &[(&str, &[u8])]| {
        use std::io::Write;
        let mut out = std::io::Cursor::new(Vec::new());
        let mut z = zip::ZipWriter::new(&mut out);
        for (name, bytes) in files {
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored);
            z.start_file(*name, options).unwrap();
            z.write_all(bytes).unwrap();
        }
        z.finish().unwrap();
        out.into_inner()
    };
    let big = vec![7u8; (16 << 20) + 1];
    let fourteen = vec![1u8; 14 << 20];
    let many: Vec<(String, Vec<u8>)> = (0..10_000)
        .map(|i| (format!("assets/{i}.txt"), vec![b'x']))
        .collect();
    // A file that declares 10 bytes and holds 4096 (its sizes rewritten in both headers).
    let mut liar = stored(&[("card.json", card), ("assets/liar.bin", &[b'a'; 4096])]);
    // The uncompressed size: at 22 in the local header, at 24 in the central directory's.
    for (sig, field) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
        let i = (0..liar.len() - 4)
            .rfind(|&i| &liar[i..i + 4] == sig)
            .unwrap();
        liar[i + field..i + field + 4].copy_from_slice(&10u32.to_le_bytes());
    }
    let mut many_refs: Vec<(&str, &[u8])> = vec![("card.json", card)];
    many_refs.extend(many.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            stored(&[("card.json", card), ("assets/big.bin", &big)]),
            "assets/big.bin in the CHARX is larger than 16777216 bytes",
        ),
        (
            zip_of(&[
                ("card.json", card),
                ("assets/bomb.bin", &vec![0u8; 4 << 20]),
            ]),
            "assets/bomb.bin in the CHARX inflates",
        ),
        (
            stored(&[
                ("card.json", card),
                ("a/1", &fourteen),
                ("a/2", &fourteen),
                ("a/3", &fourteen),
                ("a/4", &fourteen),
                ("a/5", &fourteen),
            ]),
            "a/5: the CHARX's files come to more than 67108864 bytes",
        ),
        (stored(&many_refs), "more than 10000 files"),
        (
            liar,
            "assets/liar.bin in the CHARX inflates past the 10 bytes it declares",
        ),
        (
            zip_of(&[("card.json", card), ("assets/../../x", b"x")]),
            "climbs out",
        ),
    ];
    for (bytes, why) in cases {
        let err = e.import_card(&bytes, 3_000).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert!(err.to_string().contains(why), "{why}: {err}");
    }
    assert_eq!(e.head(), head);
    // A host's event is held to the same bounds.
    let odile = e.import_card(card, 3_000).unwrap().entity;
    for (path, why) in [
        ("../x", "climbs out"),
        ("card.json", "the card itself"),
        ("", "names no file"),
    ] {
        let err = e
            .append(vec![Event::CardAsset {
                entity: odile,
                path: path.into(),
                bytes: vec![1],
            }])
            .unwrap_err();
        assert!(err.to_string().contains(why), "{path}: {err}");
    }
}

#[test]
fn a_png_cards_image_survives_and_the_host_can_set_one() {
    let mut e = engine();
    let v2 = STANDARD.encode(V2);
    let v3 = STANDARD.encode(V3);
    let original = png_of(
        &[1, 2, 3, 4],
        &[("chara", &v2), ("ccv3", &v3), ("Comment", "hi")],
    );
    let mire = e.import_card(&original, 2_000).unwrap().entity;
    let assets = assets_of(&e, mire);
    assert_eq!(assets.len(), 1);
    assert_eq!(assets[0].0, rp_core::cards::DEFAULT_IMAGE);
    let image = &assets[0].1;
    assert_eq!(
        png::text_chunk(image, "chara").unwrap(),
        None,
        "its card taken out"
    );
    assert_eq!(png::text_chunk(image, "ccv3").unwrap(), None);
    assert_eq!(
        png::text_chunk(image, "Comment").unwrap().as_deref(),
        Some("hi")
    );
    let out = e.export_card(mire, CardFormat::Png).unwrap();
    assert_eq!(idat(&out), idat(&original), "the same pixels");
    assert_eq!(read_card(&out).unwrap().json(), V3);
    let chara = STANDARD
        .decode(png::text_chunk(&out, "chara").unwrap().unwrap())
        .unwrap();
    assert_eq!(
        read_card(&chara).unwrap().data(),
        read_card(V3.as_bytes()).unwrap().data()
    );
    assert_eq!(
        png::text_chunk(&out, "Comment").unwrap().as_deref(),
        Some("hi")
    );

    // The host's image, on a card and on an entity of none.
    let host = png_of(&[9, 9], &[("chara", "bm90IGEgY2FyZA==")]);
    e.set_card_image(mire, &host, 3_000).unwrap();
    assert_eq!(e.world().now(), 3_000);
    let out = e.export_card(mire, CardFormat::Png).unwrap();
    assert_eq!(idat(&out), idat(&host));
    assert_eq!(
        read_card(&out).unwrap().json(),
        V3,
        "the card, not the image's chunk"
    );
    let aria = e.import_card(V2.as_bytes(), 3_000).unwrap().entity;
    assert!(e.card_assets(aria).unwrap().is_empty());
    let placeholder = e.export_card(aria, CardFormat::Png).unwrap();
    assert_eq!(idat(&placeholder), idat(&png::placeholder()));
    e.set_card_image(aria, &host, 3_000).unwrap();
    assert_eq!(
        idat(&e.export_card(aria, CardFormat::Png).unwrap()),
        idat(&host)
    );
    let mut w = engine();
    w.apply_world_file("inn.toml", INN).unwrap();
    let tobias = w.world().find_entity("tobias").unwrap().id;
    w.set_card_image(tobias, &host, 2_000).unwrap();
    let out = w.export_card(tobias, CardFormat::Png).unwrap();
    assert_eq!(idat(&out), idat(&host));
    assert_eq!(read_card(&out).unwrap().name(), "Tobias");
    assert_eq!(replay(&w).to_bytes(), w.world().to_bytes());

    // A broken image, a clock gone back, an unknown entity: refused, nothing changed.
    let head = e.head();
    let mut broken = host.clone();
    let at = broken.len() - 5;
    broken[at] ^= 1;
    for (who, bytes, now, why) in [
        (mire, broken.as_slice(), 3_000, "CRC"),
        (mire, b"GIF89a".as_slice(), 3_000, "not a PNG"),
        (mire, host.as_slice(), 10, "before the world's clock"),
        (EntityId(999), host.as_slice(), 3_000, "does not exist"),
    ] {
        let err = e.set_card_image(who, bytes, now).unwrap_err();
        assert!(err.to_string().contains(why), "{why}: {err}");
    }
    assert_eq!(e.head(), head);
}

/// A world file with a booth, Wren, and the cards of `cards` (TOML of `[[cards]]` entries).
fn world_with_cards(cards: &str) -> String {
    format!(
        r#"
[world]
name = "Inn"
[[containers]]
id = "booth"
name = "the booth"
slots = [{{ name = "bench" }}]
[[entities]]
id = "wren"
name = "Wren"
player = true
container = "booth"
{cards}
[[edges]]
from = "wren"
to = "aria"
affinity = 0.5
"#
    )
}

#[test]
fn a_world_files_cards_are_loaded_placed_patched_exported_and_refused() {
    let dir = std::env::temp_dir().join(format!("rp-world-cards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cards")).unwrap();
    let aria_png = png_of(&[5, 6, 7], &[("chara", &STANDARD.encode(V2))]);
    std::fs::write(dir.join("cards/aria.png"), &aria_png).unwrap();
    std::fs::write(
        dir.join("cards/odile.charx"),
        zip_of(&[
            ("card.json", V3_ASSETS.as_bytes()),
            ("assets/icon/image/odile.png", &png_of(&[1], &[])),
        ]),
    )
    .unwrap();
    std::fs::write(dir.join("cards/not-a-card.json"), b"[1, 2]").unwrap();
    let entry = "[[cards]]\nfile = \"cards/aria.png\"\nid = \"aria\"\ncontainer = \"booth\"\nslot = \"bench\"\n";
    let text = world_with_cards(entry);
    let path = dir.join("inn.toml");
    std::fs::write(&path, &text).unwrap();

    // Loaded from a path: the card's path is relative to the world file's directory.
    let mut e = engine();
    e.load_world_file(&path).unwrap();
    let aria = e.world().find_entity("aria").unwrap().clone();
    assert_eq!(aria.name, "Aria Vell");
    assert!(!aria.host_controlled);
    let at = aria.activity.position.clone().unwrap();
    assert_eq!(
        at.container,
        e.world().container_by_key("booth").unwrap().id
    );
    assert_eq!(at.slot.as_deref(), Some("bench"));
    assert_eq!(e.card(aria.id).unwrap().unwrap().json(), V2);
    assert_eq!(
        e.lorebooks()
            .iter()
            .filter(|b| b.owner == Some(aria.id))
            .count(),
        1
    );
    let image = e.card_image(aria.id).unwrap().unwrap();
    assert_eq!(idat(&image), idat(&aria_png));
    let wren = e.world().find_entity("wren").unwrap().id;
    assert!(e.world().edge(wren, aria.id).is_some());
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());

    // Exported as a `[[cards]]` entry, which loads again into the same character.
    let exported = e.export_world_file();
    assert!(exported.contains("[[cards]]\nfile = \"cards/aria.png\"\nid = \"aria\"\ncontainer = \"booth\"\nslot = \"bench\"\n"), "{exported}");
    assert!(!exported.contains("name = \"Aria Vell\""), "{exported}");
    let mut again = engine();
    again
        .apply_world_file(&path.display().to_string(), &exported)
        .unwrap();
    let back = again.world().find_entity("aria").unwrap();
    assert_eq!(
        (back.name.as_str(), &back.facts, &back.activity.position),
        (aria.name.as_str(), &aria.facts, &aria.activity.position)
    );
    assert_eq!(again.export_world_file(), exported);

    // A patch that leaves the entry alone leaves the character alone, even moved by play.
    let moved = Activity::default();
    e.append(vec![Event::ActivityChanged {
        entity: aria.id,
        activity: moved.clone(),
    }])
    .unwrap();
    let renamed = text.replace("name = \"the booth\"", "name = \"the corner booth\"");
    e.apply_world_file(&path.display().to_string(), &renamed)
        .unwrap();
    let still = e.world().entity(aria.id).unwrap();
    assert_eq!(still.activity, moved);
    assert_eq!(e.card_assets(aria.id).unwrap().len(), 1);
    // A changed file: the character takes the new card.
    let odile_text = renamed.replace("cards/aria.png", "cards/odile.charx");
    e.apply_world_file(&path.display().to_string(), &odile_text)
        .unwrap();
    let odile = e.world().entity(aria.id).unwrap();
    assert_eq!(odile.name, "Odile");
    assert_eq!(e.card(aria.id).unwrap().unwrap().json(), V3_ASSETS);
    assert_eq!(
        e.card_assets(aria.id).unwrap()[0].path,
        "assets/icon/image/odile.png"
    );
    // An entry dropped: its character goes.
    let dropped = world_with_cards("").replace(
        "[[edges]]\nfrom = \"wren\"\nto = \"aria\"\naffinity = 0.5\n",
        "",
    );
    e.apply_world_file(&path.display().to_string(), &dropped)
        .unwrap();
    assert!(e.world().entity(aria.id).is_none());
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());

    // Bad paths and bad cards: errors at the entry's key, nothing applied.
    let mut fresh = engine();
    let head = fresh.head();
    let name = path.display().to_string();
    let line_of = |text: &str, needle: &str| {
        text.lines()
            .collect::<Vec<_>>()
            .iter()
            .rposition(|l| l.contains(needle))
            .unwrap()
            + 1
    };
    for (entry, needle, field, why) in [
        (
            "[[cards]]\nfile = \"cards/missing.png\"\nid = \"aria\"\n",
            "missing.png",
            "cards.file",
            "cannot read the card",
        ),
        (
            "[[cards]]\nfile = \"cards/not-a-card.json\"\nid = \"aria\"\n",
            "not-a-card",
            "cards.file",
            "a JSON object",
        ),
        (
            "[[cards]]\nfile = \"cards\"\nid = \"aria\"\n",
            "file = \"cards\"",
            "cards.file",
            "not a file",
        ),
        (
            "[[cards]]\nfile = \"cards/aria.png\"\nid = \"wren\"\n",
            "id = \"wren\"",
            "cards.id",
            "used twice",
        ),
        (
            "[[cards]]\nfile = \"cards/aria.png\"\nid = \"aria\"\ncontainer = \"attic\"\n",
            "attic",
            "cards.container",
            "no container",
        ),
        (
            "[[cards]]\nfile = \"cards/aria.png\"\nid = \"aria\"\n[[cards]]\nfile = \"cards/aria.png\"\nid = \"aria2\"\n",
            "aria2",
            "cards.file",
            "already",
        ),
    ] {
        let text = world_with_cards(entry);
        let err = fresh.apply_world_file(&name, &text).unwrap_err();
        let Error::WorldFile {
            line,
            field: f,
            message,
            ..
        } = &err
        else {
            panic!("{entry}: {err:?}");
        };
        assert_eq!(f, field, "{entry}: {err}");
        assert!(message.contains(why), "{entry}: {err}");
        if needle != "aria2" {
            assert_eq!(*line, line_of(&text, needle), "{entry}: {err}");
        }
    }
    assert_eq!(fresh.head(), head);
    // Text given under a bare name reads its cards from the current directory; an absolute
    // path reads from anywhere.
    let absolute = entry.replace(
        "cards/aria.png",
        &dir.join("cards/aria.png").display().to_string(),
    );
    fresh
        .apply_world_file("inn.toml", &world_with_cards(&absolute))
        .unwrap();
    assert!(fresh.world().find_entity("aria").is_some());
    let _ = std::fs::remove_dir_all(&dir);
}
