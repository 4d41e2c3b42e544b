//! The native half of the `rp_engine` Python package (docs/architecture.md).
//!
//! Built by maturin as `rp_engine._rp`; the pure-Python package in
//! `python/rp_engine/` re-exports what users import. Like `rp-ffi`, this
//! crate stays thin: it converts values and calls `rp-core`, nothing more.
//! Its stubs are `python/rp_engine/_rp.pyi`, checked by `mypy.stubtest`.
//!
//! - [`world`]: `World` (rp-core's `Engine`) and `check_sheet`;
//! - [`model`]: the world model as typed snapshots (`Entity`, `Container`,
//!   `Slot`, `Edge`, `Memory`, `Group`) and the history (`Branch`,
//!   `RewindPreview`);
//! - [`edits`]: the events behind `World.append` and the named edits;
//! - [`story`]: scoped events and threads (`ScopedEvent`, `Thread`, and
//!   the conversions of `World.plan_event` and friends);
//! - [`scene`]: `Scene`, and the scene options and reads of `World`;
//! - [`job`]: `Job`, the poll form of a scene close, a time skip, a world
//!   query or a tick, and the one-call forms driven by a Python `generate`;
//! - [`drives`]: the conversions of `World`'s drive methods, and
//!   `World.advance` (rp-core's `tick::advance` with a Python `generate`);
//! - [`graph`]: the relationship queries and the world-query records;
//! - [`rules`]: rules as data on `World`: `add_rule`, `remove_rule`,
//!   `rules` (docs/rules.md);
//! - [`requirements`]: decision points and validators on `World`:
//!   `add_requirement`, `remove_requirement`, `requirements`,
//!   `check_action` (docs/requirements.md);
//! - [`history`]: the past: `World.memories_at`, `World.beliefs_at`, and
//!   the `as_of=` of world queries;
//! - [`backup`]: `World.backup` and `World.export_branch`, copies of the
//!   save in new save files;
//! - [`compact`]: `World.compact`, the save's file shrunk to what it holds;
//! - [`decision`]: `Decision`, the outcome of response control;
//! - [`condition`]: `Condition`, one condition of the fact language on its own;
//! - [`memory`]: `Recalled`, and the conversions of `World`'s memory methods;
//! - [`turn`]: `Turn` (the sans-IO turn in its poll form) and
//!   `ScriptedGenerator`;
//! - [`run_turn`]: `World.run_turn`, the whole turn driven from Rust with
//!   the host's Python callables (`run_turn_async` is written in Python on
//!   top of `Turn`, in `python/rp_engine/_turn.py`);
//! - [`json`]: structured values as the JSON rp-core reads and writes, and
//!   rp-core's values straight to Python objects;
//! - [`errors`]: the exception hierarchy, one class per `rp_core::ErrorKind`;
//! - [`bench`]: `_bench_native`, the Rust peer of the Python overhead
//!   benchmark (`benches/python/overhead.py`), not part of the API.
//!
//! Drawing (`World._repr_html_`, `World.graph`) and the async forms of the
//! turn (`World.aturn`, `World.stream_turn`) are written in Python
//! (`python/rp_engine/_notebook.py`, `_turn.py`), called from here.

use pyo3::prelude::*;

mod backup;
mod beliefs;
mod bench;
mod cards;
mod compact;
mod condition;
mod decision;
mod drives;
mod edits;
mod errors;
mod graph;
mod history;
mod index;
mod job;
mod json;
mod lines;
mod lore;
mod memory;
mod model;
mod request;
mod requirements;
mod rules;
mod run_turn;
mod scene;
mod story;
mod turn;
mod world;

/// The native half of `rp_engine`; import from `rp_engine` instead.
#[pymodule]
mod _rp {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::condition::Condition;
    #[pymodule_export]
    use crate::decision::Decision;
    #[pymodule_export]
    use crate::errors::RequirementUnmet;
    #[pymodule_export]
    use crate::errors::{
        ActionRefused, CapacityError, Conflict, CorruptSave, FactSyntaxError, GenerationError,
        InvalidInput, InvalidReport, NotASave, NotFound, RpError, StorageError, UnsupportedVersion,
        WorldFileError,
    };
    #[pymodule_export]
    use crate::job::Job;
    #[pymodule_export]
    use crate::memory::Recalled;
    #[pymodule_export]
    use crate::model::{Branch, Container, Edge, Entity, Group, Memory, RewindPreview, Slot};
    #[pymodule_export]
    use crate::scene::Scene;
    #[pymodule_export]
    use crate::story::{ScopedEvent, Thread};
    #[pymodule_export]
    use crate::turn::{ScriptedGenerator, Turn};
    #[pymodule_export]
    use crate::world::{World, check_sheet};

    /// The version of the rp engine, such as ``"0.1.0"``.
    #[pyfunction]
    fn version() -> &'static str {
        rp_core::version()
    }

    /// Fills in the module attributes that `#[pymodule_export]` does not:
    /// `__version__`, and the benchmark's `_bench_native`.
    #[pymodule_init]
    fn init(module: &Bound<'_, PyModule>) -> PyResult<()> {
        module.add("__version__", rp_core::version())?;
        // The benchmark's Rust peer: an attribute, but not in `__all__` (which
        // `add` and `#[pymodule_export]` would put it in), as it is not API.
        module.setattr(
            "_bench_native",
            wrap_pyfunction!(crate::bench::bench_native, module)?,
        )
    }
}
