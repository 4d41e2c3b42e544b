//! The tantivy index of entities: names, aliases and fact lines, for finding an entity by
//! what a player calls it or says about it. Derived from the world like the memory index.
//!
//! This index is the host's view (every entity of the world). Nothing a character knows is
//! in it: fact sheets are the world's description, not anyone's memory.

use super::index::{IdColumns, ids_of, query_words, writer_and_reader};
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{Entity, EntityId};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, INDEXED, IndexRecordOption, STORED, Schema, TEXT};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexWriter, TantivyDocument, Term};

/// How much more a word of the name or an alias counts than a word of the facts.
const NAME_BOOST: f32 = 3.0;
const WRITER_BUDGET: usize = 16 * 1024 * 1024;

fn index_error(e: impl std::fmt::Display) -> Error {
    Error::Storage {
        file: "the entity index".into(),
        message: e.to_string(),
    }
}

/// A full-text index of every entity: name and aliases (boosted), and fact lines.
pub struct EntityIndex {
    writer: IndexWriter,
    reader: IndexReader,
    id: Field,
    names: Field,
    facts: Field,
    analyzer: TextAnalyzer,
    dirty: bool,
}

impl std::fmt::Debug for EntityIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntityIndex").finish_non_exhaustive()
    }
}

impl EntityIndex {
    /// An index of every entity of `world`.
    pub fn build(world: &World) -> Result<EntityIndex> {
        let mut schema = Schema::builder();
        let id = schema.add_u64_field("id", INDEXED | FAST | STORED);
        let names = schema.add_text_field("names", TEXT);
        let facts = schema.add_text_field("facts", TEXT);
        let index = Index::create_in_ram(schema.build());
        let (writer, reader) = writer_and_reader(&index, WRITER_BUDGET).map_err(index_error)?;
        let analyzer = index.tokenizer_for_field(names).map_err(index_error)?;
        let mut out = EntityIndex {
            writer,
            reader,
            id,
            names,
            facts,
            analyzer,
            dirty: false,
        };
        for e in world.entities() {
            out.put(e)?;
        }
        out.refresh()?;
        Ok(out)
    }

    /// Adds `e`, or replaces what the index held for it.
    pub fn put(&mut self, e: &Entity) -> Result<()> {
        self.remove(e.id);
        let mut doc = TantivyDocument::default();
        doc.add_u64(self.id, e.id.0);
        doc.add_text(self.names, &e.name);
        for alias in &e.aliases {
            doc.add_text(self.names, alias);
        }
        for line in e.facts.lines() {
            doc.add_text(self.facts, line);
        }
        self.writer.add_document(doc).map_err(index_error)?;
        self.dirty = true;
        Ok(())
    }

    /// Removes an entity.
    pub fn remove(&mut self, id: EntityId) {
        self.writer.delete_term(Term::from_field_u64(self.id, id.0));
        self.dirty = true;
    }

    fn refresh(&mut self) -> Result<()> {
        if self.dirty {
            self.writer.commit().map_err(index_error)?;
            self.reader.reload().map_err(index_error)?;
            self.dirty = false;
        }
        Ok(())
    }

    /// The `k` entities best matching `query` (its words in names and aliases, which weigh
    /// more, and in fact lines), best first, with their scores. `query` is words, never
    /// query syntax.
    pub fn search(&mut self, query: &str, k: usize) -> Result<Vec<(EntityId, f32)>> {
        self.refresh()?;
        let words = query_words(&mut self.analyzer, query);
        if words.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for w in &words {
            let name: Box<dyn Query> = Box::new(TermQuery::new(
                Term::from_field_text(self.names, w),
                IndexRecordOption::WithFreqs,
            ));
            clauses.push((Occur::Should, Box::new(BoostQuery::new(name, NAME_BOOST))));
            clauses.push((
                Occur::Should,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.facts, w),
                    IndexRecordOption::WithFreqs,
                )),
            ));
        }
        let searcher = self.reader.searcher();
        let top = searcher
            .search(
                &BooleanQuery::new(clauses),
                &TopDocs::with_limit(k).order_by_score(),
            )
            .map_err(index_error)?;
        Ok(ids_of(&searcher, top, &IdColumns::default())
            .map_err(index_error)?
            .into_iter()
            .map(|(id, score)| (EntityId(id), score))
            .collect())
    }
}
