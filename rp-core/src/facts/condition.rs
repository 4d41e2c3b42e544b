//! One condition outside a sheet: the language of a `$if` line, compiled once and evaluated
//! as often as needed (a door that opens only at night, a quest step that waits for a word).

use super::compile::{Node, RegexSource, SelfFacts, compile_expression};
use super::eval::{Context, Eval, Facts, Fault, NoTrace, Traced, condition};
use super::parser::SyntaxError;
use super::{Draws, Sheet, TraceEntry, TraceEvent};
use std::sync::Arc;

/// A compiled condition: the expression of a `$if` line (without `$if` and `: action`).
///
/// `self.key` and `has_fact` refer to the sheet the condition was compiled for
/// ([`Condition::compile_for`]), or to nothing ([`Condition::compile`]: every `self.key` is
/// `undefined` and `has_fact` is false). Evaluation never fails the caller: a runtime type
/// error (reading a property of `undefined`, say) is an `Err` with JavaScript's kind of
/// message, which a sheet would trace and count as false.
///
/// ```
/// use rp_core::facts::{Condition, Context, RegexCache, SeededDraws};
/// let night_door = Condition::compile("time.is_night && !content.match(/knock/i)",
///     &mut RegexCache::default())?;
/// let ctx = Context { hour: 23.0, content: "Hello?", ..Context::default() };
/// assert_eq!(night_door.test(&ctx, &mut SeededDraws::new(1, 0)), Ok(true));
/// # Ok::<(), rp_core::facts::SyntaxError>(())
/// ```
#[derive(Debug)]
pub struct Condition {
    node: Node,
    self_facts: SelfFacts,
    plain: Vec<Arc<str>>,
    plain_lower: Vec<Box<str>>,
}

impl Condition {
    /// Compiles `source` on its own: `self` has no keys and `has_fact` sees no facts.
    /// Regex literals come from `regexes` (a world's [`super::RegexCache`]).
    pub fn compile(source: &str, regexes: &mut dyn RegexSource) -> Result<Condition, SyntaxError> {
        Condition::build(source, SelfFacts::new(), Vec::new(), regexes)
    }

    /// Compiles `source` as if it were a `$if` line of `sheet`: `self.key` reads the sheet's
    /// `key: value` facts and `has_fact` searches its unconditional facts.
    pub fn compile_for(
        source: &str,
        sheet: &Sheet,
        regexes: &mut dyn RegexSource,
    ) -> Result<Condition, SyntaxError> {
        Condition::build(
            source,
            sheet.self_facts().clone(),
            sheet.plain_facts().to_vec(),
            regexes,
        )
    }

    fn build(
        source: &str,
        self_facts: SelfFacts,
        plain: Vec<Arc<str>>,
        regexes: &mut dyn RegexSource,
    ) -> Result<Condition, SyntaxError> {
        let plain_lower: Vec<Box<str>> = plain.iter().map(|f| f.to_lowercase().into()).collect();
        let facts = Facts {
            plain: &plain,
            plain_lower: &plain_lower,
            fired: &[],
        };
        let node = compile_expression(source, &self_facts, facts, regexes)?;
        Ok(Condition {
            node,
            self_facts,
            plain,
            plain_lower,
        })
    }

    fn facts(&self) -> Facts<'_> {
        Facts {
            plain: &self.plain,
            plain_lower: &self.plain_lower,
            fired: &[],
        }
    }

    /// Whether the condition holds (JavaScript's ToBoolean of its value), drawing any
    /// randomness from `draws`. `Err` is a runtime type error.
    ///
    /// `draws` may be a concrete generator (its draws are then inlined into the evaluation)
    /// or a `&mut dyn Draws`.
    #[inline]
    pub fn test<D: Draws + ?Sized>(
        &self,
        ctx: &Context<'_>,
        draws: &mut D,
    ) -> Result<bool, String> {
        // Inlined into the caller with the walk of the usual operands (see `eval::condition`):
        // a draw from a concrete generator inlines too, nothing is set up for them, and an
        // `unwrap_or` there needs no `String`.
        self.truthy(ctx, draws).map_err(Fault::into_message)
    }

    #[inline(always)]
    fn truthy<D: Draws + ?Sized>(&self, ctx: &Context<'_>, draws: &mut D) -> Result<bool, Fault> {
        condition(
            &self.node,
            ctx,
            draws,
            NoTrace,
            |draws, trace, rest, all| {
                Eval::new(ctx, &self.self_facts, self.facts(), draws, trace).rest(rest, all)
            },
        )
    }

    /// [`Condition::test`], also appending to `trace` what a sheet would trace: each random
    /// draw and dice roll, and a runtime error (in which case the answer is false).
    pub fn test_traced<D: Draws + ?Sized>(
        &self,
        ctx: &Context<'_>,
        draws: &mut D,
        trace: &mut Vec<TraceEvent>,
    ) -> bool {
        let mut entries: Vec<TraceEntry> = Vec::new();
        let traced = Traced {
            entries: &mut entries,
            line: 0,
        };
        let result = condition(&self.node, ctx, draws, traced, |draws, trace, rest, all| {
            Eval::new(ctx, &self.self_facts, self.facts(), draws, trace).rest(rest, all)
        });
        trace.extend(entries.into_iter().map(|e| e.event));
        result.unwrap_or_else(|message| {
            trace.push(TraceEvent::Error {
                message: message.into_message(),
            });
            false
        })
    }

    /// Tests the condition outside a world, as a host checks one (C's `rp_condition_test`,
    /// Python's `Condition.test`): against `context`, with `random()` and `roll()` drawing
    /// from the world generator of `seed` from its start, so the same seed gives the same
    /// answer. A runtime type error makes it false and is in the trace, as on a sheet line.
    pub fn test_seeded(&self, context: &ContextData, seed: u64) -> Tested {
        let mut trace = Vec::new();
        let holds = self.test_traced(
            &context.context(),
            &mut super::SeededDraws::new(seed, 0),
            &mut trace,
        );
        Tested { holds, trace }
    }
}

/// What testing a condition outside a world came to ([`Condition::test_seeded`]). In JSON:
/// `{"holds": false, "trace": [{"kind": "random", "value": 0.42}, …]}`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Tested {
    /// Whether it holds (JavaScript's truthiness of its value).
    pub holds: bool,
    /// Each random draw, dice roll and runtime error, in order.
    pub trace: Vec<TraceEvent>,
}

impl SyntaxError {
    /// This error as an [`crate::Error::FactSyntax`] of `source` (the text it was found in),
    /// placed by line and column (1-based, columns in characters) rather than byte offset.
    pub fn to_error(&self, source: &str, owner: &str) -> crate::Error {
        let mut end = self.offset.min(source.len());
        while !source.is_char_boundary(end) {
            end -= 1;
        }
        let before = &source[..end];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        crate::Error::FactSyntax {
            owner: owner.to_owned(),
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            message: self.message.clone(),
        }
    }
}

/// A [`Context`] that owns its strings: what a host fills in (or reads from JSON) to evaluate
/// a [`Condition`] outside a world. Deserialises from a JSON object with these field names,
/// every one optional; unknown fields are refused.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextData {
    /// `name`.
    pub name: String,
    /// `content`.
    pub content: String,
    /// `author`.
    pub author: String,
    /// `mentioned`.
    pub mentioned: bool,
    /// `response_ms`; `None`: the entity never responded (infinite).
    pub response_ms: Option<f64>,
    /// `retry_ms`.
    pub retry_ms: f64,
    /// `unread_count`.
    pub unread_count: f64,
    /// `interaction_type`.
    pub interaction_type: Option<String>,
    /// `present`.
    pub present: Vec<String>,
    /// `time.hour` (default 12).
    pub hour: f64,
    /// `drives`: in JSON an object with any of `energy`, `social_debt`, `task`, `curiosity`,
    /// `pressure`, `disturbance` (numbers), `asleep` (a boolean) and `mode` (`"alert"`,
    /// `"normal"`, `"relaxed"` or `"sleep"`); what is left out keeps its default (full energy,
    /// awake, relaxed, every pressure 0).
    pub drives: super::DriveValues,
}

impl Default for ContextData {
    fn default() -> Self {
        ContextData {
            name: String::new(),
            content: String::new(),
            author: String::new(),
            mentioned: false,
            response_ms: None,
            retry_ms: 0.0,
            unread_count: 0.0,
            interaction_type: None,
            present: Vec::new(),
            hour: 12.0,
            drives: super::DriveValues::default(),
        }
    }
}

impl ContextData {
    /// Reads a context from a JSON object.
    pub fn from_json(json: &str) -> crate::Result<ContextData> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| crate::Error::invalid("context", format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(crate::Error::invalid(
                "context",
                "a context is a JSON object",
            ));
        }
        serde_json::from_value(value).map_err(|e| crate::Error::invalid("context", e.to_string()))
    }

    /// The context to evaluate against (borrowing these strings).
    pub fn context(&self) -> Context<'_> {
        Context {
            name: &self.name,
            content: &self.content,
            author: &self.author,
            mentioned: self.mentioned,
            response_ms: self.response_ms.unwrap_or(f64::INFINITY),
            retry_ms: self.retry_ms,
            unread_count: self.unread_count,
            interaction_type: self.interaction_type.as_deref(),
            present: &self.present,
            hour: self.hour,
            drives: self.drives,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{RegexCache, ReplayDraws, SeededDraws, compile_sheet};

    fn cond(src: &str) -> Condition {
        Condition::compile(src, &mut RegexCache::default()).expect("compiles")
    }

    #[test]
    fn a_condition_answers_like_the_same_line_of_a_sheet() {
        let sheet = compile_sheet(&[
            "mood: grim".into(),
            "keeps a sea shanty in her head".into(),
            "$if self.mood == \"grim\" && has_fact(\"SHANTY\") && random() < 0.5: $respond".into(),
        ])
        .expect("sheet");
        let c = Condition::compile_for(
            "self.mood == \"grim\" && has_fact(\"SHANTY\") && random() < 0.5",
            &sheet,
            &mut RegexCache::default(),
        )
        .expect("compiles");
        for draw in [0.1, 0.9] {
            let ctx = Context::default();
            let by_sheet = sheet
                .decide(&ctx, &mut ReplayDraws::new(vec![draw]))
                .respond;
            let by_condition = c.test(&ctx, &mut ReplayDraws::new(vec![draw]));
            assert_eq!(by_condition, Ok(by_sheet), "draw {draw}");
        }
        // Compiled alone, `self` is empty and has_fact sees nothing.
        let alone = cond("self.mood === undefined && !has_fact(\"shanty\")");
        assert_eq!(
            alone.test(&Context::default(), &mut SeededDraws::new(1, 0)),
            Ok(true)
        );
        // Callers that hold a `dyn Draws` call the same method.
        let dynamic: &mut dyn Draws = &mut SeededDraws::new(1, 0);
        assert_eq!(alone.test(&Context::default(), dynamic), Ok(true));
    }

    #[test]
    fn every_operand_shape_answers_as_a_condition() {
        // The hot path answers some operands inline and sends the rest out of line; each
        // shape must come back with JavaScript's truthiness (`??` once looped forever here).
        let ctx = Context {
            content: "the merchant",
            mentioned: true,
            response_ms: 5000.0,
            ..Context::default()
        };
        for (expr, want) in [
            ("interaction_type ?? mentioned", true),
            ("interaction_type ?? 0", false),
            ("(mentioned ?? false) && response_ms > 1000", true),
            ("!(mentioned || false)", false),
            ("response_ms >= 5000 && 1 < 2", true),
            ("response_ms < \"6000\"", true),
            ("content.match(/merchant/) && author.match(/x/)", false),
            ("(mentioned ? content : author).match(/the/)", true),
            ("mentioned && (false || response_ms == 5000)", true),
            (
                "5000 <= response_ms && 6000 > response_ms && !(5000 < response_ms)",
                true,
            ),
            (
                "1 < 2 && 2 >= 2 && !(3 <= 2) && !(NaN < 1) && !(1 >= NaN)",
                true,
            ),
            (
                "mentioned && (response_ms > 1 && (content.match(/merchant/)))",
                true,
            ),
            (
                "author.match(/x/) || name.match(/y/) || content.match(/MERCHANT/i)",
                true,
            ),
            ("name.match(/^$/) && author.match(/^$/)", true),
        ] {
            let got = cond(expr).test(&ctx, &mut SeededDraws::new(1, 0));
            assert_eq!(got, Ok(want), "{expr}");
        }
    }

    #[test]
    fn chains_and_comparisons_keep_their_values_and_order() {
        // `&&`, `||` and `??` chains are one node each, and comparisons of numbers have their
        // own node (a constant moved to the right): the values and the order of the draws
        // stay JavaScript's.
        let ctx = Context {
            response_ms: 5000.0,
            ..Context::default()
        };
        for (expr, draws, want) in [
            ("response_ms && 0 && 1", vec![], "0"),
            ("0 || \"\" || null", vec![], "null"),
            ("undefined ?? null ?? 0 ?? 1", vec![], "0"),
            ("1 && (2 && (3 && 4))", vec![], "4"),
            ("0 || (\"\" || (null || 7))", vec![], "7"),
            ("(0.5 > random()) + (random() <= 0.5)", vec![0.2, 0.7], "1"),
            ("random() < random()", vec![0.1, 0.2], "true"),
            ("random() < random()", vec![0.2, 0.1], "false"),
            ("1 >= random() && random() >= 0.5", vec![0.3, 0.6], "true"),
            ("response_ms > 1e3 ? 1 < 2 : 3", vec![], "true"),
        ] {
            let mut replay = ReplayDraws::new(draws);
            let got = crate::facts::evaluate_to_string(expr, &SelfFacts::new(), &ctx, &mut replay)
                .expect("compiles");
            assert_eq!(got.as_deref(), Ok(want), "{expr}");
        }
    }

    #[test]
    fn the_usual_operands_and_the_rest_draw_and_trace_in_order() {
        // The usual operands of the top-level chain are answered without an evaluator, the
        // rest (from the first other one) with one: draws, traces and short-circuits must not
        // notice where one hands over to the other.
        let ctx = Context {
            content: "the merchant",
            mentioned: true,
            response_ms: 5000.0,
            ..Context::default()
        };
        for (expr, draws, want, drawn) in [
            (
                "mentioned && random() < 0.5 && response_ms > 1 && random() < 0.5",
                [0.1, 0.2],
                true,
                2,
            ),
            (
                "mentioned && random() < 0.5 && response_ms > 1 && random() < 0.5",
                [0.1, 0.7],
                false,
                2,
            ),
            (
                "mentioned && random() < 0.5 && response_ms > 1 && random() < 0.5",
                [0.7, 0.1],
                false,
                1,
            ),
            (
                "!mentioned || random() >= 0.5 || !content.match(/x/) || random() < 0",
                [0.1, 0.2],
                true,
                1,
            ),
            (
                "random() > 0.5 || response_ms < 0 || random() > 0.5 || mentioned",
                [0.1, 0.2],
                true,
                2,
            ),
            (
                "random() > 0.5 || response_ms < 0 || random() > 0.5",
                [0.1, 0.7],
                true,
                2,
            ),
        ] {
            let c = cond(expr);
            assert_eq!(
                c.test(&ctx, &mut ReplayDraws::new(draws.to_vec())),
                Ok(want),
                "{expr} {draws:?}"
            );
            let mut trace = Vec::new();
            let got = c.test_traced(&ctx, &mut ReplayDraws::new(draws.to_vec()), &mut trace);
            assert_eq!(got, want, "{expr} {draws:?}");
            let values: Vec<f64> = trace
                .iter()
                .map(|e| match e {
                    TraceEvent::Random { value } => *value,
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(values, draws[..drawn], "{expr} {draws:?}");
        }
    }

    #[test]
    fn a_runtime_error_is_an_err_and_a_traced_false() {
        let c = cond("random() < 2 && interaction_type.length > 0");
        let ctx = Context::default();
        let e = c.test(&ctx, &mut SeededDraws::new(1, 0)).unwrap_err();
        assert!(e.contains("length") && e.contains("undefined"), "{e}");
        let mut trace = Vec::new();
        assert!(!c.test_traced(&ctx, &mut SeededDraws::new(1, 0), &mut trace));
        assert!(matches!(trace[0], TraceEvent::Random { .. }), "{trace:?}");
        assert!(matches!(trace[1], TraceEvent::Error { .. }), "{trace:?}");
    }

    #[test]
    fn a_syntax_error_is_placed_by_line_and_character() {
        let src = "mentioned &&\n  \"é\" == ;";
        let e = Condition::compile(src, &mut RegexCache::default()).unwrap_err();
        match e.to_error(src, "condition") {
            crate::Error::FactSyntax {
                line,
                column,
                owner,
                ..
            } => {
                assert_eq!((owner.as_str(), line), ("condition", 2));
                assert!(column > 1, "column {column}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_condition_is_an_expression_not_a_line() {
        for bad in ["mentioned: $respond", "", "$if mentioned", "mentioned;"] {
            assert!(
                Condition::compile(bad, &mut RegexCache::default()).is_err(),
                "{bad:?} compiled"
            );
        }
    }

    #[test]
    fn context_data_reads_json_and_refuses_what_it_does_not_know() {
        let d = ContextData::from_json(
            r#"{"content": "Hello, Aria", "mentioned": true, "present": ["Aria", "Wren"]}"#,
        )
        .expect("reads");
        assert_eq!(d.content, "Hello, Aria");
        assert_eq!(d.hour, 12.0);
        let ctx = d.context();
        assert_eq!(ctx.response_ms, f64::INFINITY);
        assert_eq!(
            cond("mentioned && present.includes(\"Wren\") && time.is_day")
                .test(&ctx, &mut SeededDraws::new(1, 0)),
            Ok(true)
        );
        for bad in ["[]", "{\"mentioned\": 1}", "{\"colour\": \"red\"}", "nope"] {
            let e = ContextData::from_json(bad).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Invalid, "{bad}: {e}");
        }
    }

    /// `drives` with every member set, in the given mode.
    fn drives(energy: f64, mode: &'static str) -> super::super::DriveValues {
        super::super::DriveValues {
            energy,
            social_debt: 0.4,
            task: 0.25,
            curiosity: 0.5,
            pressure: 0.75,
            disturbance: 2.0,
            asleep: mode == "sleep",
            mode,
        }
    }

    #[test]
    fn drives_members_read_the_evaluating_entitys_drives() {
        let tired = Context {
            drives: drives(0.2, "sleep"),
            ..Context::default()
        };
        let rested = Context {
            drives: drives(0.9, "alert"),
            ..Context::default()
        };
        for (expr, on_tired, on_rested) in [
            ("drives.energy < 0.3", true, false),
            ("0.3 > drives.energy", true, false),
            ("drives.energy <= 0.2", true, false),
            ("drives.energy >= 0.9", false, true),
            ("drives.energy < drives.curiosity", true, false),
            ("drives.energy + 0 < 0.3", true, false),
            ("drives[\"energy\"] < 0.3", true, false),
            ("drives.mode == \"sleep\"", true, false),
            ("drives.mode === \"alert\"", false, true),
            ("drives.asleep", true, false),
            ("!drives.asleep && drives.pressure > 0.5", false, true),
            (
                "drives.social_debt == 0.4 && drives.task == 0.25 && drives.disturbance == 2",
                true,
                true,
            ),
            ("drives.hunger === undefined", true, true),
            ("drives[\"hunger\"] === undefined", true, true),
            ("drives.mode.startsWith(\"s\")", true, false),
            ("drives", true, true),
        ] {
            let c = cond(expr);
            let mut draws = SeededDraws::new(1, 0);
            assert_eq!(c.test(&tired, &mut draws), Ok(on_tired), "{expr} (tired)");
            assert_eq!(
                c.test(&rested, &mut draws),
                Ok(on_rested),
                "{expr} (rested)"
            );
        }
        // Without drives (a standalone condition, an item): full energy, awake, relaxed.
        for (expr, want) in [
            ("drives.energy", "1"),
            ("drives.pressure", "0"),
            ("drives.asleep", "false"),
            ("drives.mode", "\"relaxed\""),
            ("drives.hunger", "undefined"),
            ("drives", "[object Object]"),
            ("drives.energy.toFixed", "runtime error"),
            ("drives[\"hasOwnProperty\"]", "runtime error"),
        ] {
            let got = crate::facts::evaluate_to_string(
                expr,
                &SelfFacts::new(),
                &Context::default(),
                &mut SeededDraws::new(1, 0),
            )
            .expect("compiles");
            let got = got.unwrap_or_else(|e| format!("runtime error: {e}"));
            assert!(got.starts_with(want), "{expr}: {got}");
        }
        // A member of an unknown member is a runtime error, as for `time`.
        let e = cond("drives.hunger.level > 1")
            .test(&Context::default(), &mut SeededDraws::new(1, 0))
            .unwrap_err();
        assert!(e.contains("undefined"), "{e}");
    }

    #[test]
    fn context_data_reads_drives_from_json() {
        let d = ContextData::from_json(r#"{"drives": {"energy": 0.2}}"#).expect("reads");
        assert_eq!(d.drives.energy, 0.2);
        // The rest keeps its default.
        assert_eq!(d.drives.mode, "relaxed");
        assert!(!d.drives.asleep);
        let low = cond("drives.energy < 0.3 && drives.mode == \"relaxed\"");
        assert!(low.test_seeded(&d, 1).holds);
        assert!(!low.test_seeded(&ContextData::default(), 1).holds);
        let d = ContextData::from_json(
            r#"{"drives": {"asleep": true, "mode": "sleep", "disturbance": 0.5, "pressure": 1.5}}"#,
        )
        .expect("reads");
        assert!(
            cond("drives.asleep && drives.mode == \"sleep\" && drives.disturbance == 0.5")
                .test_seeded(&d, 1)
                .holds
        );
        assert!(cond("drives.pressure > 1").test_seeded(&d, 1).holds);
        // It writes what it reads.
        let json = serde_json::to_string(&d).expect("writes");
        let back = ContextData::from_json(&json).expect("reads back");
        assert_eq!(back, d);
        for bad in [
            r#"{"drives": {"hunger": 1}}"#,
            r#"{"drives": {"mode": "sleepy"}}"#,
            r#"{"drives": {"energy": "low"}}"#,
            r#"{"drives": 0.5}"#,
        ] {
            let e = ContextData::from_json(bad).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Invalid, "{bad}: {e}");
        }
    }
}
