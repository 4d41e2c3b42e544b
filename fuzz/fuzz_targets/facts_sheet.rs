//! Fact sheets: compiling any text never panics, overflows the stack or hangs; a sheet that
//! compiles decides without panicking against a context and draws derived from the input, and
//! the same draws give the same decision (evaluation is deterministic).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::facts::{Context, ReplayDraws, check_sheet, compile_sheet};
use rp_core::model::FactSheet;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let checked = check_sheet(text);
    let lines = FactSheet::from_text(text);
    let Ok(sheet) = compile_sheet(lines.lines()) else {
        assert!(
            checked.is_err(),
            "check_sheet accepted what compile_sheet refused"
        );
        return;
    };
    assert!(
        checked.is_ok(),
        "check_sheet refused what compile_sheet accepted"
    );
    let present = ["Mira".to_string(), "Wren".to_string()];
    let ctx = Context {
        name: "Mira",
        content: text.get(..text.len().min(64)).unwrap_or(""),
        author: "Wren",
        mentioned: data.len().is_multiple_of(2),
        response_ms: data.len() as f64 * 1000.0,
        retry_ms: 500.0,
        unread_count: 3.0,
        interaction_type: None,
        present: &present,
        hour: (data.len() % 24) as f64,
        drives: Default::default(),
    };
    let draws: Vec<f64> = data.iter().map(|b| f64::from(*b) / 256.0).collect();
    let first = sheet.decide(&ctx, &mut ReplayDraws::new(draws.clone()));
    let again = sheet.decide(&ctx, &mut ReplayDraws::new(draws));
    // Compared as text: a NaN probability in the trace is not equal to itself.
    assert_eq!(
        format!("{first:?}"),
        format!("{again:?}"),
        "the same draws gave a different decision"
    );
    assert!(
        first.retry_ms.is_none() || !first.respond,
        "a $retry never responds now"
    );
});
