//! The memory index kept beside the save (docs/memory.md, "The index beside the save"): derived
//! data in a directory named after the save (`SAVE.index`), its last commit recording what
//! history it covers (the stored branch, the seq and a checksum of that seq's event) and, when
//! it does not hold every owner's memories, whose it holds. Recall loads it and catches it up
//! from that seq; one that is missing, damaged, of another format or of another history is
//! built again, lazily: each speaker's memories on its first recall. It is never trusted past
//! the log: deleting it loses nothing.

use super::Engine;
use super::progress::{Meter, Progress};
use crate::error::Result;
use crate::log::{Event, World, codec};
use crate::memory::{IndexOrigin, MemoryIndex, split_owners};
use crate::model::{EntityId, Seq};
use crate::store::{BranchId, Store};
use std::collections::HashSet;

/// The format of the payload; another is built again. (Format 1 had no owner field.)
const PAYLOAD: &str = "rp-memory-index/2";

/// What an index covering `branch` up to `seq` (whose event's encoding is `bytes`) records.
fn payload(branch: BranchId, seq: Seq, bytes: &[u8]) -> String {
    format!(
        "{PAYLOAD} branch={branch} seq={seq} check={:08x}",
        crc32fast::hash(bytes)
    )
}

/// The branch, seq and check a payload records, and the owners whose memories the index holds
/// (`None`: every owner's), if it is of this format.
fn parse(payload: &str) -> Option<(BranchId, Seq, u32, Option<HashSet<EntityId>>)> {
    let (payload, owners) = split_owners(payload).ok()?;
    let mut parts = payload.split(' ');
    if parts.next()? != PAYLOAD {
        return None;
    }
    let mut field = |name: &str| parts.next()?.strip_prefix(name).map(str::to_owned);
    let branch = field("branch=")?.parse().ok()?;
    let seq = field("seq=")?.parse().ok()?;
    let check = u32::from_str_radix(&field("check=")?, 16).ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some((branch, seq, check, owners))
}

/// Keeps `index` in step with `events`, just applied to `world`; false when that cannot be done
/// from the events alone (build it again).
pub(super) fn index_memory_events(
    index: &mut MemoryIndex,
    world: &World,
    events: &[Event],
) -> bool {
    let mut ok = true;
    for e in events {
        match e {
            Event::MemoryAdded { memory } => ok &= index.add(memory).is_ok(),
            Event::MemoryRemoved { id } => index.remove(*id),
            // A residue or a forgotten memory is out of recall. (A summary stays in the index
            // under its words: recall finds a faded memory by what it was about, and the prompt
            // shows what is left of it.)
            Event::DecayPassed { changes, .. } => {
                for c in changes {
                    index.remove(c.id);
                }
            }
            Event::Reflected { insights, .. } => {
                for m in insights {
                    ok &= index.add(m).is_ok();
                }
            }
            // The lines' memories of a closed scene are compressed (see `Memory::scene`): out
            // of recall.
            Event::SceneClosed { id, .. } => {
                for m in world.scene_memories(*id) {
                    if !m.recallable() {
                        index.remove(m.id);
                    }
                }
            }
            Event::EntityRemoved { .. } => ok = false,
            _ => {}
        }
    }
    ok
}

impl Engine {
    /// The memory index of the current world: the one kept, else the one beside the save
    /// loaded and caught up, else a new one that takes in each speaker on its first recall
    /// (beside the save when the save is a file).
    pub(super) fn memory_index_ready(&mut self) -> Result<&mut MemoryIndex> {
        if self.memory_index.is_none() {
            let index = match self.store.sidecar() {
                None => MemoryIndex::lazy()?,
                Some(dir) => self.load_or_build(&dir)?,
            };
            self.memory_index = Some(index);
        }
        Ok(self.memory_index.as_mut().expect("set above"))
    }

    /// The index in `dir`, caught up, when it covers a point of the current branch's history;
    /// else one built there (in memory when the directory cannot be written).
    fn load_or_build(&mut self, dir: &std::path::Path) -> Result<MemoryIndex> {
        let head = self.head();
        let now = match self.event_bytes(self.catalog.current, head)? {
            Some((branch, bytes)) => payload(branch, head, &bytes),
            None => return MemoryIndex::lazy(),
        };
        let reason = match MemoryIndex::open_in(dir) {
            Err(_) if !dir.exists() => "none was kept yet".to_owned(),
            Ok((mut index, recorded)) => match self.covered(&recorded)? {
                Some((seq, owners)) => {
                    index.set_covered(owners);
                    let events: Vec<Event> = self
                        .events(seq + 1, head)?
                        .into_iter()
                        .map(|(_, e)| e)
                        .collect();
                    let meter = Meter::start(
                        self.options.progress.as_ref(),
                        Progress::INDEX_CATCH_UP,
                        events.len() as u64,
                    );
                    let mut ok = true;
                    for (i, chunk) in events.chunks(1024).enumerate() {
                        ok = ok && index_memory_events(&mut index, &self.world, chunk);
                        meter.set((i * 1024 + chunk.len()) as u64);
                    }
                    meter.finish();
                    // Recorded before any commit: one made while catching up holds the events
                    // up to the head.
                    index.set_payload(now.clone());
                    if ok && index.refresh().is_ok() {
                        index.set_origin(IndexOrigin::Loaded {
                            caught_up: events.len() as u64,
                        });
                        return Ok(index);
                    }
                    "it could not be caught up from the log".to_owned()
                }
                None => "it covers another history, or another format".to_owned(),
            },
            Err(e) => e.to_string(),
        };
        // Built again one speaker at a time, as each is first recalled (`cover_in_index`).
        let mut index = match MemoryIndex::lazy_in(dir, &now) {
            Ok(index) => index,
            // The directory cannot be written: the index lives in memory, as without a file.
            Err(_) => MemoryIndex::lazy()?,
        };
        index.set_origin(IndexOrigin::Built { reason });
        Ok(index)
    }

    /// Makes the memory index (ready) hold `owner`'s memories, reporting `index.build` when
    /// it takes them in. Should the index beside the save fail to take them, it is built
    /// again in memory.
    pub(super) fn cover_in_index(&mut self, owner: EntityId) -> Result<()> {
        let index = self.memory_index.as_mut().expect("made ready");
        if index.covers(owner) {
            return Ok(());
        }
        let _span = tracing::info_span!("index.build", owner = owner.0).entered();
        let meter = Meter::start(
            self.options.progress.as_ref(),
            Progress::INDEX_BUILD,
            self.world.memory_count(owner),
        );
        if let Err(e) = index.cover(&self.world, owner) {
            let mut fresh = MemoryIndex::lazy()?;
            fresh.set_origin(IndexOrigin::Built {
                reason: format!("the index beside the save could not be written: {e}"),
            });
            fresh.cover(&self.world, owner)?;
            self.memory_index = Some(fresh);
        }
        meter.finish();
        Ok(())
    }

    /// The seq up to which an index recording `payload` covers the current branch: its seq,
    /// when the branch's history holds that seq in the stored branch it names and the event
    /// there is the one it checked; `None` otherwise.
    fn covered(&self, recorded: &str) -> Result<Option<(Seq, Option<HashSet<EntityId>>)>> {
        let Some((branch, seq, check, owners)) = parse(recorded) else {
            return Ok(None);
        };
        if seq == 0 || seq > self.head() {
            return Ok(None);
        }
        Ok(match self.event_bytes(self.catalog.current, seq)? {
            Some((b, bytes)) if b == branch && crc32fast::hash(&bytes) == check => {
                Some((seq, owners))
            }
            _ => None,
        })
    }

    /// The stored branch holding `seq` of `branch`'s history, and the event's bytes there.
    fn event_bytes(&self, branch: BranchId, seq: Seq) -> Result<Option<(BranchId, Vec<u8>)>> {
        let Some(stretch) = self
            .catalog
            .segments(branch, seq)?
            .into_iter()
            .find(|s| s.first <= seq && seq <= s.last)
        else {
            return Ok(None);
        };
        let mut bytes = None;
        self.store
            .read_events(stretch.branch, seq, seq, &mut |_, b| {
                bytes = Some(b.to_vec());
                Ok(())
            })?;
        Ok(bytes.map(|b| (stretch.branch, b)))
    }

    /// What an index covering the head after `last` (the event just appended) records.
    pub(super) fn index_payload_after(&self, last: &Event) -> String {
        payload(
            self.catalog.current,
            self.head(),
            &codec::encode_event(last),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::memory::{COMMIT_EVERY, IndexOrigin, RecallOptions, faults};
    use crate::model::{EntityId, EntityState, FactSheet, Memory, MemoryId, MemoryKind};
    use crate::{Engine, Event, WitnessSet};
    use std::path::Path;

    const OWNERS: u64 = 3;

    /// `n` memories over the owners, of 3–10 words drawn from a small vocabulary (so queries
    /// match many, with scores that rarely tie).
    fn memories(e: &Engine, n: usize) -> Vec<Event> {
        let words: Vec<String> = (0..40).map(|w| format!("w{w}")).collect();
        let first = e.world().next_id();
        let mut seed = first;
        let mut draw = |below: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % below
        };
        (0..n as u64)
            .map(|i| {
                let owner = EntityId(2 + i % OWNERS);
                let len = 3 + draw(8);
                let text = (0..len)
                    .map(|_| words[draw(40) as usize].as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                Event::MemoryAdded {
                    memory: Memory::new(
                        MemoryId(first + i),
                        owner,
                        WitnessSet::from_iter([owner]),
                        text,
                        MemoryKind::Utterance,
                        draw(1000) as f64 / 1000.0,
                        1_000 + draw(3_000) as i64,
                    ),
                }
            })
            .collect()
    }

    /// A save of three owners and `n` memories, closed.
    fn save(path: &Path, n: usize) {
        let mut e = Engine::create(path, "Inn", 1_000).unwrap();
        let owners = (2..2 + OWNERS)
            .map(|id| Event::EntityCreated {
                id: EntityId(id),
                key: None,
                name: format!("owner {id}"),
                aliases: vec![],
                facts: FactSheet::default(),
                host_controlled: false,
                state: EntityState::default(),
            })
            .collect();
        e.append(owners).unwrap();
        let batch = memories(&e, n);
        e.append(batch).unwrap();
    }

    /// What each owner recalls for a few queries: ids and scores.
    fn recalls(e: &mut Engine) -> Vec<Vec<(MemoryId, String)>> {
        let mut out = Vec::new();
        for owner in 2..2 + OWNERS {
            for q in ["w1 w7", "w3 w12 w30", "w39"] {
                let got = e
                    .recall(EntityId(owner), q, 5_000, &RecallOptions::default())
                    .unwrap();
                out.push(
                    got.into_iter()
                        .map(|r| (r.id, format!("{:.4}", r.score)))
                        .collect(),
                );
            }
        }
        out
    }

    /// The recalls of the save's world indexed from scratch, in memory.
    fn fresh(path: &Path) -> Vec<Vec<(MemoryId, String)>> {
        let e = Engine::open(path).unwrap();
        let events = e.events(2, e.head()).unwrap();
        drop(e);
        let mut copy = Engine::in_memory("copy", 1_000).unwrap();
        copy.append(events.into_iter().map(|(_, ev)| ev).collect())
            .unwrap();
        recalls(&mut copy)
    }

    /// Opens a copy of the save at `path` with the index crashing after `steps` writing steps,
    /// recalls (the index is built beside the save), adds enough memories for the index to
    /// commit, recalls again; then, as after a restart, opens it again. Returns the writing
    /// steps taken and whether the crash came.
    fn crash_run(dir: &Path, path: &Path, steps: u64) -> (u64, bool) {
        let run = dir.join(format!("run-{steps}.rp"));
        std::fs::copy(path, &run).unwrap();
        let crash = faults::crash_after(steps);
        let mut e = Engine::open(&run).unwrap();
        assert_eq!(recalls(&mut e), fresh(path), "crash after {steps} steps");
        let more = memories(&e, COMMIT_EVERY + 100);
        e.append(more).unwrap();
        let before = recalls(&mut e);
        drop(e);
        let (taken, came) = (crash.taken(), crash.came());
        drop(crash);
        // The restart: the save opens, and recalls what it recalled before and what a fresh
        // build of its world recalls, whatever the crash left beside it.
        let mut e = Engine::open(&run).unwrap();
        assert_eq!(recalls(&mut e), before, "restart after {steps} steps");
        assert!(matches!(
            e.memory_index_origin(),
            Some(IndexOrigin::Loaded { .. } | IndexOrigin::Built { .. })
        ));
        drop(e);
        assert_eq!(fresh(&run), before);
        std::fs::remove_file(&run).unwrap();
        let _ = std::fs::remove_dir_all(dir.join(format!("run-{steps}.rp.index")));
        (taken, came)
    }

    #[test]
    fn a_crash_while_the_index_is_written_leaves_a_save_that_opens_and_recalls_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inn.rp");
        save(&path, 300);
        // Every writing step the index takes, without a crash: the build, and the commit once
        // enough new memories gathered.
        let (total, came) = crash_run(dir.path(), &path, u64::MAX / 2);
        assert!(!came && total > 10, "{total} writing steps");
        // A crash at each of the first steps, then at steps spread over the rest.
        let mut steps: Vec<u64> = (0..16).collect();
        steps.extend((16..total).step_by((total as usize / 16).max(1)));
        for s in steps {
            let (_, came) = crash_run(dir.path(), &path, s);
            assert!(came, "a crash after {s} of {total} steps");
        }
    }
}
