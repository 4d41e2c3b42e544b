//! Expressions: compiling and evaluating any text as a condition never panics, overflows the
//! stack or hangs; a compile error or a runtime error is an answer like any other.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::facts::{Context, FactValue, SeededDraws, SelfFacts, evaluate_to_string};

fuzz_target!(|data: &[u8]| {
    let Ok(expr) = std::str::from_utf8(data) else {
        return;
    };
    let mut self_facts = SelfFacts::new();
    self_facts.insert("fox_tf".into(), FactValue::Num(0.3));
    self_facts.insert("name".into(), FactValue::Str("Aria".into()));
    self_facts.insert("poisoned".into(), FactValue::Bool(true));
    let present = ["Aria".to_string(), "Wren".to_string()];
    let ctx = Context {
        name: "Aria",
        content: "Hey Aria, the merchant 😀 wants 12 coins\r\nok?",
        author: "wren",
        mentioned: true,
        present: &present,
        interaction_type: Some("use"),
        ..Context::default()
    };
    let first = evaluate_to_string(expr, &self_facts, &ctx, &mut SeededDraws::new(7, 0));
    let again = evaluate_to_string(expr, &self_facts, &ctx, &mut SeededDraws::new(7, 0));
    assert_eq!(
        format!("{first:?}"),
        format!("{again:?}"),
        "evaluation is not deterministic"
    );
});
