//! Unit tests of the JavaScript regexes: the API, flags, refused constructs, Annex B syntax,
//! case folding, astral characters, multiline anchors, capture reset, limits, the literal-word
//! fast path, and that arbitrary input never panics.

use super::*;

#[test]
fn literal_words_answer_test_like_the_crate() {
    // (pattern, read as words with `i`)
    let patterns = [
        ("aria|merchant", true),
        (r"\b(gold|coin|price|trade)\b", true),
        ("a", true),
        ("AB|cd|", false),
        (r"x\b", true),
        (r"\bfoo", true),
        (r"\b-\b|\b_", true),
        ("k|s|i", true),
        ("(a|b)(c|d)e", true),
        ("[Aa]ria|x.y", false),
        ("é|a", false),
        (r"a\bb", false),
        ("a{2}", false),
        (r"\Bab", false),
        ("^ab", false),
    ];
    let subjects = [
        "",
        "a",
        "ARIA",
        "Merchant's",
        "the merchant",
        "mercha",
        "ſ",
        "\u{212A}",
        "İ ı",
        "goldsmith",
        "a gold coin",
        "_gold_",
        "égold",
        "é gold é",
        "x-y",
        "-",
        "foo",
        "afoo",
        "a-foo",
        "😀gold😀",
        "ace BDE",
        "ab",
        "aB",
        "AA",
        "Trade.",
        "x",
        "xy x",
    ];
    for (src, words) in patterns {
        for flags in ["", "i", "u", "g", "im", "iu", "su"] {
            let mut re = JsRegex::compile(src, flags).unwrap();
            let literal = re.literals.is_some();
            if flags.contains('i') && !flags.contains('u') {
                assert_eq!(literal, words, "/{src}/{flags}");
            }
            assert!(!(flags.contains('i') && flags.contains('u') && literal));
            for s in subjects {
                let fast = re.test(s).unwrap();
                re.literals = None;
                let slow = re.test(s).unwrap();
                assert_eq!(fast, slow, "/{src}/{flags} on {s:?}");
                re = JsRegex::compile(src, flags).unwrap();
            }
        }
    }
}

fn exec(src: &str, flags: &str, s: &str) -> Option<Vec<Option<Range<usize>>>> {
    JsRegex::compile(src, flags)
        .unwrap_or_else(|e| panic!("/{src}/{flags}: {e}"))
        .exec(s)
        .unwrap()
}

fn texts<'s>(src: &str, flags: &str, s: &'s str) -> Option<Vec<Option<&'s str>>> {
    exec(src, flags, s).map(|v| v.into_iter().map(|r| r.map(|r| &s[r])).collect())
}

fn all<'s>(src: &str, flags: &str, s: &'s str) -> Vec<&'s str> {
    JsRegex::compile(src, flags)
        .unwrap()
        .find_all(s)
        .unwrap()
        .into_iter()
        .map(|r| &s[r])
        .collect()
}

fn test(src: &str, flags: &str, s: &str) -> bool {
    JsRegex::compile(src, flags)
        .unwrap_or_else(|e| panic!("/{src}/{flags}: {e}"))
        .test(s)
        .unwrap()
}

fn err(src: &str, flags: &str) -> RegexError {
    match JsRegex::compile(src, flags) {
        Ok(r) => panic!("/{src}/{flags} compiled to {}", r.translation()),
        Err(e) => e,
    }
}

#[test]
fn basics() {
    assert_eq!(exec("", "", ""), Some(vec![Some(0..0)]));
    assert_eq!(texts("b(c)?", "", "abd"), Some(vec![Some("b"), None]));
    assert_eq!(
        texts("aria|merchant", "i", "The MERCHANT"),
        Some(vec![Some("MERCHANT")])
    );
    assert!(test("^a.c$", "", "abc"));
    assert!(!test("^a.c$", "", "a\nc"));
    assert!(test("^a.c$", "s", "a\nc"));
    assert_eq!(all("a*", "g", "baa"), vec!["", "aa", ""]);
    assert_eq!(all("\\w+", "", "hi, you"), vec!["hi", "you"]);
}

#[test]
fn api() {
    let r = JsRegex::compile("a/b", "uigm").unwrap();
    assert_eq!(r.flags(), "gimu");
    assert_eq!(r.source(), "a\\/b");
    assert_eq!(r.to_js_string(), "/a\\/b/gimu");
    assert_eq!(JsRegex::compile("", "").unwrap().to_js_string(), "/(?:)/");
    assert_eq!(JsRegex::compile("[/]", "").unwrap().source(), "[/]");
    let r = JsRegex::compile("(?<year>\\d+)-(\\d+)", "").unwrap();
    assert_eq!(r.group_count(), 2);
    assert_eq!(r.group_names(), &[("year".to_string(), 1)]);
    assert!(r.has_named_groups());
}

#[test]
fn flags_errors() {
    assert_eq!(err("a", "gg").offset, 3);
    assert!(err("a", "y").message.contains("sticky"));
    assert!(err("a", "x").message.contains("invalid regex flag"));
    assert!(err("a", "v").message.contains("not supported"));
}

#[test]
fn unsupported_constructs_are_named() {
    assert!(err("(a)\\1", "").message.contains("backreference"));
    assert!(err("\\1(a)", "").message.contains("backreference"));
    assert!(
        err("(?<n>a)\\k<n>", "")
            .message
            .contains("named backreference")
    );
    assert!(err("a(?=b)", "").message.contains("lookahead"));
    assert!(err("a(?!b)", "").message.contains("lookahead"));
    assert!(err("(?<=b)a", "").message.contains("lookbehind"));
    assert!(err("(?<!b)a", "").message.contains("lookbehind"));
    assert!(err("\\p{L}", "u").message.contains("property"));
    assert!(err("(a*)*", "").message.contains("empty"));
    assert_eq!(err("ab(?=c)", "").offset, 2);
}

#[test]
fn annex_b() {
    // Without u, \1 with no group is an octal escape, \8 the digit, \k the letter, \p the
    // letter, a lone { } ] a literal, \c without a letter a backslash.
    assert!(test("\\1", "", "\u{1}"));
    assert!(test("^\\8$", "", "8"));
    assert!(test("^\\k$", "", "k"));
    assert!(test("^\\p{L}$", "", "p{L}"));
    assert!(test("^a{$", "", "a{"));
    assert!(test("^}]$", "", "}]"));
    assert!(test("^\\c1$", "", "\\c1"));
    assert!(test("^[\\c1]$", "", "\u{11}"));
    assert!(test("^[\\w-z]+$", "", "a-z_"));
    assert!(test("^\\u{2}$", "", "uu"));
    assert!(test("^\\377\\400$", "", "\u{FF}\u{20}0"));
    assert!(err("{1}", "").message.contains("nothing to repeat"));
    assert!(err("a{", "u").message.contains("incomplete"));
    assert!(err("]", "u").message.contains("lone"));
    assert!(err("\\q", "u").message.contains("invalid escape"));
    assert!(err("[\\w-z]", "u").message.contains("range"));
    assert!(err("[😀-😂]", "").message.contains("out of order"));
    assert!(test("[😀-😂]", "u", "😁"));
}

#[test]
fn case_insensitive() {
    // Without u: toUpperCase canonicalization; ſ and the Kelvin sign stay themselves.
    assert!(!test("s", "i", "ſ"));
    assert!(!test("k", "i", "\u{212A}"));
    assert!(test("ß", "i", "ß"));
    assert!(!test("ß", "i", "ẞ"));
    assert!(test("σ", "i", "ς"));
    assert!(test("µ", "i", "Μ"));
    // With u: simple case folding.
    assert!(test("s", "iu", "ſ"));
    assert!(test("k", "iu", "\u{212A}"));
    assert!(test("ß", "iu", "ẞ"));
    assert!(test("^\\w$", "iu", "ſ"));
    assert!(!test("^\\W$", "iu", "ſ"));
    assert!(!test("^\\w$", "i", "ſ"));
    assert!(test("[^a]", "i", "b"));
    assert!(!test("[^a]", "i", "A"));
    assert!(!test("[^a]", "iu", "A"));
}

#[test]
fn astral_without_u() {
    assert!(!test("^.$", "", "😀"));
    assert!(test("^..$", "", "😀"));
    assert!(test("^.$", "u", "😀"));
    assert!(!test("^😀+$", "", "😀😀"));
    assert!(test("^😀+$", "u", "😀😀"));
    assert!(test("^[😀]$", "u", "😀"));
    assert!(!test("^[😀]$", "", "😀"));
    assert!(test("\\ud83d", "", "😀"));
    assert!(!test("\\ud83d", "u", "😀"));
    assert!(test("\\ud83d\\ude00", "u", "😀"));
    assert!(JsRegex::compile(".", "").unwrap().exec("😀").is_err());
    assert_eq!(all("x*", "g", "😀"), vec!["", "", ""]);
    assert_eq!(all("x*", "gu", "😀"), vec!["", ""]);
    assert_eq!(texts("a.b", "", "a😀b a-b"), Some(vec![Some("a-b")]));
    // V8 lets \B match between the surrogates even with u.
    assert!(test("\\B", "u", "a😀b"));
    assert_eq!(all("\\B|a", "gu", "a😀b"), vec!["a", ""]);
    let re = JsRegex::compile("\\B|a", "gu").unwrap();
    assert_eq!(re.find_all("a😀b").unwrap(), vec![0..1, 1..1]);
    assert!(JsRegex::compile("\\B", "u").unwrap().exec("a😀b").is_err());
}

#[test]
fn multiline() {
    assert_eq!(
        all("^\\w", "gm", "a\nb\rc\u{2028}d\r\ne"),
        vec!["a", "b", "c", "d", "e"]
    );
    assert_eq!(
        all("\\w$", "gm", "a\nb\rc\u{2028}d\r\ne"),
        vec!["a", "b", "c", "d", "e"]
    );
    assert_eq!(all("^", "gm", "\r\n").len(), 3);
    assert!(JsRegex::compile("^\\n", "m").unwrap().test("\r").is_err());
    assert!(JsRegex::compile("^\\n", "m").unwrap().test("\n").unwrap());
    assert!(!test("^b", "", "a\nb"));
    assert!(!test("a$", "", "a\n"));
}

#[test]
fn capture_reset() {
    assert_eq!(texts("(?:(a)|b)+", "", "ab"), Some(vec![Some("ab"), None]));
    assert_eq!(
        texts("(?:(a)|(b))+", "", "ab"),
        Some(vec![Some("ab"), None, Some("b")])
    );
    assert_eq!(
        texts("(?:(a)|b){2}", "", "ab"),
        Some(vec![Some("ab"), None])
    );
    assert_eq!(
        texts("((a)|b)+", "", "ab"),
        Some(vec![Some("ab"), Some("b"), None])
    );
    assert_eq!(
        texts("(?:a(x*)|b)+", "", "ab"),
        Some(vec![Some("ab"), None])
    );
    assert_eq!(
        texts("(?:(x*)b|c)+", "", "bb"),
        Some(vec![Some("bb"), Some("")])
    );
}

#[test]
fn limits() {
    let re = JsRegex::compile("(a+)+$", "").unwrap();
    let s = format!("{}b", "a".repeat(30));
    let t = std::time::Instant::now();
    assert!(!re.test(&s).unwrap());
    assert!(t.elapsed() < std::time::Duration::from_secs(1));
    assert!(err(&"(".repeat(1000), "").message.contains("nests"));
    assert!(err(&"(".repeat(100_000), "").message.contains("too long"));
    assert!(err("a{100000}", "").message.contains("too large"));
    assert!(
        err(&"a".repeat(MAX_SOURCE_LEN + 1), "")
            .message
            .contains("too long")
    );
    assert!(err("(?:\\w{1000}){1000}", "").message.contains("too large"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..Default::default()
    })]
    /// Arbitrary patterns over the regex syntax: compiling and matching never panics.
    #[test]
    fn arbitrary_patterns_never_panic(
        pattern in "[-\\\\()\\[\\]{}?*+|^$.,:=!<>a-dkpuxcBbDdSsWw0-9_😀\\n\\r\\u{2028}ſ]{0,24}",
        flags in "[gimsuy]{0,3}",
        subject in "[a-c_ \\n\\r\\u{2028}😀ſ\\u{212A}Kk0-9{}-]{0,12}",
    ) {
        if let Ok(re) = JsRegex::compile(&pattern, &flags) {
            let _ = re.test(&subject);
            let _ = re.exec(&subject);
            if let Ok(all) = re.find_all(&subject) {
                for r in all {
                    proptest::prop_assert!(subject.get(r).is_some());
                }
            }
            let _ = (re.source(), re.to_js_string(), re.group_count());
        }
    }
}

#[test]
fn never_panics_on_odd_input() {
    for s in [
        "\\",
        "[",
        "(",
        ")",
        "[\\",
        "\\u{",
        "\\u{110000}",
        "\\x",
        "\\c",
        "[\\c",
        "(?<",
        "(?<a",
        "(?<>a)",
        "(?<a>)(?<a>)",
        "a{2,1}",
        "a{99999999999999999999}",
        "\\u{FFFFFFFFFFFFFFFFFFFF}",
        "[z-a]",
        "[\\d-a]",
        "(?",
        "(?:",
        "\\k<a",
        "x**",
        "a|*",
    ] {
        for f in ["", "u", "i", "iu", "m"] {
            let _ = JsRegex::compile(s, f).map(|r| r.test("abc"));
        }
    }
}
