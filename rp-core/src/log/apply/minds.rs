//! Applying what changes a character's inner life (docs/drives.md): drive settings and
//! personality, stimuli into the inbox (merged, dropped, filtered, or waking a sleeper), the
//! tick's outcome, initiations, availability reports, and what every line does to the drives
//! of those who hear it.

use super::super::World;
use crate::error::{Error, Result};
use crate::model::*;

impl World {
    /// The mind of an engine-controlled entity, or an error naming why there is none.
    fn mind_mut(&mut self, entity: EntityId) -> Result<&mut Mind> {
        let e = self.get_entity(entity)?;
        if e.host_controlled {
            return Err(Error::invalid(
                "drives",
                format!(
                    "{} is host-controlled; only the engine's characters have drives",
                    e.name
                ),
            ));
        }
        self.minds
            .get_mut(&entity)
            .ok_or_else(|| Error::not_found("mind", entity))
    }

    pub(super) fn configure_drives(
        &mut self,
        entity: Option<EntityId>,
        config: &DriveConfig,
    ) -> Result<()> {
        config.check().map_err(|e| Error::invalid("drives", e))?;
        // A sleeper must not wake only to fall asleep again at once.
        let coherent = |world: &DriveConfig, own: Option<&DriveConfig>| {
            let s = DriveSettings::resolve(world, own);
            if s.wake_energy <= s.sleep_energy {
                return Err(Error::invalid(
                    "drives",
                    format!(
                        "wake_energy ({}) must be above sleep_energy ({})",
                        s.wake_energy, s.sleep_energy
                    ),
                ));
            }
            if !(s.summary_below >= s.residue_below && s.residue_below >= s.forget_below) {
                return Err(Error::invalid(
                    "drives",
                    format!(
                        "summary_below ({}) ≥ residue_below ({}) ≥ forget_below ({}) must hold",
                        s.summary_below, s.residue_below, s.forget_below
                    ),
                ));
            }
            Ok(())
        };
        match entity {
            None => {
                coherent(config, None)?;
                for m in self.minds.values() {
                    coherent(config, Some(&m.config))?;
                }
            }
            Some(_) => coherent(&self.drive_config, Some(config))?,
        }
        match entity {
            None => self.drive_config = config.clone(),
            Some(id) => {
                let world = self.drive_config.clone();
                let now = self.now;
                let mind = self.mind_mut(id)?;
                // Energy so far ran at the old rates: rebase before the new ones apply.
                let old = DriveSettings::resolve(&world, Some(&mind.config));
                mind.rebase_energy(&old, now);
                mind.config = config.clone();
            }
        }
        // Memories may fade on another schedule now: a pass looks again at once.
        if !self.memories.is_empty() {
            self.decay_next = Some(self.decay_next.map_or(self.now, |n| n.min(self.now)));
            match entity {
                None => self.refade_all(),
                Some(id) => self.refade_owner(id),
            }
        }
        Ok(())
    }

    pub(super) fn set_personality(&mut self, entity: EntityId, p: &Personality) -> Result<()> {
        p.check().map_err(|e| Error::invalid("personality", e))?;
        self.mind_mut(entity)?.personality = *p;
        Ok(())
    }

    pub(super) fn notify_stimulus(&mut self, entity: EntityId, stimulus: &Stimulus) -> Result<()> {
        self.check_fresh(stimulus.id)?;
        if stimulus.payload.len() > MAX_PAYLOAD_BYTES {
            return Err(Error::invalid(
                "stimulus",
                format!("the payload is longer than {MAX_PAYLOAD_BYTES} bytes"),
            ));
        }
        if stimulus.at != self.now {
            return Err(Error::invalid(
                "stimulus",
                format!(
                    "a stimulus arrives at the world's time {}, not {}",
                    self.now, stimulus.at
                ),
            ));
        }
        if stimulus.count != 1 {
            return Err(Error::invalid(
                "stimulus",
                "a stimulus arrives alone (count 1)",
            ));
        }
        let own = self.minds.get(&entity).map(|m| &m.config);
        if !DriveSettings::knows_kind(&stimulus.kind, &self.drive_config, own) {
            return Err(Error::invalid(
                "stimulus",
                format!(
                    "unknown stimulus kind {:?}; the kinds are {}",
                    stimulus.kind,
                    DriveSettings::kinds(&self.drive_config, own).join(", ")
                ),
            ));
        }
        let settings = self.drive_settings(entity);
        let now = self.now;
        let mind = self.mind_mut(entity)?;
        let s = stimulus.clone();
        if mind.asleep {
            let energy = mind.energy_at(&settings, now);
            let disturbance = mind.disturbance_at(&settings, now) + s.priority.disturbance();
            if disturbance >= DriveSettings::wake_threshold(energy) {
                mind.set_asleep(&settings, false, now);
                mind.note(s.clone(), InboxFate::Woke, now);
                mind.inbox.push(s);
            } else {
                mind.disturbance = disturbance;
                mind.disturbance_at = now;
                mind.note(s, InboxFate::Filtered, now);
            }
        } else {
            queue(mind, &settings, s, now);
        }
        self.take_id(stimulus.id);
        Ok(())
    }

    pub(super) fn tick_mind(
        &mut self,
        entity: EntityId,
        at: Millis,
        asleep: Option<bool>,
        processed: &[u64],
        filtered: &[u64],
    ) -> Result<()> {
        if at != self.now {
            return Err(Error::invalid(
                "tick",
                format!("a tick happens at the world's time {}, not {at}", self.now),
            ));
        }
        let settings = self.drive_settings(entity);
        let mind = self.mind_mut(entity)?;
        for id in processed.iter().chain(filtered) {
            if !mind.inbox.iter().any(|s| s.id == *id) {
                return Err(Error::not_found("stimulus in the inbox", id));
            }
        }
        if let Some(asleep) = asleep {
            if asleep == mind.asleep {
                return Err(Error::conflict(format!(
                    "{entity} is already {}",
                    if asleep { "asleep" } else { "awake" }
                )));
            }
            mind.set_asleep(&settings, asleep, at);
        }
        let gain = 0.5 + mind.personality.curiosity;
        let mut keep = Vec::with_capacity(mind.inbox.len());
        for s in std::mem::take(&mut mind.inbox) {
            if processed.contains(&s.id) {
                mind.curiosity = (mind.curiosity + s.priority.curiosity() * gain).min(1.0);
                mind.noticed.push(s);
            } else if filtered.contains(&s.id) {
                mind.note(s, InboxFate::Filtered, at);
            } else {
                keep.push(s);
            }
        }
        mind.inbox = keep;
        if mind.noticed.len() > MAX_NOTICED {
            let extra = mind.noticed.len() - MAX_NOTICED;
            mind.noticed.drain(..extra);
        }
        if !processed.is_empty() || !filtered.is_empty() {
            mind.processed_at = Some(at);
        }
        if mind.retry_at.is_some_and(|r| r <= at) {
            mind.retry_at = None;
        }
        Ok(())
    }

    pub(super) fn record_initiation(&mut self, initiation: &Initiation, at: Millis) -> Result<()> {
        self.get_entity(initiation.to)?;
        if initiation.to == initiation.speaker {
            return Err(Error::invalid(
                "initiation",
                "a character initiates with someone else",
            ));
        }
        if !(initiation.score.is_finite() && initiation.threshold.is_finite()) {
            return Err(Error::invalid(
                "initiation",
                "the score and threshold are numbers",
            ));
        }
        if at != self.now {
            return Err(Error::invalid(
                "initiation",
                format!(
                    "an initiation happens at the world's time {}, not {at}",
                    self.now
                ),
            ));
        }
        let bad_share = |(_, v): &(String, f64)| !(v.is_finite() && (0.0..=1.0).contains(v));
        if initiation.shares.len() > super::TERM_NAMES.len()
            || initiation.shares.iter().any(bad_share)
        {
            return Err(Error::invalid(
                "initiation",
                "shares are at most one per term, each in [0, 1]",
            ));
        }
        let mind = self.mind_mut(initiation.speaker)?;
        mind.held_until = None;
        // Its feedback is awaited (docs/rules.md): the answer, or `feedback_wait_minutes`.
        mind.awaiting.retain(|a| a.to != initiation.to);
        mind.awaiting.push(Awaiting {
            to: initiation.to,
            at,
            shares: initiation.shares.clone(),
            rules: initiation.rules.clone(),
            reply: None,
        });
        // Until the addressee answers (its line sets the belief back to available), having
        // spoken to it unanswered is an observation that it is not available: seed 004's
        // "no response" signal. The belief's confidence fades as any other.
        self.see_otherwise(
            initiation.speaker,
            initiation.to,
            Belief {
                availability: 0.0,
                at,
            },
        );
        Ok(())
    }

    pub(super) fn hold_initiation(&mut self, entity: EntityId, until: Millis) -> Result<()> {
        if until < self.now {
            return Err(Error::invalid(
                "initiation",
                format!("held until {until}, before the world's time {}", self.now),
            ));
        }
        self.mind_mut(entity)?.held_until = Some(until);
        Ok(())
    }

    pub(super) fn report_availability(
        &mut self,
        about: EntityId,
        availability: f64,
        at: Millis,
    ) -> Result<()> {
        self.get_entity(about)?;
        super::check_unit("availability", "availability", availability, 0.0)?;
        if at != self.now {
            return Err(Error::invalid(
                "availability",
                format!(
                    "a report is made at the world's time {}, not {at}",
                    self.now
                ),
            ));
        }
        self.reported.insert(about, Belief { availability, at });
        Ok(())
    }

    /// A new engine-controlled entity gets a fresh mind (full energy, awake) at the world's time.
    pub(super) fn add_mind(&mut self, entity: EntityId) {
        // A person only mentioned has no inner life the engine keeps (docs/beliefs.md).
        if self.entity(entity).is_some_and(|e| e.mentioned) {
            return;
        }
        if !self.minds.contains_key(&entity) {
            self.minds.insert(entity, Mind::new(self.now));
        }
    }

    /// Forgets everything the drives kept of a removed entity.
    pub(super) fn remove_mind(&mut self, entity: EntityId) {
        self.minds.remove(&entity);
        self.remove_rules_of(entity);
        self.reported.remove(&entity);
        self.forget_pairs_of(entity);
    }

    /// What a line does to the drives: everyone who heard it is in contact with the speaker
    /// (social debt relieved both ways) and saw it available; the speaker's task pressure and
    /// curiosity are relieved and what it noticed is said; a generated line costs energy.
    /// Intentions toward those who heard it are done with, and a hearer waiting for the
    /// speaker's answer to its initiation has it (docs/rules.md).
    pub(super) fn minds_hear(
        &mut self,
        speaker: EntityId,
        at: Millis,
        heard: &WitnessSet,
        content: &str,
    ) {
        for w in heard.iter().filter(|w| *w != speaker) {
            if let Some(mind) = self.minds.get(&w)
                && mind
                    .awaiting
                    .iter()
                    .any(|a| a.to == speaker && a.reply.is_none())
            {
                let mind = self.minds.get_mut(&w).expect("checked above");
                for a in mind.awaiting.iter_mut() {
                    if a.to == speaker && a.reply.is_none() {
                        a.reply = Some(Reply {
                            at,
                            words: u32::try_from(content.split_whitespace().count())
                                .unwrap_or(u32::MAX),
                            text: content.chars().take(MAX_REPLY_CHARS).collect(),
                        });
                    }
                }
            }
            self.hear(w, speaker, at);
        }
        if self.minds.contains_key(&speaker) {
            let settings = self.drive_settings(speaker);
            let generated = self.entity(speaker).is_some_and(|e| !e.host_controlled);
            let mind = self.minds.get_mut(&speaker).expect("checked above");
            mind.relieved_at = Some(at);
            mind.curiosity = 0.0;
            mind.task_extra = 0.0;
            mind.noticed.clear();
            mind.intentions
                .retain(|i| i.to.is_some_and(|to| to != speaker && !heard.contains(to)));
            if generated {
                mind.rebase_energy(&settings, at);
                mind.energy = (mind.energy - settings.energy_per_line).max(0.0);
            }
        }
    }

    /// A `$retry` decided for `entity`: its tick is due then.
    pub(super) fn note_retry(&mut self, entity: EntityId, retry_ms: Option<u64>) {
        let now = self.now;
        if let Some(mind) = self.minds.get_mut(&entity) {
            mind.retry_at =
                retry_ms.map(|ms| now.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX)));
        }
    }
}

/// Puts `s` in an awake character's inbox (seed 004's overload handling): stale LOW and IDLE
/// stimuli go first, a stimulus of the same kind and priority within the aggregation window
/// merges into the earlier one, and past capacity the least urgent (newest first among equals)
/// is dropped; CRITICAL never is.
fn queue(mind: &mut Mind, s: &DriveSettings, stimulus: Stimulus, now: Millis) {
    let stale = |x: &Stimulus| {
        let age = elapsed(x.at, now) as u64;
        match x.priority {
            Priority::Low => age > s.stale_low_ms,
            Priority::Idle => age > s.stale_idle_ms,
            _ => false,
        }
    };
    let (old, keep): (Vec<Stimulus>, Vec<Stimulus>) =
        std::mem::take(&mut mind.inbox).into_iter().partition(stale);
    mind.inbox = keep;
    for x in old {
        mind.note(x, InboxFate::Stale, now);
    }
    if let Some(earlier) = mind.inbox.iter_mut().rev().find(|x| {
        x.kind == stimulus.kind
            && x.priority == stimulus.priority
            && elapsed(x.at, now) as u64 <= s.aggregate_ms
    }) {
        earlier.count = earlier.count.saturating_add(1);
        if !stimulus.payload.is_empty()
            && !earlier.payload.contains(&stimulus.payload)
            && earlier.payload.len() + stimulus.payload.len() + 2 <= MAX_PAYLOAD_BYTES
        {
            if !earlier.payload.is_empty() {
                earlier.payload.push_str("; ");
            }
            earlier.payload.push_str(&stimulus.payload);
        }
        let into = earlier.id;
        mind.note(stimulus, InboxFate::Merged(into), now);
        return;
    }
    mind.inbox.push(stimulus);
    while mind.inbox.len() > s.inbox_capacity as usize {
        // The least urgent, the newest among equals; CRITICAL stays.
        let Some((i, _)) = mind
            .inbox
            .iter()
            .enumerate()
            .filter(|(_, x)| x.priority != Priority::Critical)
            .max_by_key(|(i, x)| (x.priority, *i))
        else {
            break;
        };
        let dropped = mind.inbox.remove(i);
        mind.note(dropped, InboxFate::Overflow, now);
    }
}
