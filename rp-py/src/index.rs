//! Where the memory index came from, on `World` (docs/memory.md, "The index beside the save").

use pyo3::prelude::*;

use crate::world::World;

#[pymethods]
impl World {
    /// Where the memory index came from: None before the first recall (and after a rewind or
    /// a branch switch until the next); ``{"loaded": {"caught_up": n}}`` when it was read from
    /// beside the save (``SAVE.index``) and caught up with n events; ``{"built": {"reason":
    /// ...}}`` when it was built there because the one there could not be used; ``"memory"``
    /// for a world that is not a file.
    fn memory_index_origin<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let origin = self.with_engine(py, |engine| Ok(engine.memory_index_origin()))?;
        crate::json::serialize(py, &origin)
    }
}
