//! The SQLite peer: the same encoded events appended to a table, synced as asked.

use rp_core::Seq;
use std::path::Path;

/// How SQLite syncs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqliteSync {
    /// `journal_mode=WAL`, `synchronous=FULL`: the WAL is fsynced at every commit.
    Full,
    /// `journal_mode=WAL`, `synchronous=OFF`: no fsync.
    Off,
}

/// The same log in SQLite: `events(branch, seq, data)` keyed by (branch, seq), one
/// transaction per append.
pub struct SqliteLog {
    conn: rusqlite::Connection,
}

impl SqliteLog {
    /// Opens (creating if needed) the log at `path`.
    pub fn open(path: &Path, sync: SqliteSync) -> SqliteLog {
        let conn = rusqlite::Connection::open(path).expect("open sqlite");
        conn.pragma_update(None, "journal_mode", "WAL")
            .expect("wal");
        conn.pragma_update(
            None,
            "synchronous",
            match sync {
                SqliteSync::Full => "FULL",
                SqliteSync::Off => "OFF",
            },
        )
        .expect("synchronous");
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS events (
                branch INTEGER NOT NULL,
                seq INTEGER NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (branch, seq)
            ) WITHOUT ROWID;",
        )
        .expect("schema");
        SqliteLog { conn }
    }

    /// Inserts `records` as seqs `first..` of `branch` in one transaction.
    pub fn append(&mut self, branch: u64, first: Seq, records: &[Vec<u8>]) {
        let txn = self.conn.transaction().expect("begin");
        {
            let mut stmt = txn
                .prepare_cached("INSERT INTO events (branch, seq, data) VALUES (?1, ?2, ?3)")
                .expect("prepare");
            for (r, s) in records.iter().zip(first..) {
                stmt.execute(rusqlite::params![branch as i64, s as i64, r.as_slice()])
                    .expect("insert");
            }
        }
        txn.commit().expect("commit");
    }

    /// Calls `visit` for each event of `branch` in seq order.
    pub fn read(&self, branch: u64, mut visit: impl FnMut(Seq, &[u8])) {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq, data FROM events WHERE branch = ?1 ORDER BY seq")
            .expect("prepare");
        let mut rows = stmt.query([branch as i64]).expect("query");
        while let Some(row) = rows.next().expect("row") {
            let seq: i64 = row.get(0).expect("seq");
            let data = row.get_ref(1).expect("data").as_blob().expect("blob");
            visit(seq as Seq, data);
        }
    }

    /// Checkpoints the WAL into the main file.
    pub fn checkpoint(&self) {
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .expect("checkpoint");
    }
}
