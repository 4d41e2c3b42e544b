//! Compaction on `World` (rp-core's `Engine::compact`;
//! docs/history.md#compaction): the room the save holds without using it
//! given back, its file shrunk.

use pyo3::prelude::*;

use crate::world::World;

#[pymethods]
impl World {
    /// Compacts the save: makes pending commits durable (as ``flush``),
    /// drops on every branch the snapshots no branch opens from any more
    /// (all but the latest of each branch and, for each branch forked from
    /// it, the latest at or before the fork point), rewrites the records of
    /// an older format in the current one (a save written before format 2
    /// is about half the size after), then compacts the save file so that
    /// it shrinks to what it holds. The world, the branches,
    /// their heads and histories do not change; the save opens to the same
    /// worlds as before, as fast.
    ///
    /// Returns what was done, as a dict: ``"file_bytes_before"``,
    /// ``"file_bytes_after"`` (the file's length), ``"allocated_bytes_before"``,
    /// ``"allocated_bytes_after"`` (the room it takes on disk: ``st_blocks``
    /// × 512 on Unix), ``"snapshots_dropped"``, ``"compacted"`` (whether
    /// the file changed) and ``"records_upgraded"`` (records of an older
    /// format rewritten). Sizes are 0 for a world in memory, which has no
    /// file. Compacting a compact save is harmless. Reports the phase
    /// ``"compact"`` to the progress callable (``set_progress``).
    ///
    /// Raises ``StorageError`` (the file cannot be written: a full disk, an
    /// I/O error), ``CorruptSave`` (damage found on the way), ``Conflict``
    /// (called from a callback running on this world); a compaction that
    /// fails leaves a save that opens with the same worlds.
    fn compact<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let done = self.with_engine(py, |engine| engine.compact())?;
        crate::json::to_py(py, serde_json::to_value(done))
    }
}
