//! [`check_save`]: does the save file hold the story the session played? It reopens the save
//! (the latest snapshot plus a replay of the tail, as any later session would) and replays the
//! current branch's whole log from an empty world, and compares both with the live world,
//! byte for byte (`World::to_bytes`, the deterministic form: equal bytes are equal worlds).

use rp_core::{Engine, Seq, World};
use std::path::Path;

/// What reopening and replaying a save gave, against the live world.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveCheck {
    /// The branch the save reopened on.
    pub branch: String,
    /// Its head seq.
    pub head: Seq,
    /// The size of the live world's bytes.
    pub live_bytes: usize,
    /// The reopened world is the live world, byte for byte.
    pub reopened_matches: bool,
    /// Events replayed from an empty world (the branch's whole log).
    pub replayed_events: usize,
    /// The replayed world is the live world, byte for byte.
    pub replayed_matches: bool,
}

impl SaveCheck {
    /// Both the reopened and the replayed world are the live world.
    pub fn ok(&self) -> bool {
        self.reopened_matches && self.replayed_matches
    }

    /// One line on reopening: "identical (branch main, head seq 120, 51234 bytes)" or
    /// "DIFFERENT ...".
    pub fn reopened_summary(&self) -> String {
        format!(
            "{} (branch {}, head seq {}, {} bytes)",
            verdict(self.reopened_matches),
            self.branch,
            self.head,
            self.live_bytes
        )
    }

    /// One line on the replay: "identical (120 events from an empty world)" or "DIFFERENT ...".
    pub fn replayed_summary(&self) -> String {
        format!(
            "{} ({} events from an empty world)",
            verdict(self.replayed_matches),
            self.replayed_events
        )
    }
}

fn verdict(same: bool) -> &'static str {
    if same {
        "identical to the live world"
    } else {
        "DIFFERENT from the live world"
    }
}

/// Reopens the save at `path` and replays its current branch from an empty world, comparing
/// both with `live` (the world of the session that wrote it). The save must not be open in
/// this process any more (a save is opened by one engine at a time): drop the session's
/// engine first, keeping a clone of its world.
///
/// An `Err` is a save that could not be reopened or an event the replay refused; a world that
/// differs is an `Ok` with `false` in it.
pub fn check_save(path: &Path, live: &World) -> rp_core::Result<SaveCheck> {
    let live_bytes = live.to_bytes();
    let engine = Engine::open(path)?;
    let reopened_matches = engine.world().to_bytes() == live_bytes;
    let events = engine.events(1, engine.head())?;
    let mut replayed = World::new();
    for (_, event) in &events {
        replayed.apply(event)?;
    }
    Ok(SaveCheck {
        branch: engine.current_branch().to_string(),
        head: engine.head(),
        live_bytes: live_bytes.len(),
        reopened_matches,
        replayed_events: events.len(),
        replayed_matches: replayed.to_bytes() == live_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rp_core::{EngineOptions, Event};

    fn tavern(dir: &Path) -> (std::path::PathBuf, Engine) {
        let save = dir.join("t.rp");
        let world_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tavern.toml");
        let engine =
            Engine::create_from_world_file(&save, &world_file, 0, EngineOptions::default())
                .unwrap();
        (save, engine)
    }

    #[test]
    fn a_save_reopens_and_replays_to_the_live_world() {
        let dir = tempfile::tempdir().unwrap();
        let (save, mut engine) = tavern(dir.path());
        engine
            .append(vec![Event::TimeAdvanced { to: 60_000 }])
            .unwrap();
        let live = engine.world().clone();
        let head = engine.head();
        drop(engine);
        let check = check_save(&save, &live).unwrap();
        assert!(check.ok(), "{check:?}");
        assert_eq!((check.head, check.branch.as_str()), (head, "main"));
        assert_eq!(check.replayed_events as u64, head);
        assert!(check.reopened_summary().starts_with("identical"));
    }

    #[test]
    fn a_world_that_is_not_the_save_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let (save, mut engine) = tavern(dir.path());
        let before = engine.world().clone();
        engine
            .append(vec![Event::TimeAdvanced { to: 60_000 }])
            .unwrap();
        drop(engine);
        let check = check_save(&save, &before).unwrap();
        assert!(!check.reopened_matches && !check.replayed_matches && !check.ok());
        assert!(check.replayed_summary().starts_with("DIFFERENT"));
    }

    #[test]
    fn a_missing_save_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_save(&dir.path().join("none.rp"), &World::new()).is_err());
    }
}
