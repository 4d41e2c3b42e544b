//! Dice notation for `roll()`: `d20`, `2d6+1`, `4d6kh3`, `2d20kl1-2`.

use super::Draws;

/// The most dice one roll may throw.
pub const MAX_DICE: u32 = 1000;
/// The most sides a die may have.
pub const MAX_SIDES: u32 = 1_000_000;

/// The outcome of a roll.
#[derive(Clone, Debug, PartialEq)]
pub struct Roll {
    /// Every die thrown, in order.
    pub dice: Vec<u32>,
    /// The total: kept dice plus modifiers.
    pub total: f64,
}

fn bad(notation: &str, why: &str) -> String {
    format!("bad dice notation {notation:?} ({why}); write it like d20, 2d6+1 or 4d6kh3")
}

fn number(s: &[u8], i: &mut usize) -> Option<u64> {
    let start = *i;
    while *i < s.len() && s[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i == start || *i - start > 9 {
        return None;
    }
    std::str::from_utf8(&s[start..*i]).ok()?.parse().ok()
}

/// Parsed dice notation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Dice {
    count: u64,
    sides: u64,
    keep: Option<(bool, u64)>,
    modifier: f64,
}

/// Parses `notation` and throws the dice with `draws`.
pub fn roll<D: Draws + ?Sized>(notation: &str, draws: &mut D) -> Result<Roll, String> {
    parse(notation)?.throw(draws)
}

/// Parses dice notation (`d20`, `2d6+1`, `4d6kh3`).
pub(crate) fn parse(notation: &str) -> Result<Dice, String> {
    let text = super::number::js_trim(notation).to_ascii_lowercase();
    let s = text.as_bytes();
    let mut i = 0;
    let count = if s.first().is_some_and(u8::is_ascii_digit) {
        number(s, &mut i).ok_or_else(|| bad(notation, "the dice count is too long"))?
    } else {
        1
    };
    if s.get(i) != Some(&b'd') {
        return Err(bad(notation, "expected `d`"));
    }
    i += 1;
    let sides = number(s, &mut i).ok_or_else(|| bad(notation, "expected the number of sides"))?;
    if count == 0 || count > u64::from(MAX_DICE) {
        return Err(bad(notation, &format!("between 1 and {MAX_DICE} dice")));
    }
    if sides == 0 || sides > u64::from(MAX_SIDES) {
        return Err(bad(notation, &format!("between 1 and {MAX_SIDES} sides")));
    }
    let mut keep: Option<(bool, u64)> = None;
    if s[i..].starts_with(b"kh") || s[i..].starts_with(b"kl") {
        let highest = s[i + 1] == b'h';
        i += 2;
        let n = number(s, &mut i).ok_or_else(|| bad(notation, "expected how many dice to keep"))?;
        if n == 0 || n > count {
            return Err(bad(notation, "keep between 1 and the number of dice"));
        }
        keep = Some((highest, n));
    }
    let mut modifier = 0f64;
    while i < s.len() {
        let sign = match s[i] {
            b'+' => 1.0,
            b'-' => -1.0,
            _ => return Err(bad(notation, "unexpected text after the dice")),
        };
        i += 1;
        let n =
            number(s, &mut i).ok_or_else(|| bad(notation, "expected a number after the sign"))?;
        modifier += sign * n as f64;
    }
    Ok(Dice {
        count,
        sides,
        keep,
        modifier,
    })
}

impl Dice {
    fn throw<D: Draws + ?Sized>(self, draws: &mut D) -> Result<Roll, String> {
        let Dice {
            count,
            sides,
            keep,
            modifier,
        } = self;
        let dice: Vec<u32> = (0..count)
            .map(|_| {
                let d = draws.draw();
                // `sides` ≤ MAX_SIDES, so the product stays exact and below `sides`.
                (d * sides as f64).floor() as u32 + 1
            })
            .collect();
        let mut kept = dice.clone();
        if let Some((highest, n)) = keep {
            kept.sort_unstable();
            if highest {
                kept.reverse();
            }
            kept.truncate(n as usize);
        }
        let total = kept.iter().map(|d| f64::from(*d)).sum::<f64>() + modifier;
        Ok(Roll { dice, total })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<f64>);
    impl Draws for Fixed {
        fn draw(&mut self) -> f64 {
            self.0.remove(0)
        }
    }

    #[test]
    fn notation() {
        let r = roll("2d6+1", &mut Fixed(vec![0.0, 0.999])).unwrap();
        assert_eq!((r.dice, r.total), (vec![1, 6], 8.0));
        let r = roll("4d6kh3", &mut Fixed(vec![0.0, 0.5, 0.9, 0.2])).unwrap();
        assert_eq!((r.dice.clone(), r.total), (vec![1, 4, 6, 2], 12.0));
        let r = roll(" D20 ", &mut Fixed(vec![0.5])).unwrap();
        assert_eq!(r.total, 11.0);
        let r = roll("2d20kl1-2", &mut Fixed(vec![0.5, 0.1])).unwrap();
        assert_eq!(r.total, 1.0);
    }

    #[test]
    fn bad_notation_is_a_clear_error() {
        for n in [
            "",
            "d",
            "2x6",
            "0d6",
            "1001d6",
            "d0",
            "d6+",
            "4d6kh5",
            "d6 extra",
            "99999999999d6",
            "1000000000d6",
        ] {
            let e = roll(n, &mut Fixed(vec![])).unwrap_err();
            assert!(e.contains("bad dice notation"), "{n}: {e}");
        }
    }
}
