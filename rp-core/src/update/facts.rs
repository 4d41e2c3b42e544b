//! A state report's `facts` (docs/requirements.md): `key: value` lines of a character's sheet
//! set by the model, which is how a pending requirement (`self.fare_paid`) gets decided.

use crate::model::FactSheet;
use serde_json::Value;
use std::collections::BTreeMap;

/// The most facts one report sets.
pub const MAX_REPORT_FACTS: usize = 8;
/// The longest text value of a fact (characters).
pub const MAX_FACT_VALUE_CHARS: usize = 100;

/// `sheet` with each `key: value` of `facts` set: the unconditional line `key: …` replaced,
/// or a new line added at the end. Keys are identifiers; values booleans, finite numbers or
/// short texts on one line.
pub(crate) fn set_facts(
    sheet: &FactSheet,
    facts: &BTreeMap<String, Value>,
) -> Result<FactSheet, String> {
    if facts.is_empty() {
        return Err("facts is empty".into());
    }
    if facts.len() > MAX_REPORT_FACTS {
        return Err(format!("at most {MAX_REPORT_FACTS} facts in one report"));
    }
    let mut lines = sheet.lines().to_vec();
    for (key, value) in facts {
        let identifier = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && key.len() <= 64;
        if !identifier {
            return Err(format!(
                "the fact key {key:?} is not a name (letters, digits, _)"
            ));
        }
        let text = match value {
            Value::Bool(b) => b.to_string(),
            Value::Number(n) if n.as_f64().is_some_and(f64::is_finite) => n.to_string(),
            Value::String(s)
                if !s.trim().is_empty()
                    && s.chars().count() <= MAX_FACT_VALUE_CHARS
                    && !s.chars().any(char::is_control) =>
            {
                s.trim().to_owned()
            }
            _ => {
                return Err(format!(
                    "the fact {key:?} is a boolean, a number or a text of 1 to {MAX_FACT_VALUE_CHARS} characters on one line"
                ));
            }
        };
        let line = format!("{key}: {text}");
        let same_key = |l: &String| {
            l.trim_start()
                .strip_prefix(key.as_str())
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        };
        match lines.iter_mut().find(|l| same_key(l)) {
            Some(l) => *l = line,
            None => lines.push(line),
        }
    }
    Ok(FactSheet(lines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replaces_or_adds() {
        let sheet = FactSheet(vec!["A ferryman.".into(), "fare_paid: false".into()]);
        let facts: BTreeMap<String, Value> = [
            ("fare_paid".to_owned(), json!(true)),
            ("coins".to_owned(), json!(3)),
        ]
        .into();
        let out = set_facts(&sheet, &facts).unwrap();
        assert_eq!(out.lines(), ["A ferryman.", "fare_paid: true", "coins: 3"]);
        let bad: BTreeMap<String, Value> = [("a b".to_owned(), json!(true))].into();
        assert!(set_facts(&sheet, &bad).is_err());
        let bad: BTreeMap<String, Value> = [("x".to_owned(), json!(null))].into();
        assert!(set_facts(&sheet, &bad).is_err());
    }
}
