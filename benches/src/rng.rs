//! Deterministic randomness: a small generator, word ranks, a Zipf sampler, vocabularies.

/// SplitMix64: small, fast, deterministic; good enough to pick words and entities.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// A number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number in [-1, 1).
    pub fn signed(&mut self) -> f64 {
        self.unit() * 2.0 - 1.0
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A made-up word, unique per rank, letters only (every tokenizer sees one word): syllables of
/// the rank in base 70, each a consonant and a vowel, so every word ends in a vowel.
pub fn word(rank: usize) -> String {
    const C: &[u8] = b"bdfgklmnprstvz"; // 14 consonants
    const V: &[u8] = b"aeiou"; // 5 vowels (70 syllables)
    let mut n = rank;
    let mut out = String::new();
    loop {
        let s = n % 70;
        out.push(C[s / 5] as char);
        out.push(V[s % 5] as char);
        n /= 70;
        if n == 0 {
            break;
        }
    }
    out
}

/// Zipf (s = 1) over `n` ranks, sampled by inverting the cumulative distribution.
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// The distribution over ranks `0..n` (`n > 0`).
    pub fn new(n: usize) -> Zipf {
        let mut cdf = Vec::with_capacity(n);
        let mut sum = 0.0;
        for r in 1..=n {
            sum += 1.0 / r as f64;
            cdf.push(sum);
        }
        for c in &mut cdf {
            *c /= sum;
        }
        Zipf { cdf }
    }

    /// A rank.
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|c| *c < u).min(self.cdf.len() - 1)
    }
}

/// Made-up words with Zipf (s = 1) frequencies, to write synthetic lines.
pub struct Vocabulary {
    /// The words, by rank (the most frequent first).
    pub words: Vec<String>,
    zipf: Zipf,
}

impl Vocabulary {
    /// `n` made-up words, drawn with Zipf (s = 1) frequencies.
    pub fn new(n: usize) -> Vocabulary {
        Vocabulary {
            words: (0..n).map(word).collect(),
            zipf: Zipf::new(n),
        }
    }

    /// One word.
    pub fn sample(&self, rng: &mut Rng) -> &str {
        &self.words[self.zipf.sample(rng)]
    }

    /// `lo..=hi` words, space-separated.
    pub fn text(&self, rng: &mut Rng, lo: usize, hi: usize) -> String {
        let n = rng.between(lo, hi);
        let mut s = String::with_capacity(n * 6);
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.sample(rng));
        }
        s
    }
}
