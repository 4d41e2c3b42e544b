//! The save game: one redb file holding the log, the snapshots and the metadata.

use super::{BranchId, Commit, Store};
use crate::error::{Error, Result};
use crate::model::Seq;
use redb::{Database, Durability, ReadableDatabase, StorageBackend, TableDefinition, TableError};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const EVENTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_events");
const SNAPSHOTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_snapshots");
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("rp_meta");
const META_KEY: &str = "meta";
const REDB_MAGIC: [u8; 9] = [b'r', b'e', b'd', b'b', 0x1A, 0x0A, 0xA9, 0x0D, 0x0A];

/// Makes a fresh storage backend for the same underlying bytes (used to reopen after an I/O
/// failure, and by tests that inject faults).
pub type BackendFactory = Arc<dyn Fn() -> std::io::Result<Box<dyn StorageBackend>> + Send + Sync>;

enum Source {
    Path(PathBuf),
    Backend(BackendFactory),
}

/// A [`Store`] in one redb file: the save game.
///
/// After an I/O error (a full disk, a failing sync) the database handle is dropped and the
/// file reopened on the next call, so a transient failure costs one call and a persistent one
/// keeps failing cleanly; the file itself stays openable either way (redb's commits are
/// atomic).
pub struct RedbStore {
    name: String,
    source: Source,
    db: Option<Database>,
}

impl fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedbStore")
            .field("name", &self.name)
            .finish()
    }
}

impl RedbStore {
    /// Creates a new save file. Fails if `path` already exists.
    pub fn create(path: impl AsRef<Path>) -> Result<RedbStore> {
        let path = path.as_ref();
        let name = path.display().to_string();
        if path.exists() {
            return Err(Error::conflict(format!("{name} already exists")));
        }
        let db = Database::builder()
            .create(path)
            .map_err(|e| storage(&name, e))?;
        Ok(RedbStore {
            name,
            source: Source::Path(path.to_owned()),
            db: Some(db),
        })
    }

    /// Opens an existing save file. A file that is not a redb database is rejected before
    /// anything is written to it.
    pub fn open(path: impl AsRef<Path>) -> Result<RedbStore> {
        let path = path.as_ref();
        let name = path.display().to_string();
        check_magic(path, &name)?;
        let db = open_db(path, &name)?;
        Ok(RedbStore {
            name,
            source: Source::Path(path.to_owned()),
            db: Some(db),
        })
    }

    /// A store over any redb storage backend (in-memory images, fault injection). `factory`
    /// is called now and again whenever the store must reopen after an I/O error.
    pub fn with_backend(name: impl Into<String>, factory: BackendFactory) -> Result<RedbStore> {
        let name = name.into();
        let mut store = RedbStore {
            name,
            source: Source::Backend(factory),
            db: None,
        };
        store.db()?;
        Ok(store)
    }

    fn db(&mut self) -> Result<&Database> {
        if self.db.is_none() {
            let db = match &self.source {
                Source::Path(p) => open_db(p, &self.name)?,
                Source::Backend(f) => {
                    let backend = f().map_err(|e| storage(&self.name, e))?;
                    Database::builder()
                        .create_with_backend(BoxedBackend(backend))
                        .map_err(|e| open_error(&self.name, e))?
                }
            };
            self.db = Some(db);
        }
        Ok(self.db.as_ref().expect("set above"))
    }

    fn read_db(&self) -> Result<&Database> {
        self.db.as_ref().ok_or_else(|| Error::Storage {
            file: self.name.clone(),
            message:
                "the save file is closed after an earlier I/O error; the next write reopens it"
                    .into(),
        })
    }

    fn try_commit(&mut self, commit: Commit) -> Result<()> {
        let name = self.name.clone();
        let err = |e: &dyn fmt::Display| storage(&name, e);
        let db = self.db()?;
        let mut txn = db.begin_write().map_err(|e| err(&e))?;
        txn.set_durability(if commit.durable {
            Durability::Immediate
        } else {
            Durability::None
        })
        .map_err(|e| err(&e))?;
        {
            let mut events = txn.open_table(EVENTS).map_err(|e| err(&e))?;
            let mut snapshots = txn.open_table(SNAPSHOTS).map_err(|e| err(&e))?;
            for (branch, after) in &commit.purge {
                let r = (*branch, after.saturating_add(1))..=(*branch, Seq::MAX);
                if *after < Seq::MAX {
                    events
                        .retain_in(r.clone(), |_, _| false)
                        .map_err(|e| err(&e))?;
                    snapshots.retain_in(r, |_, _| false).map_err(|e| err(&e))?;
                }
            }
            for (b, s) in &commit.drop_snapshots {
                snapshots.remove((*b, *s)).map_err(|e| err(&e))?;
            }
            for (b, s, bytes) in &commit.events {
                events
                    .insert((*b, *s), bytes.as_slice())
                    .map_err(|e| err(&e))?;
            }
            for (b, s, bytes) in &commit.snapshots {
                snapshots
                    .insert((*b, *s), bytes.as_slice())
                    .map_err(|e| err(&e))?;
            }
            if let Some(meta) = &commit.meta {
                let mut t = txn.open_table(META).map_err(|e| err(&e))?;
                t.insert(META_KEY, meta.as_slice()).map_err(|e| err(&e))?;
            }
        }
        txn.commit().map_err(|e| err(&e))
    }
}

/// Forwards to a boxed backend (redb wants a sized `impl StorageBackend`).
#[derive(Debug)]
struct BoxedBackend(Box<dyn StorageBackend>);

impl StorageBackend for BoxedBackend {
    fn len(&self) -> std::io::Result<u64> {
        self.0.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
        self.0.read(offset, out)
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.0.set_len(len)
    }
    fn sync_data(&self) -> std::io::Result<()> {
        self.0.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.0.write(offset, data)
    }
    fn close(&self) -> std::io::Result<()> {
        self.0.close()
    }
}

fn storage(name: &str, e: impl fmt::Display) -> Error {
    Error::Storage {
        file: name.to_owned(),
        message: e.to_string(),
    }
}

fn open_error(name: &str, e: redb::DatabaseError) -> Error {
    match e {
        redb::DatabaseError::Storage(redb::StorageError::Corrupted(msg)) => Error::Corrupt {
            file: name.to_owned(),
            location: "the database structure".into(),
            message: msg,
        },
        redb::DatabaseError::UpgradeRequired(v) => Error::NotASave {
            file: name.to_owned(),
            reason: format!("it uses an old redb file format ({v})"),
        },
        other => storage(name, other),
    }
}

fn open_db(path: &Path, name: &str) -> Result<Database> {
    Database::builder()
        .open(path)
        .map_err(|e| open_error(name, e))
}

fn check_magic(path: &Path, name: &str) -> Result<()> {
    let mut file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::not_found("save file", name),
        _ => storage(name, e),
    })?;
    let mut head = [0u8; REDB_MAGIC.len()];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(storage(name, e)),
        }
    }
    if got < head.len() || head != REDB_MAGIC {
        return Err(Error::NotASave {
            file: name.to_owned(),
            reason: "it does not start with the save-file signature".into(),
        });
    }
    Ok(())
}

/// Reading a table that was never written is reading nothing.
fn missing_ok<T>(
    r: std::result::Result<T, TableError>,
) -> std::result::Result<Option<T>, TableError> {
    match r {
        Ok(t) => Ok(Some(t)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Store for RedbStore {
    fn name(&self) -> &str {
        &self.name
    }

    fn meta(&self) -> Result<Option<Vec<u8>>> {
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        let txn = self.read_db()?.begin_read().map_err(|e| err(&e))?;
        let Some(t) = missing_ok(txn.open_table(META)).map_err(|e| err(&e))? else {
            return Ok(None);
        };
        Ok(t.get(META_KEY)
            .map_err(|e| err(&e))?
            .map(|v| v.value().to_vec()))
    }

    fn commit(&mut self, commit: Commit) -> Result<()> {
        let result = self.try_commit(commit);
        if result.is_err() {
            // redb refuses further work after an I/O error: start over from the file, which
            // holds every earlier commit whole. If reopening fails too, the next call retries.
            self.db = None;
            let _ = self.db();
        }
        result
    }

    fn read_events(
        &self,
        branch: BranchId,
        first: Seq,
        last: Seq,
        visit: &mut dyn FnMut(Seq, &[u8]) -> Result<()>,
    ) -> Result<()> {
        if first > last {
            return Ok(());
        }
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        let txn = self.read_db()?.begin_read().map_err(|e| err(&e))?;
        let Some(t) = missing_ok(txn.open_table(EVENTS)).map_err(|e| err(&e))? else {
            return Ok(());
        };
        for row in t
            .range((branch, first)..=(branch, last))
            .map_err(|e| err(&e))?
        {
            let (k, v) = row.map_err(|e| err(&e))?;
            visit(k.value().1, v.value())?;
        }
        Ok(())
    }

    fn last_seq(&self, branch: BranchId) -> Result<Option<Seq>> {
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        let txn = self.read_db()?.begin_read().map_err(|e| err(&e))?;
        let Some(t) = missing_ok(txn.open_table(EVENTS)).map_err(|e| err(&e))? else {
            return Ok(None);
        };
        let last = t
            .range((branch, 0)..=(branch, Seq::MAX))
            .map_err(|e| err(&e))?
            .next_back();
        match last {
            None => Ok(None),
            Some(row) => Ok(Some(row.map_err(|e| err(&e))?.0.value().1)),
        }
    }

    fn snapshot_seqs(&self, branch: BranchId) -> Result<Vec<Seq>> {
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        let txn = self.read_db()?.begin_read().map_err(|e| err(&e))?;
        let Some(t) = missing_ok(txn.open_table(SNAPSHOTS)).map_err(|e| err(&e))? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for row in t
            .range((branch, 0)..=(branch, Seq::MAX))
            .map_err(|e| err(&e))?
        {
            out.push(row.map_err(|e| err(&e))?.0.value().1);
        }
        Ok(out)
    }

    fn latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
    ) -> Result<Option<(Seq, Vec<u8>)>> {
        if min > max {
            return Ok(None);
        }
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        let txn = self.read_db()?.begin_read().map_err(|e| err(&e))?;
        let Some(t) = missing_ok(txn.open_table(SNAPSHOTS)).map_err(|e| err(&e))? else {
            return Ok(None);
        };
        let last = t
            .range((branch, min)..=(branch, max))
            .map_err(|e| err(&e))?
            .next_back();
        match last {
            None => Ok(None),
            Some(row) => {
                let (k, v) = row.map_err(|e| err(&e))?;
                Ok(Some((k.value().1, v.value().to_vec())))
            }
        }
    }
}
