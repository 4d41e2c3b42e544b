//! The tantivy index of memories: derived from the world, rebuilt or caught up from it, never
//! the truth.
//!
//! Every indexed word is scoped to its memory's owner: the term for "ale" in a memory of
//! entity 12 is `12:ale`. A speaker's query is made of the speaker's own terms, so another
//! owner's memory cannot match at all (the witness filter is the vocabulary itself, not a
//! clause or a post-filter), and each term's postings hold one owner's memories only, which
//! keeps a query on a word every memory contains as cheap as one on a rare word. BM25's
//! statistics are the owner's: document count, document frequencies and average length
//! (relevance within a point of view: a word in most of the owner's memories tells little,
//! whatever others remember). So an owner's recall depends on its own memories only, and an
//! index may hold some owners' memories and take in the others' when first needed
//! ([`MemoryIndex::lazy_in`]) with the same answers.

use super::pending::{PendingSet, Stats};
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{EntityId, Memory, MemoryId};
use std::collections::{HashMap, HashSet};
use tantivy::collector::TopDocs;
use tantivy::indexer::UserOperation;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// The writer's memory budget: tantivy flushes a segment when it is used up.
const WRITER_BUDGET: usize = 32 * 1024 * 1024;
/// Building a whole index uses a larger budget (fewer, larger segments) and up to this many
/// threads, then hands over to the small single-threaded writer.
const BUILD_BUDGET_PER_THREAD: usize = 96 * 1024 * 1024;
const BUILD_THREADS: usize = 4;
/// The most memories of one owner handed to an indexing thread at once (one segment).
const BUILD_BATCH: usize = 50_000;

/// Memories added since the last commit are searched from a delta in memory; the index
/// commits (a new segment, the costly part) once this many have gathered, so most turns
/// never commit.
pub const COMMIT_EVERY: usize = 1024;
/// Removals that make the index commit: a closed scene compresses its lines' memories at once.
pub const COMMIT_REMOVED: usize = 64;

/// A single-threaded writer with `budget` bytes and a reader that reloads when told to.
pub(super) fn writer_and_reader(
    index: &Index,
    budget: usize,
) -> tantivy::Result<(IndexWriter, IndexReader)> {
    let writer = index.writer_with_num_threads(1, budget)?;
    // A segment whose documents are mostly deleted (a closed scene compresses its lines'
    // memories) is merged, which drops them: a search otherwise still walks their postings.
    let mut merges = tantivy::indexer::LogMergePolicy::default();
    merges.set_del_docs_ratio_before_merge(0.5);
    writer.set_merge_policy(Box::new(merges));
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok((writer, reader))
}

/// The words of `text` as `analyzer` splits them, each once, in order, at most
/// [`MAX_QUERY_TERMS`].
pub(super) fn query_words(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while out.len() < MAX_QUERY_TERMS && stream.advance() {
        let t = &stream.token().text;
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

/// An empty in-memory index: the schema, the memory id and the owner-scoped words.
fn empty_index() -> (Index, Fields) {
    let (schema, fields) = schema();
    (Index::create_in_ram(schema), fields)
}

/// The fields of the schema.
#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    owner: Field,
    /// The owner-scoped words (`owner:word`).
    text: Field,
}

/// The index's schema: the memory id, its owner and the owner-scoped words. (The owner is
/// kept so that an index read back knows each memory's owner, which BM25's per-owner
/// statistics need, even for a memory the world has dropped since.)
fn schema() -> (Schema, Fields) {
    let mut schema = Schema::builder();
    let id = schema.add_u64_field("id", INDEXED | FAST | STORED);
    let owner = schema.add_u64_field(OWNER, FAST);
    let words = TextFieldIndexing::default()
        .set_tokenizer("whitespace")
        .set_index_option(IndexRecordOption::WithFreqs);
    let text = schema.add_text_field("words", TextOptions::default().set_indexing_options(words));
    (schema.build(), Fields { id, owner, text })
}

/// Words as tantivy's default analyzer splits them: on what is not a letter or digit,
/// lower-cased, very long ones dropped.
fn analyzer(index: &Index) -> Result<TextAnalyzer> {
    index
        .tokenizers()
        .get("default")
        .ok_or_else(|| index_error("no default tokenizer"))
}

/// The owner-scoped words of `m` (`12:ale`), joined by spaces for the whitespace tokenizer (a
/// word never holds one), and how many there are.
fn scoped_words(analyzer: &mut TextAnalyzer, m: &Memory) -> (String, u32) {
    let prefix = format!("{}:", m.owner.0);
    let mut scoped = String::with_capacity(m.text.len() * 2);
    let mut len = 0u32;
    let mut stream = analyzer.token_stream(&m.text);
    while stream.advance() {
        if len > 0 {
            scoped.push(' ');
        }
        scoped.push_str(&prefix);
        scoped.push_str(&stream.token().text);
        len += 1;
    }
    (scoped, len)
}

/// Each word of `scoped` (as [`scoped_words`] made it) once, without its owner prefix, with
/// its count.
fn word_counts(scoped: &str) -> Vec<(&str, u32)> {
    let mut counts: Vec<(&str, u32)> = Vec::new();
    for w in scoped
        .split(' ')
        .filter_map(|w| w.split_once(':'))
        .map(|(_, w)| w)
    {
        match counts.iter_mut().find(|(x, _)| *x == w) {
            Some((_, n)) => *n += 1,
            None => counts.push((w, 1)),
        }
    }
    counts
}

/// The fast field of each memory's owner.
const OWNER: &str = "owner";

/// A length in words as the index keeps it (tantivy stores one byte per length, exact for
/// short texts and rounded down for long ones): what statistics are summed from, the same
/// whether a memory was just added or read back.
fn stored_length(words: u32) -> u32 {
    use tantivy::fieldnorm::FieldNormReader;
    FieldNormReader::id_to_fieldnorm(FieldNormReader::fieldnorm_to_id(words))
}

/// `payload` with the owners an index holds added, when it does not hold every owner's
/// (` owners=3,17,20`, ascending).
fn with_owners(payload: &str, owners: Option<&HashSet<EntityId>>) -> String {
    let Some(owners) = owners else {
        return payload.to_owned();
    };
    let mut ids: Vec<u64> = owners.iter().map(|o| o.0).collect();
    ids.sort_unstable();
    let list: Vec<String> = ids.iter().map(u64::to_string).collect();
    format!("{payload} owners={}", list.join(","))
}

/// A payload made by [`with_owners`], split: the rest, and the owners it names (`None`: every
/// owner's; `Err`: a list that does not read).
pub(crate) fn split_owners(
    payload: &str,
) -> std::result::Result<(&str, Option<HashSet<EntityId>>), ()> {
    match payload.split_once(" owners=") {
        None => Ok((payload, None)),
        Some((rest, "")) => Ok((rest, Some(HashSet::new()))),
        Some((rest, list)) => {
            let owners = list
                .split(',')
                .map(|n| n.parse().map(EntityId).map_err(|_| ()))
                .collect::<std::result::Result<_, ()>>()?;
            Ok((rest, Some(owners)))
        }
    }
}

/// The document of memory `m` with its owner-scoped words `scoped`.
fn document(fields: Fields, m: &Memory, scoped: String) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_u64(fields.id, m.id.0);
    doc.add_u64(fields.owner, m.owner.0);
    doc.add_text(fields.text, scoped);
    doc
}

/// The `id` columns of a searcher's segments, opened once per reload: opening one is a
/// look-up by name, which per query costs more than many hits.
#[derive(Default)]
pub(super) struct IdColumns(Vec<(tantivy::index::SegmentId, tantivy::columnar::Column<u64>)>);

impl IdColumns {
    /// The columns of every segment `searcher` has.
    pub fn of(searcher: &tantivy::Searcher) -> tantivy::Result<IdColumns> {
        let columns = searcher
            .segment_readers()
            .iter()
            .map(|r| Ok((r.segment_id(), r.fast_fields().u64("id")?)))
            .collect::<tantivy::Result<_>>()?;
        Ok(IdColumns(columns))
    }
}

/// The `id` fast field of each hit, with its score, in order. Columns come from `known` when
/// it has the hit's segment, else each segment's is opened once.
pub(super) fn ids_of(
    searcher: &tantivy::Searcher,
    hits: Vec<(f32, tantivy::DocAddress)>,
    known: &IdColumns,
) -> tantivy::Result<Vec<(u64, f32)>> {
    let mut columns: Vec<Option<tantivy::columnar::Column<u64>>> =
        vec![None; searcher.segment_readers().len()];
    let mut out = Vec::with_capacity(hits.len());
    for (score, addr) in hits {
        let ord = addr.segment_ord as usize;
        let reader = searcher.segment_reader(addr.segment_ord);
        let column = match known.0.get(ord) {
            Some((segment, column)) if *segment == reader.segment_id() => column,
            _ => columns[ord].get_or_insert(reader.fast_fields().u64("id")?),
        };
        if let Some(id) = column.first(addr.doc_id) {
            out.push((id, score));
        }
    }
    Ok(out)
}

/// Query words kept from one query: enough for any sentence a player types; the rest of a
/// pasted page adds cost and no meaning.
pub const MAX_QUERY_TERMS: usize = 64;

/// The directory on disk an index kept beside a save lives in: tantivy's memory-mapped one,
/// or, in tests, one that fails part-way as a crash would (`super::faults`).
fn directory(dir: &std::path::Path) -> Result<Box<dyn tantivy::Directory>> {
    #[cfg(test)]
    if let Some(faulty) = super::faults::directory(dir) {
        return Ok(faulty);
    }
    let mmap = tantivy::directory::MmapDirectory::open(dir).map_err(index_error)?;
    Ok(Box::new(mmap))
}

fn index_error(e: impl std::fmt::Display) -> Error {
    Error::Storage {
        file: "the memory index".into(),
        message: e.to_string(),
    }
}

/// A full-text index of every memory of a world: id, owner and text (BM25 over the text).
pub struct MemoryIndex {
    writer: IndexWriter,
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
    /// Memories added since the last commit (searched here until it).
    pending: PendingSet,
    /// Additions and deletions not yet handed to the writer (searches do not need them: they
    /// read `pending` and `removed`).
    queued: Vec<UserOperation>,
    /// The `id` columns of the reader's segments as of its last reload.
    columns: IdColumns,
    /// Removals not yet committed (their documents still match in the committed index).
    removed: std::collections::HashSet<MemoryId>,
    /// Each owner's memories that have a vector (semantic recall scans them exactly), listed
    /// on the owner's first semantic recall ([`MemoryIndex::embedded`]).
    embedded: std::collections::HashMap<EntityId, Vec<MemoryId>>,
    /// Every indexed memory's owner and length in words (the length as the index keeps it),
    /// and each owner's count of memories and of words: BM25's average length is the owner's.
    lengths: HashMap<MemoryId, (EntityId, u32)>,
    totals: HashMap<EntityId, (u64, u64)>,
    /// The owners whose memories the index holds, when not every owner's: an index built
    /// lazily ([`MemoryIndex::lazy_in`]) takes in each owner's memories whole, on the owner's
    /// first recall ([`MemoryIndex::cover`]). `None`: every owner's.
    covered: Option<HashSet<EntityId>>,
    /// What the next commit records of the history it covers (an index kept in a directory:
    /// [`MemoryIndex::lazy_in`]); the owners it holds are added when not all
    /// ([`with_owners`]).
    payload: Option<String>,
    /// Where it came from.
    origin: IndexOrigin,
}

/// Where a memory index came from (docs/memory.md, "The index beside the save").
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexOrigin {
    /// Built from the world, in memory (the save is not a file).
    Memory,
    /// Loaded from beside the save and caught up with this many events of the log.
    Loaded {
        /// Events read to catch up.
        caught_up: u64,
    },
    /// Built beside the save, because the one there could not be used.
    Built {
        /// Why (missing, damaged, of another history or format).
        reason: String,
    },
}

impl std::fmt::Debug for MemoryIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryIndex")
            .field("docs", &self.lengths.len())
            .finish()
    }
}

impl MemoryIndex {
    /// An empty index, in memory.
    pub fn new() -> Result<MemoryIndex> {
        let (index, fields) = empty_index();
        MemoryIndex::over(index, fields)
    }

    /// The index of `index`, with the small single-threaded writer used between builds.
    fn over(index: Index, fields: Fields) -> Result<MemoryIndex> {
        let (writer, reader) = writer_and_reader(&index, WRITER_BUDGET).map_err(index_error)?;
        Ok(MemoryIndex {
            writer,
            reader,
            fields,
            analyzer: analyzer(&index)?,
            pending: PendingSet::default(),
            queued: Vec::new(),
            columns: IdColumns::default(),
            removed: Default::default(),
            embedded: Default::default(),
            lengths: HashMap::new(),
            totals: HashMap::new(),
            covered: None,
            payload: None,
            origin: IndexOrigin::Memory,
        })
    }

    /// Counts memory `id` of `owner`, of `words` words, in the owner's statistics.
    fn count(&mut self, id: MemoryId, owner: EntityId, words: u32) {
        let words = stored_length(words);
        if let Some((_, old)) = self.lengths.insert(id, (owner, words)) {
            self.uncount_words(owner, old);
        }
        let t = self.totals.entry(owner).or_default();
        t.0 += 1;
        t.1 += u64::from(words);
    }

    /// Takes memory `id` out of its owner's statistics; false if the index does not hold it.
    fn uncount(&mut self, id: MemoryId) -> bool {
        match self.lengths.remove(&id) {
            Some((owner, words)) => {
                self.uncount_words(owner, words);
                true
            }
            None => false,
        }
    }

    fn uncount_words(&mut self, owner: EntityId, words: u32) {
        if let Some(t) = self.totals.get_mut(&owner) {
            t.0 = t.0.saturating_sub(1);
            t.1 = t.1.saturating_sub(u64::from(words));
            if t.0 == 0 {
                self.totals.remove(&owner);
            }
        }
    }

    /// An empty index in directory `dir` (emptied first, created if missing) that takes in
    /// each owner's memories on the owner's first recall ([`MemoryIndex::cover`]), its
    /// commits recording `payload` and the owners taken in so far: an index rebuilt at the
    /// cost of the characters a turn needs, not of the whole world.
    ///
    /// Recall gives the same as from a whole index: BM25's statistics are each owner's own.
    pub fn lazy_in(dir: &std::path::Path, payload: &str) -> Result<MemoryIndex> {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(index_error)?;
        }
        std::fs::create_dir_all(dir).map_err(index_error)?;
        let (schema, fields) = schema();
        let index =
            Index::create(directory(dir)?, schema, Default::default()).map_err(index_error)?;
        let mut lazy = MemoryIndex::over(index, fields)?;
        lazy.covered = Some(HashSet::new());
        lazy.payload = Some(payload.to_owned());
        // On disk at once: a save reopened before the first recall finds it.
        lazy.commit()?;
        Ok(lazy)
    }

    /// An empty index in memory that takes in each owner's memories on the owner's first
    /// recall: [`MemoryIndex::lazy_in`] without a directory.
    pub fn lazy() -> Result<MemoryIndex> {
        let mut lazy = MemoryIndex::new()?;
        lazy.covered = Some(HashSet::new());
        Ok(lazy)
    }

    /// Whether the index holds `owner`'s memories.
    pub fn covers(&self, owner: EntityId) -> bool {
        self.covered.as_ref().is_none_or(|c| c.contains(&owner))
    }

    /// Says which owners' memories an index read back holds (what its payload recorded):
    /// `None` for every owner's.
    pub fn set_covered(&mut self, owners: Option<HashSet<EntityId>>) {
        self.covered = owners;
    }

    /// Takes in `owner`'s memories from `world`, if the index does not hold them yet, and
    /// commits (so that an index kept on disk records that it holds them); returns how many
    /// it took in.
    pub fn cover(&mut self, world: &World, owner: EntityId) -> Result<u64> {
        let Some(covered) = &mut self.covered else {
            return Ok(0);
        };
        if !covered.insert(owner) {
            return Ok(0);
        }
        let mut n = 0;
        for m in world.memories_of(owner) {
            if m.recallable() {
                self.add(m)?;
                n += 1;
            }
        }
        self.commit()?;
        Ok(n)
    }

    /// An index of every memory of `world`, searchable at once, built with a larger budget
    /// and up to `BUILD_THREADS` indexing threads (this thread splits the words).
    ///
    /// Memories go in owner by owner, each owner's as one batch, and a batch is indexed by one
    /// thread into one segment: each owner's memories sit together. A search then finds the
    /// owner's terms in that segment alone, and its top-k threshold rises over all of the
    /// owner's memories at once; with the memories spread over every segment, as the order of
    /// creation spreads them, each segment's search starts from nothing, and a recall at
    /// 20,000 memories per owner took twice as long.
    ///
    /// The engine builds its index one speaker at a time instead ([`MemoryIndex::lazy`]), with
    /// the same answers; this is the whole index at once, for a host or a bench that wants it.
    pub fn build(world: &World) -> Result<MemoryIndex> {
        let (index, fields) = empty_index();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, BUILD_THREADS);
        let mut bulk: IndexWriter = index
            .writer_with_num_threads(threads, threads * BUILD_BUDGET_PER_THREAD)
            .map_err(index_error)?;
        // Segments as large as the budget makes them, unmerged: merging a million memories
        // costs more time than the few extra term look-ups per query it saves.
        bulk.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        let mut analyzer = analyzer(&index)?;
        let mut all: Vec<&Memory> = world.all_memories().filter(|m| m.recallable()).collect();
        let mut lengths = Vec::with_capacity(all.len());
        // Stable: by id within an owner.
        all.sort_by_key(|m| m.owner);
        for owner in all.chunk_by(|a, b| a.owner == b.owner) {
            // An owner with more memories than a batch holds spans a few segments.
            for batch in owner.chunks(BUILD_BATCH) {
                let mut ops = Vec::with_capacity(batch.len());
                for m in batch {
                    let (scoped, len) = scoped_words(&mut analyzer, m);
                    lengths.push((m.id, m.owner, len));
                    ops.push(UserOperation::Add(document(fields, m, scoped)));
                }
                bulk.run(ops).map_err(index_error)?;
            }
        }
        bulk.commit().map_err(index_error)?;
        bulk.wait_merging_threads().map_err(index_error)?;
        let mut built = MemoryIndex::over(index, fields)?;
        built.lengths.reserve(lengths.len());
        for (id, owner, len) in lengths {
            built.count(id, owner, len);
        }
        built.reload()?;
        Ok(built)
    }

    /// The index kept in `dir` ([`MemoryIndex::lazy_in`]), with what history its last commit
    /// covers (its payload). Every file is checked against its checksum first; a missing,
    /// damaged or foreign index is an error (the caller builds a new one).
    pub fn open_in(dir: &std::path::Path) -> Result<(MemoryIndex, String)> {
        // tantivy reads what it wrote; a damaged file must not bring the engine down.
        let opened = std::panic::catch_unwind(|| -> Result<(Index, String)> {
            let index = Index::open(directory(dir)?).map_err(index_error)?;
            let damaged = index.validate_checksum().map_err(index_error)?;
            if !damaged.is_empty() {
                return Err(index_error(format!("{} damaged file(s)", damaged.len())));
            }
            let payload = index
                .load_metas()
                .map_err(index_error)?
                .payload
                .unwrap_or_default();
            Ok((index, payload))
        })
        .map_err(|_| index_error("the index could not be read"))??;
        let (index, payload) = opened;
        let (expected, fields) = schema();
        if index.schema() != expected {
            return Err(index_error("the index has another schema"));
        }
        let mut opened = MemoryIndex::over(index, fields)?;
        opened.reload()?;
        opened.count_stored()?;
        // What it records of the history; the owners it holds are added at each commit.
        let history = split_owners(&payload).map_or(payload.as_str(), |(h, _)| h);
        opened.payload = Some(history.to_owned());
        Ok((opened, payload))
    }

    /// Counts every memory the committed index holds (an index read back) in its owner's
    /// statistics, from the stored owner and length of each live document.
    fn count_stored(&mut self) -> Result<()> {
        let searcher = self.reader.searcher();
        for segment in searcher.segment_readers() {
            let fast = segment.fast_fields();
            let (ids, owners) = (
                fast.u64("id").map_err(index_error)?,
                fast.u64(OWNER).map_err(index_error)?,
            );
            let norms = segment
                .get_fieldnorms_reader(self.fields.text)
                .map_err(index_error)?;
            for doc in segment.doc_ids_alive() {
                if let (Some(id), Some(owner)) = (ids.first(doc), owners.first(doc)) {
                    self.count(MemoryId(id), EntityId(owner), norms.fieldnorm(doc));
                }
            }
        }
        Ok(())
    }

    /// What the next commit records of the history the index covers (an index kept in a
    /// directory; ignored in memory).
    pub fn set_payload(&mut self, payload: String) {
        self.payload = Some(payload);
    }

    /// Where it came from.
    pub fn origin(&self) -> &IndexOrigin {
        &self.origin
    }

    /// Says where it came from.
    pub fn set_origin(&mut self, origin: IndexOrigin) {
        self.origin = origin;
    }

    /// How many memories it holds (counting changes not yet refreshed).
    pub fn len(&self) -> u64 {
        self.lengths.len() as u64
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// The term of `word` in memories of `owner`.
    fn term(&self, owner: EntityId, word: &str) -> Term {
        Term::from_field_text(self.fields.text, &format!("{}:{word}", owner.0))
    }

    /// Adds a memory; searches see it at once.
    pub fn add(&mut self, m: &Memory) -> Result<()> {
        if !m.recallable() || !self.covers(m.owner) {
            // Compressed or forgotten: recall never returns it. (Or of an owner not taken in
            // yet: it is, with the owner's others, when the owner is.)
            return Ok(());
        }
        let (scoped, len) = scoped_words(&mut self.analyzer, m);
        self.count(m.id, m.owner, len);
        // Counted first: the document takes the words.
        self.pending.push(m.id, m.owner, &word_counts(&scoped), len);
        self.queued
            .push(UserOperation::Add(document(self.fields, m, scoped)));
        if m.embedding.is_some()
            && let Some(list) = self.embedded.get_mut(&m.owner)
        {
            list.push(m.id);
        }
        Ok(())
    }

    /// Removes a memory; searches stop returning it at once.
    pub fn remove(&mut self, id: MemoryId) {
        if !self.uncount(id) {
            // Not held: out of recall already, or of an owner not taken in yet.
            return;
        }
        self.queued.push(UserOperation::Delete(Term::from_field_u64(
            self.fields.id,
            id.0,
        )));
        if !self.pending.remove(id) {
            self.removed.insert(id);
        }
        // `embedded` keeps the id: recall looks every listed memory up in the world, where it
        // is gone, and the next rebuild drops it.
    }

    /// Commits once [`COMMIT_EVERY`] memories have gathered since the last commit and are still
    /// there, or `COMMIT_REMOVED` (64) removals of committed memories (searches see every change
    /// either way, but each such removal makes every search collect one more candidate).
    pub fn refresh(&mut self) -> Result<()> {
        self.send_queued()?;
        // Memories removed while pending (a closed scene's lines) cost a search nothing: they
        // count towards a commit only once they are most of the delta.
        if self.pending.live() >= COMMIT_EVERY
            || self.pending.len() >= 4 * COMMIT_EVERY
            || self.removed.len() >= COMMIT_REMOVED
        {
            self.commit()?;
        }
        Ok(())
    }

    /// Hands the queued changes to the writer, in order, as one batch: the writer's thread is
    /// woken once for a turn's memories, not once for each. Should this fail, the engine drops
    /// the whole index (rebuilt when next needed).
    fn send_queued(&mut self) -> Result<()> {
        if !self.queued.is_empty() {
            self.writer
                .run(std::mem::take(&mut self.queued))
                .map_err(index_error)?;
        }
        Ok(())
    }

    /// Writes every change into the index's segments now.
    pub fn commit(&mut self) -> Result<()> {
        self.send_queued()?;
        let mut prepared = self.writer.prepare_commit().map_err(index_error)?;
        if let Some(p) = &self.payload {
            prepared.set_payload(&with_owners(p, self.covered.as_ref()));
        }
        prepared.commit().map_err(index_error)?;
        self.reload()?;
        self.pending.clear();
        self.removed.clear();
        Ok(())
    }

    /// Makes the reader see the last commit.
    fn reload(&mut self) -> Result<()> {
        self.reader.reload().map_err(index_error)?;
        self.columns = IdColumns::of(&self.reader.searcher()).map_err(index_error)?;
        Ok(())
    }

    /// The memories of `owner` in `world` that have a vector: listed from the world on the
    /// owner's first semantic recall (an index read back lists none until asked), then kept.
    pub fn embedded(&mut self, world: &World, owner: EntityId) -> &[MemoryId] {
        self.embedded.entry(owner).or_insert_with(|| {
            world
                .memories_of(owner)
                .filter(|m| m.recallable() && m.embedding.is_some())
                .map(|m| m.id)
                .collect()
        })
    }

    /// The words of `text` as the index sees them (lower-cased, split on what is not a letter
    /// or digit), each once, in order, at most [`MAX_QUERY_TERMS`]. Whatever a player typed is
    /// only ever words: no query syntax.
    pub fn words(&mut self, text: &str) -> Vec<String> {
        query_words(&mut self.analyzer, text)
    }

    /// The `limit` memories of `owner` most relevant to `words` (BM25), best first, with their
    /// scores. Only `owner`'s memories can match: the query is made of `owner`'s terms.
    ///
    /// `corpus` is how many memories `owner` holds: BM25's document count is the owner's, as
    /// its document frequencies are (relevance within a point of view), so a word in most of
    /// the owner's memories weighs almost nothing, and the search skips its postings.
    pub fn search(
        &self,
        owner: EntityId,
        words: &[String],
        limit: usize,
        corpus: u64,
    ) -> Result<Vec<(MemoryId, f32)>> {
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let stats = OwnerStats::new(self, &searcher, owner, words, corpus)?;
        let query = BooleanQuery::new(
            stats
                .terms
                .iter()
                .map(|(term, _)| {
                    let q: Box<dyn Query> =
                        Box::new(TermQuery::new(term.clone(), IndexRecordOption::WithFreqs));
                    (Occur::Should, q)
                })
                .collect(),
        );
        // Removed but not yet committed documents still match: ask for enough more.
        let top = searcher
            .search_with_statistics_provider(
                &query,
                &TopDocs::with_limit(limit + self.removed.len()).order_by_score(),
                &stats,
            )
            .map_err(index_error)?;
        let mut out = Vec::with_capacity(top.len());
        for (id, score) in ids_of(&searcher, top, &self.columns).map_err(index_error)? {
            let id = MemoryId(id);
            if !self.removed.contains(&id) {
                out.push((id, score));
            }
        }
        if self.pending.has_owner(owner) {
            let idf: Vec<f32> = stats.terms.iter().map(|(_, n)| stats.idf(*n)).collect();
            let average = Stats {
                average: stats.tokens as f32 / stats.docs as f32,
            };
            self.pending.score(owner, words, &idf, &average, &mut out);
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(limit);
        Ok(out)
    }
}

/// BM25's statistics for one owner's query, the same for committed and pending memories: the
/// owner's document count, a length total that keeps the owner's average length, and each
/// term's document frequency among the owner's memories, committed and pending.
struct OwnerStats {
    docs: u64,
    tokens: u64,
    /// Each query word's term, with its document frequency (at most `docs`).
    terms: Vec<(Term, u64)>,
}

impl OwnerStats {
    fn new(
        index: &MemoryIndex,
        searcher: &tantivy::Searcher,
        owner: EntityId,
        words: &[String],
        corpus: u64,
    ) -> Result<OwnerStats> {
        // The owner's average length, as its document count and frequencies are the owner's:
        // an owner's recall depends on its own memories only (not on whose else the index
        // holds, nor on what it has not merged away yet).
        let (owner_docs, owner_words) = index.totals.get(&owner).copied().unwrap_or_default();
        let average = owner_words as f64 / owner_docs.max(1) as f64;
        let mut terms = Vec::with_capacity(words.len());
        let mut most = 0;
        for w in words {
            let term = index.term(owner, w);
            let n =
                searcher.doc_freq(&term).map_err(index_error)? + index.pending.doc_freq(owner, w);
            most = most.max(n);
            terms.push((term, n));
        }
        // The world's count and the index's frequencies can disagree for a moment (removed
        // documents count in tantivy's frequencies until their segment merges).
        let docs = corpus.max(most).max(1);
        Ok(OwnerStats {
            docs,
            tokens: (average * docs as f64).round() as u64,
            terms,
        })
    }

    /// BM25's idf, as tantivy computes it.
    fn idf(&self, n: u64) -> f32 {
        let x = ((self.docs - n) as f32 + 0.5) / (n as f32 + 0.5);
        (1.0 + x).ln()
    }
}

impl tantivy::query::Bm25StatisticsProvider for OwnerStats {
    fn total_num_tokens(&self, _field: Field) -> tantivy::Result<u64> {
        Ok(self.tokens)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        Ok(self
            .terms
            .iter()
            .find(|(t, _)| t == term)
            .map_or(0, |(_, n)| *n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MemoryKind, WitnessSet};

    fn memory(id: u64, owner: u64, text: &str) -> Memory {
        Memory {
            id: MemoryId(id),
            owner: EntityId(owner),
            witnesses: WitnessSet::from_iter([EntityId(owner)]),
            text: text.into(),
            kind: MemoryKind::Utterance,
            significance: 0.5,
            created: 0,
            last_accessed: None,
            access_count: 0,
            decay: Default::default(),
            pinned: false,
            embedding: None,
            scene: None,
            stability: 0.0,
            summary: None,
            feeling: None,
            about: None,
            sources: Vec::new(),
        }
    }

    const WORDS: &[&str] = &["ale", "ship", "bard", "silver", "rain", "the"];

    fn corpus() -> Vec<Memory> {
        (0..300u64)
            .map(|i| {
                let text: Vec<&str> = (0..1 + i % 5)
                    .map(|k| WORDS[((i * 7 + k * 3) % WORDS.len() as u64) as usize])
                    .collect();
                memory(i + 1, 1 + i % 3, &text.join(" "))
            })
            .collect()
    }

    fn ids(index: &mut MemoryIndex, owner: u64, query: &str) -> Vec<MemoryId> {
        let words = index.words(query);
        let mut found: Vec<MemoryId> = index
            .search(EntityId(owner), &words, 5000, 100)
            .expect("search")
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        found.sort();
        found
    }

    #[test]
    fn committed_and_pending_memories_are_found_alike() {
        let all = corpus();
        let mut committed = MemoryIndex::new().expect("index");
        let mut mixed = MemoryIndex::new().expect("index");
        for m in &all {
            committed.add(m).expect("add");
        }
        committed.commit().expect("commit");
        for (i, m) in all.iter().enumerate() {
            mixed.add(m).expect("add");
            if i == all.len() / 2 {
                mixed.commit().expect("commit");
            }
        }
        for owner in 1..=3 {
            for q in ["ale", "ship bard", "silver rain the", "nothing"] {
                let want: Vec<MemoryId> = all
                    .iter()
                    .filter(|m| {
                        m.owner.0 == owner
                            && q.split(' ').any(|w| m.text.split(' ').any(|x| x == w))
                    })
                    .map(|m| m.id)
                    .collect();
                assert_eq!(ids(&mut committed, owner, q), want, "{owner} {q}");
                assert_eq!(ids(&mut mixed, owner, q), want, "{owner} {q}");
            }
        }
        // The same memory scores nearly the same pending or committed.
        let words = mixed.words("ale ship");
        let a = committed
            .search(EntityId(1), &words, 5, 100)
            .expect("search");
        let b = mixed.search(EntityId(1), &words, 5, 100).expect("search");
        for ((_, x), (_, y)) in a.iter().zip(&b) {
            assert!((x - y).abs() / x < 0.25, "{a:?} vs {b:?}");
        }
    }

    /// A world holding `memories` and their owners.
    fn world_of(memories: &[Memory]) -> World {
        use crate::log::{Event, WorldSettings};
        let mut w = World::new();
        w.apply(&Event::WorldCreated {
            name: "W".into(),
            now: 0,
            settings: WorldSettings::default(),
        })
        .unwrap();
        let owners: std::collections::BTreeSet<EntityId> =
            memories.iter().map(|m| m.owner).collect();
        for id in owners {
            w.apply(&Event::EntityCreated {
                id,
                key: None,
                name: format!("e{}", id.0),
                aliases: vec![],
                facts: Default::default(),
                host_controlled: false,
                state: Default::default(),
            })
            .unwrap();
        }
        for m in memories {
            w.apply(&Event::MemoryAdded { memory: m.clone() }).unwrap();
        }
        w
    }

    fn scores(index: &mut MemoryIndex, world: &World, owner: u64, q: &str) -> Vec<(MemoryId, f32)> {
        let words = index.words(q);
        let owner = EntityId(owner);
        index
            .search(owner, &words, 20, world.memory_count(owner))
            .expect("search")
    }

    #[test]
    fn an_owners_recall_is_its_own_whoever_else_the_index_holds() {
        // Owners ids from 10, past the memories' ids (the world gives each its own).
        let all: Vec<Memory> = corpus()
            .into_iter()
            .map(|m| Memory {
                id: MemoryId(m.id.0 + 100),
                owner: EntityId(m.owner.0 + 9),
                witnesses: WitnessSet::from_iter([EntityId(m.owner.0 + 9)]),
                ..m
            })
            .collect();
        let world = world_of(&all);
        let queries = ["ale", "ship bard", "silver rain the"];
        let mut whole = MemoryIndex::build(&world).expect("build");
        // Taken in one owner at a time, in any order: the same scores as the whole index.
        let mut lazy = MemoryIndex::lazy().expect("lazy");
        for owner in [11, 10, 12] {
            assert!(!lazy.covers(EntityId(owner)));
            let taken = lazy.cover(&world, EntityId(owner)).expect("cover");
            assert_eq!(taken, world.memory_count(EntityId(owner)));
            assert_eq!(lazy.cover(&world, EntityId(owner)).expect("again"), 0);
            let mut found = 0;
            for q in queries {
                let want = scores(&mut whole, &world, owner, q);
                found += want.len();
                assert_eq!(scores(&mut lazy, &world, owner, q), want, "{owner} {q}");
            }
            assert!(found > 10, "{owner} recalls something");
        }
        // A memory of an owner not taken in yet is left for then.
        let mut partial = MemoryIndex::lazy().expect("lazy");
        partial.add(&all[0]).expect("add");
        partial.remove(all[0].id);
        assert!(partial.is_empty());
        // Another owner's memories come and go: owner 10's scores stay as they were.
        let before: Vec<_> = queries
            .iter()
            .map(|q| scores(&mut whole, &world, 10, q))
            .collect();
        whole
            .add(&memory(
                999,
                11,
                "ale ale ship ship bard silver rain the the the long words",
            ))
            .expect("add");
        whole.remove(all[1].id);
        whole.commit().expect("commit");
        let after: Vec<_> = queries
            .iter()
            .map(|q| scores(&mut whole, &world, 10, q))
            .collect();
        assert_eq!(after, before);
    }

    #[test]
    fn the_owners_an_index_holds_go_into_its_payload_and_back() {
        let owners: HashSet<EntityId> = [EntityId(17), EntityId(3)].into_iter().collect();
        let p = with_owners("rp-memory-index/2 branch=1 seq=9 check=0a", Some(&owners));
        assert_eq!(p, "rp-memory-index/2 branch=1 seq=9 check=0a owners=3,17");
        assert_eq!(
            split_owners(&p),
            Ok(("rp-memory-index/2 branch=1 seq=9 check=0a", Some(owners)))
        );
        let none = with_owners("h", Some(&HashSet::new()));
        assert_eq!(split_owners(&none), Ok(("h", Some(HashSet::new()))));
        assert_eq!(split_owners("h"), Ok(("h", None)));
        assert_eq!(with_owners("h", None), "h");
        assert!(split_owners("h owners=3,x").is_err());
    }

    #[test]
    fn a_word_in_all_the_owners_memories_weighs_almost_nothing() {
        // Owner 1 says "ale" in each of its 40 memories and "ship" in one; owner 2 has 400
        // memories without either. Within owner 1's point of view "ale" tells nothing.
        let mut index = MemoryIndex::new().expect("index");
        for i in 0..40u64 {
            let text = if i == 0 { "ale ship" } else { "ale rain" };
            index.add(&memory(i + 1, 1, text)).expect("add");
        }
        for i in 0..400u64 {
            index.add(&memory(100 + i, 2, "bard silver")).expect("add");
        }
        for commit in [false, true] {
            if commit {
                index.commit().expect("commit");
            }
            let score = |q: &str, index: &mut MemoryIndex| {
                let words = index.words(q);
                index.search(EntityId(1), &words, 1, 40).expect("search")[0].1
            };
            let (ale, ship) = (score("ale", &mut index), score("ship", &mut index));
            assert!(ale > 0.0 && ale < ship / 100.0, "ale {ale}, ship {ship}");
        }
    }

    #[test]
    fn removals_count_at_once_committed_or_not() {
        let all = corpus();
        let mut index = MemoryIndex::new().expect("index");
        for m in &all[..100] {
            index.add(m).expect("add");
        }
        index.commit().expect("commit");
        for m in &all[100..] {
            index.add(m).expect("add");
        }
        let before = ids(&mut index, 1, "ale ship bard silver rain the");
        let (old, new) = (before[0], *before.last().expect("some"));
        assert!(old.0 <= 100 && new.0 > 100);
        index.remove(old);
        index.remove(new);
        let after = ids(&mut index, 1, "ale ship bard silver rain the");
        assert_eq!(after.len(), before.len() - 2);
        assert!(!after.contains(&old) && !after.contains(&new));
        index.commit().expect("commit");
        assert_eq!(ids(&mut index, 1, "ale ship bard silver rain the"), after);
    }

    #[test]
    fn the_index_commits_once_enough_has_gathered() {
        let mut index = MemoryIndex::new().expect("index");
        for i in 0..COMMIT_EVERY as u64 - 1 {
            index.add(&memory(i + 1, 1, "ale")).expect("add");
            index.refresh().expect("refresh");
        }
        assert_eq!(index.pending.len(), COMMIT_EVERY - 1);
        index
            .add(&memory(COMMIT_EVERY as u64, 1, "ale"))
            .expect("add");
        index.refresh().expect("refresh");
        assert_eq!(index.pending.len(), 0);
        assert_eq!(ids(&mut index, 1, "ale").len(), COMMIT_EVERY);
    }
}
