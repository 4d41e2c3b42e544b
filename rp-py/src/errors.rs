//! The exception hierarchy of `rp_engine`, mirroring `rp_core::ErrorKind`.
//!
//! `RpError` is the base of every error rp raises; each kind of
//! `rp_core::Error` has one subclass, so Python code catches exactly what it
//! can handle. Errors that locate their cause carry it as attributes:
//! `WorldFileError.file/.line/.column/.field`,
//! `FactSyntaxError.owner/.line/.column`; `InvalidReport` (an
//! `InvalidInput` of the state-update reports the host applies) has
//! `.reasons`.

use pyo3::IntoPyObjectExt;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use rp_core::ErrorKind;

create_exception!(
    rp_engine,
    RpError,
    PyException,
    "The base class of every error rp raises."
);
create_exception!(
    rp_engine,
    NotFound,
    RpError,
    "An id, name, key or branch that does not exist."
);
create_exception!(
    rp_engine,
    InvalidInput,
    RpError,
    "An argument or event that is malformed or out of range."
);
create_exception!(
    rp_engine,
    Conflict,
    RpError,
    "A request that contradicts the current state: a duplicate name, an entity in two places, \
     a save file that already exists."
);
create_exception!(
    rp_engine,
    CapacityError,
    RpError,
    "A slot that is already full."
);
create_exception!(
    rp_engine,
    WorldFileError,
    RpError,
    "A world file (TOML) with a syntax, type or reference error.\n\n\
     Attributes: ``file`` (str), ``line`` and ``column`` (int, 1-based; 0 when the file could \
     not be read), ``field`` (str, the TOML key at fault; may be empty)."
);
create_exception!(
    rp_engine,
    StorageError,
    RpError,
    "An I/O failure of the save file, a full disk included."
);
create_exception!(
    rp_engine,
    CorruptSave,
    RpError,
    "A save file whose content is damaged."
);
create_exception!(
    rp_engine,
    UnsupportedVersion,
    RpError,
    "A save file written by a newer format version."
);
create_exception!(
    rp_engine,
    NotASave,
    RpError,
    "A file that is not an rp save at all."
);
create_exception!(
    rp_engine,
    FactSyntaxError,
    RpError,
    "A fact sheet that does not compile.\n\n\
     Attributes: ``line`` and ``column`` (int, 1-based; the column counts characters), \
     ``owner`` (str, whose sheet; None from check_sheet)."
);

create_exception!(
    rp_engine,
    GenerationError,
    RpError,
    "The host's generator (a ``generate``, ``embed`` or ``on_action`` callable) failed \
     during a turn.\n\n\
     The turn is abandoned; its input stays committed. The callable's own exception is \
     chained as ``__cause__``."
);

create_exception!(
    rp_engine,
    RequirementUnmet,
    RpError,
    "A transition guarded by a pending requirement (docs/requirements.md): a move out of a \
     guarded place, a scoped event, a time skip, a scene close, or a host action checked with \
     ``World.check_action``. Nothing changed.\n\n\
     Attributes: ``requirement`` (str, its id), ``name`` (str), ``text`` (str), ``transition`` \
     (str, what was refused)."
);

create_exception!(
    rp_engine,
    InvalidReport,
    InvalidInput,
    "A state-update report the engine refuses (``World.apply_reports``): a name that is not \
     present, a value out of range, a report that cannot be read. Nothing of the reports was \
     applied.\n\n\
     Attributes: ``reasons`` (list, one per report: why it was refused, or None for a valid \
     one; a single reason when the reports could not be read at all)."
);

create_exception!(
    rp_engine,
    ActionRefused,
    PyException,
    "Raised by the host's ``on_action`` callable (``World.run_turn``, \
     ``World.run_turn_async``) to refuse a host action: the game did not do it.\n\n\
     Its message is the reason, recorded as the ``\"rejected\"`` of the action's report; \
     the turn goes on. Not an ``RpError``: rp never raises it."
);

/// The exception of an rp-core error: its kind's class, its message, and the
/// location attributes of the errors that have one.
pub(crate) fn to_py_err(py: Python<'_>, error: rp_core::Error) -> PyErr {
    let message = error.to_string();
    let exception = match error.kind() {
        ErrorKind::NotFound => NotFound::new_err(message),
        ErrorKind::Invalid => InvalidInput::new_err(message),
        ErrorKind::Conflict => Conflict::new_err(message),
        ErrorKind::Capacity => CapacityError::new_err(message),
        ErrorKind::WorldFile => WorldFileError::new_err(message),
        ErrorKind::Storage => StorageError::new_err(message),
        ErrorKind::Corrupt => CorruptSave::new_err(message),
        ErrorKind::UnsupportedVersion => UnsupportedVersion::new_err(message),
        ErrorKind::NotASave => NotASave::new_err(message),
        ErrorKind::FactSyntax => FactSyntaxError::new_err(message),
        ErrorKind::Generation => GenerationError::new_err(message),
        ErrorKind::RequirementUnmet => RequirementUnmet::new_err(message),
        // `ErrorKind` is #[non_exhaustive]: a kind added to rp-core before it
        // has a class here is still an RpError.
        _ => RpError::new_err(message),
    };
    let attributes = match error {
        rp_core::Error::WorldFile {
            file,
            line,
            column,
            field,
            ..
        } => set_attributes(
            py,
            &exception,
            [
                ("file", file.into_bound_py_any(py)),
                ("line", line.into_bound_py_any(py)),
                ("column", column.into_bound_py_any(py)),
                ("field", field.into_bound_py_any(py)),
            ],
        ),
        rp_core::Error::FactSyntax {
            owner,
            line,
            column,
            ..
        } => fact_syntax_attributes(py, &exception, Some(owner), line, column),
        rp_core::Error::RequirementUnmet {
            id,
            name,
            text,
            transition,
        } => set_attributes(
            py,
            &exception,
            [
                ("requirement", id.into_bound_py_any(py)),
                ("name", name.into_bound_py_any(py)),
                ("text", text.into_bound_py_any(py)),
                ("transition", transition.into_bound_py_any(py)),
            ],
        ),
        _ => Ok(()),
    };
    match attributes {
        Ok(()) => exception,
        Err(error) => error,
    }
}

/// The `InvalidReport` of reports `World.apply_reports` refused.
pub(crate) fn invalid_report(
    py: Python<'_>,
    message: String,
    reasons: Vec<Option<String>>,
) -> PyErr {
    let exception = InvalidReport::new_err(format!("invalid report: {message}"));
    match set_attributes(py, &exception, [("reasons", reasons.into_bound_py_any(py))]) {
        Ok(()) => exception,
        Err(error) => error,
    }
}

/// The `FactSyntaxError` of a sheet checked on its own (no owner).
pub(crate) fn sheet_error(py: Python<'_>, error: rp_core::facts::SheetError) -> PyErr {
    let exception = FactSyntaxError::new_err(format!(
        "line {}, column {}: {}",
        error.line, error.column, error.message
    ));
    match fact_syntax_attributes(py, &exception, None, error.line, error.column) {
        Ok(()) => exception,
        Err(error) => error,
    }
}

fn fact_syntax_attributes(
    py: Python<'_>,
    exception: &PyErr,
    owner: Option<String>,
    line: usize,
    column: usize,
) -> PyResult<()> {
    set_attributes(
        py,
        exception,
        [
            ("owner", owner.into_bound_py_any(py)),
            ("line", line.into_bound_py_any(py)),
            ("column", column.into_bound_py_any(py)),
        ],
    )
}

fn set_attributes<'py, const N: usize>(
    py: Python<'py>,
    exception: &PyErr,
    attributes: [(&str, PyResult<Bound<'py, PyAny>>); N],
) -> PyResult<()> {
    let value = exception.value(py);
    for (name, attribute) in attributes {
        value.setattr(name, attribute?)?;
    }
    Ok(())
}
