//! How deep each corpus reaches: for every input, whether it decodes (or, for world files,
//! loads), so a campaign that never gets past the checksum or the parser shows up as such.
//!
//! Run with `cargo run --manifest-path fuzz/Cargo.toml --example corpus_stats` after a run.

use rp_core::log::codec::{decode_event, decode_snapshot};
use rp_core::worldfile;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for target in [
        "decode_event",
        "decode_event_body",
        "decode_snapshot",
        "decode_snapshot_body",
        "world_file",
    ] {
        let Ok(dir) = std::fs::read_dir(root.join(target)) else {
            println!("{target}: no corpus");
            continue;
        };
        let (mut files, mut bytes, mut ok) = (0usize, 0usize, 0usize);
        for f in dir {
            let data = std::fs::read(f.expect("dir entry").path()).expect("read input");
            files += 1;
            bytes += data.len();
            let good = match target {
                "decode_event" => decode_event(&data, "corpus").is_ok(),
                "decode_event_body" => decode_event(&rp_fuzz::wrap(&data), "corpus").is_ok(),
                "decode_snapshot" => {
                    let (record, _) = rp_fuzz::split_tail(&data);
                    decode_snapshot(record, "corpus").is_ok()
                }
                "decode_snapshot_body" => {
                    let (body, _) = rp_fuzz::split_tail(&data);
                    decode_snapshot(&rp_fuzz::wrap(body), "corpus").is_ok()
                }
                _ => std::str::from_utf8(&data).is_ok_and(|text| {
                    worldfile::creation_events("corpus.toml", text, 0, Default::default()).is_ok()
                }),
            };
            ok += usize::from(good);
        }
        let what = if target == "world_file" {
            "load"
        } else {
            "decode"
        };
        println!("{target}: {files} files, {bytes} bytes; {ok} {what} successfully");
    }
}
