//! The macros of character cards and lorebooks (docs/cards.md, "Macros"), expanded when a
//! prompt is built: `{{char}}` and `<BOT>` (the speaker), `{{user}}` and `<USER>` (the player),
//! `{{random:a,b,c}}` (one, drawn anew each turn), `{{pick:a,b,c}}` (one, the same every
//! turn), `{{roll:2d6+1}}` (dice), `{{// a comment}}` (nothing). Their randomness comes from
//! the world's generator at the world's position and never advances it, so the same world
//! builds the same prompt (a replay, a rewind to the same point).

use crate::facts::{SeededDraws, roll};

/// Who the macros name, and where their randomness comes from.
pub(crate) struct Macros<'a> {
    /// `{{char}}`.
    pub char: &'a str,
    /// `{{user}}`.
    pub user: &'a str,
    /// The world's seed.
    pub seed: u64,
    /// The world's position (its seq): `{{random}}` and `{{roll}}` draw from it.
    pub turn: u64,
}

/// SplitMix64 of `x`.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stable number of `text`.
fn hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The options of `{{random:…}}` or `{{pick:…}}`: `::`-separated if any `::`, else commas.
fn options(list: &str) -> Vec<&str> {
    if list.contains("::") {
        list.split("::").collect()
    } else {
        list.split(',').map(str::trim).collect()
    }
}

impl Macros<'_> {
    /// `text` with its macros expanded; `salt` tells apart the places the same text stands
    /// in (a piece's index), so two `{{random}}` of one prompt draw apart.
    pub fn expand(&self, text: &str, salt: u64) -> String {
        if !text.contains("{{") && !text.contains('<') {
            return text.to_owned();
        }
        let text = replace_ignoring_case(text, "<bot>", self.char);
        let text = replace_ignoring_case(&text, "<user>", self.user);
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        let mut n: u64 = 0;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                out.push_str(&rest[open..]);
                rest = "";
                break;
            };
            let inner = &after[..close];
            n += 1;
            out.push_str(&self.one(inner, salt, n, &rest[open..open + close + 4]));
            rest = &after[close + 2..];
        }
        out.push_str(rest);
        out
    }

    /// One macro's text (`whole`, braces included, when it is not one this engine knows).
    fn one(&self, inner: &str, salt: u64, n: u64, whole: &str) -> String {
        let lower = inner.trim().to_ascii_lowercase();
        if lower == "char" {
            return self.char.to_owned();
        }
        if lower == "user" {
            return self.user.to_owned();
        }
        if inner.trim_start().starts_with("//") {
            return String::new();
        }
        let draw = |stable: bool| {
            let place = mix(salt ^ mix(n));
            let turn = if stable { 0 } else { self.turn };
            SeededDraws::new(self.seed ^ mix(place ^ hash(inner)), turn)
        };
        let (name, arg) = match inner.split_once(':') {
            Some((name, arg)) => (name.trim().to_ascii_lowercase(), arg),
            None => return whole.to_owned(),
        };
        match name.as_str() {
            "random" | "pick" => {
                let list = options(arg.strip_prefix(':').unwrap_or(arg));
                let mut draws = draw(name == "pick");
                let i = (crate::facts::Draws::draw(&mut draws) * list.len() as f64) as usize;
                list[i.min(list.len() - 1)].to_owned()
            }
            "roll" => {
                let mut draws = draw(false);
                match roll(arg.trim(), &mut draws) {
                    Ok(r) => format!("{}", r.total),
                    Err(_) => whole.to_owned(),
                }
            }
            _ => whole.to_owned(),
        }
    }
}

/// `text` with every `pattern` (ASCII, lower case) replaced by `with`, in any case.
fn replace_ignoring_case(text: &str, pattern: &str, with: &str) -> String {
    let lower = text.to_ascii_lowercase();
    if !lower.contains(pattern) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in lower.match_indices(pattern) {
        out.push_str(&text[last..at]);
        out.push_str(with);
        last = at + pattern.len();
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(turn: u64) -> Macros<'static> {
        Macros {
            char: "Aria",
            user: "Wren",
            seed: 7,
            turn,
        }
    }

    #[test]
    fn names_comments_and_unknown_macros() {
        let t =
            "{{char}} greets {{user}}; <BOT> and <user>.{{// for the author}} {{time}} {{ unclosed";
        assert_eq!(
            m(1).expand(t, 0),
            "Aria greets Wren; Aria and Wren. {{time}} {{ unclosed"
        );
        assert_eq!(m(1).expand("no macros here", 0), "no macros here");
    }

    #[test]
    fn random_changes_with_the_turn_pick_does_not_and_both_replay() {
        let t = "{{random:red,green,blue,amber,grey}} {{pick::oak::ash::elm::yew}} {{roll:2d6+1}}";
        let a = m(1).expand(t, 3);
        assert_eq!(a, m(1).expand(t, 3), "the same world, the same prompt");
        let picks: std::collections::BTreeSet<String> = (1..40)
            .map(|turn| m(turn).expand("{{pick:oak,ash,elm,yew}}", 3))
            .collect();
        assert_eq!(picks.len(), 1, "a pick is the same every turn");
        let randoms: std::collections::BTreeSet<String> = (1..40)
            .map(|turn| m(turn).expand("{{random:oak,ash,elm,yew}}", 3))
            .collect();
        assert!(randoms.len() > 1, "a random is drawn anew");
        for turn in 1..40 {
            let total: f64 = m(turn).expand("{{roll:2d6+1}}", 0).parse().unwrap();
            assert!((3.0..=13.0).contains(&total));
        }
        assert_eq!(m(1).expand("{{roll:bad}}", 0), "{{roll:bad}}");
    }
}
