//! Memories added to the index since its last commit: tantivy cannot search them yet, so they
//! are scored here, with BM25 as tantivy computes it. Each owner's words map to the pending
//! memories that hold them, so a query costs a look-up per word, whatever the number pending.

use crate::model::{EntityId, MemoryId};
use std::collections::HashMap;

/// A memory added since the last commit.
struct Pending {
    id: MemoryId,
    /// Its number of words.
    len: u32,
    /// Removed before the next commit: no longer scored.
    removed: bool,
}

/// BM25's parameters (tantivy's).
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// One owner's pending words: for each, (index in `memories`, count of the word).
type Postings = HashMap<Box<str>, Vec<(u32, u32)>>;

#[derive(Default)]
pub(super) struct PendingSet {
    memories: Vec<Pending>,
    /// Each owner's words.
    postings: HashMap<EntityId, Postings>,
    /// How many of `memories` were removed.
    removed: usize,
}

/// The collection-wide statistics a pending score needs, with the committed ones included.
pub(super) struct Stats {
    /// Average document length in words.
    pub average: f32,
}

impl PendingSet {
    /// How many memories were added since the last commit (removed ones too: like tantivy's
    /// deleted documents, they count in the statistics until the commit).
    pub fn len(&self) -> usize {
        self.memories.len()
    }

    /// How many pending memories were not removed since: what a search of the delta scores.
    pub fn live(&self) -> usize {
        self.memories.len() - self.removed
    }

    /// Adds memory `id` of `owner`, of `len` words, each of `words` once with its count. A word
    /// the owner's pending memories already hold costs no allocation.
    pub fn push(&mut self, id: MemoryId, owner: EntityId, words: &[(&str, u32)], len: u32) {
        let at = self.memories.len() as u32;
        let postings = self.postings.entry(owner).or_default();
        for &(w, n) in words {
            match postings.get_mut(w) {
                Some(list) => list.push((at, n)),
                None => {
                    postings.insert(w.into(), vec![(at, n)]);
                }
            }
        }
        self.memories.push(Pending {
            id,
            len,
            removed: false,
        });
    }

    /// Stops scoring `id` if it is pending; says whether it was.
    pub fn remove(&mut self, id: MemoryId) -> bool {
        match self.memories.iter_mut().find(|p| p.id == id && !p.removed) {
            Some(p) => {
                p.removed = true;
                self.removed += 1;
                true
            }
            None => false,
        }
    }

    pub fn clear(&mut self) {
        self.memories.clear();
        self.postings.clear();
        self.removed = 0;
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
                .filter(|(_, p)| !p.removed)
                .filter_map(|(s, p)| s.filter(|s| *s > 0.0).map(|s| (p.id, s))),
        );
    }
}
