//! One condition outside a sheet: the language of a `$if` line, compiled once and evaluated
//! as often as needed (a door that opens only at night, a quest step that waits for a word).

use super::compile::{Node, RegexSource, SelfFacts, compile_expression};
use super::eval::{Context, Eval, Facts};
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
    pub fn test(&self, ctx: &Context<'_>, draws: &mut dyn Draws) -> Result<bool, String> {
        Eval::new(ctx, &self.self_facts, self.facts(), draws, None, 0).truthy(&self.node)
    }

    /// [`Condition::test`], also appending to `trace` what a sheet would trace: each random
    /// draw and dice roll, and a runtime error (in which case the answer is false).
    pub fn test_traced(
        &self,
        ctx: &Context<'_>,
        draws: &mut dyn Draws,
        trace: &mut Vec<TraceEvent>,
    ) -> bool {
        let mut entries: Vec<TraceEntry> = Vec::new();
        let result = Eval::new(
            ctx,
            &self.self_facts,
            self.facts(),
            draws,
            Some(&mut entries),
            0,
        )
        .truthy(&self.node);
        trace.extend(entries.into_iter().map(|e| e.event));
        result.unwrap_or_else(|message| {
            trace.push(TraceEvent::Error { message });
            false
        })
    }
}
