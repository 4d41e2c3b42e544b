//! Backups on `World` (rp-core's `Engine::backup`, `Engine::export_branch`;
//! docs/history.md#backups): a copy of the open save, whole or one branch of
//! it, in a new save file, made while the world stays open.

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::world::World;

#[pymethods]
impl World {
    /// Writes a backup of the save to a new save file at ``path`` (a ``str``
    /// or an ``os.PathLike``): every branch with its history and head, which
    /// branch is current, and the snapshots, as committed when called.
    /// ``World.open(path)`` gives the same world, branches and heads. The
    /// world stays open, and is only read; a world in memory is backed up
    /// to a save file like any other.
    ///
    /// The backup is written under a temporary name beside ``path`` and
    /// takes its name once complete and on stable storage: it never replaces
    /// a file, and a failed backup leaves no file behind.
    ///
    /// Raises ``Conflict`` (``path`` exists, this world's own save
    /// included), ``InvalidInput`` (``path`` names no file),
    /// ``StorageError`` (it cannot be written: a missing directory, no
    /// permission, a full disk), ``CorruptSave``; on error nothing changes.
    fn backup(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        self.with_engine(py, |engine| engine.backup(path))
    }

    /// Writes the history of the branch ``name`` to a new save file at
    /// ``path``: its events from the world's creation to its head (shared
    /// ones included), as the new save's only branch, still named ``name``,
    /// with a snapshot of its head so it opens without replaying.
    /// ``World.open(path)`` gives that branch's world. The world stays open
    /// and on its current branch.
    ///
    /// Raises ``NotFound`` (no branch ``name``), and what ``backup``
    /// raises; on error nothing changes and no file is left.
    fn export_branch(&self, py: Python<'_>, name: &str, path: PathBuf) -> PyResult<()> {
        self.with_engine(py, |engine| engine.export_branch(name, path))
    }
}
