//! Applying the records of memories: added, removed, recalled (reinforced), decayed,
//! summarised, reflected on (docs/memory.md).

use super::{check_text, check_unit};
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{
    DecayStage, Edge, EntityId, FadeRule, MAX_FEELING_BYTES, MAX_IMPRINTS, Memory, MemoryId,
    MemoryKind, MemorySummary, Millis, StageChange, retention,
};
use std::borrow::Cow;
use std::collections::HashMap;

/// The most insights one reflection records.
pub const MAX_INSIGHTS: usize = 8;
/// The most sources one insight cites.
pub const MAX_SOURCES: usize = 32;

impl World {
    pub(super) fn add_memory(&mut self, memory: Cow<'_, Memory>) -> Result<()> {
        self.check_fresh(memory.id.0)?;
        self.get_entity(memory.owner)?;
        if !memory.witnesses.contains(memory.owner) {
            return Err(Error::invalid(
                "memory",
                "the owner must be among the witnesses",
            ));
        }
        for w in memory.witnesses.iter() {
            self.get_entity(w)?;
        }
        if memory.text.trim().is_empty() {
            return Err(Error::invalid("memory", "the text is empty"));
        }
        check_text("memory", &memory.text)?;
        check_unit("memory", "significance", memory.significance, 0.0)?;
        if let Some(v) = &memory.embedding {
            crate::model::check_embedding(v).map_err(|m| Error::invalid("memory", m))?;
        }
        if let Some(scene) = memory.scene
            && self.scenes.get(&scene).is_none()
        {
            return Err(Error::not_found("scene", scene));
        }
        if memory.sources.len() > MAX_SOURCES {
            return Err(Error::invalid(
                "memory",
                format!("a memory cites at most {MAX_SOURCES} others"),
            ));
        }
        for s in &memory.sources {
            self.check_source(memory.owner, *s)
                .map_err(|reason| Error::invalid("memory", format!("{}: {reason}", memory.id)))?;
        }
        self.insert_memory(memory.into_owned());
        Ok(())
    }

    /// Adds a checked memory: its id taken, its place in the indexes, what it adds to its
    /// owner's significance since the last reflection, and the moment it is next due to fade.
    pub(super) fn insert_memory(&mut self, memory: Memory) {
        self.take_id(memory.id.0);
        self.index.own_memory(&memory, true);
        if memory.kind != MemoryKind::Reflection
            && let Some(mind) = self.minds.get_mut(&memory.owner)
        {
            mind.unreflected += memory.significance;
        }
        let id = memory.id;
        self.memories.insert(memory);
        self.refade_and_bring_forward(id);
    }

    /// [`World::refade`], bringing the next pass forward to when `id` next moves on.
    fn refade_and_bring_forward(&mut self, id: MemoryId) {
        if let Some(at) = self.refade(id) {
            self.decay_next = Some(self.decay_next.map_or(at, |n| n.min(at)));
        }
    }

    /// `memory_removed`: the memory, which must exist, and its place in the indexes.
    pub(super) fn remove_memory(&mut self, id: MemoryId) -> Result<()> {
        let Some(memory) = self.memories.remove(&id) else {
            return Err(Error::not_found("memory", id));
        };
        self.index.own_memory(&memory, false);
        self.index.unset_fading(id);
        Ok(())
    }

    /// `memories_recalled`: each memory listed once, accessed at `at` (never earlier than before)
    /// and counted.
    pub(super) fn recall_memories(&mut self, ids: &[MemoryId], at: Millis) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for id in ids {
            if !seen.insert(*id) {
                return Err(Error::invalid(
                    "memories recalled",
                    format!("{id} is listed twice"),
                ));
            }
            if self.memories.get(id).is_none() {
                return Err(Error::not_found("memory", id));
            }
        }
        for id in ids {
            self.reinforce(*id, at);
        }
        Ok(())
    }

    /// A memory recalled (or cited) at `at`: counted, reviewed, and its stability raised by
    /// how far it had faded (docs/memory.md). Recalled at or before its last review, it only
    /// counts.
    fn reinforce(&mut self, id: MemoryId, at: Millis) {
        let Some(owner) = self.memories.get(&id).map(|m| m.owner) else {
            return;
        };
        let rule = FadeRule::of(&self.drive_settings(owner));
        let Some(m) = self.memories.get_mut(&id) else {
            return;
        };
        if m.decays() && at > m.reviewed() {
            let r = m.retention(rule.base_ms, at);
            m.stability = retention::reinforced(m.stability(rule.base_ms), r);
        }
        m.last_accessed = Some(m.last_accessed.map_or(at, |t| t.max(at)));
        m.access_count = m.access_count.saturating_add(1);
        let next = m.fading(&rule);
        if let Some(m) = self.memories.get(&id) {
            self.index.set_fading(m, next);
        }
    }

    /// `decay_passed`: each change moves a memory on by one stage, to the stage its retention
    /// at `at` (≥ the world's clock) has fallen to; a residue's feeling goes onto its owner's
    /// edge toward whom it was about.
    pub(super) fn pass_decay(
        &mut self,
        at: Millis,
        changes: &[StageChange],
        next: Option<Millis>,
    ) -> Result<()> {
        self.check_decay_time(at)?;
        let mut seen = std::collections::HashSet::with_capacity(changes.len());
        let mut rules: HashMap<EntityId, FadeRule> = HashMap::new();
        for c in changes {
            if !seen.insert(c.id) {
                return Err(Error::invalid("decay", format!("{} is listed twice", c.id)));
            }
            let m = self.get_memory(c.id)?;
            if !matches!(c.stage, DecayStage::Residue | DecayStage::Forgotten) {
                return Err(Error::invalid(
                    "decay",
                    format!(
                        "{} cannot move to {:?} in a pass: a summary comes from the model \
                         (`memories_summarized`)",
                        c.id, c.stage
                    ),
                ));
            }
            let rule = *rules
                .entry(m.owner)
                .or_insert_with(|| FadeRule::of(&self.drive_settings(m.owner)));
            self.check_due_by(m, &rule, c.stage, at)?;
        }
        if next.is_some_and(|n| n < at) {
            return Err(Error::invalid(
                "decay",
                "the next pass is due before this one",
            ));
        }
        for c in changes {
            let Some(m) = self.memories.get_mut(&c.id) else {
                continue;
            };
            m.decay = c.stage;
            let imprint = match (c.stage, &m.feeling, m.about) {
                (DecayStage::Residue, Some(feeling), Some(about)) => {
                    Some((m.owner, about, feeling.clone()))
                }
                _ => None,
            };
            if let Some((owner, about, feeling)) = imprint
                && self.entities.get(&about).is_some()
            {
                let mut edge = self
                    .edges
                    .get(&(owner, about))
                    .cloned()
                    .unwrap_or_else(|| Edge::new(owner, about));
                edge.imprints.push(feeling);
                if edge.imprints.len() > MAX_IMPRINTS {
                    let extra = edge.imprints.len() - MAX_IMPRINTS;
                    edge.imprints.drain(..extra);
                }
                self.edges.insert(edge);
            }
        }
        // Each moved memory's next moment, under its owner's rule found above.
        for c in changes {
            if let Some(m) = self.memories.get(&c.id)
                && let Some(rule) = rules.get(&m.owner)
            {
                let next = m.fading(rule);
                self.index.set_fading(m, next);
            }
        }
        self.decay_passed = Some(at);
        self.decay_next = next;
        Ok(())
    }

    /// `memories_summarized`: whole memories of `owner`, each fallen below the summary
    /// threshold by `at`, reduced to a shorter text.
    pub(super) fn summarize_memories(
        &mut self,
        owner: EntityId,
        at: Millis,
        summaries: &[MemorySummary],
    ) -> Result<()> {
        self.check_decay_time(at)?;
        self.get_entity(owner)?;
        if summaries.is_empty() {
            return Err(Error::invalid("summaries", "no summary is given"));
        }
        let mut seen = std::collections::BTreeSet::new();
        for s in summaries {
            if !seen.insert(s.id) {
                return Err(Error::invalid(
                    "summaries",
                    format!("{} is listed twice", s.id),
                ));
            }
            let m = self.get_memory(s.id)?;
            if m.owner != owner {
                return Err(Error::invalid(
                    "summaries",
                    format!("{} is not a memory of {owner}", s.id),
                ));
            }
            if m.decay != DecayStage::Full {
                return Err(Error::invalid(
                    "summaries",
                    format!("{} is no longer whole ({:?})", s.id, m.decay),
                ));
            }
            self.check_due(m, DecayStage::Summary, at)?;
            check_summary(m, s)?;
        }
        for s in summaries {
            let Some(mut m) = self.memories.get(&s.id).cloned() else {
                continue;
            };
            m.decay = DecayStage::Summary;
            m.summary = Some(s.text.clone());
            m.feeling = s.feeling.clone();
            m.about = s.about;
            self.memories.insert(m);
            self.refade_and_bring_forward(s.id);
        }
        Ok(())
    }

    /// `reflected`: `entity`'s insights, each resting on memories of its own (so nobody learns
    /// through a reflection what it did not witness), added and their sources reinforced; its
    /// significance since the last reflection starts again from 0.
    pub(super) fn reflect(
        &mut self,
        entity: EntityId,
        at: Millis,
        insights: &[Memory],
        rejected: Option<&str>,
    ) -> Result<()> {
        self.check_decay_time(at)?;
        if self.minds.get(&entity).is_none() {
            return Err(Error::invalid(
                "reflection",
                format!("{entity} has no mind: only engine-controlled characters reflect"),
            ));
        }
        if rejected.is_some() && !insights.is_empty() {
            return Err(Error::invalid(
                "reflection",
                "a rejected reflection records no insight",
            ));
        }
        if let Some(r) = rejected {
            check_text("reflection", r)?;
        }
        if insights.len() > MAX_INSIGHTS {
            return Err(Error::invalid(
                "reflection",
                format!("at most {MAX_INSIGHTS} insights, not {}", insights.len()),
            ));
        }
        let mut next_id = self.next_id();
        for m in insights {
            if m.id.0 < next_id {
                return Err(Error::conflict(format!(
                    "id {} is already taken; new ids start at {next_id}",
                    m.id
                )));
            }
            next_id = m.id.0.saturating_add(1);
            self.check_insight(entity, at, m)?;
        }
        for m in insights {
            self.insert_memory(m.clone());
        }
        let mut cited = std::collections::BTreeSet::new();
        for m in insights {
            cited.extend(m.sources.iter().copied());
        }
        for id in cited {
            self.reinforce(id, at);
        }
        if let Some(mind) = self.minds.get_mut(&entity) {
            mind.unreflected = 0.0;
            mind.reflected_at = Some(at);
        }
        Ok(())
    }

    fn check_insight(&self, entity: EntityId, at: Millis, m: &Memory) -> Result<()> {
        let bad = |reason: String| Err(Error::invalid("reflection", reason));
        self.check_new_own(entity, at, m, MemoryKind::Reflection, "reflection")?;
        if m.sources.is_empty() || m.sources.len() > MAX_SOURCES {
            return bad(format!(
                "{}: an insight cites 1 to {MAX_SOURCES} memories, not {}",
                m.id,
                m.sources.len()
            ));
        }
        for s in &m.sources {
            self.check_source(entity, *s)
                .or_else(|reason| bad(format!("{}: {reason}", m.id)))?;
        }
        Ok(())
    }

    /// `m` is a new memory of `entity`'s own mind (a reflection, a thought): of `kind`,
    /// witnessed by its owner alone, new at `at` and whole, its text and significance in range.
    pub(super) fn check_new_own(
        &self,
        entity: EntityId,
        at: Millis,
        m: &Memory,
        kind: MemoryKind,
        what: &'static str,
    ) -> Result<()> {
        let bad = |reason: String| Err(Error::invalid(what, reason));
        if m.owner != entity || m.kind != kind {
            return bad(format!("{} is not a {what} of {entity}", m.id));
        }
        if m.witnesses.len() != 1 || !m.witnesses.contains(entity) {
            return bad(format!(
                "{}: a {what} is witnessed by its owner alone",
                m.id
            ));
        }
        if m.text.trim().is_empty() {
            return bad(format!("{}: the text is empty", m.id));
        }
        check_text(what, &m.text)?;
        check_unit(what, "significance", m.significance, 0.0)?;
        if m.created != at || m.last_accessed.is_some() || m.access_count != 0 {
            return bad(format!("{}: a {what} is new at {at}", m.id));
        }
        if m.decay != DecayStage::Full
            || m.summary.is_some()
            || m.feeling.is_some()
            || m.about.is_some()
            || m.scene.is_some()
            || m.stability != 0.0
        {
            return bad(format!("{}: a {what} is new and whole", m.id));
        }
        if let Some(v) = &m.embedding {
            crate::model::check_embedding(v).map_err(|e| Error::invalid(what, e))?;
        }
        Ok(())
    }

    /// A memory cited by a memory of `owner` is one of `owner`'s own, still in mind (what it
    /// witnessed, so a citation never carries another's knowledge).
    fn check_source(&self, owner: EntityId, id: MemoryId) -> std::result::Result<(), String> {
        match self.memories.get(&id) {
            Some(source) if source.owner == owner && source.recallable() => Ok(()),
            Some(source) if source.owner == owner => {
                Err(format!("{id} has faded from {owner}'s mind"))
            }
            _ => Err(format!("{id} is not a memory of {owner}")),
        }
    }

    fn get_memory(&self, id: MemoryId) -> Result<&Memory> {
        self.memories
            .get(&id)
            .ok_or_else(|| Error::not_found("memory", id))
    }

    /// A decay record happens at the world's time (the tick's), never before.
    fn check_decay_time(&self, at: Millis) -> Result<()> {
        if at < self.now {
            return Err(Error::invalid(
                "decay",
                format!("at ({at}) is before the world's clock ({})", self.now),
            ));
        }
        Ok(())
    }

    /// `m` may move to `stage` at `at`: it is its next stage and its retention has fallen
    /// below the threshold.
    fn check_due(&self, m: &Memory, stage: DecayStage, at: Millis) -> Result<()> {
        let rule = FadeRule::of(&self.drive_settings(m.owner));
        self.check_due_by(m, &rule, stage, at)
    }

    /// [`World::check_due`] under the owner's `rule`, worked out already.
    fn check_due_by(
        &self,
        m: &Memory,
        rule: &FadeRule,
        stage: DecayStage,
        at: Millis,
    ) -> Result<()> {
        if m.fading(rule).filter(|(_, due)| *due <= at).map(|(s, _)| s) != Some(stage) {
            return Err(Error::invalid(
                "decay",
                format!(
                    "{} is not due to become {stage:?} at {at} (stage {:?}, retention {:.3})",
                    m.id,
                    m.decay,
                    m.retention(rule.base_ms, at)
                ),
            ));
        }
        Ok(())
    }
}

/// A summary is shorter than the memory (or, for a short memory, at most 80 characters), its
/// feeling a few words, and whom it is about one of the memory's other witnesses.
fn check_summary(m: &Memory, s: &MemorySummary) -> Result<()> {
    let bad = |reason: String| Err(Error::invalid("summaries", reason));
    let text = s.text.trim();
    if text.is_empty() {
        return bad(format!("{}: the summary is empty", s.id));
    }
    check_text("summary", &s.text)?;
    let len = s.text.chars().count();
    let limit = m.text.chars().count().max(80);
    if len > limit {
        return bad(format!(
            "{}: the summary ({len} characters) is longer than the memory ({limit})",
            s.id
        ));
    }
    if let Some(f) = &s.feeling
        && (f.trim().is_empty() || f.len() > MAX_FEELING_BYTES || f.contains('\n'))
    {
        return bad(format!(
            "{}: a feeling is one line of 1 to {MAX_FEELING_BYTES} bytes",
            s.id
        ));
    }
    if let Some(about) = s.about
        && (about == m.owner || !m.witnesses.contains(about))
    {
        return bad(format!(
            "{}: {about} is not one of the memory's other witnesses",
            s.id
        ));
    }
    Ok(())
}
