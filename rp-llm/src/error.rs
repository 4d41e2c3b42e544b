//! What can go wrong talking to a model server, as one `#[non_exhaustive]` error with a stable
//! [`ErrorKind`]. Through [`rp_core::turn::Generate`] the engine sees the error's text (it
//! becomes an `rp_core::Error::Generation`); a host calling [`crate::OpenAiClient::chat`]
//! directly gets the typed error.

/// An error of the client. Every message says what was wrong and, where it helps, what to
/// change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is incomplete or malformed; `what` names the field or the
    /// environment variable.
    #[error("{what}: {message}")]
    Config {
        /// The field (`base_url`) or environment variable (`RP_LLM_BASE_URL`).
        what: String,
        /// What is wrong with it.
        message: String,
    },
    /// No connection could be opened (refused, unreachable, the name did not resolve).
    #[error("cannot connect to {address}: {message}")]
    Connect {
        /// `host:port`.
        address: String,
        /// Why.
        message: String,
    },
    /// The TLS handshake or the TLS layer failed.
    #[error("TLS with {host} failed: {message}")]
    Tls {
        /// The server's name.
        host: String,
        /// Why.
        message: String,
    },
    /// The server was silent for longer than a timeout allows.
    #[error("{message}")]
    Timeout {
        /// Which timeout: `connect`, `read` (silence between two bytes) or `total` (one
        /// attempt, from connecting to the last byte).
        which: &'static str,
        /// The timeout, in milliseconds.
        after_ms: u64,
        /// The whole message.
        message: String,
    },
    /// The server answered with an HTTP error status, or reported an error inside a stream.
    #[error("the server answered {status}: {message}")]
    Status {
        /// The HTTP status (for an error inside a stream: the code it gave, else 500).
        status: u16,
        /// The server's own message when it sent one (`error.message`), else the start of
        /// its answer.
        message: String,
        /// How long the server asked the client to wait (`Retry-After`), in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// The answer is not what an OpenAI-compatible server sends: not HTTP, not JSON, an HTML
    /// page, JSON of the wrong shape.
    #[error("the server's answer is not an OpenAI-compatible one: {message}")]
    Protocol {
        /// What was wrong, with the start of the offending text.
        message: String,
    },
    /// The connection closed or broke before the whole answer arrived (for a stream: before
    /// `data: [DONE]`). Whatever was streamed to the sink before is not a result.
    #[error("the connection ended early: {message}")]
    Dropped {
        /// Where it ended.
        message: String,
    },
    /// The answer is larger than `max_response_bytes`.
    #[error(
        "the answer is larger than {limit} bytes (max_response_bytes); a model answer never is"
    )]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The circuit breaker is open: recent calls failed, so this one fails fast without
    /// reaching the server.
    #[error(
        "the circuit breaker is open after {failures} failed calls in a row; calls fail fast for another {retry_in_ms} ms"
    )]
    CircuitOpen {
        /// The consecutive failures that opened it.
        failures: u32,
        /// When the next trial call is allowed, in milliseconds from now (0: a trial call is
        /// under way).
        retry_in_ms: u64,
    },
}

/// The kind of an [`Error`], stable across versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`Error::Config`].
    Config,
    /// [`Error::Connect`].
    Connect,
    /// [`Error::Tls`].
    Tls,
    /// [`Error::Timeout`].
    Timeout,
    /// [`Error::Status`].
    Status,
    /// [`Error::Protocol`].
    Protocol,
    /// [`Error::Dropped`].
    Dropped,
    /// [`Error::TooLarge`].
    TooLarge,
    /// [`Error::CircuitOpen`].
    CircuitOpen,
}

impl Error {
    /// Its kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Config { .. } => ErrorKind::Config,
            Error::Connect { .. } => ErrorKind::Connect,
            Error::Tls { .. } => ErrorKind::Tls,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::Status { .. } => ErrorKind::Status,
            Error::Protocol { .. } => ErrorKind::Protocol,
            Error::Dropped { .. } => ErrorKind::Dropped,
            Error::TooLarge { .. } => ErrorKind::TooLarge,
            Error::CircuitOpen { .. } => ErrorKind::CircuitOpen,
        }
    }

    /// Whether the same request may succeed if tried again: a connection that could not be
    /// opened or broke, a timeout, and the statuses 408, 429 and 5xx. Everything else (the
    /// server refused the request, or answered with something that is not an answer) would
    /// fail the same way again.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Connect { .. } | Error::Timeout { .. } | Error::Dropped { .. } => true,
            Error::Status { status, .. } => *status == 408 || *status == 429 || *status >= 500,
            _ => false,
        }
    }

    /// Whether the error says the server is unhealthy, which is what the circuit breaker
    /// counts. A refusal of the request (4xx other than 408 and 429) shows the server is up.
    pub(crate) fn counts_against_server(&self) -> bool {
        match self {
            Error::Status { status, .. } => *status == 408 || *status == 429 || *status >= 500,
            Error::Config { .. } | Error::CircuitOpen { .. } => false,
            _ => true,
        }
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Error {
        Error::Protocol {
            message: message.into(),
        }
    }

    pub(crate) fn dropped(message: impl Into<String>) -> Error {
        Error::Dropped {
            message: message.into(),
        }
    }

    pub(crate) fn config(what: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Config {
            what: what.into(),
            message: message.into(),
        }
    }
}

/// The start of `bytes` as text for an error message: at most `max` characters, control
/// characters escaped, and "…" when cut.
pub(crate) fn snippet(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(max * 4)]);
    let mut out = String::new();
    let mut chars = text.chars();
    for c in chars.by_ref().take(max) {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    if chars.next().is_some() || bytes.len() > max * 4 {
        out.push('…');
    }
    format!("\"{out}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_short_and_escaped() {
        assert_eq!(snippet(b"ab\ncd", 10), "\"ab\\ncd\"");
        assert_eq!(snippet(b"abcdef", 3), "\"abc…\"");
        assert_eq!(snippet(b"\x00", 3), "\"\\u{0}\"");
        assert_eq!(snippet(&[0xff, b'a'], 3), "\"\u{fffd}a\"");
    }

    #[test]
    fn retryable_errors_are_the_transient_ones() {
        let status = |status| Error::Status {
            status,
            message: String::new(),
            retry_after_ms: None,
        };
        for s in [408, 429, 500, 502, 503] {
            assert!(status(s).is_retryable(), "{s}");
            assert!(status(s).counts_against_server(), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!status(s).is_retryable(), "{s}");
            assert!(!status(s).counts_against_server(), "{s}");
        }
        assert!(Error::dropped("x").is_retryable());
        assert!(!Error::protocol("x").is_retryable());
        assert!(Error::protocol("x").counts_against_server());
    }
}
