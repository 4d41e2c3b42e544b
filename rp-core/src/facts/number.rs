//! JavaScript's number ↔ string conversions: `Number.prototype.toString()` (radix 10) and
//! `StringToNumber` (what `Number(s)`, `s * 1` and `==` do with a string).

/// JavaScript's whitespace and line terminators (what `String.prototype.trim` removes).
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// `String.prototype.trim`.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// `Number.prototype.toString()`: the shortest digits that round-trip, laid out by
/// ECMA-262's Number::toString.
pub fn to_js_string(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x < 0.0 {
        return format!("-{}", to_js_string(-x));
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.2345e4", "5e-7".
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} always has an exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().expect("{:e} exponent is an integer") + 1;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        if k == 1 {
            format!("{digits}e{sign}{}", e.abs())
        } else {
            format!("{}.{}e{sign}{}", &digits[..1], &digits[1..], e.abs())
        }
    }
}

/// Parses digits in `radix` exactly (as a big integer), then rounds once to the nearest f64.
fn radix_value(digits: &str, radix: u32) -> Option<f64> {
    if digits.is_empty() {
        return None;
    }
    let mut acc: u128 = 0;
    let mut overflow = false;
    let mut approx = 0f64;
    for c in digits.chars() {
        let d = c.to_digit(radix)?;
        approx = approx * f64::from(radix) + f64::from(d);
        if !overflow {
            match acc
                .checked_mul(u128::from(radix))
                .and_then(|v| v.checked_add(u128::from(d)))
            {
                Some(v) => acc = v,
                None => overflow = true,
            }
        }
    }
    Some(if overflow { approx } else { acc as f64 })
}

/// True for an unsigned StrUnsignedDecimalLiteral body: digits with an optional point and
/// exponent, at least one digit before the exponent.
fn is_decimal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac;
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp {
            return false;
        }
    }
    i == b.len()
}

/// `StringToNumber`: JavaScript's conversion of a string to a number (NaN when it is not one).
pub fn string_to_number(s: &str) -> f64 {
    let t = js_trim(s);
    if t.is_empty() {
        return 0.0;
    }
    let lower_prefix = t.get(..2).map(str::to_ascii_lowercase);
    if let Some(p) = lower_prefix.as_deref() {
        let radix = match p {
            "0x" => Some(16),
            "0o" => Some(8),
            "0b" => Some(2),
            _ => None,
        };
        if let Some(radix) = radix {
            return radix_value(&t[2..], radix).unwrap_or(f64::NAN);
        }
    }
    let (sign, body) = match t.as_bytes()[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_decimal(body) {
        return f64::NAN;
    }
    // The grammar is checked above, so Rust's correctly rounded parser sees only decimals.
    body.parse::<f64>().map_or(f64::NAN, |v| sign * v)
}

/// A numeric literal in source code (no sign): decimal, `0x`/`0o`/`0b`. Legacy octal
/// (`017`), numeric separators and BigInt are refused with a message.
pub(crate) fn parse_literal(text: &str) -> Result<f64, String> {
    if text.contains('_') {
        return Err("numeric separators (`_`) are not allowed".into());
    }
    if text.ends_with('n') && !text.starts_with("0x") && !text.starts_with("0X") {
        return Err("BigInt literals are not allowed".into());
    }
    let lower = text.to_ascii_lowercase();
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = lower.strip_prefix(prefix) {
            if digits.ends_with('n') {
                return Err("BigInt literals are not allowed".into());
            }
            return radix_value(digits, radix).ok_or_else(|| format!("malformed number {text:?}"));
        }
    }
    let b = text.as_bytes();
    if b.len() > 1 && b[0] == b'0' && b[1].is_ascii_digit() {
        return Err(format!(
            "legacy octal literals like {text:?} are not allowed"
        ));
    }
    if !is_decimal(text) {
        return Err(format!("malformed number {text:?}"));
    }
    text.parse::<f64>()
        .map_err(|_| format!("malformed number {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_string_matches_javascript() {
        for (x, s) in [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (2.5e25, "2.5e+25"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (100.0, "100"),
            (0.5, "0.5"),
            (123.456, "123.456"),
        ] {
            assert_eq!(to_js_string(x), s, "{x:e}");
        }
    }

    #[test]
    fn string_to_number_matches_javascript() {
        for (s, x) in [
            ("", 0.0),
            ("  \n", 0.0),
            (" 42 ", 42.0),
            ("-0", -0.0),
            ("+1.5", 1.5),
            (".5", 0.5),
            ("5.", 5.0),
            ("1e3", 1000.0),
            ("1E-2", 0.01),
            ("0x1F", 31.0),
            ("0b101", 5.0),
            ("0o17", 15.0),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("\u{feff}7\u{3000}", 7.0),
        ] {
            let got = string_to_number(s);
            assert!(
                got == x && got.is_sign_negative() == x.is_sign_negative(),
                "{s:?} → {got}"
            );
        }
        for s in [
            "abc", "1a", "inf", "infinity", "NaN", "-0x10", "0x", "1e", ".", "+", "1_000", "١",
        ] {
            assert!(string_to_number(s).is_nan(), "{s:?}");
        }
    }

    #[test]
    fn literals() {
        assert_eq!(parse_literal("0x10"), Ok(16.0));
        assert_eq!(parse_literal("1.5e3"), Ok(1500.0));
        assert!(parse_literal("017").unwrap_err().contains("octal"));
        assert!(parse_literal("1_000").unwrap_err().contains("separators"));
        assert!(parse_literal("10n").unwrap_err().contains("BigInt"));
    }
}
