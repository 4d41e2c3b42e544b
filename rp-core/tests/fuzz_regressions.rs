//! Inputs the fuzzers once broke rp-core with (`fuzz/regressions/`), replayed on every test
//! run: each must now be a clean error, not an abort, a panic or a hang.

use rp_core::Event;
use rp_core::log::codec::{decode_snapshot, frame};
use std::path::Path;

/// The fuzz targets' input layout: `body ++ tail ++ [tail_len]`.
fn body_of(data: &[u8]) -> &[u8] {
    let Some((&n, rest)) = data.split_last() else {
        return data;
    };
    let n = usize::from(n).min(rest.len());
    &rest[..rest.len() - n]
}

#[test]
fn snapshot_bodies_that_once_broke_the_decoder_are_handled() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/decode_snapshot_body");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        panic!("{} is missing", dir.display());
    };
    let mut seen = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        // Either refused, or (a legal but extreme world, e.g. a generator about to run out)
        // every further event is answered without a panic or a hang.
        if let Ok(mut world) = decode_snapshot(&frame(body_of(&data)), "regression") {
            let ids: Vec<_> = world.entities().map(|e| e.id).collect();
            for id in ids {
                let _ = world.apply(&Event::ResponseDecided {
                    entity: id,
                    respond: true,
                    retry_ms: None,
                    fired: vec![],
                    draws: vec![0.5],
                });
                let _ = world.apply(&Event::InventoryChanged {
                    entity: id,
                    inventory: vec![],
                });
            }
            let _ = world.apply(&Event::TimeAdvanced { to: world.now() });
        }
        seen += 1;
    }
    assert!(seen >= 5, "only {seen} regression inputs");
}
