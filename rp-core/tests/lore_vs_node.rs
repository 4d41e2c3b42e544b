//! Differential test of lorebook activation (docs/cards.md, "Lorebooks") against a
//! transcription of SillyTavern's World Info matching in JavaScript (`tests/js/worldinfo.js`,
//! run by node): random books (plain keys, `/regex/flags` keys, secondary keys under the four
//! logics, case and whole-word options, constant, disabled, scan depths, recursion with its
//! flags and delay levels, delays in messages, sticky and cooldown entries) over random chats;
//! the activated entries, in order, with whether recursion brought them, must be the same.
//!
//! Settings: `RP_LORE_CASES` (default 2,000), `RP_SKIP_NODE=1` to skip (node v18 or later on
//! PATH otherwise).

use rp_core::Lorebook;
use rp_core::lore::book::{Scan, Timed, scan};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const WORDS: &[&str] = &[
    "dragon",
    "Dragon",
    "salt",
    "lute",
    "ferry",
    "ferryman",
    "the ferryman",
    "ash",
    "cashier",
    "Élan",
    "élan",
    "straße",
    "İsland",
    "fire",
    "storm",
    "marsh",
    "key_1",
    "a-b",
    "x",
    "lights",
];
const REGEXES: &[&str] = &[
    "/drag(on)?s?/i",
    "/^salt/m",
    "/lute\\b/",
    "/f[ei]rr?y/i",
    "/\\bash\\b/",
    "/é/iu",
    "/(?:storm|marsh)s?$/",
];

fn key(rng: &mut Rng) -> String {
    if rng.chance(15) {
        REGEXES[rng.below(REGEXES.len())].to_owned()
    } else {
        WORDS[rng.below(WORDS.len())].to_owned()
    }
}

fn case(rng: &mut Rng) -> (Value, Vec<String>) {
    let n = 1 + rng.below(8);
    let entries: Vec<Value> = (0..n)
        .map(|_| {
            let keys: Vec<String> = (0..1 + rng.below(3)).map(|_| key(rng)).collect();
            let secondary: Vec<String> = if rng.chance(40) {
                (0..1 + rng.below(3)).map(|_| key(rng)).collect()
            } else {
                Vec::new()
            };
            let content: Vec<&str> = (0..rng.below(4))
                .map(|_| WORDS[rng.below(WORDS.len())])
                .collect();
            json!({
                "keys": keys, "secondary": secondary, "selective": rng.chance(80),
                "logic": rng.below(4), "content": content.join(" "),
                "constant": rng.chance(5), "disabled": rng.chance(5),
                "caseSensitive": rng.chance(20), "matchWholeWords": rng.chance(40),
                "excludeRecursion": rng.chance(15), "preventRecursion": rng.chance(15),
                "depth": if rng.chance(20) { json!(1 + rng.below(4)) } else { Value::Null },
                "delayUntilRecursion": match rng.below(10) {
                    0 => json!(true),
                    1 => json!(1 + rng.below(3)),
                    _ => json!(false),
                },
                "delay": if rng.chance(10) { 1 + rng.below(5) } else { 0 },
            })
        })
        .collect();
    let messages: Vec<String> = (0..rng.below(6))
        .map(|_| {
            (0..1 + rng.below(6))
                .map(|_| WORDS[rng.below(WORDS.len())])
                .collect::<Vec<_>>()
                .join(if rng.chance(50) { " " } else { ", " })
        })
        .collect();
    let timed = |rng: &mut Rng| -> Vec<usize> { (0..n).filter(|_| rng.chance(10)).collect() };
    let (sticky, cooldown) = (timed(rng), timed(rng));
    let c = json!({
        "entries": entries, "depth": 1 + rng.below(4), "recursive": rng.chance(70),
        "messages": messages, "sticky": sticky, "cooldown": cooldown,
    });
    (c, messages)
}

/// The case as a World Info book this engine reads.
fn book(c: &Value) -> Lorebook {
    let entries: serde_json::Map<String, Value> = c["entries"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (i.to_string(), json!({
                "uid": i, "key": e["keys"], "keysecondary": e["secondary"],
                "selective": e["selective"], "selectiveLogic": e["logic"], "content": e["content"],
                "constant": e["constant"], "disable": e["disabled"],
                "caseSensitive": e["caseSensitive"], "matchWholeWords": e["matchWholeWords"],
                "excludeRecursion": e["excludeRecursion"], "preventRecursion": e["preventRecursion"],
                "scanDepth": e["depth"], "delayUntilRecursion": e["delayUntilRecursion"],
                "delay": e["delay"],
            }))
        })
        .collect();
    let mut b = Lorebook::from_json(&json!({ "entries": entries }).to_string()).unwrap();
    b.scan_depth = c["depth"].as_u64().unwrap() as u32;
    b.recursive_scanning = c["recursive"].as_bool().unwrap();
    b
}

#[test]
fn activation_agrees_with_world_info_in_javascript() {
    if std::env::var("RP_SKIP_NODE").is_ok_and(|v| v == "1") {
        eprintln!("RP_SKIP_NODE=1: skipping the comparison with node");
        return;
    }
    let cases: usize = std::env::var("RP_LORE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2_000);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/js/worldinfo.js");
    let mut node = Command::new("node")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("this test needs node (v18 or later) on PATH; set RP_SKIP_NODE=1 to skip it");
    let mut stdin = node.stdin.take().unwrap();
    let mut stdout = BufReader::new(node.stdout.take().unwrap());
    let mut rng = Rng(20_261_127);
    let generated: Vec<(Value, Vec<String>)> = (0..cases).map(|_| case(&mut rng)).collect();
    let writer = std::thread::spawn({
        let lines: Vec<String> = generated.iter().map(|(c, _)| c.to_string()).collect();
        move || {
            for l in lines {
                writeln!(stdin, "{l}").unwrap();
            }
        }
    });
    for (n, (c, messages)) in generated.iter().enumerate() {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let js: Vec<(usize, bool)> = serde_json::from_str(&line).unwrap();
        let b = book(c);
        let said: Vec<&str> = messages.iter().map(String::as_str).collect();
        let set = |key: &str| -> std::collections::HashSet<(u64, usize)> {
            c[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| (1, i.as_u64().unwrap() as usize))
                .collect()
        };
        let timed = Timed {
            sticky: set("sticky"),
            cooldown: set("cooldown"),
        };
        let how = Scan {
            seed: None,
            timed: Some(&timed),
        };
        let rp: Vec<(usize, bool)> = scan(&[(1, &b)], &said, how)
            .iter()
            .map(|h| (h.entry, h.recursion))
            .collect();
        assert_eq!(rp, js, "case {n}: {c}");
    }
    writer.join().unwrap();
    let _ = node.wait();
}
