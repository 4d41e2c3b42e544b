//! Lorebook activation (issue 21, item 8; docs/cards.md, "Lorebooks").
//!
//! A 1,000-entry World Info lorebook — a third of its entries with secondary keys (the four
//! logics in turn), one in twenty with a JavaScript regex key, inclusion groups, and contents
//! that name other entries' keys so recursion runs two levels deep — scanned with scan depth 10
//! at every turn of a 2,000-message chat (made-up words, one or two of the book's keys in most
//! messages; one entry in eleven sticky for 3 messages, one in thirteen with a cooldown of 4,
//! one in seventeen delayed until recursion). Timed per turn, as a prompt does it: the
//! character's timers checked (`rp_core::lore::timers::check`), the scan
//! (`rp_core::lore::book::scan`: keys, recursion, delays, probabilities, inclusion groups,
//! timed effects), the timers after it (`timers::after_scan`); p50 and p99 over the chat
//! (target p99 ≤ 2 ms), beside what SillyTavern users report: 30-second stalls on 2,116
//! messages with 56 active entries.
//!
//! `cargo test --benches` runs a smoke version (fewer messages).

use rp_benches::{Latency, Rng, Vocabulary, ms, report, scaled};
use rp_core::Lorebook;
use rp_core::lore::book::{BookHit, Scan, scan};
use rp_core::lore::timers;
use std::hint::black_box;
use std::time::Instant;

const ENTRIES: usize = 1_000;

/// The book as World Info JSON.
fn book() -> Lorebook {
    let mut entries = serde_json::Map::new();
    for i in 0..ENTRIES {
        let mut keys = vec![format!("lore{i}")];
        if i % 20 == 0 {
            keys.push(format!("/lores?{i}x\\b/i"));
        }
        let secondary: Vec<String> = if i % 3 == 0 {
            vec![
                format!("lore{}", (i + 7) % ENTRIES),
                format!("lore{}", (i + 13) % ENTRIES),
            ]
        } else {
            Vec::new()
        };
        // Every tenth entry names the next one, which names none: recursion two levels deep.
        let content = if i % 10 == 0 {
            format!("Entry {i} recalls lore{} and more.", i + 1)
        } else {
            format!("Entry {i}: a fact about the marsh, long enough to matter in a prompt.")
        };
        entries.insert(
            i.to_string(),
            serde_json::json!({
                "uid": i, "key": keys, "keysecondary": secondary, "selective": true,
                "selectiveLogic": (i / 3) % 4, "content": content, "order": i,
                "group": if i % 7 == 0 { format!("g{}", i % 50) } else { String::new() },
                "matchWholeWords": i % 2 == 0,
                "sticky": if i % 11 == 0 { 3 } else { 0 },
                "cooldown": if i % 13 == 0 { 4 } else { 0 },
                "delayUntilRecursion": i % 17 == 0,
            }),
        );
    }
    let json = serde_json::json!({ "entries": entries }).to_string();
    let mut book = Lorebook::from_json(&json).expect("the book");
    book.scan_depth = 10;
    book
}

fn main() {
    let book = book();
    let messages = scaled(2_000, 200);
    let vocabulary = Vocabulary::new(5_000);
    let mut rng = Rng::new(21);
    let chat: Vec<String> = (0..messages)
        .map(|_| {
            let mut text = vocabulary.text(&mut rng, 8, 30);
            for _ in 0..rng.below(3) {
                text.push_str(&format!(" lore{}", rng.below(ENTRIES)));
            }
            text
        })
        .collect();
    let books = [(1u64, &book)];
    let mut samples = Vec::with_capacity(messages);
    let mut active = 0usize;
    let mut recursive = 0usize;
    let mut sticky = 0usize;
    let mut held = Vec::new();
    for t in 1..=messages {
        let window: Vec<&str> = chat[..t].iter().map(String::as_str).collect();
        let start = Instant::now();
        let (timed, kept) = timers::check(&held, &books, t as u32);
        let how = Scan {
            seed: Some(t as u64),
            timed: Some(&timed),
        };
        let hits = black_box(scan(&books, &window, how));
        let used: Vec<&BookHit> = hits.iter().collect();
        held = timers::after_scan(kept, &used, &books, t as u32);
        samples.push(start.elapsed());
        active += hits.len();
        recursive += hits.iter().filter(|h| h.recursion).count();
        sticky += hits.iter().filter(|h| h.sticky).count();
    }
    let l = Latency::of(&samples);
    report(format!(
        "lorebook.activation entries={ENTRIES} messages={messages} scan_depth=10 p50_ms={} p99_ms={} max_ms={} target_p99_ms<=2 active_per_turn={:.1} by_recursion_per_turn={:.2} sticky_per_turn={:.2} sillytavern_reported=30000ms_stalls_on_2116_messages_with_56_active",
        ms(l.p50),
        ms(l.p99),
        ms(l.max),
        active as f64 / messages as f64,
        recursive as f64 / messages as f64,
        sticky as f64 / messages as f64,
    ));
}
