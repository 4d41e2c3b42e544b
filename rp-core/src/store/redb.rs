//! The save game: one redb file holding the log, the snapshots and the metadata.

mod parts;

use super::{BranchId, Commit, SnapshotVisitor, Store};
use crate::error::{Error, Result};
use crate::model::Seq;
use redb::{
    Database, DatabaseError, Durability, ReadOnlyDatabase, ReadTransaction, ReadableDatabase,
    StorageBackend, TableDefinition, TableError,
};
use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

const EVENTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_events");
const SNAPSHOTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_snapshots");
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("rp_meta");
const META_KEY: &str = "meta";
/// The last seq written to each branch, kept beside the log so that a damaged file cannot
/// silently lose the end of a branch (redb's pages carry no checksums of their own).
const HEADS: TableDefinition<u64, u64> = TableDefinition::new("rp_heads");
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
/// file reopened, at once and, if that fails too, by the next call (a read or a write), so a
/// transient failure costs one call and a persistent one keeps failing cleanly; the file
/// itself stays openable either way (redb's commits are atomic).
///
/// A failed [`Store::commit`] is taken back. A commit can reach the file and still fail (the
/// sync after it reports an error, or trimming the file afterwards does), so after reopening,
/// the store checks whether the failed commit is visible and if so restores what it replaced,
/// in a durable transaction, before it serves anything else. A failed commit thus never turns
/// up later, and retrying it never stores it twice. (A crash before that restore keeps the
/// commit, whole.)
pub struct RedbStore {
    name: String,
    source: Source,
    /// The real path of a file still being created under a temporary name.
    creating: Option<PathBuf>,
    state: Mutex<State>,
}

struct State {
    /// `None` after an I/O error, until a call reopens the file.
    db: Option<Handle>,
    /// How to take back the last failed commit, until that is done.
    undo: Option<Undo>,
}

/// An open save file: read-only until the first write, so that a file that turns out to be
/// damaged, foreign or from a newer version is never modified by opening it.
enum Handle {
    ReadOnly(ReadOnlyDatabase),
    /// A file that a crash left needing repair, repaired in memory: read from there until
    /// the first write, which repairs the file itself (so a file too damaged to repair, or
    /// whose repaired content the engine rejects, is never modified).
    Repaired(Database),
    Writable(Database),
}

impl Handle {
    fn begin_read(&self) -> std::result::Result<ReadTransaction, redb::TransactionError> {
        match self {
            Handle::ReadOnly(db) => db.begin_read(),
            Handle::Repaired(db) | Handle::Writable(db) => db.begin_read(),
        }
    }
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
    ///
    /// The file is built under a temporary name beside `path` and takes its real name with
    /// the first successful commit, so a crash while creating never leaves a half-made save
    /// under `path` (at worst a `.<name>.creating` file, which may be deleted). Giving it that
    /// name includes syncing the directory: if that fails, the commit fails with a storage
    /// error and no file is left under `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<RedbStore> {
        let path = path.as_ref();
        let name = path.display().to_string();
        if path.exists() {
            return Err(Error::conflict(format!("{name} already exists")));
        }
        let file_name = path
            .file_name()
            .ok_or_else(|| Error::invalid("path", format!("{name} names no file")))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(file_name);
        tmp_name.push(".creating");
        let tmp = path.with_file_name(tmp_name);
        let _ = std::fs::remove_file(&tmp);
        let db = contain(&name, || {
            Database::builder()
                .create(&tmp)
                .map_err(|e| storage(&name, e))
        })?;
        let mut store = RedbStore::new(name, Source::Path(tmp), Some(Handle::Writable(db)));
        store.creating = Some(path.to_owned());
        Ok(store)
    }

    /// Gives a file made by [`RedbStore::create`] its real name, refusing to replace a file
    /// that appeared there meanwhile.
    fn finish_create(&mut self) -> Result<()> {
        let (Some(target), Source::Path(tmp)) = (&self.creating, &self.source) else {
            return Ok(());
        };
        let linked = match std::fs::hard_link(tmp, target) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists || target.exists() => {
                return Err(Error::conflict(format!("{} already exists", self.name)));
            }
            Err(_) => {
                std::fs::rename(tmp, target).map_err(|e| storage(&self.name, e))?;
                false
            }
        };
        // The new name must be durable too: a save whose creation reported success must not
        // vanish with a crash. If the directory cannot be synced, the save is not created.
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Err(e) = sync_dir(dir) {
            if linked {
                let _ = std::fs::remove_file(target);
            } else {
                let _ = std::fs::rename(target, tmp);
            }
            return Err(storage(
                &self.name,
                format!("the directory {} could not be synced: {e}", dir.display()),
            ));
        }
        if linked {
            let _ = std::fs::remove_file(tmp);
        }
        self.source = Source::Path(target.clone());
        self.creating = None;
        Ok(())
    }

    /// Opens an existing save file, read-only until the first write: a file that is not a
    /// redb database, or whose content the engine rejects, is never modified. (A file that a
    /// crash left needing recovery is opened for writing at once: redb repairs it.)
    pub fn open(path: impl AsRef<Path>) -> Result<RedbStore> {
        let path = path.as_ref();
        let name = path.display().to_string();
        check_magic(path, &name)?;
        let db = contain(&name, || match Database::builder().open_read_only(path) {
            Ok(db) => Ok(Handle::ReadOnly(db)),
            Err(DatabaseError::RepairAborted) => Ok(Handle::Repaired(repair_copy(path, &name)?)),
            Err(e) => Err(open_error(&name, e)),
        })?;
        Ok(RedbStore::new(
            name,
            Source::Path(path.to_owned()),
            Some(db),
        ))
    }

    /// A store over any redb storage backend (in-memory images, fault injection). `factory`
    /// is called now and again whenever the store must reopen after an I/O error.
    pub fn with_backend(name: impl Into<String>, factory: BackendFactory) -> Result<RedbStore> {
        let store = RedbStore::new(name.into(), Source::Backend(factory), None);
        store.with_db(|_| Ok(()))?;
        Ok(store)
    }

    fn new(name: String, source: Source, db: Option<Handle>) -> RedbStore {
        RedbStore {
            name,
            source,
            creating: None,
            state: Mutex::new(State { db, undo: None }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves nothing the next call cannot handle: at worst
        // the database is closed and gets reopened.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn open_source(&self) -> Result<Database> {
        contain(&self.name, || match &self.source {
            Source::Path(p) => open_db(p, &self.name),
            Source::Backend(f) => {
                let backend = f().map_err(|e| storage(&self.name, e))?;
                Database::builder()
                    .create_with_backend(BoxedBackend(backend))
                    .map_err(|e| open_error(&self.name, e))
            }
        })
    }

    /// Reopens the database if an I/O error closed it, taking back a failed commit first.
    fn ensure_open(&self, state: &mut State) -> Result<()> {
        if state.db.is_none() {
            let db = self.open_source()?;
            if let Some(undo) = &state.undo {
                contain(&self.name, || undo.apply(&db, &self.name))?;
            }
            state.undo = None;
            state.db = Some(Handle::Writable(db));
        }
        Ok(())
    }

    /// The database open for writing (reopening a read-only one).
    fn writable<'s>(&self, state: &'s mut State) -> Result<&'s Database> {
        // Opening for writing marks the file as needing recovery until it is closed (one
        // header byte). If the open then fails (redb finds damage that reading did not
        // reach), that mark is taken back: a save refused while opening stays as it was.
        let mut header = None;
        if matches!(state.db, Some(Handle::ReadOnly(_) | Handle::Repaired(_))) {
            state.db = None; // releases the shared lock before taking the exclusive one
            if let Source::Path(path) = &self.source {
                header = read_header(path);
            }
        }
        if let Err(e) = self.ensure_open(state) {
            if let (Some(before), Source::Path(path)) = (header, &self.source) {
                restore_recovery_mark(path, &before);
            }
            return Err(e);
        }
        match &state.db {
            Some(Handle::Writable(db)) => Ok(db),
            _ => unreachable!("ensure_open opens for writing"),
        }
    }

    /// Runs `f` on the open database, reopening it if needed. `f` must not call back into
    /// this store.
    fn with_db<R>(&self, f: impl FnOnce(&Handle) -> Result<R>) -> Result<R> {
        let mut state = self.state();
        self.ensure_open(&mut state)?;
        let db = state.db.as_ref().expect("opened above");
        contain(&self.name, || f(db))
    }

    /// Runs `f` in a read transaction.
    fn read<R>(&self, f: impl FnOnce(&ReadTransaction) -> Result<R>) -> Result<R> {
        self.with_db(|db| {
            let txn = db.begin_read().map_err(|e| storage(&self.name, e))?;
            f(&txn)
        })
    }
}

fn try_commit(db: &Database, name: &str, commit: &Commit, undo: &mut Undo) -> Result<()> {
    let err = |e: &dyn fmt::Display| storage(name, e);
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
        let mut parts = txn.open_table(parts::PARTS).map_err(|e| err(&e))?;
        for (branch, after) in &commit.purge {
            let r = (*branch, after.saturating_add(1))..=(*branch, Seq::MAX);
            if *after < Seq::MAX {
                events
                    .retain_in(r.clone(), |(b, s), v| {
                        undo.push(Key::Event(b, s), Some(v));
                        false
                    })
                    .map_err(|e| err(&e))?;
                snapshots
                    .retain_in(r, |(b, s), v| {
                        undo.push(Key::Snapshot(b, s), Some(v));
                        false
                    })
                    .map_err(|e| err(&e))?;
                parts
                    .retain_in(
                        (*branch, after + 1, 0)..=(*branch, Seq::MAX, u32::MAX),
                        |(b, s, i), v| {
                            undo.push(Key::Part(b, s, i), Some(v));
                            false
                        },
                    )
                    .map_err(|e| err(&e))?;
            }
        }
        // Not recorded for undo: a superseded snapshot is never read again (opening starts
        // from the latest one), so taking a commit back need not restore it.
        for (b, s) in &commit.drop_snapshots {
            snapshots.remove((*b, *s)).map_err(|e| err(&e))?;
            parts::remove(&mut parts, (*b, *s), &mut |_, _| {}).map_err(|e| err(&e))?;
        }
        for (b, s, bytes) in &commit.events {
            let old = events
                .insert((*b, *s), bytes.as_slice())
                .map_err(|e| err(&e))?;
            undo.push(Key::Event(*b, *s), old.as_ref().map(|g| g.value()));
        }
        for (b, s, bytes) in &commit.snapshots {
            // The parts of a snapshot this one replaces go first.
            parts::remove(&mut parts, (*b, *s), &mut |i, v| {
                undo.push(Key::Part(*b, *s, i), Some(v))
            })
            .map_err(|e| err(&e))?;
            let manifest = match parts::split(bytes) {
                None => None,
                Some(chunks) => {
                    let count = chunks.len();
                    for (i, chunk) in (0..).zip(chunks) {
                        parts.insert((*b, *s, i), chunk).map_err(|e| err(&e))?;
                        undo.push(Key::Part(*b, *s, i), None);
                    }
                    let count = u32::try_from(count).map_err(|e| err(&e))?;
                    Some(parts::manifest(count, bytes.len() as u64))
                }
            };
            let old = snapshots
                .insert((*b, *s), manifest.as_deref().unwrap_or(bytes))
                .map_err(|e| err(&e))?;
            undo.push(Key::Snapshot(*b, *s), old.as_ref().map(|g| g.value()));
        }
        drop(parts);
        let mut heads = txn.open_table(HEADS).map_err(|e| err(&e))?;
        for (branch, seq) in new_heads(&heads, commit).map_err(|e| err(&e))? {
            let old = if seq == 0 {
                heads.remove(branch)
            } else {
                heads.insert(branch, seq)
            }
            .map_err(|e| err(&e))?;
            let old = old.map(|g| g.value().to_le_bytes());
            undo.push(Key::Head(branch), old.as_ref().map(|b| b.as_slice()));
        }
        drop(heads);
        if let Some(meta) = &commit.meta {
            let mut t = txn.open_table(META).map_err(|e| err(&e))?;
            let old = t.insert(META_KEY, meta.as_slice()).map_err(|e| err(&e))?;
            undo.push(Key::Meta, old.as_ref().map(|g| g.value()));
        }
    }
    txn.commit().map_err(|e| err(&e))
}

impl Drop for RedbStore {
    fn drop(&mut self) {
        // Closing a writable database writes its allocator state; on a damaged file that can
        // panic inside redb, and dropping a save must never unwind.
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = contain(&self.name, || {
            drop(state.db.take());
            Ok(())
        });
        // A file that never got its real name holds no save: nothing may reopen it.
        if let (Some(_), Source::Path(tmp)) = (&self.creating, &self.source) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// The heads `commit` leaves, for the branches whose head it changes: a purge cuts a head
/// back, events move it forward (0: the branch holds no events of its own).
fn new_heads(
    heads: &impl redb::ReadableTable<u64, u64>,
    commit: &Commit,
) -> std::result::Result<Vec<(BranchId, Seq)>, redb::StorageError> {
    let mut out: std::collections::BTreeMap<BranchId, Seq> = Default::default();
    for (branch, after) in &commit.purge {
        let head = match out.get(branch) {
            Some(h) => *h,
            None => heads.get(*branch)?.map_or(0, |g| g.value()),
        };
        out.insert(*branch, head.min(*after));
    }
    for (branch, seq, _) in &commit.events {
        let head = match out.get(branch) {
            Some(h) => *h,
            None => heads.get(*branch)?.map_or(0, |g| g.value()),
        };
        out.insert(*branch, head.max(*seq));
    }
    Ok(out.into_iter().collect())
}

/// A record a commit changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Event(BranchId, Seq),
    Snapshot(BranchId, Seq),
    Part(BranchId, Seq, u32),
    Meta,
    Head(BranchId),
}

/// What a commit replaced, in the order it did: enough to take it back.
#[derive(Debug, Default)]
struct Undo {
    /// Each changed record with its value before the commit (`None`: it did not exist).
    before: Vec<(Key, Option<Vec<u8>>)>,
}

impl Undo {
    fn push(&mut self, key: Key, before: Option<&[u8]>) {
        self.before.push((key, before.map(<[u8]>::to_vec)));
    }

    /// Whether the commit reached `db`: if it did not, every record holds its old value.
    fn landed(&self, db: &Database) -> std::result::Result<bool, redb::Error> {
        let txn = db.begin_read()?;
        let events = missing_ok(txn.open_table(EVENTS))?;
        let snapshots = missing_ok(txn.open_table(SNAPSHOTS))?;
        let parts = missing_ok(txn.open_table(parts::PARTS))?;
        let meta = missing_ok(txn.open_table(META))?;
        let heads = missing_ok(txn.open_table(HEADS))?;
        for (key, before) in &self.before {
            let now = match key {
                Key::Event(b, s) => match &events {
                    Some(t) => t.get((*b, *s))?.map(|v| v.value().to_vec()),
                    None => None,
                },
                Key::Snapshot(b, s) => match &snapshots {
                    Some(t) => t.get((*b, *s))?.map(|v| v.value().to_vec()),
                    None => None,
                },
                Key::Part(b, s, i) => match &parts {
                    Some(t) => t.get((*b, *s, *i))?.map(|v| v.value().to_vec()),
                    None => None,
                },
                Key::Meta => match &meta {
                    Some(t) => t.get(META_KEY)?.map(|v| v.value().to_vec()),
                    None => None,
                },
                Key::Head(b) => match &heads {
                    Some(t) => t.get(*b)?.map(|v| v.value().to_le_bytes().to_vec()),
                    None => None,
                },
            };
            if now != *before {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Takes the commit back if it reached `db`, durably.
    fn apply(&self, db: &Database, name: &str) -> Result<()> {
        let err = |e: &dyn fmt::Display| Error::Storage {
            file: name.to_owned(),
            message: format!("taking back a failed write: {e}"),
        };
        if !self.landed(db).map_err(|e| err(&e))? {
            return Ok(());
        }
        let mut txn = db.begin_write().map_err(|e| err(&e))?;
        txn.set_durability(Durability::Immediate)
            .map_err(|e| err(&e))?;
        {
            let mut events = txn.open_table(EVENTS).map_err(|e| err(&e))?;
            let mut snapshots = txn.open_table(SNAPSHOTS).map_err(|e| err(&e))?;
            let mut parts = txn.open_table(parts::PARTS).map_err(|e| err(&e))?;
            let mut meta = txn.open_table(META).map_err(|e| err(&e))?;
            let mut heads = txn.open_table(HEADS).map_err(|e| err(&e))?;
            for (key, before) in self.before.iter().rev() {
                let r = match (key, before) {
                    (Key::Event(b, s), Some(v)) => events.insert((*b, *s), v.as_slice()).map(drop),
                    (Key::Event(b, s), None) => events.remove((*b, *s)).map(drop),
                    (Key::Snapshot(b, s), Some(v)) => {
                        snapshots.insert((*b, *s), v.as_slice()).map(drop)
                    }
                    (Key::Snapshot(b, s), None) => snapshots.remove((*b, *s)).map(drop),
                    (Key::Part(b, s, i), Some(v)) => {
                        parts.insert((*b, *s, *i), v.as_slice()).map(drop)
                    }
                    (Key::Part(b, s, i), None) => parts.remove((*b, *s, *i)).map(drop),
                    (Key::Meta, Some(v)) => meta.insert(META_KEY, v.as_slice()).map(drop),
                    (Key::Meta, None) => meta.remove(META_KEY).map(drop),
                    (Key::Head(b), Some(v)) => {
                        let mut le = [0u8; 8];
                        le.copy_from_slice(&v[..8]);
                        heads.insert(*b, u64::from_le_bytes(le)).map(drop)
                    }
                    (Key::Head(b), None) => heads.remove(*b).map(drop),
                };
                r.map_err(|e| err(&e))?;
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

/// Syncs a directory, so that a name just made in it survives a crash.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(test)]
    if tests::FAIL_DIR_SYNC.with(std::cell::Cell::get) {
        return Err(std::io::Error::other("injected directory sync failure"));
    }
    std::fs::File::open(dir)?.sync_all()
}

thread_local! {
    /// How many [`contain`] calls this thread is inside.
    static CONTAINED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Installs, once per process, a panic hook that says nothing about a panic [`contain`] is
/// about to turn into an error, and hands every other panic to the hook that was installed
/// before (the default one, or the host's own).
fn quiet_contained_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CONTAINED.with(std::cell::Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic inside the storage engine into an error. redb trusts some of
/// the bytes it reads (a damaged allocator table, say, can make it panic), and a damaged
/// save must give the caller an error, never unwind through the engine or across FFI, and
/// never print to the host's terminal (the error says it all).
fn contain<R>(name: &str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    quiet_contained_panics();
    struct Inside;
    impl Drop for Inside {
        fn drop(&mut self) {
            CONTAINED.with(|c| c.set(c.get() - 1));
        }
    }
    CONTAINED.with(|c| c.set(c.get() + 1));
    let inside = Inside;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    drop(inside);
    caught.unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "an internal check failed".to_owned());
        Err(Error::Corrupt {
            file: name.to_owned(),
            location: "the database structure".into(),
            message: format!("the storage engine could not read it ({why})"),
        })
    })
}

fn storage(name: &str, e: impl fmt::Display) -> Error {
    Error::Storage {
        file: name.to_owned(),
        message: e.to_string(),
    }
}

/// A failed compaction as the crate's error: something still reading the database (which
/// nothing in the store leaves open) is a conflict, damage found on the way is corruption,
/// anything else a storage failure.
fn compaction_error(name: &str, e: redb::CompactionError) -> Error {
    match e {
        redb::CompactionError::TransactionInProgress
        | redb::CompactionError::PersistentSavepointExists
        | redb::CompactionError::EphemeralSavepointExists => Error::conflict(format!(
            "{name} cannot be compacted while it is being read ({e})"
        )),
        redb::CompactionError::Storage(redb::StorageError::Corrupted(msg)) => Error::Corrupt {
            file: name.to_owned(),
            location: "the database structure".into(),
            message: msg,
        },
        other => storage(name, format!("compacting the file: {other}")),
    }
}

fn open_error(name: &str, e: redb::DatabaseError) -> Error {
    match e {
        // A file cut short: damaged, not an I/O failure.
        redb::DatabaseError::Storage(redb::StorageError::Io(e))
            if e.kind() == std::io::ErrorKind::UnexpectedEof =>
        {
            Error::Corrupt {
                file: name.to_owned(),
                location: "the database structure".into(),
                message: format!("the file is truncated ({e})"),
            }
        }
        // redb's own verdict on a file without its signature (open() checks it first, but a
        // store over a backend does not).
        redb::DatabaseError::Storage(redb::StorageError::Io(e))
            if e.kind() == std::io::ErrorKind::InvalidData =>
        {
            Error::NotASave {
                file: name.to_owned(),
                reason: e.to_string(),
            }
        }
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

/// A copy of the file in memory, repaired there: repairing writes, and a file so damaged
/// that the repair fails (or panics inside redb) must be left as it was.
fn repair_copy(path: &Path, name: &str) -> Result<Database> {
    let bytes = std::fs::read(path).map_err(|e| storage(name, e))?;
    let copy = redb::backends::InMemoryBackend::new();
    copy.set_len(bytes.len() as u64)
        .and_then(|()| copy.write(0, &bytes))
        .map_err(|e| storage(name, e))?;
    drop(bytes);
    contain(name, || {
        Database::builder()
            .create_with_backend(copy)
            .map_err(|e| open_error(name, e))
    })
}

/// The size of redb's database header, and the offset of its flags byte (which holds the
/// "recovery required" mark).
const HEADER_BYTES: usize = 512;
const HEADER_FLAGS: usize = 9;
const RECOVERY_REQUIRED: u8 = 2;

fn read_header(path: &Path) -> Option<Vec<u8>> {
    let mut head = vec![0u8; HEADER_BYTES];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    Some(head)
}

/// Puts back the header's flags byte as it was `before` a failed open for writing, if setting
/// the recovery mark is all that changed (so nothing another process wrote meanwhile is
/// touched).
fn restore_recovery_mark(path: &Path, before: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let Some(now) = read_header(path) else {
        return;
    };
    let only_flags = (0..HEADER_BYTES).all(|i| i == HEADER_FLAGS || now[i] == before[i]);
    if !only_flags || now[HEADER_FLAGS] != before[HEADER_FLAGS] | RECOVERY_REQUIRED {
        return;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(path)
        && f.seek(SeekFrom::Start(HEADER_FLAGS as u64)).is_ok()
        && f.write_all(&before[HEADER_FLAGS..=HEADER_FLAGS]).is_ok()
    {
        let _ = f.sync_all();
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

    fn sidecar(&self) -> Option<PathBuf> {
        match &self.source {
            Source::Path(_) => Some(PathBuf::from(format!("{}.index", self.name))),
            Source::Backend(_) => None,
        }
    }

    fn meta(&self) -> Result<Option<Vec<u8>>> {
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        self.read(|txn| {
            let Some(t) = missing_ok(txn.open_table(META)).map_err(|e| err(&e))? else {
                return Ok(None);
            };
            Ok(t.get(META_KEY)
                .map_err(|e| err(&e))?
                .map(|v| v.value().to_vec()))
        })
    }

    fn commit(&mut self, commit: Commit) -> Result<()> {
        let mut state = self.state();
        let db = self.writable(&mut state)?;
        let mut undo = Undo::default();
        let result = contain(&self.name, || {
            try_commit(db, &self.name, &commit, &mut undo)
        });
        if result.is_err() {
            // redb refuses further work after an I/O error: start over from the file, which
            // holds every earlier commit whole, and take this one back should it be there
            // anyway. If that fails too, the next call tries again.
            let _ = contain(&self.name, || {
                drop(state.db.take()); // closing may write (allocator state)
                Ok(())
            });
            state.undo = Some(undo);
            let _ = self.ensure_open(&mut state);
        }
        drop(state);
        result?;
        self.finish_create()
    }

    fn prepare_writes(&mut self) -> Result<()> {
        let mut state = self.state();
        self.writable(&mut state).map(drop)
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
        self.read(|txn| {
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
        })
    }

    fn last_seq(&self, branch: BranchId) -> Result<Option<Seq>> {
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        let corrupt = |message: String| Error::Corrupt {
            file: self.name.clone(),
            location: format!("the log of branch {branch}"),
            message,
        };
        self.read(|txn| {
            let last = match missing_ok(txn.open_table(EVENTS)).map_err(|e| err(&e))? {
                None => None,
                Some(t) => match t
                    .range((branch, 0)..=(branch, Seq::MAX))
                    .map_err(|e| err(&e))?
                    .next_back()
                {
                    None => None,
                    Some(row) => Some(row.map_err(|e| err(&e))?.0.value().1),
                },
            };
            // The first commit of a save writes its first event, and every commit that writes
            // events records the heads: a save (it has metadata) without them lost its table.
            let Some(heads) = missing_ok(txn.open_table(HEADS)).map_err(|e| err(&e))? else {
                let saved = missing_ok(txn.open_table(META))
                    .map_err(|e| err(&e))?
                    .is_some();
                return match (last, saved) {
                    (None, false) => Ok(None),
                    _ => Err(corrupt(
                        "the record of where each branch ends is missing".into(),
                    )),
                };
            };
            // A branch without an entry was purged to nothing.
            let written = heads.get(branch).map_err(|e| err(&e))?.map(|g| g.value());
            if written != last {
                let say = |s: Option<Seq>| s.map_or("no events".to_owned(), |s| format!("seq {s}"));
                return Err(corrupt(format!(
                    "it was written up to {} but holds {}: events are missing",
                    say(written),
                    say(last)
                )));
            }
            Ok(last)
        })
    }

    fn file(&self) -> Option<PathBuf> {
        match &self.source {
            Source::Path(path) => Some(path.clone()),
            Source::Backend(_) => None,
        }
    }

    /// Compacts the file with redb's own compaction (`Database::compact`): the live pages
    /// move towards its start, and the file is cut after the last of them. Opens the file
    /// for writing first if it was opened read-only (as a commit does).
    ///
    /// redb compacts in a series of transactions, each atomic and each leaving the same
    /// records: a compaction that fails (an I/O error, a full disk) leaves a file that opens
    /// with the content it had. As after a failed commit, the database is then closed and
    /// reopened at once or by the next call; there is nothing to take back.
    fn compact(&mut self) -> Result<bool> {
        let mut state = self.state();
        self.writable(&mut state)?;
        let result = match state.db.as_mut() {
            Some(Handle::Writable(db)) => contain(&self.name, || {
                db.compact().map_err(|e| compaction_error(&self.name, e))
            }),
            _ => unreachable!("writable opens for writing"),
        };
        if let Err(e) = &result
            && e.kind() != crate::error::ErrorKind::Conflict
        {
            // redb refuses further work after an I/O error: start over from the file.
            let _ = contain(&self.name, || {
                drop(state.db.take()); // closing may write (allocator state)
                Ok(())
            });
            let _ = self.ensure_open(&mut state);
        }
        result
    }

    fn snapshot_seqs(&self, branch: BranchId) -> Result<Vec<Seq>> {
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        self.read(|txn| {
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
        })
    }

    fn latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
    ) -> Result<Option<(Seq, Vec<u8>)>> {
        super::copy_latest_snapshot(self, branch, min, max)
    }

    /// Lends the record where redb's read holds it (no copy), or, for one stored in parts, a
    /// copy put together from them.
    fn visit_latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
        visit: &mut SnapshotVisitor<'_>,
    ) -> Result<bool> {
        if min > max {
            return Ok(false);
        }
        let err = |e: &dyn fmt::Display| storage(&self.name, e);
        self.read(|txn| {
            let Some(t) = missing_ok(txn.open_table(SNAPSHOTS)).map_err(|e| err(&e))? else {
                return Ok(false);
            };
            let last = t
                .range((branch, min)..=(branch, max))
                .map_err(|e| err(&e))?
                .next_back();
            match last {
                None => Ok(false),
                Some(row) => {
                    let (k, v) = row.map_err(|e| err(&e))?;
                    let seq = k.value().1;
                    let Some(manifest) = parts::read_manifest(v.value()) else {
                        return visit(seq, Cow::Borrowed(v.value())).map(|()| true);
                    };
                    let corrupt = |message: String| Error::Corrupt {
                        file: self.name.clone(),
                        location: format!("snapshot at seq {seq} of branch {branch}"),
                        message,
                    };
                    let manifest = manifest.map_err(corrupt)?;
                    let parts = missing_ok(txn.open_table(parts::PARTS))
                        .map_err(|e| err(&e))?
                        .ok_or_else(|| corrupt("its parts are missing".into()))?;
                    let bytes = parts::assemble(&parts, (branch, seq), manifest)
                        .map_err(|e| err(&e))?
                        .map_err(corrupt)?;
                    // Given, not lent: the snapshot is freed once it is decompressed.
                    visit(seq, Cow::Owned(bytes)).map(|()| true)
                }
            }
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Makes this thread's directory syncs fail.
        pub(crate) static FAIL_DIR_SYNC: Cell<bool> = const { Cell::new(false) };
    }
}
