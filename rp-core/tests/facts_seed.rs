//! Every example of seed 000 (Hologram's design philosophy) as a test with its expected
//! decision, plus the sheet rules: line kinds, `$#` only in column 0, `$if` only at line
//! start, last fired `$respond` wins, `$retry` stops evaluation.

use rp_core::facts::{
    Context, Decision, Draws, FactValue, ReplayDraws, Sheet, TraceEvent, compile_sheet,
};

fn sheet(text: &str) -> Sheet {
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    compile_sheet(&lines).unwrap_or_else(|e| panic!("{e:?}"))
}

fn decide(text: &str, ctx: &Context<'_>, draws: &[f64]) -> Decision {
    sheet(text).decide(ctx, &mut ReplayDraws::new(draws.to_vec()))
}

fn ctx() -> Context<'static> {
    Context {
        name: "Aria",
        content: "hello",
        author: "wren",
        ..Context::default()
    }
}

#[test]
fn no_respond_line_means_respond() {
    let d = decide("is a character\nhas silver hair", &ctx(), &[]);
    assert!(d.respond);
    assert_eq!(facts(&d), vec!["is a character", "has silver hair"]);
}

#[test]
fn mention_only() {
    let text = "$if mentioned: $respond";
    assert!(!decide(text, &ctx(), &[]).respond);
    assert!(
        decide(
            text,
            &Context {
                mentioned: true,
                ..ctx()
            },
            &[]
        )
        .respond
    );
}

#[test]
fn mention_or_random_chatter_but_not_too_fast() {
    let text = "$if mentioned: $respond\n$if random() < 0.1: $respond\n$if retry_ms < 1000: $respond false";
    let quiet = Context {
        retry_ms: 5000.0,
        ..ctx()
    };
    assert!(
        !decide(text, &quiet, &[0.5]).respond,
        "not mentioned, 0.5 ≥ 0.1"
    );
    assert!(decide(text, &quiet, &[0.05]).respond, "random chatter");
    let mentioned = Context {
        mentioned: true,
        retry_ms: 5000.0,
        ..ctx()
    };
    assert!(decide(text, &mentioned, &[0.9]).respond);
    let too_fast = Context {
        mentioned: true,
        retry_ms: 10.0,
        ..ctx()
    };
    assert!(
        !decide(text, &too_fast, &[0.0]).respond,
        "the last fired $respond wins"
    );
}

#[test]
fn respect_mute() {
    let text = "is a character\nmuted\n$if has_fact(\"muted\"): $respond false";
    assert!(!decide(text, &ctx(), &[]).respond);
    assert!(decide(&text.replace("muted\n", ""), &ctx(), &[]).respond);
    // Case-insensitive, and regex literals work too.
    assert!(
        !decide(
            "is MUTED for now\n$if has_fact(/^is muted/i): $respond false",
            &ctx(),
            &[]
        )
        .respond
    );
}

#[test]
fn delayed_reply() {
    let text = "$if retry_ms < 5000: $respond false\n$if retry_ms < 5000: $retry 5000\n$respond";
    let early = decide(
        text,
        &Context {
            retry_ms: 200.0,
            ..ctx()
        },
        &[],
    );
    assert_eq!((early.respond, early.retry_ms), (false, Some(5000)));
    let late = decide(
        text,
        &Context {
            retry_ms: 6000.0,
            ..ctx()
        },
        &[],
    );
    assert_eq!((late.respond, late.retry_ms), (true, None));
}

#[test]
fn throttle() {
    let text = "$if response_ms < 30000: $respond false\n$if response_ms < 30000: $retry 30000\n$if mentioned: $respond";
    let recent = decide(
        text,
        &Context {
            response_ms: 1000.0,
            mentioned: true,
            ..ctx()
        },
        &[],
    );
    assert_eq!((recent.respond, recent.retry_ms), (false, Some(30000)));
    let never = decide(
        text,
        &Context {
            mentioned: true,
            ..ctx()
        },
        &[],
    );
    assert!(
        never.respond,
        "response_ms is infinite when the entity never responded"
    );
}

#[test]
fn retry_stops_evaluation() {
    let text = "$if true: $retry 100\n$if random() < 2: $respond\nlate fact";
    let d = decide(text, &ctx(), &[]);
    assert_eq!(d.retry_ms, Some(100));
    assert!(d.draws.is_empty(), "lines after $retry are not evaluated");
    assert!(!facts(&d).contains(&"late fact"));
}

#[test]
fn conditional_traits() {
    let text = "is a character\nhas silver hair\n$if random() < 0.3: has fox ears\n$if time.is_night: eyes glow faintly";
    let night = Context {
        hour: 23.0,
        ..ctx()
    };
    let d = decide(text, &night, &[0.2]);
    assert_eq!(
        facts(&d),
        vec![
            "is a character",
            "has silver hair",
            "has fox ears",
            "eyes glow faintly"
        ]
    );
    let d = decide(
        text,
        &Context {
            hour: 12.0,
            ..ctx()
        },
        &[0.5],
    );
    assert_eq!(facts(&d), vec!["is a character", "has silver hair"]);
    assert!(d.respond);
}

#[test]
fn progressive_complexity_example() {
    let text = "is a character\nhas human ears\nhas no tail\n$if mentioned: $respond\n$if content.match(/aria|merchant/i): $respond\n$if random() < 0.1 && response_ms > 30000: $respond";
    assert!(
        decide(
            text,
            &Context {
                content: "Ask the MERCHANT",
                ..ctx()
            },
            &[0.9]
        )
        .respond
    );
    assert!(
        !decide(
            text,
            &Context {
                content: "nothing here",
                ..ctx()
            },
            &[0.9]
        )
        .respond
    );
    assert!(
        decide(
            text,
            &Context {
                content: "nothing",
                response_ms: 60_000.0,
                ..ctx()
            },
            &[0.01]
        )
        .respond
    );
    assert!(
        !decide(
            text,
            &Context {
                content: "nothing",
                response_ms: 10.0,
                ..ctx()
            },
            &[0.01]
        )
        .respond
    );
}

#[test]
fn key_value_facts_become_self() {
    let s = sheet(
        "fox_tf: 0.3\nis_poisoned: true\nname: Aria\n$if self.fox_tf > 0.2 && self.is_poisoned: feels odd",
    );
    assert_eq!(s.self_facts().get("fox_tf"), Some(&FactValue::Num(0.3)));
    assert_eq!(
        s.self_facts().get("is_poisoned"),
        Some(&FactValue::Bool(true))
    );
    assert_eq!(
        s.self_facts().get("name"),
        Some(&FactValue::Str("Aria".into()))
    );
    let d = s.decide(&ctx(), &mut ReplayDraws::new(vec![]));
    assert!(facts(&d).contains(&"feels odd"));
    assert!(
        facts(&d).contains(&"fox_tf: 0.3"),
        "key: value lines are facts too"
    );
}

#[test]
fn comments_only_in_column_zero() {
    let d = decide(
        "$# This is a comment\nis a character\n $# This is NOT a comment (starts with space)\nplays #1 hits",
        &ctx(),
        &[],
    );
    assert_eq!(
        facts(&d),
        vec![
            "is a character",
            "$# This is NOT a comment (starts with space)",
            "plays #1 hits"
        ]
    );
}

#[test]
fn if_only_at_line_start() {
    let d = decide(
        "Instructions can use $if syntax like: $if mentioned: $respond\n   $if true: indented conditions count",
        &ctx(),
        &[],
    );
    assert!(d.respond);
    assert_eq!(
        facts(&d),
        vec![
            "Instructions can use $if syntax like: $if mentioned: $respond",
            "indented conditions count"
        ]
    );
}

#[test]
fn action_text_may_contain_colons_and_quotes() {
    let d = decide(
        "$if mentioned ? true : false: she says: \"it's late\"",
        &Context {
            mentioned: true,
            ..ctx()
        },
        &[],
    );
    assert_eq!(facts(&d), vec!["she says: \"it's late\""]);
}

#[test]
fn runtime_errors_make_the_condition_false_and_are_traced() {
    let d = decide(
        "$if content.foo.bar: $respond\n$if roll(content) > 1: never\nstill here",
        &ctx(),
        &[],
    );
    assert!(!d.respond);
    let errors: Vec<_> = d
        .trace
        .iter()
        .filter(|t| matches!(t.event, TraceEvent::Error { .. }))
        .map(|t| t.line)
        .collect();
    assert_eq!(errors, vec![1, 2]);
    assert!(facts(&d).contains(&"still here"));
}

#[test]
fn every_draw_is_traced_and_recorded() {
    let d = decide(
        "$if random() < 0.5: a\n$if random(0.25): b\n$if roll(\"2d6\") >= 2: c",
        &ctx(),
        &[0.1, 0.2, 0.0, 0.99],
    );
    assert_eq!(d.draws, vec![0.1, 0.2, 0.0, 0.99]);
    assert_eq!(facts(&d), vec!["a", "b", "c"]);
    assert!(d.trace.iter().any(|t| t.event
        == TraceEvent::Roll {
            notation: "2d6".into(),
            dice: vec![1, 6],
            total: 7.0
        }));
    assert!(d.explain().contains("line 2: random(0.25) drew 0.2: true"));
}

#[test]
fn sheet_errors_carry_line_and_column() {
    for (text, line, column, says) in [
        ("ok\n$if mentioned = 1: x", 2, 15, "assignment"),
        ("$if : x", 1, 5, "value"),
        ("$if mentioned $respond", 1, 15, "`:`"),
        ("$if mentioned: $respond maybe", 1, 16, "true or false"),
        ("$if mentioned: $retry soon", 1, 16, "milliseconds"),
        ("$if mentioned:", 1, 15, "nothing follows"),
        ("$iff mentioned: x", 1, 1, "unknown directive"),
        ("  $retry 5", 1, 3, "needs a condition"),
        ("$if content.match(/(?=x)/): y", 1, 20, "regex"),
        ("$if nope: y", 1, 5, "unknown variable"),
    ] {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let e = compile_sheet(&lines).unwrap_err();
        assert_eq!((e.line, e.column), (line, column), "{text}: {e:?}");
        assert!(e.message.contains(says), "{text}: {}", e.message);
    }
}

#[test]
fn a_line_may_mention_a_dollar_amount() {
    assert!(decide("charges $5 a night", &ctx(), &[]).respond);
}

struct Counting(u64);
impl Draws for Counting {
    fn draw(&mut self) -> f64 {
        self.0 += 1;
        0.5
    }
}

#[test]
fn short_circuits_skip_draws_like_javascript() {
    let s = sheet("$if mentioned && random() < 0.1: $respond\n$if mentioned || random() < 0.1: x");
    let mut d = Counting(0);
    s.decide(&ctx(), &mut d);
    assert_eq!(d.0, 1, "only the || draws when not mentioned");
}

/// A decision's facts as plain strings.
fn facts(d: &Decision) -> Vec<&str> {
    d.facts.iter().map(|f| &**f).collect()
}
