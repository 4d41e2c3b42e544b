//! The tantivy index of memories: derived from the world, rebuilt or caught up from it, never
//! the truth.

use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{EntityId, Memory, MemoryId};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, INDEXED, IndexRecordOption, STORED, Schema, TEXT};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// The writer's memory budget: tantivy flushes a segment when it is used up.
const WRITER_BUDGET: usize = 32 * 1024 * 1024;

/// Query words kept from one query: enough for any sentence a player types; the rest of a
/// pasted page adds cost and no meaning.
pub const MAX_QUERY_TERMS: usize = 64;

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
    id: Field,
    owner: Field,
    text: Field,
    analyzer: TextAnalyzer,
    /// Changes written but not yet visible to searches.
    dirty: bool,
    docs: u64,
}

impl std::fmt::Debug for MemoryIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryIndex")
            .field("docs", &self.docs)
            .finish()
    }
}

impl MemoryIndex {
    /// An empty index, in memory.
    pub fn new() -> Result<MemoryIndex> {
        let mut schema = Schema::builder();
        let id = schema.add_u64_field("id", INDEXED | FAST | STORED);
        let owner = schema.add_u64_field("owner", INDEXED | FAST);
        let text = schema.add_text_field("text", TEXT);
        let index = Index::create_in_ram(schema.build());
        let writer = index
            .writer_with_num_threads(1, WRITER_BUDGET)
            .map_err(index_error)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(index_error)?;
        let analyzer = index.tokenizer_for_field(text).map_err(index_error)?;
        Ok(MemoryIndex {
            writer,
            reader,
            id,
            owner,
            text,
            analyzer,
            dirty: false,
            docs: 0,
        })
    }

    /// An index of every memory of `world`, searchable at once.
    pub fn build(world: &World) -> Result<MemoryIndex> {
        let mut index = MemoryIndex::new()?;
        for m in world.all_memories() {
            index.add(m)?;
        }
        index.refresh()?;
        Ok(index)
    }

    /// How many memories it holds (counting changes not yet refreshed).
    pub fn len(&self) -> u64 {
        self.docs
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// Adds a memory (visible to searches after [`MemoryIndex::refresh`]).
    pub fn add(&mut self, m: &Memory) -> Result<()> {
        let mut doc = TantivyDocument::default();
        doc.add_u64(self.id, m.id.0);
        doc.add_u64(self.owner, m.owner.0);
        doc.add_text(self.text, &m.text);
        self.writer.add_document(doc).map_err(index_error)?;
        self.dirty = true;
        self.docs += 1;
        Ok(())
    }

    /// Removes a memory (from searches after [`MemoryIndex::refresh`]).
    pub fn remove(&mut self, id: MemoryId) {
        self.writer.delete_term(Term::from_field_u64(self.id, id.0));
        self.dirty = true;
        self.docs = self.docs.saturating_sub(1);
    }

    /// Makes every change so far visible to searches.
    pub fn refresh(&mut self) -> Result<()> {
        if self.dirty {
            self.writer.commit().map_err(index_error)?;
            self.reader.reload().map_err(index_error)?;
            self.dirty = false;
        }
        Ok(())
    }

    /// The words of `text` as the index sees them (lower-cased, split on what is not a letter
    /// or digit), each once, in order, at most [`MAX_QUERY_TERMS`]. Whatever a player typed is
    /// only ever words: no query syntax.
    pub fn words(&mut self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut stream = self.analyzer.token_stream(text);
        while out.len() < MAX_QUERY_TERMS && stream.advance() {
            let t = &stream.token().text;
            if !out.iter().any(|w| w == t) {
                out.push(t.clone());
            }
        }
        out
    }

    /// The `limit` memories of `owner` most relevant to `words` (BM25), best first, with their
    /// scores. Only `owner`'s memories can match: the owner is a required clause of the
    /// query, so another's memory is never scored, let alone returned or counted against
    /// the limit.
    pub fn search(
        &self,
        owner: EntityId,
        words: &[String],
        limit: usize,
    ) -> Result<Vec<(MemoryId, f32)>> {
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let text: Vec<(Occur, Box<dyn Query>)> = words
            .iter()
            .map(|w| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(self.text, w),
                    IndexRecordOption::WithFreqs,
                ));
                (Occur::Should, q)
            })
            .collect();
        let owner_only: Box<dyn Query> = Box::new(ConstScoreQuery::new(
            Box::new(TermQuery::new(
                Term::from_field_u64(self.owner, owner.0),
                IndexRecordOption::Basic,
            )),
            0.0,
        ));
        let query = BooleanQuery::new(vec![
            (Occur::Must, owner_only),
            (Occur::Must, Box::new(BooleanQuery::new(text))),
        ]);
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(limit).order_by_score())
            .map_err(index_error)?;
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let ids = searcher
                .segment_reader(addr.segment_ord)
                .fast_fields()
                .u64("id")
                .map_err(index_error)?;
            if let Some(id) = ids.first(addr.doc_id) {
                out.push((MemoryId(id), score));
            }
        }
        Ok(out)
    }
}
