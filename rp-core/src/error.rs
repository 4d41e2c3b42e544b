//! The one error type of rp-core.
//!
//! Every fallible call returns [`Error`]. Its [`Error::kind`] is stable: the C result codes and
//! the Python exception classes are derived from it, so the three stay in step.

use std::fmt;

/// A stable classification of [`Error`], shared by the C and Python bindings.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An id, name or branch that does not exist.
    NotFound,
    /// An event or argument that is malformed or out of range.
    Invalid,
    /// A request that contradicts the current state (duplicate name, an entity in two places,
    /// a container that is not empty, a branch that is current).
    Conflict,
    /// A slot that is already full.
    Capacity,
    /// A world file (TOML) with a syntax, type or reference error.
    WorldFile,
    /// An I/O failure of the save file (including a full disk).
    Storage,
    /// A save file whose content is damaged.
    Corrupt,
    /// A save file written by a newer format version.
    UnsupportedVersion,
    /// A file that is not an rp save at all.
    NotASave,
    /// A fact sheet with a syntax or compile error (line and column in the error).
    FactSyntax,
    /// The host's model failed to generate (or embed) what a turn needed.
    Generation,
    /// A transition guarded by a pending requirement (docs/requirements.md): refused with the
    /// requirement's id, name and text.
    RequirementUnmet,
}

impl ErrorKind {
    /// Every kind, in declaration order (bindings map each to a code or an exception class).
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::NotFound,
        ErrorKind::Invalid,
        ErrorKind::Conflict,
        ErrorKind::Capacity,
        ErrorKind::WorldFile,
        ErrorKind::Storage,
        ErrorKind::Corrupt,
        ErrorKind::UnsupportedVersion,
        ErrorKind::NotASave,
        ErrorKind::FactSyntax,
        ErrorKind::Generation,
        ErrorKind::RequirementUnmet,
    ];

    /// A short, stable, lowercase name (`"not_found"`, `"storage"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Capacity => "capacity",
            ErrorKind::WorldFile => "world_file",
            ErrorKind::Storage => "storage",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::UnsupportedVersion => "unsupported_version",
            ErrorKind::NotASave => "not_a_save",
            ErrorKind::FactSyntax => "fact_syntax",
            ErrorKind::Generation => "generation",
            ErrorKind::RequirementUnmet => "requirement_unmet",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that can go wrong in rp-core, with what a user needs to fix it.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Something named by the caller does not exist.
    #[error("{what} {id} does not exist")]
    NotFound {
        /// What was looked up ("entity", "container", "branch", ...).
        what: &'static str,
        /// The id or name that was not found.
        id: String,
    },
    /// A malformed event or argument.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// What was invalid ("event", "edge", "seq", ...).
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// A request that contradicts the current state.
    #[error("{reason}")]
    Conflict {
        /// Why.
        reason: String,
    },
    /// A slot is full.
    #[error("slot \"{slot}\" of container {container} is full (capacity {capacity})")]
    SlotFull {
        /// The container's name.
        container: String,
        /// The slot's name.
        slot: String,
        /// Its capacity.
        capacity: u32,
    },
    /// A world file could not be loaded.
    #[error("{}", world_file_message(file, *line, *column, field, message))]
    WorldFile {
        /// The file name as given by the caller.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The field (TOML key or path) at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// An I/O failure of the save file.
    #[error("storage error on {file}: {message}")]
    Storage {
        /// The save file (or `":memory:"`).
        file: String,
        /// The underlying failure.
        message: String,
    },
    /// A damaged save file.
    #[error("{file} is damaged at {location}: {message}")]
    Corrupt {
        /// The save file.
        file: String,
        /// Where: `"seq 42 of branch 1"`, `"snapshot at seq 1000"`, `"metadata"`.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// A save file from a newer format version.
    #[error(
        "{file} ({location}) was written by format version {found}; this build reads up to {supported}"
    )]
    UnsupportedVersion {
        /// The save file.
        file: String,
        /// Which record: `"seq 42 of branch 1"`, `"metadata"`, ...
        location: String,
        /// The version found in the file.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// A fact sheet that does not compile.
    #[error("fact sheet of {owner}, line {line}, column {column}: {message}")]
    FactSyntax {
        /// Whose sheet (entity or container name).
        owner: String,
        /// 1-based line of the sheet.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The host's model failed.
    #[error("generation failed: {message}")]
    Generation {
        /// What the host's generator reported.
        message: String,
    },
    /// A file that is not an rp save.
    #[error("{file} is not an rp save file: {reason}")]
    NotASave {
        /// The file.
        file: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A guarded transition refused while a requirement is pending (docs/requirements.md).
    #[error("{transition} is refused: requirement {name:?} ({id}) is unmet: {text}")]
    RequirementUnmet {
        /// The requirement's id.
        id: String,
        /// Its name.
        name: String,
        /// Its text.
        text: String,
        /// The transition refused, in words ("Wren leaving The Jetty").
        transition: String,
    },
}

impl Error {
    /// The stable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::Invalid { .. } => ErrorKind::Invalid,
            Error::Conflict { .. } => ErrorKind::Conflict,
            Error::SlotFull { .. } => ErrorKind::Capacity,
            Error::WorldFile { .. } => ErrorKind::WorldFile,
            Error::Storage { .. } => ErrorKind::Storage,
            Error::Corrupt { .. } => ErrorKind::Corrupt,
            Error::UnsupportedVersion { .. } => ErrorKind::UnsupportedVersion,
            Error::NotASave { .. } => ErrorKind::NotASave,
            Error::FactSyntax { .. } => ErrorKind::FactSyntax,
            Error::Generation { .. } => ErrorKind::Generation,
            Error::RequirementUnmet { .. } => ErrorKind::RequirementUnmet,
        }
    }

    pub(crate) fn not_found(what: &'static str, id: impl fmt::Display) -> Error {
        Error::NotFound {
            what,
            id: id.to_string(),
        }
    }

    pub(crate) fn invalid(what: &'static str, reason: impl Into<String>) -> Error {
        Error::Invalid {
            what,
            reason: reason.into(),
        }
    }

    pub(crate) fn conflict(reason: impl Into<String>) -> Error {
        Error::Conflict {
            reason: reason.into(),
        }
    }
}

fn world_file_message(
    file: &str,
    line: usize,
    column: usize,
    field: &str,
    message: &str,
) -> String {
    let place = if line == 0 {
        file.to_owned()
    } else {
        format!("{file}:{line}:{column}")
    };
    if field.is_empty() {
        format!("{place}: {message}")
    } else {
        format!("{place}: {field}: {message}")
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_once() {
        let names: std::collections::BTreeSet<_> =
            ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }
}
