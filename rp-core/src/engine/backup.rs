//! Backups (docs/history.md#backups): a copy of an open save in a new save file, whole
//! ([`Engine::backup`]) or one branch of it ([`Engine::export_branch`]), made while the engine
//! stays open.
//!
//! A copy is written under a temporary name beside its target and takes the target's name
//! only once it is whole and on stable storage, without ever replacing a file: a copy that
//! fails leaves nothing behind, and the engine is only read.

use super::catalog::{BranchRecord, Catalog, SAVE_MAGIC};
use super::{Engine, load_world};
use crate::error::{Error, Result};
use crate::log::codec;
use crate::model::Seq;
use crate::store::{BranchId, Commit, RedbStore, Store};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A copy is written in commits of about this many bytes, so that copying a long history
/// never holds all of it in memory.
const CHUNK_BYTES: usize = 4 << 20;

impl Engine {
    /// Writes a backup of the save to a new save file at `path`: every branch with its
    /// history and head, which branch is current, and the snapshots, exactly as the engine
    /// has committed them when called (commits made with [`super::Durability::Eventual`]
    /// included). [`Engine::open`] on it gives the same world, branches and heads. The
    /// engine stays open, and is only read: nothing about it changes.
    ///
    /// Works for an engine in memory too (the backup is a save file like any other).
    ///
    /// The backup is written under a temporary name in `path`'s directory and takes its name
    /// once it is complete and on stable storage; it never replaces a file. Refused, with
    /// nothing written, when `path` exists, the save's own file included
    /// ([`crate::ErrorKind::Conflict`]), names no file ([`crate::ErrorKind::Invalid`]), or
    /// cannot be written (a missing directory, no permission, a full disk:
    /// [`crate::ErrorKind::Storage`]). A backup that fails leaves no file behind.
    pub fn backup(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.resync_if_stale()?;
        let target = Target::new(path.as_ref(), self.store.name())?;
        let copy = || {
            let mut out = Copier::new(target.create()?);
            for branch in &self.catalog.branches {
                let head = self.heads.get(&branch.id).copied().unwrap_or(0);
                self.store
                    .read_events(branch.id, 1, head, &mut |seq, bytes| {
                        out.event(branch.id, seq, bytes)
                    })?;
                for seq in self.store.snapshot_seqs(branch.id)? {
                    if seq > head {
                        continue;
                    }
                    if let Some((seq, bytes)) = self.store.latest_snapshot(branch.id, seq, seq)? {
                        out.snapshot(branch.id, seq, bytes)?;
                    }
                }
            }
            out.finish(codec::encode(&self.catalog))
        };
        let store = copy().map_err(|e| target.renamed(e))?;
        target.finish(store)
    }

    /// Writes the history of branch `name` to a new save file at `path`: its events from the
    /// world's creation to its head (those it shares with the branches it was forked from
    /// included), as the new save's only branch, which keeps the name `name`, with a snapshot
    /// of its head so that the save opens without replaying. [`Engine::open`] on it gives the
    /// branch's world. The engine stays open, is only read, and its current branch does not
    /// change.
    ///
    /// Refused with [`crate::ErrorKind::NotFound`] when no branch is named `name`; otherwise
    /// as [`Engine::backup`] refuses (the same kinds, nothing written, no file left behind).
    pub fn export_branch(&mut self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        self.resync_if_stale()?;
        let id = self.catalog.by_name(name)?.id;
        let target = Target::new(path.as_ref(), self.store.name())?;
        let head = self.heads.get(&id).copied().unwrap_or(0);
        let snapshot = if id == self.catalog.current {
            codec::encode_snapshot(&self.world)
        } else {
            codec::encode_snapshot(&load_world(&self.store, &self.catalog, id, head)?)
        };
        const ONLY: BranchId = 1;
        let catalog = Catalog {
            magic: SAVE_MAGIC.into(),
            current: ONLY,
            next_branch: ONLY + 1,
            branches: vec![BranchRecord {
                id: ONLY,
                name: Some(name.to_owned()),
                parent: None,
            }],
        };
        let copy = || {
            let mut out = Copier::new(target.create()?);
            let mut expect = 1;
            for seg in self.catalog.segments(id, head)? {
                self.store
                    .read_events(seg.branch, seg.first, seg.last, &mut |seq, bytes| {
                        if seq != expect {
                            return Err(missing(self.store.name(), seg.branch, expect));
                        }
                        expect += 1;
                        out.event(ONLY, seq, bytes)
                    })?;
            }
            if expect != head + 1 {
                return Err(missing(self.store.name(), id, expect));
            }
            // A world too large for a snapshot opens by replaying its log.
            if codec::snapshot_fits(&snapshot) {
                out.snapshot(ONLY, head, snapshot)?;
            }
            out.finish(codec::encode(&catalog))
        };
        let store = copy().map_err(|e| target.renamed(e))?;
        target.finish(store)
    }
}

fn missing(file: &str, branch: BranchId, seq: Seq) -> Error {
    Error::Corrupt {
        file: file.to_owned(),
        location: format!("seq {seq} of branch {branch}"),
        message: "events are missing".into(),
    }
}

/// Writes records to the new save in commits of about [`CHUNK_BYTES`].
struct Copier {
    store: RedbStore,
    pending: Commit,
    bytes: usize,
}

impl Copier {
    fn new(store: RedbStore) -> Copier {
        Copier {
            store,
            pending: Commit::default(),
            bytes: 0,
        }
    }

    fn event(&mut self, branch: BranchId, seq: Seq, bytes: &[u8]) -> Result<()> {
        self.bytes += bytes.len();
        self.pending.events.push((branch, seq, bytes.to_vec()));
        self.spill()
    }

    fn snapshot(&mut self, branch: BranchId, seq: Seq, bytes: Vec<u8>) -> Result<()> {
        self.bytes += bytes.len();
        self.pending.snapshots.push((branch, seq, bytes));
        self.spill()
    }

    /// Commits what is pending once it is large (not durably: the last commit is).
    fn spill(&mut self) -> Result<()> {
        if self.bytes < CHUNK_BYTES {
            return Ok(());
        }
        self.bytes = 0;
        self.store.commit(std::mem::take(&mut self.pending))
    }

    /// Commits the rest with the metadata, durably, and hands the store back.
    fn finish(mut self, meta: Vec<u8>) -> Result<RedbStore> {
        let mut last = std::mem::take(&mut self.pending);
        last.meta = Some(meta);
        last.durable = true;
        self.store.commit(last)?;
        Ok(self.store)
    }
}

/// Where a copy goes: its real path, and the temporary one it is written under (removed on
/// drop unless the copy took its real name).
struct Target {
    path: PathBuf,
    tmp: PathBuf,
    done: bool,
}

impl Target {
    /// Checks that `path` can take a new save (it names a file that does not exist and is not
    /// the save `own`), and picks the temporary name beside it.
    fn new(path: &Path, own: &str) -> Result<Target> {
        let name = path.display().to_string();
        let file_name = path
            .file_name()
            .ok_or_else(|| Error::invalid("path", format!("{name:?} names no file")))?;
        let own_path = Path::new(own);
        if own != ":memory:" && (path == own_path || same_file(path, own_path)) {
            return Err(Error::conflict(format!(
                "{name} is the save's own file; a backup never overwrites a file"
            )));
        }
        if path.symlink_metadata().is_ok() {
            return Err(Error::conflict(format!(
                "{name} already exists; a backup never overwrites a file"
            )));
        }
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(file_name);
        tmp_name.push(format!(
            ".{}-{}.backup",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        Ok(Target {
            path: path.to_owned(),
            tmp: path.with_file_name(tmp_name),
            done: false,
        })
    }

    /// A new, empty save under the temporary name.
    fn create(&self) -> Result<RedbStore> {
        RedbStore::create(&self.tmp).map_err(|e| self.renamed(e))
    }

    /// Closes the finished copy and gives it its real name (refusing to replace a file that
    /// appeared there meanwhile), durably.
    fn finish(mut self, store: RedbStore) -> Result<()> {
        drop(store);
        let name = self.path.display().to_string();
        let linked = match std::fs::hard_link(&self.tmp, &self.path) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists || self.path.exists() => {
                return Err(Error::conflict(format!(
                    "{name} already exists; a backup never overwrites a file"
                )));
            }
            // A file system without hard links: a rename (which the check above makes safe
            // but for a file that appears in between).
            Err(_) => {
                std::fs::rename(&self.tmp, &self.path).map_err(|e| storage(&name, e))?;
                false
            }
        };
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Err(e) = std::fs::File::open(dir).and_then(|d| d.sync_all()) {
            if linked {
                let _ = std::fs::remove_file(&self.path);
            } else {
                let _ = std::fs::rename(&self.path, &self.tmp);
            }
            return Err(storage(
                &name,
                format!("the directory {} could not be synced: {e}", dir.display()),
            ));
        }
        if linked {
            let _ = std::fs::remove_file(&self.tmp);
        }
        self.done = true;
        Ok(())
    }

    /// An error about the temporary file told about the real one (errors about the save
    /// being copied stay as they are).
    fn renamed(&self, e: Error) -> Error {
        let tmp = self.tmp.display().to_string();
        let real = self.path.display().to_string();
        match e {
            Error::Storage { file, message } if file == tmp => storage(&real, message),
            Error::Corrupt {
                file,
                location,
                message,
            } if file == tmp => Error::Corrupt {
                file: real,
                location,
                message,
            },
            other => other,
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn storage(file: &str, e: impl std::fmt::Display) -> Error {
    Error::Storage {
        file: file.to_owned(),
        message: e.to_string(),
    }
}

/// Whether `a` and `b` name the same existing file (through links or `..`).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::{Engine, ErrorKind};

    #[test]
    fn a_backup_that_fails_midway_leaves_no_file_and_the_engine_as_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut engine = Engine::in_memory("Inn", 0).expect("engine");
        engine
            .append(vec![crate::Event::TimeAdvanced { to: 5 }])
            .expect("append");
        let world = engine.world().to_bytes();
        let path = dir.path().join("backup.rp");
        // The copy is written, then naming it fails (its directory cannot be synced).
        crate::store::redb::tests::FAIL_DIR_SYNC.with(|f| f.set(true));
        let backup = engine.backup(&path);
        let export = engine.export_branch("main", &path);
        crate::store::redb::tests::FAIL_DIR_SYNC.with(|f| f.set(false));
        for result in [backup, export] {
            let e = result.expect_err("the directory sync failed");
            assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
            assert!(e.to_string().contains("backup.rp"), "{e}");
        }
        let left = std::fs::read_dir(dir.path()).expect("read_dir").count();
        assert_eq!(left, 0, "a failed backup leaves nothing behind");
        assert_eq!(engine.world().to_bytes(), world);

        // Without the fault, the same path takes the backup.
        engine.backup(&path).expect("backup");
        let copy = Engine::open(&path).expect("open");
        assert_eq!(copy.world().to_bytes(), world);
    }
}
