//! JavaScript values and the abstract operations of ECMA-262 that the fact language uses:
//! ToBoolean, ToPrimitive, ToNumber, ToString, IsLooselyEqual, IsStrictlyEqual, IsLessThan.

use super::number::{string_to_number, to_js_string};
use super::regex::JsRegex;
use std::cmp::Ordering;
use std::fmt;
use std::ops::Deref;
use std::rc::Rc;

/// A string value: borrowed from the sheet or the context when possible, owned when computed.
#[derive(Clone)]
pub enum JsStr<'a> {
    /// Borrowed.
    Borrowed(&'a str),
    /// Computed.
    Owned(Rc<str>),
}

impl Deref for JsStr<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            JsStr::Borrowed(s) => s,
            JsStr::Owned(s) => s,
        }
    }
}

impl fmt::Debug for JsStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<'a> From<String> for JsStr<'a> {
    fn from(s: String) -> Self {
        JsStr::Owned(s.into())
    }
}

/// The objects of the context. Objects compare by identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Obj {
    /// `self`: the entity's `key: value` facts.
    SelfFacts,
    /// `time`.
    Time,
    /// `drives`.
    Drives,
}

/// An array: the result of `match`, or `present`.
#[derive(Debug)]
pub struct JsArray<'a> {
    /// The elements.
    pub items: Vec<Value<'a>>,
    /// For a non-global `match`: the UTF-16 index of the match.
    pub index: Option<f64>,
    /// For a non-global `match`: the string searched.
    pub input: Option<JsStr<'a>>,
    /// Whether the regex that made it has named groups.
    pub named_groups: bool,
}

/// A JavaScript value.
#[derive(Clone, Debug)]
pub enum Value<'a> {
    /// `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Num(f64),
    /// A string.
    Str(JsStr<'a>),
    /// An array (compares by identity).
    Array(Rc<JsArray<'a>>),
    /// A context object (compares by identity).
    Object(Obj),
    /// A regex literal's object (each evaluation of a literal is a new object).
    Regex(&'a JsRegex),
}

impl<'a> Value<'a> {
    /// A string value from owned text.
    pub fn string(s: String) -> Value<'a> {
        Value::Str(s.into())
    }

    /// ToBoolean.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Undefined | Value::Null => false,
            Value::Bool(b) => *b,
            Value::Num(n) => !(*n == 0.0 || n.is_nan()),
            Value::Str(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) | Value::Regex(_) => true,
        }
    }

    /// True for `null` and `undefined`.
    pub fn is_nullish(&self) -> bool {
        matches!(self, Value::Undefined | Value::Null)
    }

    fn is_object(&self) -> bool {
        matches!(self, Value::Array(_) | Value::Object(_) | Value::Regex(_))
    }

    /// ToPrimitive (default hint): objects become their string form.
    pub fn to_primitive(&self) -> Value<'a> {
        if self.is_object() {
            Value::string(self.to_js_string().to_string())
        } else {
            self.clone()
        }
    }

    /// ToNumber.
    pub fn to_number(&self) -> f64 {
        match self {
            Value::Undefined => f64::NAN,
            Value::Null => 0.0,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Num(n) => *n,
            Value::Str(s) => string_to_number(s),
            _ => string_to_number(&self.to_js_string()),
        }
    }

    /// ToString.
    pub fn to_js_string(&self) -> JsStr<'a> {
        match self {
            Value::Undefined => JsStr::Borrowed("undefined"),
            Value::Null => JsStr::Borrowed("null"),
            Value::Bool(true) => JsStr::Borrowed("true"),
            Value::Bool(false) => JsStr::Borrowed("false"),
            Value::Num(n) => to_js_string(*n).into(),
            Value::Str(s) => s.clone(),
            Value::Array(a) => {
                let parts: Vec<String> = a
                    .items
                    .iter()
                    .map(|v| {
                        if v.is_nullish() {
                            String::new()
                        } else {
                            v.to_js_string().to_string()
                        }
                    })
                    .collect();
                parts.join(",").into()
            }
            Value::Object(_) => JsStr::Borrowed("[object Object]"),
            Value::Regex(r) => r.to_js_string().into(),
        }
    }

    /// IsStrictlyEqual (`===`).
    pub fn strict_eq(&self, other: &Value<'_>) -> bool {
        match (self, other) {
            (Value::Undefined, Value::Undefined) | (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Num(a), Value::Num(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => **a == **b,
            (Value::Array(a), Value::Array(b)) => {
                std::ptr::eq(Rc::as_ptr(a).cast::<u8>(), Rc::as_ptr(b).cast::<u8>())
            }
            (Value::Object(a), Value::Object(b)) => a == b,
            _ => false,
        }
    }

    /// IsLooselyEqual (`==`).
    pub fn loose_eq(&self, other: &Value<'_>) -> bool {
        use Value::*;
        match (self, other) {
            (Undefined | Null, Undefined | Null) => true,
            (Undefined | Null, _) | (_, Undefined | Null) => false,
            (Num(a), Str(b)) => *a == string_to_number(b),
            (Str(a), Num(b)) => string_to_number(a) == *b,
            (Bool(a), _) => Num(f64::from(u8::from(*a))).loose_eq(other),
            (_, Bool(b)) => self.loose_eq(&Num(f64::from(u8::from(*b)))),
            (a, b) if a.is_object() && !b.is_object() => a.to_primitive().loose_eq(b),
            (a, b) if !a.is_object() && b.is_object() => a.loose_eq(&b.to_primitive()),
            _ => self.strict_eq(other),
        }
    }
}

/// Compares strings by UTF-16 code units, as JavaScript does.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// IsLessThan: `Some(a < b)`, or `None` (undefined) when a NaN is involved.
pub fn less_than(a: &Value<'_>, b: &Value<'_>) -> Option<bool> {
    let (pa, pb) = (a.to_primitive(), b.to_primitive());
    if let (Value::Str(x), Value::Str(y)) = (&pa, &pb) {
        return Some(cmp_utf16(x, y) == Ordering::Less);
    }
    let (x, y) = (pa.to_number(), pb.to_number());
    if x.is_nan() || y.is_nan() {
        None
    } else {
        Some(x < y)
    }
}

/// The UTF-16 length of a string.
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

/// The UTF-16 index of byte offset `byte` in `s`.
pub fn utf16_index(s: &str, byte: usize) -> usize {
    utf16_len(&s[..byte])
}

/// Property names every string inherits (String.prototype and Object.prototype): reading one
/// in JavaScript gives a function, which the fact language cannot hold.
pub(crate) const STRING_BUILTINS: &[&str] = &[
    "anchor",
    "at",
    "big",
    "blink",
    "bold",
    "charAt",
    "charCodeAt",
    "codePointAt",
    "concat",
    "constructor",
    "endsWith",
    "fixed",
    "fontcolor",
    "fontsize",
    "includes",
    "indexOf",
    "isWellFormed",
    "italics",
    "lastIndexOf",
    "link",
    "localeCompare",
    "match",
    "matchAll",
    "normalize",
    "padEnd",
    "padStart",
    "repeat",
    "replace",
    "replaceAll",
    "search",
    "slice",
    "small",
    "split",
    "startsWith",
    "strike",
    "sub",
    "substr",
    "substring",
    "sup",
    "toLocaleLowerCase",
    "toLocaleUpperCase",
    "toLowerCase",
    "toString",
    "toUpperCase",
    "toWellFormed",
    "trim",
    "trimEnd",
    "trimLeft",
    "trimRight",
    "trimStart",
    "valueOf",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "__proto__",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
];

/// Property names every array inherits.
pub(crate) const ARRAY_BUILTINS: &[&str] = &[
    "at",
    "concat",
    "constructor",
    "copyWithin",
    "entries",
    "every",
    "fill",
    "filter",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
    "flat",
    "flatMap",
    "forEach",
    "includes",
    "indexOf",
    "join",
    "keys",
    "lastIndexOf",
    "map",
    "pop",
    "push",
    "reduce",
    "reduceRight",
    "reverse",
    "shift",
    "slice",
    "some",
    "sort",
    "splice",
    "toLocaleString",
    "toReversed",
    "toSorted",
    "toSpliced",
    "toString",
    "unshift",
    "values",
    "with",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "__proto__",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "valueOf",
];

/// Property names every plain object inherits (Object.prototype).
pub(crate) const OBJECT_BUILTINS: &[&str] = &[
    "constructor",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "__proto__",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
];

/// Property names numbers and booleans inherit.
pub(crate) const NUMBER_BUILTINS: &[&str] = &[
    "constructor",
    "toExponential",
    "toFixed",
    "toLocaleString",
    "toPrecision",
    "toString",
    "valueOf",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "__proto__",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
];

/// Regex objects' inherited and own properties (all unsupported as values).
pub(crate) const REGEX_BUILTINS: &[&str] = &[
    "compile",
    "constructor",
    "dotAll",
    "exec",
    "flags",
    "global",
    "hasIndices",
    "ignoreCase",
    "lastIndex",
    "multiline",
    "source",
    "sticky",
    "test",
    "toString",
    "unicode",
    "unicodeSets",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "__proto__",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "valueOf",
];

/// The canonical array index a property key denotes ("0", "12"; not "01", "1.0", "-1").
pub fn array_index(key: &str) -> Option<usize> {
    if key.is_empty() || key.len() > 15 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value<'_> {
        Value::Str(JsStr::Borrowed(x))
    }

    #[test]
    fn loose_equality_follows_javascript() {
        use Value::*;
        assert!(Null.loose_eq(&Undefined));
        assert!(!Null.loose_eq(&Num(0.0)));
        assert!(Num(1.0).loose_eq(&s("1")));
        assert!(s(" 1 ").loose_eq(&Bool(true)));
        assert!(Bool(false).loose_eq(&s("")));
        assert!(!s("a").loose_eq(&s("A")));
        assert!(!Num(f64::NAN).loose_eq(&Num(f64::NAN)));
        assert!(Num(0.0).loose_eq(&Num(-0.0)));
        assert!(!Undefined.loose_eq(&Bool(false)));
        let arr = Array(Rc::new(JsArray {
            items: vec![s("a"), Undefined],
            index: None,
            input: None,
            named_groups: false,
        }));
        assert!(arr.loose_eq(&s("a,")));
        assert!(!arr.strict_eq(&s("a,")));
        assert!(arr.strict_eq(&arr.clone()));
    }

    #[test]
    fn relational_comparison_follows_javascript() {
        use Value::*;
        assert_eq!(
            less_than(&s("10"), &s("9")),
            Some(true),
            "strings compare as strings"
        );
        assert_eq!(
            less_than(&s("10"), &Num(9.0)),
            Some(false),
            "mixed compare as numbers"
        );
        assert_eq!(less_than(&Undefined, &Num(1.0)), None);
        assert_eq!(less_than(&Null, &Num(1.0)), Some(true));
        // U+FF61 sorts after U+1F600 by code point but before it by UTF-16 code unit.
        assert_eq!(less_than(&s("\u{1F600}"), &s("\u{FF61}")), Some(true));
    }

    #[test]
    fn conversions() {
        use Value::*;
        assert_eq!(&*Num(-0.0).to_js_string(), "0");
        assert_eq!(&*Bool(true).to_js_string(), "true");
        assert_eq!(Bool(true).to_number(), 1.0);
        assert!(Undefined.to_number().is_nan());
        assert_eq!(Null.to_number(), 0.0);
        assert_eq!(&*Object(Obj::Time).to_js_string(), "[object Object]");
        assert!(!s("").truthy() && s("0").truthy() && !Num(f64::NAN).truthy());
        assert_eq!(utf16_len("a😀"), 3);
        assert_eq!(array_index("01"), None);
        assert_eq!(array_index("10"), Some(10));
    }
}
