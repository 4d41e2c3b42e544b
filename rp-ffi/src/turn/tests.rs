//! Tests of the turn from C, and the tavern helpers other modules' tests share.

use std::ffi::CStr;
use std::ptr;

use serde_json::Value;

use super::*;
use crate::engine::{rp_engine_apply_world_file, rp_engine_free, rp_engine_head};
use crate::error::rp_last_error;
use crate::string::rp_string_free;

const TAVERN: &str = include_str!("../../../examples/tavern.toml");

pub(crate) fn last_error() -> String {
    // SAFETY: rp_last_error returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(rp_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Takes a string rp handed out as JSON, releasing it.
pub(crate) fn take_json(string: *mut c_char) -> Value {
    assert!(!string.is_null());
    // SAFETY: a live string rp handed out, released once.
    let text = unsafe { CStr::from_ptr(string) }
        .to_str()
        .expect("UTF-8")
        .to_owned();
    // SAFETY: as above.
    unsafe { rp_string_free(string) };
    serde_json::from_str(&text).expect("JSON")
}

pub(crate) struct Tavern {
    pub(crate) engine: *mut rp_engine,
    pub(crate) wren: u64,
    pub(crate) mira: u64,
    pub(crate) tobias: u64,
}

impl Drop for Tavern {
    fn drop(&mut self) {
        // SAFETY: a live handle, freed once.
        unsafe { rp_engine_free(self.engine) };
    }
}

pub(crate) fn tavern() -> Tavern {
    let mut engine = ptr::null_mut();
    // SAFETY: valid strings and out-parameters.
    unsafe {
        assert_eq!(
            crate::engine::rp_engine_in_memory(c"t".as_ptr(), 1, 0, &mut engine),
            rp_result::Ok
        );
        let mut events = 0;
        let result = rp_engine_apply_world_file(
            engine,
            c"tavern.toml".as_ptr(),
            11,
            TAVERN.as_ptr().cast(),
            TAVERN.len(),
            &mut events,
        );
        assert_eq!(result, rp_result::Ok, "{}", last_error());
    }
    let id = |engine: *mut rp_engine, name: &str| {
        let mut id = 0;
        // SAFETY: valid strings and out-parameters.
        let result = unsafe {
            crate::engine::rp_engine_entity_id(engine, name.as_ptr().cast(), name.len(), &mut id)
        };
        assert_eq!(result, rp_result::Ok);
        id
    };
    Tavern {
        wren: id(engine, "wren"),
        mira: id(engine, "mira"),
        tobias: id(engine, "tobias"),
        engine,
    }
}

pub(crate) fn head(engine: *mut rp_engine) -> u64 {
    let mut head = 0;
    // SAFETY: valid out-parameter.
    assert_eq!(unsafe { rp_engine_head(engine, &mut head) }, rp_result::Ok);
    head
}

pub(crate) fn say(t: &Tavern, text: &str, now: i64) -> String {
    serde_json::json!({"speaker": t.wren, "text": text, "now": now}).to_string()
}

pub(crate) fn begin(
    t: &Tavern,
    input: &str,
    options: Option<&str>,
) -> Result<*mut rp_turn, rp_result> {
    let mut turn = ptr::null_mut();
    let (options, options_len) = options.map_or((ptr::null(), 0), |o| (o.as_ptr(), o.len()));
    // SAFETY: valid strings and out-parameters.
    match unsafe {
        rp_turn_begin(
            t.engine,
            input.as_ptr().cast(),
            input.len(),
            options.cast(),
            options_len,
            &mut turn,
        )
    } {
        rp_result::Ok => Ok(turn),
        code => {
            assert!(turn.is_null(), "the out-parameter was written on failure");
            Err(code)
        }
    }
}

pub(crate) fn step(engine: *mut rp_engine, turn: *mut rp_turn) -> Result<Value, rp_result> {
    let mut json = ptr::null_mut();
    // SAFETY: valid out-parameter.
    match unsafe { rp_turn_step(engine, turn, &mut json) } {
        rp_result::Ok => Ok(take_json(json)),
        code => Err(code),
    }
}

pub(crate) fn provide(engine: *mut rp_engine, turn: *mut rp_turn, result: &str) -> rp_result {
    // SAFETY: a valid string.
    unsafe { rp_turn_provide(engine, turn, result.as_ptr().cast(), result.len()) }
}

pub(crate) fn finish(engine: *mut rp_engine, turn: *mut rp_turn) -> Result<Value, rp_result> {
    let mut json = ptr::null_mut();
    // SAFETY: valid out-parameter.
    match unsafe { rp_turn_finish(engine, turn, &mut json) } {
        rp_result::Ok => Ok(take_json(json)),
        code => {
            assert!(json.is_null());
            Err(code)
        }
    }
}

pub(crate) fn free(turn: *mut rp_turn) -> rp_result {
    // SAFETY: any value is answered safely.
    unsafe { rp_turn_free(turn) }
}

#[test]
fn the_poll_form_runs_a_turn_tobias_answers_and_mira_does_not_hear() {
    let t = tavern();
    let before = head(t.engine);
    let turn = begin(
        &t,
        &say(&t, "Tobias, seen any lights tonight?", 60_000),
        None,
    )
    .expect("begins");
    assert_eq!(
        head(t.engine),
        before + 3,
        "the clock, the booth's new scene and the line"
    );

    let request = step(t.engine, turn).expect("a step");
    assert_eq!(request["step"], "generate");
    assert_eq!(request["purpose"]["speaker"], t.tobias);
    assert_eq!(
        step(t.engine, turn),
        Ok(request),
        "asked again: the same step"
    );
    assert_eq!(
        provide(
            t.engine,
            turn,
            r#"{"text": "Tobias Reed: Aye, out past the reeds."}"#
        ),
        rp_result::Ok,
        "{}",
        last_error()
    );
    assert_eq!(step(t.engine, turn).expect("a step")["step"], "done");
    let outcome = finish(t.engine, turn).expect("finishes");
    assert_eq!(outcome["replies"][0]["speaker"], t.tobias);
    assert_eq!(outcome["replies"][0]["text"], "Aye, out past the reeds.");
    let decided: Vec<u64> = outcome["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .map(|d| d["entity"].as_u64().expect("an id"))
        .collect();
    assert_eq!(
        decided,
        [t.tobias],
        "Mira at the bar does not hear the booth"
    );
    assert!(!decided.contains(&t.mira));
    assert_eq!(outcome["seq"], head(t.engine));
    assert!(head(t.engine) > before + 3);

    // Over: only freeing is left.
    assert_eq!(step(t.engine, turn), Err(rp_result::Conflict));
    assert!(
        last_error().contains("rp_turn_finish ended it"),
        "{}",
        last_error()
    );
    assert_eq!(finish(t.engine, turn), Err(rp_result::Conflict));
    assert_eq!(free(turn), rp_result::Ok);
    assert_eq!(free(turn), rp_result::InvalidHandle);
    assert_eq!(step(t.engine, turn), Err(rp_result::InvalidHandle));
}

#[test]
fn finishing_early_is_a_conflict_and_the_turn_goes_on() {
    let t = tavern();
    let turn = begin(&t, &say(&t, "Tobias?", 1_000), None).expect("begins");
    assert_eq!(finish(t.engine, turn), Err(rp_result::Conflict));
    assert!(
        last_error().contains(&format!("the line of entity {}", t.tobias)),
        "{}",
        last_error()
    );
    assert_eq!(
        provide(t.engine, turn, r#"{"text": "Mm."}"#),
        rp_result::Ok,
        "{}",
        last_error()
    );
    assert_eq!(
        provide(t.engine, turn, r#"{"text": "again"}"#),
        rp_result::Conflict,
        "not asked"
    );
    let outcome = finish(t.engine, turn).expect("finishes");
    assert_eq!(outcome["replies"][0]["text"], "Mm.");
    assert_eq!(outcome["prompts"], serde_json::json!([]), "not asked for");
    assert_eq!(free(turn), rp_result::Ok);
}

#[test]
fn the_outcome_carries_the_prompts_when_the_options_ask() {
    let t = tavern();
    let options = r#"{"outcome_prompts": true, "max_responders": 2}"#;
    let turn = begin(&t, &say(&t, "Tobias?", 1_000), Some(options)).expect("begins");
    let request = step(t.engine, turn).expect("a step");
    assert_eq!(provide(t.engine, turn, r#"{"text": "Mm."}"#), rp_result::Ok);
    let outcome = finish(t.engine, turn).expect("finishes");
    let prompts = outcome["prompts"].as_array().expect("prompts");
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0]["speaker"], t.tobias);
    assert_eq!(prompts[0]["messages"], request["messages"]);
    assert!(prompts[0]["pieces"].is_array());
    assert_eq!(free(turn), rp_result::Ok);

    for bad in [r#"{"outcome_prompts": 1}"#, r#"{"outcome_prompts": null}"#] {
        assert_eq!(
            begin(&t, &say(&t, "x", 2_000), Some(bad)),
            Err(rp_result::Invalid)
        );
        assert!(
            last_error().contains("outcome_prompts: invalid type"),
            "{}",
            last_error()
        );
    }
    // The other options are still read strictly, and a text that is
    // not an object is refused as before.
    assert_eq!(
        begin(
            &t,
            &say(&t, "x", 2_000),
            Some(r#"{"outcome_prompts": false, "loud": 1}"#)
        ),
        Err(rp_result::Invalid)
    );
    assert!(last_error().contains("loud"), "{}", last_error());
    for bad in ["[]", "{x", "3"] {
        assert_eq!(
            begin(&t, &say(&t, "x", 2_000), Some(bad)),
            Err(rp_result::Invalid)
        );
        assert!(
            last_error().starts_with("invalid turn options: "),
            "{}",
            last_error()
        );
    }
}

#[test]
fn a_turn_refuses_another_engine_and_bad_json() {
    let t = tavern();
    let other = tavern();
    let turn = begin(&t, &say(&t, "Tobias?", 1_000), None).expect("begins");
    assert_eq!(step(other.engine, turn), Err(rp_result::Invalid));
    assert!(last_error().contains("another engine"), "{}", last_error());
    assert_eq!(step(ptr::null_mut(), turn), Err(rp_result::NullArgument));
    assert_eq!(
        step(t.engine, ptr::null_mut()),
        Err(rp_result::NullArgument)
    );
    assert_eq!(last_error(), "`turn` is NULL");
    step(t.engine, turn).expect("asks");
    for bad in ["{text", r#"{"text": 3}"#, "3", r#"{"txt": "x"}"#, "[]"] {
        assert_eq!(provide(t.engine, turn, bad), rp_result::Invalid, "{bad}");
        assert!(
            last_error().starts_with("invalid generation result: "),
            "{}",
            last_error()
        );
    }
    // SAFETY: a valid string.
    let result = unsafe { rp_turn_provide(t.engine, turn, c"\xff".as_ptr(), 1) };
    assert_eq!(result, rp_result::InvalidUtf8);
    // SAFETY: a valid string.
    let result = unsafe { rp_turn_provide_embeddings(t.engine, turn, c"[[1]]".as_ptr(), 5) };
    assert_eq!(result, rp_result::Conflict, "not asked for vectors");

    assert_eq!(begin(&t, "{}", None), Err(rp_result::Invalid));
    assert_eq!(
        begin(&t, &say(&t, "x", 0), Some("{\"loud\": 1}")),
        Err(rp_result::Invalid)
    );
    assert!(last_error().contains("loud"), "{}", last_error());
    let mira_speaks = serde_json::json!({"speaker": t.mira, "text": "x", "now": 1}).to_string();
    assert_eq!(begin(&t, &mira_speaks, None), Err(rp_result::Invalid));
    assert_eq!(free(turn), rp_result::Ok);
    assert_eq!(free(ptr::null_mut()), rp_result::Ok);
}

#[test]
fn a_semantic_turn_asks_for_vectors() {
    let t = tavern();
    let turn = begin(
        &t,
        &say(&t, "Tobias, the lights?", 1_000),
        Some(r#"{"semantic": true}"#),
    )
    .expect("begins");
    let first = step(t.engine, turn).expect("a step");
    assert_eq!(first["step"], "embed");
    assert_eq!(first["texts"].as_array().map(Vec::len), Some(1));
    let embed = |json: &str| {
        // SAFETY: a valid string.
        unsafe { rp_turn_provide_embeddings(t.engine, turn, json.as_ptr().cast(), json.len()) }
    };
    assert_eq!(embed("[[1, 0], [0, 1]]"), rp_result::Invalid, "two for one");
    assert_eq!(embed(r#"[["a"]]"#), rp_result::Invalid);
    assert_eq!(embed("[[0.5, 0.5]]"), rp_result::Ok, "{}", last_error());
    assert_eq!(step(t.engine, turn).expect("a step")["step"], "generate");
    assert_eq!(
        provide(t.engine, turn, r#"{"text": "Green ones."}"#),
        rp_result::Ok
    );
    let lines = step(t.engine, turn).expect("a step");
    assert_eq!(lines["step"], "embed", "vectors of the remembered lines");
    let n = lines["texts"].as_array().map_or(0, Vec::len);
    assert_eq!(n, 2, "Wren's line and Tobias's");
    assert_eq!(embed("[[1, 0], [0, 1]]"), rp_result::Ok, "{}", last_error());
    finish(t.engine, turn).expect("finishes");
    assert_eq!(free(turn), rp_result::Ok);
}

#[test]
fn the_state_update_pass_is_a_generate_step_and_its_reports_are_in_the_outcome() {
    let t = tavern();
    let turn = begin(
        &t,
        &say(&t, "Tobias, the lights?", 1_000),
        Some(r#"{"updates": {"enabled": true, "step": 0.25}}"#),
    )
    .expect("begins");
    assert_eq!(
        step(t.engine, turn).expect("a step")["purpose"]["kind"],
        "reply"
    );
    assert_eq!(
        provide(t.engine, turn, r#"{"text": "Green ones."}"#),
        rp_result::Ok
    );
    let pass = step(t.engine, turn).expect("a step");
    assert_eq!(pass["step"], "generate");
    assert_eq!(pass["purpose"], serde_json::json!({"kind": "state_update"}));
    assert!(pass["json_schema"].is_object(), "{pass}");
    assert_eq!(finish(t.engine, turn), Err(rp_result::Conflict));
    assert!(
        last_error().contains("the state-update pass"),
        "{}",
        last_error()
    );
    let answer = serde_json::json!({"reports": [
        {"type": "feeling", "who": "Tobias Reed", "toward": "Wren", "affinity": "warmer"},
        {"type": "feeling", "who": "Nobody", "toward": "Wren", "affinity": "warmer"},
    ]})
    .to_string();
    let result = serde_json::json!({ "text": answer }).to_string();
    assert_eq!(provide(t.engine, turn, &result), rp_result::Ok);
    let retry = step(t.engine, turn).expect("a step");
    assert_eq!(retry["purpose"]["kind"], "state_update", "one retry");
    let feedback = retry["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(feedback.contains("Nobody"), "{feedback}");
    assert_eq!(provide(t.engine, turn, &result), rp_result::Ok);
    let outcome = finish(t.engine, turn).expect("finishes");
    let reports = outcome["reports"].as_array().expect("reports");
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0]["rejected"], Value::Null, "applied");
    assert!(reports[1]["rejected"].is_string(), "{}", reports[1]);
    assert_eq!(free(turn), rp_result::Ok);

    let mut text = ptr::null_mut();
    // SAFETY: valid out-parameter.
    let result = unsafe { crate::engine::rp_engine_export_world_file(t.engine, &mut text) };
    assert_eq!(result, rp_result::Ok);
    // SAFETY: a live string rp handed out, released once.
    let world = unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: as above.
    unsafe { rp_string_free(text) };
    // The world file's 0.2, one step of the options (0.25) warmer.
    assert!(
        world.contains("from = \"tobias\"\nto = \"wren\"\naffinity = 0.45\n"),
        "the step of the options: {world}"
    );
}

#[test]
fn a_host_action_is_an_act_step_answered_with_provide_action() {
    let t = tavern();
    let options = serde_json::json!({"updates": {"enabled": true, "actions": [
        {"name": "open_door", "parameters": {"type": "object", "required": ["door"],
         "properties": {"door": {"enum": ["cellar"]}}}}]}})
    .to_string();
    let turn = begin(&t, &say(&t, "Tobias, the cellar?", 1_000), Some(&options)).expect("begins");
    assert_eq!(
        provide(t.engine, turn, r#"{"text": "Aye."}"#),
        rp_result::Ok
    );
    let answer = r#"{"reports": [{"type": "open_door", "who": "Tobias Reed", "door": "cellar"}]}"#;
    let result = serde_json::json!({ "text": answer }).to_string();
    assert_eq!(
        step(t.engine, turn).expect("a step")["purpose"]["kind"],
        "state_update"
    );
    assert_eq!(provide(t.engine, turn, &result), rp_result::Ok);
    let act = step(t.engine, turn).expect("a step");
    assert_eq!(
        act,
        serde_json::json!({"step": "act", "name": "open_door", "who": t.tobias,
            "arguments": {"door": "cellar"}, "report": 0})
    );
    assert_eq!(finish(t.engine, turn), Err(rp_result::Conflict));
    let action = |answer: Option<&str>, refusal: Option<&str>| {
        let (a, a_len) = answer.map_or((ptr::null(), 0), |a| (a.as_ptr(), a.len()));
        let (r, r_len) = refusal.map_or((ptr::null(), 0), |r| (r.as_ptr(), r.len()));
        // SAFETY: valid strings or NULL with length 0.
        unsafe { rp_turn_provide_action(t.engine, turn, a.cast(), a_len, r.cast(), r_len) }
    };
    assert_eq!(action(Some("{}"), Some("no")), rp_result::Invalid);
    assert_eq!(action(None, None), rp_result::NullArgument);
    assert_eq!(action(Some("{x"), None), rp_result::Invalid);
    assert_eq!(action(Some(r#"{"opened": true}"#), None), rp_result::Ok);
    assert_eq!(action(None, Some("late")), rp_result::Conflict);
    let outcome = finish(t.engine, turn).expect("finishes");
    assert_eq!(outcome["reports"][0]["answer"], r#"{"opened":true}"#);
    assert_eq!(free(turn), rp_result::Ok);
}

#[test]
fn inspect_prompt_explains_every_piece() {
    let t = tavern();
    let mut json = ptr::null_mut();
    // SAFETY: valid out-parameter; NULL query and options.
    let result = unsafe {
        rp_engine_inspect_prompt(
            t.engine,
            t.mira,
            ptr::null(),
            0,
            0,
            ptr::null(),
            0,
            &mut json,
        )
    };
    assert_eq!(result, rp_result::Ok, "{}", last_error());
    let prompt = take_json(json);
    assert_eq!(prompt["speaker"], t.mira);
    let pieces = prompt["pieces"].as_array().expect("pieces");
    assert!(!pieces.is_empty());
    assert!(
        pieces
            .iter()
            .all(|p| p["why"].as_str().is_some_and(|w| !w.is_empty()))
    );

    let options = r#"{"budget_tokens": 0}"#;
    // SAFETY: valid strings and out-parameter.
    let result = unsafe {
        rp_engine_inspect_prompt(
            t.engine,
            t.mira,
            c"cider".as_ptr(),
            5,
            0,
            options.as_ptr().cast(),
            options.len(),
            &mut json,
        )
    };
    assert_eq!(result, rp_result::Invalid);
    // SAFETY: as above.
    let result = unsafe {
        rp_engine_inspect_prompt(
            t.engine,
            999_999,
            ptr::null(),
            0,
            0,
            ptr::null(),
            0,
            &mut json,
        )
    };
    assert_eq!(result, rp_result::NotFound);
}
