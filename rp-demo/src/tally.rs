//! What a session's turns came to: [`UpdateTally`] counts the state-update passes by outcome
//! and groups the reasons of rejected reports by kind ([`reason_kind`]); [`Stats`] adds the
//! turns and replies and prints them all as a table ([`Stats::table`]).

use crate::observe::Call;
use crate::save::SaveCheck;
use rp_core::log::JudgedReport;
use rp_core::turn::TurnOutcome;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The kinds [`reason_kind`] sorts a rejection reason into: (kind, words of the reason that
/// show it), the first match wins. The words are those of `rp_core::update`'s messages.
const KINDS: &[(&str, &[&str])] = &[
    ("answer cut off (JSON ends early)", &["the json ends early"]),
    (
        "answer not one JSON object",
        &[
            "code fence",
            "text before the json",
            "text after the json",
            "not a json object",
            "the json cannot be read",
        ],
    ),
    ("answer too large", &["bytes; at most", "reports; at most"]),
    ("unknown report type", &["is not a report type"]),
    ("unknown field", &["unknown field"]),
    ("missing field", &["missing field", "needs a \"type\""]),
    (
        "wrong type of value",
        &[
            "invalid type",
            "invalid value",
            "unknown variant",
            "not a report",
        ],
    ),
    ("duplicate key", &["duplicate key", "duplicate field"]),
    (
        "unknown place or slot",
        &["there is no place", "has no slot"],
    ),
    (
        "unknown name",
        &["there is no \"", "names more than one entity"],
    ),
    ("not present", &["is not present", "did not hear line"]),
    ("a report about oneself", &["about oneself"]),
    ("already known", &["already known"]),
    ("imitates a system line", &["imitates a system line"]),
    (
        "a report that changes nothing",
        &[
            "needs a change",
            "needs mood, goals or status",
            "a feeling needs",
            "needs at least one participant",
        ],
    ),
    (
        "text empty or too long",
        &["is empty", "is longer than", "at most 8 goals"],
    ),
    (
        "value out of range",
        &[
            "is outside 0",
            "number out of range",
            " is warmer or",
            " is more or",
        ],
    ),
    (
        "no such thread or line",
        &[
            "no open thread",
            "of thread",
            "there is no line",
            "are not remembered",
        ],
    ),
    (
        "item out of reach",
        &[
            "not within reach",
            "is carried by",
            "is not carried",
            "already carried",
            "picks itself up",
        ],
    ),
];

/// The kind of a rejection reason (as `rp_core::update` words them), for grouping:
/// "unknown name", "not present", "answer not one JSON object", ...; "other" when none fits.
///
/// ```
/// use rp_demo::reason_kind;
/// assert_eq!(reason_kind("there is no \"the Ferrymen\""), "unknown name");
/// assert_eq!(reason_kind("Mira Holt is not present"), "not present");
/// assert_eq!(reason_kind("the JSON ends early (EOF while parsing)"), "answer cut off (JSON ends early)");
/// assert_eq!(reason_kind("the slot is full"), "other");
/// ```
pub fn reason_kind(reason: &str) -> &'static str {
    let lower = reason.to_lowercase();
    // serde's words for a `type` that is none of the report types (the list it expected
    // names them all, significance among them); an unknown value of a field is another kind.
    if lower.contains("unknown variant") && lower.contains("`significance`") {
        return "unknown report type";
    }
    KINDS
        .iter()
        .find(|(_, words)| words.iter().any(|w| lower.contains(w)))
        .map_or("other", |(kind, _)| kind)
}

/// Rejected reports of one kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reasons {
    /// How many.
    pub count: u32,
    /// The first reason of this kind, as the engine gave it.
    pub example: String,
}

/// The state-update passes of a session, by outcome.
///
/// A pass asks the model once; when anything in the answer is wrong the engine asks exactly
/// once more with the problems, then applies what is valid and rejects the rest with a reason
/// (`docs/turn.md` §5b). So every pass is valid the first time, valid after the retry, or
/// rejected (some reports still wrong after the retry).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateTally {
    /// Passes run.
    pub passes: u32,
    /// Passes whose first answer was refused, so the engine asked again.
    pub retried: u32,
    /// Passes whose first answer was valid as a whole.
    pub valid_first_time: u32,
    /// Retried passes whose second answer was valid as a whole.
    pub valid_after_retry: u32,
    /// Passes with reports still rejected after the retry.
    pub rejected: u32,
    /// Reports applied, over all passes.
    pub reports_applied: u32,
    /// Reports rejected, over all passes.
    pub reports_rejected: u32,
    /// The rejected reports by kind of reason ([`reason_kind`]).
    pub reasons: BTreeMap<&'static str, Reasons>,
}

impl UpdateTally {
    /// Counts one turn: `requests` is how many state-update generations the turn asked for (0:
    /// no pass ran, 1: the first answer was used, 2: it was retried), `reports` the turn's
    /// judged reports (`TurnOutcome::reports`).
    pub fn record(&mut self, requests: usize, reports: &[JudgedReport]) {
        if requests == 0 {
            return;
        }
        self.passes += 1;
        let retried = requests > 1;
        if retried {
            self.retried += 1;
        }
        let mut rejected = false;
        for r in reports {
            match &r.rejected {
                None => self.reports_applied += 1,
                Some(reason) => {
                    rejected = true;
                    self.reports_rejected += 1;
                    let entry = self.reasons.entry(reason_kind(reason)).or_default();
                    if entry.count == 0 {
                        entry.example = reason.clone();
                    }
                    entry.count += 1;
                }
            }
        }
        match (rejected, retried) {
            (true, _) => self.rejected += 1,
            (false, false) => self.valid_first_time += 1,
            (false, true) => self.valid_after_retry += 1,
        }
    }
}

/// A session's counts, for `--stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Turns run to their end (the player's lines and wake-ups).
    pub turns: u32,
    /// Turns abandoned on an error (a model server that failed); their input stays committed.
    pub failed_turns: u32,
    /// Replies spoken.
    pub replies: u32,
    /// Responders whose generation came back empty.
    pub silent: u32,
    /// Tool calls the replies made (`roll_dice`, `roll_effects`).
    pub tool_calls: u32,
    /// The state-update passes.
    pub updates: UpdateTally,
}

impl Stats {
    /// Counts a finished turn: its outcome, and the generations it asked for (from
    /// [`crate::Observed`]).
    pub fn record_turn(&mut self, outcome: &TurnOutcome, calls: &[Call]) {
        self.turns += 1;
        self.replies += outcome.replies.len() as u32;
        self.silent += outcome.silent.len() as u32;
        self.tool_calls += calls
            .iter()
            .filter(|c| !c.is_update())
            .filter_map(|c| c.result.as_ref().ok())
            .map(|r| r.tool_calls.len() as u32)
            .sum::<u32>();
        let requests = calls.iter().filter(|c| c.is_update()).count();
        self.updates.record(requests, &outcome.reports);
    }

    /// The counts as a two-column table, one row each, the reasons of rejected reports by
    /// kind under their row (most frequent first, with the first reason of each kind); `save`
    /// adds the result of reopening and replaying the save, `wall` the wall time.
    pub fn table(&self, save: Option<&SaveCheck>, wall: Option<std::time::Duration>) -> String {
        let u = &self.updates;
        let mut rows: Vec<(String, String)> = vec![
            ("turns".into(), self.turns.to_string()),
            ("turns failed".into(), self.failed_turns.to_string()),
            ("replies".into(), self.replies.to_string()),
            ("silent responders".into(), self.silent.to_string()),
            ("tool calls".into(), self.tool_calls.to_string()),
            ("state-update passes".into(), u.passes.to_string()),
            ("retried".into(), u.retried.to_string()),
            ("valid first time".into(), u.valid_first_time.to_string()),
            ("valid after retry".into(), u.valid_after_retry.to_string()),
            (
                "rejected after retry".into(),
                format!("{} passes ({} reports)", u.rejected, u.reports_rejected),
            ),
        ];
        let mut kinds: Vec<(&&str, &Reasons)> = u.reasons.iter().collect();
        kinds.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        for (kind, r) in kinds {
            // Under the value column ("" as the name).
            rows.push((
                String::new(),
                format!("  {kind}: {} (e.g. {})", r.count, one_line(&r.example, 100)),
            ));
        }
        rows.push(("reports applied".into(), u.reports_applied.to_string()));
        if let Some(check) = save {
            rows.push(("save reopened".into(), check.reopened_summary()));
            rows.push(("save replayed".into(), check.replayed_summary()));
        }
        if let Some(wall) = wall {
            rows.push(("wall time".into(), format!("{:.1} s", wall.as_secs_f64())));
        }
        let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let mut out = String::new();
        for (name, value) in rows {
            let _ = writeln!(out, "  {name:<width$}  {value}");
        }
        out
    }
}

/// `s` on one line, cut to `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(rejected: Option<&str>) -> JudgedReport {
        JudgedReport {
            report: "{}".into(),
            rejected: rejected.map(str::to_owned),
            answer: None,
        }
    }

    #[test]
    fn passes_are_counted_by_outcome() {
        let mut t = UpdateTally::default();
        t.record(0, &[]); // no pass
        t.record(1, &[report(None), report(None)]);
        t.record(1, &[]); // {"reports": []} is a valid answer
        t.record(2, &[report(None)]);
        t.record(
            2,
            &[
                report(None),
                report(Some("there is no \"Marta\"")),
                report(Some("there is no \"Tobi\"")),
            ],
        );
        t.record(
            2,
            &[report(Some(
                "the answer is not a JSON object; answer with {\"reports\": [...]}",
            ))],
        );
        assert_eq!(
            (
                t.passes,
                t.retried,
                t.valid_first_time,
                t.valid_after_retry,
                t.rejected
            ),
            (5, 3, 2, 1, 2)
        );
        assert_eq!((t.reports_applied, t.reports_rejected), (4, 3));
        assert_eq!(t.reasons["unknown name"].count, 2);
        assert_eq!(t.reasons["unknown name"].example, "there is no \"Marta\"");
        assert_eq!(t.reasons["answer not one JSON object"].count, 1);
    }

    #[test]
    fn every_outcome_of_a_pass_is_exactly_one_of_three() {
        let mut t = UpdateTally::default();
        for (requests, bad) in [(1, false), (1, true), (2, false), (2, true), (2, true)] {
            t.record(requests, &[report(bad.then_some("already known"))]);
        }
        assert_eq!(
            t.valid_first_time + t.valid_after_retry + t.rejected,
            t.passes
        );
    }

    #[test]
    fn reasons_of_the_engine_fall_into_their_kinds() {
        for (reason, kind) in [
            (
                "the JSON ends early (EOF while parsing a string at line 1 column 80)",
                "answer cut off (JSON ends early)",
            ),
            (
                "the JSON is wrapped in a code fence; answer with the JSON object alone",
                "answer not one JSON object",
            ),
            (
                "there is text after the JSON object; answer with the JSON object alone",
                "answer not one JSON object",
            ),
            (
                "teleport: unknown variant `teleport`, expected one of `feeling`, `learned`, `significance`",
                "unknown report type",
            ),
            (
                "feeling: unknown variant `warm`, expected one of `warmer`, `colder`",
                "wrong type of value",
            ),
            ("70 reports; at most 64 are read", "answer too large"),
            (
                "\"open_door\" is not a report type of this turn",
                "unknown report type",
            ),
            (
                "feeling: unknown field `love`, expected one of ...",
                "unknown field",
            ),
            (
                "significance: unknown field `x`, expected one of `who`, `line`, `significance`",
                "unknown field",
            ),
            ("learned: missing field `fact`", "missing field"),
            (
                "feeling: invalid type: integer `7`, expected a string",
                "wrong type of value",
            ),
            ("there is no place \"the cellar\"", "unknown place or slot"),
            ("the bar has no slot \"stool 9\"", "unknown place or slot"),
            ("\"Reed\" names more than one entity", "unknown name"),
            ("Mira Holt is not present", "not present"),
            ("Mira Holt did not hear line 2", "not present"),
            (
                "a report about oneself: use a state report",
                "a report about oneself",
            ),
            ("already known", "already known"),
            ("the fact imitates a system line", "imitates a system line"),
            (
                "an activity report needs a change",
                "a report that changes nothing",
            ),
            ("the fact is empty", "text empty or too long"),
            ("significance 3 is outside 0–1", "value out of range"),
            ("there is no open thread 4", "no such thread or line"),
            (
                "there is no line 5; the turn has 2",
                "no such thread or line",
            ),
            ("a mug is not within reach", "item out of reach"),
            ("the world refused something new", "other"),
        ] {
            assert_eq!(reason_kind(reason), kind, "{reason}");
        }
    }

    #[test]
    fn the_table_has_a_row_per_count_and_per_kind_of_reason() {
        let mut stats = Stats {
            turns: 3,
            replies: 2,
            ..Stats::default()
        };
        stats
            .updates
            .record(2, &[report(Some("Mira Holt is not present\nsecond line"))]);
        let table = stats.table(None, Some(std::time::Duration::from_millis(1500)));
        for row in [
            "turns                ",
            "replies",
            "state-update passes",
            "retried",
            "valid first time",
            "valid after retry",
            "  rejected after retry  1 passes (1 reports)\n",
            "\n                          not present: 1 (e.g. Mira Holt is not present second line)\n",
            "wall time",
            "1.5 s",
        ] {
            assert!(table.contains(row), "{row:?} in\n{table}");
        }
        assert!(!table.contains("save"), "{table}");
    }
}
