//! Memories added to the index since its last commit: tantivy cannot search them yet, so they
//! are scored here, with BM25 as tantivy computes it. Each owner's words map to the pending
//! memories that hold them, so a query costs a look-up per word, whatever the number pending.

use crate::model::{EntityId, MemoryId};
use std::collections::HashMap;

/// A memory added since the last commit: its words and their counts.
pub(super) struct Pending {
    pub id: MemoryId,
    pub owner: EntityId,
    pub words: Vec<(String, u32)>,
    pub len: u32,
}

/// BM25's parameters (tantivy's).
const K1: f32 = 1.2;
const B: f32 = 0.75;

#[derive(Default)]
pub(super) struct PendingSet {
    memories: Vec<Pending>,
    /// Per owner, per word: (index in `memories`, count of the word).
    postings: HashMap<EntityId, HashMap<String, Vec<(u32, u32)>>>,
    /// The words of every pending memory.
    tokens: u64,
}

/// The collection-wide statistics a pending score needs, with the committed ones included.
pub(super) struct Stats {
    /// Average document length in words.
    pub average: f32,
}

impl PendingSet {
    pub fn len(&self) -> usize {
        self.memories.len()
    }

    /// The number of words in all pending memories.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    pub fn push(&mut self, p: Pending) {
        let at = self.memories.len() as u32;
        let words = self.postings.entry(p.owner).or_default();
        for (w, n) in &p.words {
            match words.get_mut(w.as_str()) {
                Some(list) => list.push((at, *n)),
                None => {
                    words.insert(w.clone(), vec![(at, *n)]);
                }
            }
        }
        self.tokens += u64::from(p.len);
        self.memories.push(p);
    }

    /// Drops `id` if it is pending; says whether it was.
    pub fn remove(&mut self, id: MemoryId) -> bool {
        let Some(at) = self.memories.iter().position(|p| p.id == id) else {
            return false;
        };
        // Rare (a memory removed before the next commit): rebuilt rather than patched.
        let mut memories = std::mem::take(&mut self.memories);
        memories.remove(at);
        self.clear();
        for p in memories {
            self.push(p);
        }
        true
    }

    pub fn clear(&mut self) {
        self.memories.clear();
        self.postings.clear();
        self.tokens = 0;
    }

    /// Whether `owner` has a pending memory.
    pub fn has_owner(&self, owner: EntityId) -> bool {
        self.postings.get(&owner).is_some_and(|w| !w.is_empty())
    }

    /// How many of `owner`'s pending memories hold `word`.
    pub fn doc_freq(&self, owner: EntityId, word: &str) -> u64 {
        self.list(owner, word).len() as u64
    }

    fn list(&self, owner: EntityId, word: &str) -> &[(u32, u32)] {
        self.postings
            .get(&owner)
            .and_then(|w| w.get(word))
            .map_or(&[], Vec::as_slice)
    }

    /// BM25 of `owner`'s pending memories that hold any of `words` (each with its `idf`),
    /// pushed to `out`. Each memory's terms are added in the order of `words`, as tantivy
    /// does, so a memory scores the same before and after the commit.
    pub fn score(
        &self,
        owner: EntityId,
        words: &[String],
        idf: &[f32],
        stats: &Stats,
        out: &mut Vec<(MemoryId, f32)>,
    ) {
        let mut scores: Vec<Option<f32>> = vec![None; self.memories.len()];
        for (w, idf) in words.iter().zip(idf) {
            for &(at, tf) in self.list(owner, w) {
                let p = &self.memories[at as usize];
                let norm = K1 * (1.0 - B + B * p.len as f32 / stats.average.max(f32::MIN_POSITIVE));
                let tf = tf as f32;
                let term = idf * tf * (K1 + 1.0) / (tf + norm);
                let s = &mut scores[at as usize];
                *s = Some(s.map_or(term, |s| s + term));
            }
        }
        out.extend(
            scores
                .into_iter()
                .zip(&self.memories)
                .filter_map(|(s, p)| s.filter(|s| *s > 0.0).map(|s| (p.id, s))),
        );
    }
}
