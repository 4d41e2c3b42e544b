//! The flags of a regex literal (`/source/flags`): parsing, with JavaScript's errors, and the
//! canonical order.

use super::RegexError;

/// Flags of a JS regex literal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `g`
    pub global: bool,
    /// `i`
    pub ignore_case: bool,
    /// `m`
    pub multiline: bool,
    /// `s`
    pub dot_all: bool,
    /// `u`
    pub unicode: bool,
}

impl Flags {
    /// Parses a flags string: only `g i m s u`, each at most once. Error offsets are
    /// `source_len + 1 + index of the flag`, i.e. they point at the flag in `/source/flags`.
    pub fn parse(flags: &str, source_len: usize) -> Result<Flags, RegexError> {
        let mut f = Flags::default();
        for (i, c) in flags.char_indices() {
            let offset = source_len + 1 + i;
            let slot = match c {
                'g' => &mut f.global,
                'i' => &mut f.ignore_case,
                'm' => &mut f.multiline,
                's' => &mut f.dot_all,
                'u' => &mut f.unicode,
                'y' | 'd' | 'v' => {
                    let what = match c {
                        'y' => "y (sticky)",
                        'd' => "d (match indices)",
                        _ => "v (unicode sets)",
                    };
                    return Err(RegexError::new(
                        offset,
                        format!(
                            "the regex flag {what} is not supported; the flags allowed are g, i, m, s and u"
                        ),
                    ));
                }
                _ => {
                    return Err(RegexError::new(
                        offset,
                        format!("invalid regex flag `{c}`; the flags allowed are g, i, m, s and u"),
                    ));
                }
            };
            if *slot {
                return Err(RegexError::new(
                    offset,
                    format!("duplicate regex flag `{c}`"),
                ));
            }
            *slot = true;
        }
        Ok(f)
    }

    /// The flags in JavaScript's canonical order (`RegExp.prototype.flags`).
    pub fn to_js_string(self) -> String {
        let mut s = String::new();
        for (on, c) in [
            (self.global, 'g'),
            (self.ignore_case, 'i'),
            (self.multiline, 'm'),
            (self.dot_all, 's'),
            (self.unicode, 'u'),
        ] {
            if on {
                s.push(c);
            }
        }
        s
    }
}
