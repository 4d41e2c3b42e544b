//! `AsOf`: a point in a world's history, by seq or by host time, on a named branch or the
//! current one (docs/history.md). What "what did X believe at time T" and a query asked about
//! the past name; the one rule for reading it from JSON, for Rust, C and Python alike.

use super::{Millis, Seq};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Where in a branch's history: after the event of a seq, or the last event at or before a
/// host time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HistoryPoint {
    /// The world as it was right after the event of this seq (1 or more).
    Seq(Seq),
    /// The world as it was after the last event whose clock was at or before this host time
    /// (the world's clock only moves forward, so that is one seq).
    Time(Millis),
}

/// A point in a world's history: [`HistoryPoint`] on the branch named `branch`, or on the
/// current branch when `None`. Reads from and writes to JSON as one object with exactly one
/// of `seq` and `time`, and optionally `branch`:
///
/// ```
/// use rp_core::{AsOf, HistoryPoint};
/// let at = AsOf::from_json(r#"{"time": 3600000, "branch": "main"}"#)?;
/// assert_eq!(at.point, HistoryPoint::Time(3_600_000));
/// assert_eq!(at.branch.as_deref(), Some("main"));
/// assert_eq!(AsOf::from_json(r#"{"seq": 120}"#)?, AsOf::seq(120));
/// assert!(AsOf::from_json(r#"{"seq": 1, "time": 2}"#).is_err());
/// # Ok::<(), rp_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "AsOfFields", into = "AsOfFields")]
pub struct AsOf {
    /// Where in the branch's history.
    pub point: HistoryPoint,
    /// The branch's name; `None`: the current branch.
    pub branch: Option<String>,
}

/// The JSON form of [`AsOf`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AsOfFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<Seq>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time: Option<Millis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
}

impl TryFrom<AsOfFields> for AsOf {
    type Error = String;

    fn try_from(f: AsOfFields) -> std::result::Result<AsOf, String> {
        AsOf::new(f.seq, f.time, f.branch).map_err(|e| match e {
            Error::Invalid { reason, .. } => reason,
            other => other.to_string(),
        })
    }
}

impl From<AsOf> for AsOfFields {
    fn from(a: AsOf) -> AsOfFields {
        let (seq, time) = match a.point {
            HistoryPoint::Seq(s) => (Some(s), None),
            HistoryPoint::Time(t) => (None, Some(t)),
        };
        AsOfFields {
            seq,
            time,
            branch: a.branch,
        }
    }
}

impl AsOf {
    /// Right after the event of `seq`, on the current branch.
    pub fn seq(seq: Seq) -> AsOf {
        AsOf {
            point: HistoryPoint::Seq(seq),
            branch: None,
        }
    }

    /// The last event at or before host time `time`, on the current branch.
    pub fn time(time: Millis) -> AsOf {
        AsOf {
            point: HistoryPoint::Time(time),
            branch: None,
        }
    }

    /// The same point on the branch named `branch`.
    pub fn on_branch(mut self, branch: impl Into<String>) -> AsOf {
        self.branch = Some(branch.into());
        self
    }

    /// A point from its parts as a host gives them (keywords, JSON fields): exactly one of
    /// `seq` and `time`; `branch` optional. Anything else is an
    /// [`crate::ErrorKind::Invalid`] error.
    pub fn new(seq: Option<Seq>, time: Option<Millis>, branch: Option<String>) -> Result<AsOf> {
        let point = match (seq, time) {
            (Some(s), None) => HistoryPoint::Seq(s),
            (None, Some(t)) => HistoryPoint::Time(t),
            (Some(_), Some(_)) => {
                return Err(Error::invalid("as_of", "give a seq or a time, not both"));
            }
            (None, None) => return Err(Error::invalid("as_of", "give a seq or a time")),
        };
        if let Some(b) = &branch
            && b.trim().is_empty()
        {
            return Err(Error::invalid("as_of", "the branch name is empty"));
        }
        Ok(AsOf { point, branch })
    }

    /// Reads a point from a JSON object: `{"seq": 120}`, `{"time": 3600000}`, either with
    /// `"branch": "name"`. Unknown fields are refused.
    pub fn from_json(json: &str) -> Result<AsOf> {
        crate::json::json_object("as_of", json)
    }
}

impl std::fmt::Display for AsOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.point {
            HistoryPoint::Seq(s) => write!(f, "seq {s}")?,
            HistoryPoint::Time(t) => write!(f, "time {t}")?,
        }
        match &self.branch {
            Some(b) => write!(f, " of branch {b:?}"),
            None => write!(f, " of the current branch"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_one_json_shape() {
        for json in [
            r#"{"seq":120}"#,
            r#"{"time":-5}"#,
            r#"{"seq":3,"branch":"what-if"}"#,
        ] {
            let at = AsOf::from_json(json).expect(json);
            assert_eq!(serde_json::to_string(&at).expect("json"), json);
        }
    }

    #[test]
    fn refuses_what_is_not_one_point() {
        for json in [
            r#"{}"#,
            r#"{"seq":1,"time":2}"#,
            r#"{"seq":1,"when":2}"#,
            r#"{"seq":-1}"#,
            r#"{"time":1,"branch":" "}"#,
            r#"[1]"#,
        ] {
            let e = AsOf::from_json(json).expect_err(json);
            assert_eq!(e.kind(), crate::ErrorKind::Invalid, "{json}: {e}");
        }
    }
}
