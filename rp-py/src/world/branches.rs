//! History branches on `World`: the current branch and the others,
//! rewinding (`preview_rewind()`, `rewind()`), forking, switching, renaming
//! and deleting branches.

use pyo3::prelude::*;

use super::World;
use crate::model::{Branch, RewindPreview};

#[pymethods]
impl World {
    /// The name of the current branch (``"main"`` at first).
    #[getter]
    fn branch(&self, py: Python<'_>) -> PyResult<String> {
        self.with_engine(py, |engine| Ok(engine.current_branch().to_owned()))
    }

    /// Every named branch, in creation order, as ``Branch`` objects.
    fn branches(&self, py: Python<'_>) -> PyResult<Vec<Branch>> {
        self.with_engine(py, |engine| {
            Ok(engine.branches().into_iter().map(Branch::from).collect())
        })
    }

    /// What ``rewind(to_seq)`` would undo, without undoing it. Raises
    /// ``InvalidInput`` for a seq outside the current branch.
    fn preview_rewind(&self, py: Python<'_>, to_seq: u64) -> PyResult<RewindPreview> {
        self.with_engine(py, |engine| engine.preview_rewind(to_seq))
            .map(RewindPreview::from)
    }

    /// Moves the current branch back to ``to_seq``: the world becomes what
    /// it was after that event. Nothing is destroyed: the undone events stay
    /// reachable as a new branch, named after the current one (``"main~2"``),
    /// whose name is returned (None when nothing was undone). A turn in
    /// progress refuses to go on afterwards.
    ///
    /// Raises ``InvalidInput`` (a seq outside the branch), ``StorageError``;
    /// on error nothing changes.
    fn rewind(&self, py: Python<'_>, to_seq: u64) -> PyResult<Option<String>> {
        self.with_engine(py, |engine| engine.rewind(to_seq))
    }

    /// Creates a branch ``name`` that shares the current branch's history up
    /// to ``at_seq`` (default: the head) and returns it; the current branch
    /// does not change.
    ///
    /// Raises ``Conflict`` (the name is taken), ``InvalidInput`` (a bad
    /// name, a seq outside the branch).
    #[pyo3(signature = (name, at_seq = None))]
    fn fork(&self, py: Python<'_>, name: &str, at_seq: Option<u64>) -> PyResult<Branch> {
        self.with_engine(py, |engine| {
            let at = at_seq.unwrap_or_else(|| engine.head());
            engine.fork(at, name)
        })
        .map(Branch::from)
    }

    /// Makes the branch ``name`` current, loading its world. Raises
    /// ``NotFound``.
    fn switch_branch(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with_engine(py, |engine| engine.switch_branch(name))
    }

    /// Renames the branch ``old`` to ``new``. Raises ``NotFound``,
    /// ``Conflict`` (``new`` is taken), ``InvalidInput`` (a bad name).
    fn rename_branch(&self, py: Python<'_>, old: &str, new: &str) -> PyResult<()> {
        self.with_engine(py, |engine| engine.rename_branch(old, new))
    }

    /// Deletes the branch ``name`` (not the current one); the events no other
    /// branch shares are removed from the file. Raises ``NotFound``,
    /// ``Conflict`` (the current branch).
    fn delete_branch(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with_engine(py, |engine| engine.delete_branch(name))
    }
}
