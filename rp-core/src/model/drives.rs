//! The records of a character's inner life between turns (docs/drives.md): its drive settings
//! and personality, and the state the log keeps of it (`Mind`); its stimuli are
//! [`super::stimulus`]'s.
//! Drives themselves are not stored: each is a function of host time between the recorded
//! changes, read by [`crate::drives`].

use super::{
    BUILTIN_STIMULUS_KINDS, EntityId, InboxFate, InboxNote, MAX_INBOX_NOTES, Millis, Priority,
    Stimulus, elapsed,
};
use serde::{Deserialize, Serialize};

/// Milliseconds in an hour.
pub const HOUR_MS: f64 = 3_600_000.0;

/// How attentive a character is (seed 004's table). Sleep is recorded; the three waking modes
/// are read from the state at any time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// In a conversation (a line said or heard within the alert window): everything processed.
    Alert,
    /// Something pending (task pressure): everything processed.
    Normal,
    /// Nothing urgent: LOW and IDLE stimuli filtered out.
    Relaxed,
    /// Asleep: only CRITICAL processed; the rest adds disturbance.
    Sleep,
}

impl Mode {
    /// The stable lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Alert => "alert",
            Mode::Normal => "normal",
            Mode::Relaxed => "relaxed",
            Mode::Sleep => "sleep",
        }
    }

    /// Whether a stimulus of `priority` is processed in this mode (the rest is filtered).
    pub fn processes(self, priority: Priority) -> bool {
        match self {
            Mode::Alert | Mode::Normal => true,
            Mode::Relaxed => priority <= Priority::Normal,
            Mode::Sleep => priority == Priority::Critical,
        }
    }
}

/// Personality (seed 004 §7): seven traits in [0, 1], 0.5 when not given. What each changes
/// in behaviour is the table of docs/drives.md.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Personality {
    /// 0 serious, 1 playful.
    pub humor: f64,
    /// 0 casual, 1 formal.
    pub formality: f64,
    /// 0 passive, 1 inquisitive.
    pub curiosity: f64,
    /// 0 impatient, 1 patient.
    pub patience: f64,
    /// 0 detached, 1 emotionally attuned.
    pub empathy: f64,
    /// 0 direct, 1 hesitant.
    pub shyness: f64,
    /// 0 approval-seeking, 1 self-directed.
    pub independence: f64,
}

impl Default for Personality {
    fn default() -> Self {
        Personality {
            humor: 0.5,
            formality: 0.5,
            curiosity: 0.5,
            patience: 0.5,
            empathy: 0.5,
            shyness: 0.5,
            independence: 0.5,
        }
    }
}

impl Personality {
    /// The traits by name, in a fixed order.
    pub fn traits(&self) -> [(&'static str, f64); 7] {
        [
            ("humor", self.humor),
            ("formality", self.formality),
            ("curiosity", self.curiosity),
            ("patience", self.patience),
            ("empathy", self.empathy),
            ("shyness", self.shyness),
            ("independence", self.independence),
        ]
    }

    /// The trait named `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.traits()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// Sets the trait named `name` (`false`: no such trait).
    pub fn set(&mut self, name: &str, v: f64) -> bool {
        let slot = match name {
            "humor" => &mut self.humor,
            "formality" => &mut self.formality,
            "curiosity" => &mut self.curiosity,
            "patience" => &mut self.patience,
            "empathy" => &mut self.empathy,
            "shyness" => &mut self.shyness,
            "independence" => &mut self.independence,
            _ => return false,
        };
        *slot = v;
        true
    }

    /// Reads a personality from a JSON object (traits not given are 0.5; unknown fields and
    /// traits outside [0, 1] refused).
    pub fn from_json(json: &str) -> crate::error::Result<Personality> {
        let p: Personality = crate::json::json_object("personality", json)?;
        p.check()
            .map_err(|e| crate::error::Error::invalid("personality", e))?;
        Ok(p)
    }

    /// Every trait is a number in [0, 1].
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in self.traits() {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("personality.{name} is {v}; traits are in [0, 1]"));
            }
        }
        Ok(())
    }
}

/// The weights of the pressure terms (seed 004 §5): data, shifted by personality.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Weights {
    /// Social debt toward the addressee.
    pub social_debt: f64,
    /// Task pressure.
    pub task: f64,
    /// Curiosity.
    pub curiosity: f64,
    /// The believed availability of the addressee.
    pub availability: f64,
    /// An intention to speak to the addressee a rule left (docs/rules.md).
    pub intent: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            social_debt: 0.6,
            task: 0.5,
            curiosity: 0.4,
            availability: 0.3,
            intent: 0.6,
        }
    }
}

/// Drive settings as given: every field optional. A world's settings fill in the built-in
/// defaults, an entity's override the world's ([`DriveSettings::resolve`]). Reads from JSON and
/// from a world file's `[drives]` tables with these names; docs/drives.md documents each.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriveConfig {
    /// Whether the entity has drives at all (false for items).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Energy a generated line costs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_per_line: Option<f64>,
    /// Energy lost per hour awake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_drain_per_hour: Option<f64>,
    /// Energy regained per hour asleep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_recharge_per_hour: Option<f64>,
    /// Social debt gained per hour without contact, at affinity 0 (doubled at affinity 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub social_debt_per_hour: Option<f64>,
    /// Hours over which task pressure and curiosity come back after the character spoke.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_up_hours: Option<f64>,
    /// The pressure at which a character initiates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The least energy with which a character initiates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_energy: Option<f64>,
    /// Below this believed availability only urgent initiations go ahead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub availability_gate: Option<f64>,
    /// Task pressure from which an initiation is urgent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urgent_task: Option<f64>,
    /// Hours after which a belief about someone's availability has lost all confidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belief_hours: Option<f64>,
    /// Hours over which a belief about someone's mood, energy or availability (docs/beliefs.md)
    /// loses half its confidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belief_half_life_hours: Option<f64>,
    /// Hours over which a belief about someone's traits, or their feelings about a third
    /// person, loses half its confidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trait_half_life_hours: Option<f64>,
    /// Hour of day night begins (0–24).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub night_start: Option<f64>,
    /// Hour of day night ends (0–24).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub night_end: Option<f64>,
    /// At or below this energy a character falls asleep, day or night.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sleep_energy: Option<f64>,
    /// By day, a sleeper wakes once its energy is back to this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wake_energy: Option<f64>,
    /// Minutes after a line said or heard during which a character is alert.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alert_minutes: Option<f64>,
    /// Processing interval when alert, in seconds (seed 004: 10 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_alert_s: Option<f64>,
    /// Processing interval when normal, in seconds (1–5 min).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_normal_s: Option<f64>,
    /// Processing interval when relaxed, in seconds (15–30 min).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_relaxed_s: Option<f64>,
    /// Processing interval asleep, in seconds (1 h and more).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_sleep_s: Option<f64>,
    /// How much longer intervals are at night.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub night_factor: Option<f64>,
    /// What a sleeper's disturbance keeps per sleep interval (seed 004: 0.95).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbance_decay: Option<f64>,
    /// The most stimuli an inbox holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inbox_capacity: Option<u32>,
    /// Stimuli of the same kind and source within this many ms merge (seed 004: 5 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate_ms: Option<u64>,
    /// LOW stimuli older than this are dropped (seed 004: 60 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_low_ms: Option<u64>,
    /// IDLE stimuli older than this are dropped (seed 004: 30 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_idle_ms: Option<u64>,
    /// The pressure terms' weights.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Weights>,
    /// Stimulus kinds this world knows beyond the built-in ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stimulus_kinds: Option<Vec<String>>,
    /// Memory (docs/memory.md): the stability of a memory of significance 0.5, in hours (the
    /// host time after which its retention falls to 0.9 unless recalled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_stability_hours: Option<f64>,
    /// Below this retention a whole memory is reduced to a summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_below: Option<f64>,
    /// Below this retention a summary leaves only a residue (its feeling, on an edge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residue_below: Option<f64>,
    /// Below this retention a residue is forgotten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forget_below: Option<f64>,
    /// A memory whose stability reaches this many days no longer decays (consolidated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consolidated_days: Option<f64>,
    /// A summary recalled this many times keeps its stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_recalls: Option<u32>,
    /// The summed significance of new memories at which a character reflects (Generative
    /// Agents' 150 on their 1–10 scale; personality shifts it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reflect_threshold: Option<f64>,
    /// How many of its most significant recent memories a reflection reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reflect_memories: Option<u32>,
    /// The most memories one summary request compresses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_batch: Option<u32>,
    /// The least host time between two decay passes, in hours (the world's setting; memories
    /// fade over days, so a pass an hour gathers what crossed in between).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decay_pass_hours: Option<f64>,
    /// Days for an unused rule to lose half its weight (docs/rules.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_half_life_days: Option<f64>,
    /// Below this weight a rule is forgotten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_forget_below: Option<f64>,
    /// How fast the learned factors on the pressure's terms move (timing: fast).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learn_timing: Option<f64>,
    /// How fast rules' weights move with feedback (moderate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learn_rules: Option<f64>,
    /// How fast personality moves with feedback (very slow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learn_personality: Option<f64>,
    /// Days for what feedback taught to fade halfway back (in steps; docs/rules.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learned_half_life_days: Option<f64>,
    /// Minutes an initiation waits for an answer before it counts as ignored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback_wait_minutes: Option<f64>,
    /// Below this confidence a layer hoists a stimulus to the next (docs/drives.md, "Layers").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hoist_below: Option<f64>,
    /// From this significance the fast model's classification goes on to thought.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think_from: Option<f64>,
    /// This many stimuli of one kind within the pattern window are hoisted as a pattern.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_count: Option<u32>,
    /// The pattern window, in minutes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_minutes: Option<f64>,
}

macro_rules! settings {
    ($($field:ident: $ty:ty = $default:expr),* $(,)?) => {
        /// Drive settings resolved: the built-in defaults, then the world's, then the entity's
        /// (the stimulus kinds aside: [`DriveSettings::knows_kind`]).
        #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
        pub struct DriveSettings {
            $(
                #[doc = concat!("`", stringify!($field), "` (see [`DriveConfig`]).")]
                pub $field: $ty,
            )*
            /// `weights`.
            pub weights: Weights,
        }

        impl Default for DriveSettings {
            fn default() -> Self {
                DriveSettings {
                    $($field: $default,)*
                    weights: Weights::default(),
                }
            }
        }

        impl DriveSettings {
            /// These settings with what `config` gives laid over them.
            pub fn with(mut self, config: &DriveConfig) -> DriveSettings {
                $(if let Some(v) = config.$field { self.$field = v; })*
                if let Some(w) = config.weights { self.weights = w; }
                self
            }
        }
    };
}

settings! {
    enabled: bool = true,
    energy_per_line: f64 = 0.02,
    energy_drain_per_hour: f64 = 0.04,
    energy_recharge_per_hour: f64 = 0.15,
    social_debt_per_hour: f64 = 0.25,
    follow_up_hours: f64 = 2.0,
    threshold: f64 = 0.75,
    min_energy: f64 = 0.2,
    availability_gate: f64 = 0.3,
    urgent_task: f64 = 0.8,
    belief_hours: f64 = 2.0,
    belief_half_life_hours: f64 = 6.0,
    trait_half_life_hours: f64 = 720.0,
    night_start: f64 = 22.0,
    night_end: f64 = 6.0,
    sleep_energy: f64 = 0.05,
    wake_energy: f64 = 0.3,
    alert_minutes: f64 = 5.0,
    interval_alert_s: f64 = 10.0,
    interval_normal_s: f64 = 120.0,
    interval_relaxed_s: f64 = 1_200.0,
    interval_sleep_s: f64 = 3_600.0,
    night_factor: f64 = 1.5,
    disturbance_decay: f64 = 0.95,
    inbox_capacity: u32 = 32,
    aggregate_ms: u64 = 5_000,
    stale_low_ms: u64 = 60_000,
    stale_idle_ms: u64 = 30_000,
    memory_stability_hours: f64 = 24.0,
    summary_below: f64 = 0.6,
    residue_below: f64 = 0.35,
    forget_below: f64 = 0.2,
    consolidated_days: f64 = 180.0,
    keep_recalls: u32 = 5,
    reflect_threshold: f64 = 15.0,
    reflect_memories: u32 = 20,
    summary_batch: u32 = 20,
    decay_pass_hours: f64 = 1.0,
    rule_half_life_days: f64 = 7.0,
    rule_forget_below: f64 = 0.05,
    learn_timing: f64 = 0.15,
    learn_rules: f64 = 0.15,
    learn_personality: f64 = 0.01,
    feedback_wait_minutes: f64 = 30.0,
    learned_half_life_days: f64 = 1.0,
    hoist_below: f64 = 0.5,
    think_from: f64 = 0.7,
    pattern_count: u32 = 10,
    pattern_minutes: f64 = 10.0,
}

impl DriveSettings {
    /// The built-in defaults, the world's config, then the entity's.
    pub fn resolve(world: &DriveConfig, entity: Option<&DriveConfig>) -> DriveSettings {
        let s = DriveSettings::default().with(world);
        match entity {
            Some(e) => s.with(e),
            None => s,
        }
    }

    /// Whether `kind` is a stimulus kind: a built-in one, or one the world's or the entity's
    /// settings add.
    pub fn knows_kind(kind: &str, world: &DriveConfig, entity: Option<&DriveConfig>) -> bool {
        BUILTIN_STIMULUS_KINDS.contains(&kind)
            || [Some(world), entity]
                .into_iter()
                .flatten()
                .any(|c| c.stimulus_kinds.iter().flatten().any(|k| k == kind))
    }

    /// Every stimulus kind known: the built-in ones, then those the settings add.
    pub fn kinds(world: &DriveConfig, entity: Option<&DriveConfig>) -> Vec<String> {
        let mut out: Vec<String> = BUILTIN_STIMULUS_KINDS
            .iter()
            .map(|k| k.to_string())
            .collect();
        for c in [Some(world), entity].into_iter().flatten() {
            for k in c.stimulus_kinds.iter().flatten() {
                if !out.contains(k) {
                    out.push(k.clone());
                }
            }
        }
        out
    }

    /// Whether `hour` (0–24) is night.
    pub fn is_night(&self, hour: f64) -> bool {
        if self.night_start <= self.night_end {
            (self.night_start..self.night_end).contains(&hour)
        } else {
            hour >= self.night_start || hour < self.night_end
        }
    }

    /// The threshold a sleeper's disturbance must reach to wake it (seed 004:
    /// `0.5 × (1 + (1 − energy))`).
    pub fn wake_threshold(energy: f64) -> f64 {
        0.5 * (1.0 + (1.0 - energy.clamp(0.0, 1.0)))
    }

    /// The stability of a memory of significance 0.5, in ms.
    pub fn memory_stability_ms(&self) -> f64 {
        self.memory_stability_hours * HOUR_MS
    }

    /// The summed significance at which a character of `personality` reflects: the setting,
    /// halved for the most inquisitive and half again for the least (`× (1.5 − curiosity)`).
    pub fn reflect_at(&self, personality: &Personality) -> f64 {
        self.reflect_threshold * (1.5 - personality.curiosity)
    }

    /// The base processing interval of `mode`, in ms.
    pub fn interval_ms(&self, mode: Mode) -> f64 {
        1_000.0
            * match mode {
                Mode::Alert => self.interval_alert_s,
                Mode::Normal => self.interval_normal_s,
                Mode::Relaxed => self.interval_relaxed_s,
                Mode::Sleep => self.interval_sleep_s,
            }
    }
}

impl DriveConfig {
    /// Reads drive settings from a JSON object (every field optional; unknown fields and
    /// values out of range refused).
    pub fn from_json(json: &str) -> crate::error::Result<DriveConfig> {
        let c: DriveConfig = crate::json::json_object("drive settings", json)?;
        c.check()
            .map_err(|e| crate::error::Error::invalid("drives", e))?;
        Ok(c)
    }

    /// Every rate, bound and interval is finite and in its range; stimulus kinds are names.
    pub fn check(&self) -> Result<(), String> {
        let unit = [
            ("energy_per_line", self.energy_per_line),
            ("threshold", self.threshold),
            ("min_energy", self.min_energy),
            ("availability_gate", self.availability_gate),
            ("urgent_task", self.urgent_task),
            ("sleep_energy", self.sleep_energy),
            ("wake_energy", self.wake_energy),
            ("disturbance_decay", self.disturbance_decay),
            ("summary_below", self.summary_below),
            ("residue_below", self.residue_below),
            ("forget_below", self.forget_below),
            ("rule_forget_below", self.rule_forget_below),
            ("learn_timing", self.learn_timing),
            ("learn_rules", self.learn_rules),
            ("learn_personality", self.learn_personality),
            ("hoist_below", self.hoist_below),
            ("think_from", self.think_from),
        ];
        for (name, v) in unit {
            if let Some(v) = v
                && !(0.0..=1.0).contains(&v)
            {
                return Err(format!("drives.{name} is {v}; it is in [0, 1]"));
            }
        }
        let rates = [
            ("energy_drain_per_hour", self.energy_drain_per_hour),
            ("energy_recharge_per_hour", self.energy_recharge_per_hour),
            ("social_debt_per_hour", self.social_debt_per_hour),
            ("alert_minutes", self.alert_minutes),
        ];
        for (name, v) in rates {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(format!(
                    "drives.{name} is {v}; rates are finite and not negative"
                ));
            }
        }
        let positive = [
            ("follow_up_hours", self.follow_up_hours),
            ("belief_hours", self.belief_hours),
            ("belief_half_life_hours", self.belief_half_life_hours),
            ("trait_half_life_hours", self.trait_half_life_hours),
            ("interval_alert_s", self.interval_alert_s),
            ("interval_normal_s", self.interval_normal_s),
            ("interval_relaxed_s", self.interval_relaxed_s),
            ("interval_sleep_s", self.interval_sleep_s),
            ("night_factor", self.night_factor),
            ("memory_stability_hours", self.memory_stability_hours),
            ("consolidated_days", self.consolidated_days),
            ("reflect_threshold", self.reflect_threshold),
            ("decay_pass_hours", self.decay_pass_hours),
            ("rule_half_life_days", self.rule_half_life_days),
            ("feedback_wait_minutes", self.feedback_wait_minutes),
            ("learned_half_life_days", self.learned_half_life_days),
            ("pattern_minutes", self.pattern_minutes),
        ];
        for (name, v) in positive {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0 && v <= 1e9)
            {
                return Err(format!(
                    "drives.{name} is {v}; it is a positive number (at most 1e9)"
                ));
            }
        }
        for (name, v) in [
            ("night_start", self.night_start),
            ("night_end", self.night_end),
        ] {
            if let Some(v) = v
                && !(0.0..=24.0).contains(&v)
            {
                return Err(format!("drives.{name} is {v}; hours are in [0, 24]"));
            }
        }
        for (name, v) in [
            ("reflect_memories", self.reflect_memories),
            ("summary_batch", self.summary_batch),
        ] {
            if let Some(v) = v
                && !(1..=100).contains(&v)
            {
                return Err(format!("drives.{name} is {v}; it is 1 to 100"));
            }
        }
        if let (Some(a), Some(b), Some(c)) =
            (self.summary_below, self.residue_below, self.forget_below)
            && !(a >= b && b >= c)
        {
            return Err(format!(
                "drives.summary_below ({a}) ≥ residue_below ({b}) ≥ forget_below ({c}) must hold"
            ));
        }
        if self.pattern_count == Some(0) {
            return Err("drives.pattern_count is 0; a pattern is at least one stimulus".into());
        }
        if self.inbox_capacity == Some(0) {
            return Err("drives.inbox_capacity is 0; an inbox holds at least one stimulus".into());
        }
        if let Some(w) = &self.weights {
            for (name, v) in [
                ("social_debt", w.social_debt),
                ("task", w.task),
                ("curiosity", w.curiosity),
                ("availability", w.availability),
                ("intent", w.intent),
            ] {
                if !(v.is_finite() && (0.0..=10.0).contains(&v)) {
                    return Err(format!(
                        "drives.weights.{name} is {v}; weights are in [0, 10]"
                    ));
                }
            }
        }
        for k in self.stimulus_kinds.iter().flatten() {
            if k.is_empty()
                || k.len() > 64
                || !k
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!(
                    "stimulus kind {k:?} is not a name (letters, digits, '_' and '-', 1 to 64)"
                ));
            }
        }
        Ok(())
    }
}

/// What one character believes of another's availability: the value observed, and when.
/// Confidence falls linearly to 0 over the settings' `belief_hours`; the belief read at a time
/// is `0.5 + (availability − 0.5) × confidence`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Belief {
    /// Availability observed, in [0, 1].
    pub availability: f64,
    /// When it was observed.
    pub at: Millis,
}

/// What the log keeps of a character's inner life: every drive is a function of time from
/// these values and the world (docs/drives.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mind {
    /// Energy at `energy_at`, in [0, 1].
    pub energy: f64,
    /// When `energy` was last rebased.
    pub energy_at: Millis,
    /// Whether it sleeps.
    #[serde(default)]
    pub asleep: bool,
    /// When it last fell asleep or woke.
    pub mode_since: Millis,
    /// A sleeper's disturbance at `disturbance_at` (decays per sleep interval).
    #[serde(default)]
    pub disturbance: f64,
    /// When `disturbance` was last rebased.
    #[serde(default)]
    pub disturbance_at: Millis,
    /// Curiosity gathered from processed stimuli since it last spoke.
    #[serde(default)]
    pub curiosity: f64,
    /// When it last spoke: task pressure and curiosity come back over `follow_up_hours`.
    #[serde(default)]
    pub relieved_at: Option<Millis>,
    /// Since when social debt counts for those it never spoke with.
    pub since: Millis,
    /// Stimuli waiting to be processed, in arrival order.
    #[serde(default)]
    pub inbox: Vec<Stimulus>,
    /// When the inbox was last processed.
    #[serde(default)]
    pub processed_at: Option<Millis>,
    /// Processed stimuli for its next prompt (cleared when it speaks).
    #[serde(default)]
    pub noticed: Vec<Stimulus>,
    /// What became of stimuli that were merged, dropped, filtered, or woke it.
    #[serde(default)]
    pub notes: Vec<InboxNote>,
    /// A `$retry` due at this time.
    #[serde(default)]
    pub retry_at: Option<Millis>,
    /// No initiation before this time (after a failed one).
    #[serde(default)]
    pub held_until: Option<Millis>,
    /// Its drive settings over the world's.
    #[serde(default)]
    pub config: DriveConfig,
    /// Its personality.
    #[serde(default)]
    pub personality: Personality,
    /// The summed significance of the memories it formed since it last reflected
    /// (docs/memory.md): it reflects once this reaches its threshold.
    #[serde(default)]
    pub unreflected: f64,
    /// When it last reflected.
    #[serde(default)]
    pub reflected_at: Option<Millis>,
    /// Task pressure rules added since it last spoke (docs/rules.md).
    #[serde(default)]
    pub task_extra: f64,
    /// What fired rules left in mind: intentions to speak to someone, notes for its prompt.
    #[serde(default)]
    pub intentions: Vec<super::Intention>,
    /// Its initiations waiting for their feedback, one per addressee.
    #[serde(default)]
    pub awaiting: Vec<super::Awaiting>,
    /// The factors it learned on its pressure's terms, per addressee and term.
    #[serde(default)]
    pub learned: Vec<super::Learned>,
    /// The feedback it learned from, latest last (the last [`super::MAX_FEEDBACK_NOTES`]).
    #[serde(default)]
    pub feedback: Vec<super::Feedback>,
    /// When a pattern of each stimulus kind was last hoisted (docs/drives.md, "Layers").
    #[serde(default)]
    pub patterns: Vec<(String, Millis)>,
}

impl Mind {
    /// A fresh mind at `now`: full energy, awake.
    pub fn new(now: Millis) -> Mind {
        Mind {
            energy: 1.0,
            energy_at: now,
            asleep: false,
            mode_since: now,
            disturbance: 0.0,
            disturbance_at: now,
            curiosity: 0.0,
            relieved_at: None,
            since: now,
            inbox: Vec::new(),
            processed_at: None,
            noticed: Vec::new(),
            notes: Vec::new(),
            retry_at: None,
            held_until: None,
            config: DriveConfig::default(),
            personality: Personality::default(),
            unreflected: 0.0,
            reflected_at: None,
            task_extra: 0.0,
            intentions: Vec::new(),
            awaiting: Vec::new(),
            learned: Vec::new(),
            feedback: Vec::new(),
            patterns: Vec::new(),
        }
    }

    /// Energy at `t` (≥ `energy_at`): linear between recorded changes, down while awake, up
    /// while asleep, clamped to [0, 1].
    pub fn energy_at(&self, s: &DriveSettings, t: Millis) -> f64 {
        let hours = elapsed(self.energy_at, t) as f64 / HOUR_MS;
        let rate = if self.asleep {
            s.energy_recharge_per_hour
        } else {
            -s.energy_drain_per_hour
        };
        (self.energy + rate * hours).clamp(0.0, 1.0)
    }

    /// The first time from `from` at which energy reaches `level` going the way it goes now
    /// (`None`: never).
    pub fn energy_reaches(&self, s: &DriveSettings, level: f64, from: Millis) -> Option<Millis> {
        let now = self.energy_at(s, from);
        let rate = if self.asleep {
            s.energy_recharge_per_hour
        } else {
            -s.energy_drain_per_hour
        };
        // Asleep it rises, awake it falls.
        let reached = if self.asleep {
            now >= level
        } else {
            now <= level
        };
        if reached {
            return Some(from);
        }
        if rate == 0.0 {
            return None;
        }
        let hours = (level - now) / rate;
        Some(from.saturating_add((hours * HOUR_MS).ceil() as Millis))
    }

    /// Moves `energy` to its value at `t`.
    pub fn rebase_energy(&mut self, s: &DriveSettings, t: Millis) {
        self.energy = self.energy_at(s, t);
        self.energy_at = t.max(self.energy_at);
    }

    /// A sleeper's disturbance at `t`: it keeps `disturbance_decay` of itself per sleep
    /// interval.
    pub fn disturbance_at(&self, s: &DriveSettings, t: Millis) -> f64 {
        if !self.asleep || self.disturbance == 0.0 {
            return 0.0;
        }
        let intervals = elapsed(self.disturbance_at, t) as f64 / s.interval_ms(Mode::Sleep);
        self.disturbance * s.disturbance_decay.powf(intervals)
    }

    /// Falls asleep or wakes at `t`.
    pub fn set_asleep(&mut self, s: &DriveSettings, asleep: bool, t: Millis) {
        self.rebase_energy(s, t);
        self.asleep = asleep;
        self.mode_since = t;
        self.disturbance = 0.0;
        self.disturbance_at = t;
    }

    /// Keeps the notes within [`MAX_INBOX_NOTES`].
    pub fn note(&mut self, stimulus: Stimulus, fate: InboxFate, at: Millis) {
        self.notes.push(InboxNote { stimulus, fate, at });
        if self.notes.len() > MAX_INBOX_NOTES {
            let extra = self.notes.len() - MAX_INBOX_NOTES;
            self.notes.drain(..extra);
        }
    }
}

/// What an initiation answered: the drive that weighed most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Drive {
    /// Social debt toward the addressee.
    SocialDebt,
    /// Task pressure.
    Task,
    /// Curiosity.
    Curiosity,
    /// An intention a rule left to speak to the addressee (docs/rules.md).
    Intent,
}

impl Drive {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Drive::SocialDebt => "social_debt",
            Drive::Task => "task",
            Drive::Curiosity => "curiosity",
            Drive::Intent => "intent",
        }
    }
}

/// The record of an initiation: who spoke first, to whom, about what, and the pressure that
/// made it (committed with the line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Initiation {
    /// Who spoke first.
    pub speaker: EntityId,
    /// To whom.
    pub to: EntityId,
    /// The drive that weighed most.
    pub about: Drive,
    /// The pressure, and the threshold it crossed.
    pub score: f64,
    /// The threshold.
    pub threshold: f64,
    /// Each term's share of the score (name, contribution ÷ score): what learning from the
    /// answer credits (docs/rules.md).
    #[serde(default)]
    pub shares: Vec<(String, f64)>,
    /// The rules whose intentions weighed in it.
    #[serde(default)]
    pub rules: Vec<super::RuleId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_wake_thresholds() {
        assert!((DriveSettings::wake_threshold(1.0) - 0.5).abs() < 1e-12);
        assert!((DriveSettings::wake_threshold(0.5) - 0.75).abs() < 1e-12);
        assert!((DriveSettings::wake_threshold(0.1) - 0.95).abs() < 1e-12);
    }

    #[test]
    fn energy_is_linear_and_clamped() {
        let s = DriveSettings::default();
        let mut m = Mind::new(0);
        assert!((m.energy_at(&s, 10 * HOUR_MS as i64) - 0.6).abs() < 1e-9);
        assert_eq!(m.energy_at(&s, 100 * HOUR_MS as i64), 0.0);
        let t = m.energy_reaches(&s, 0.5, 0).unwrap();
        assert!((m.energy_at(&s, t) - 0.5).abs() < 1e-6);
        m.set_asleep(&s, true, 10 * HOUR_MS as i64);
        assert!((m.energy_at(&s, 12 * HOUR_MS as i64) - 0.9).abs() < 1e-9);
    }

    #[test]
    fn times_at_the_ends_of_the_clock_do_not_overflow() {
        // A save may hold any time (damaged, or a host's clock far off), and a line may come
        // at any other: the time between them saturates rather than overflow (found by the
        // `decode_snapshot` fuzzer: a mind's `energy_at` near `Millis::MIN`, a line at a time
        // far after it).
        let s = DriveSettings::default();
        for (then, now) in [(Millis::MIN, Millis::MAX), (Millis::MAX, Millis::MIN)] {
            let mut m = Mind::new(then);
            m.asleep = true;
            m.disturbance = 0.5;
            let energy = m.energy_at(&s, now);
            assert!((0.0..=1.0).contains(&energy), "{energy}");
            let disturbance = m.disturbance_at(&s, now);
            assert!((0.0..=0.5).contains(&disturbance), "{disturbance}");
            m.rebase_energy(&s, now);
            assert_eq!(m.energy_at, then.max(now));
        }
        assert_eq!(elapsed(Millis::MIN, Millis::MAX), Millis::MAX);
        assert_eq!(elapsed(Millis::MAX, Millis::MIN), 0);
        assert_eq!(elapsed(5, 12), 7);
    }

    #[test]
    fn night_wraps_midnight() {
        let s = DriveSettings::default();
        assert!(s.is_night(23.0) && s.is_night(2.0) && !s.is_night(6.0) && !s.is_night(12.0));
    }

    #[test]
    fn bad_settings_and_traits_are_named() {
        let c = DriveConfig {
            social_debt_per_hour: Some(-1.0),
            ..Default::default()
        };
        assert!(c.check().unwrap_err().contains("social_debt_per_hour"));
        let p = Personality {
            shyness: 1.5,
            ..Default::default()
        };
        assert!(p.check().unwrap_err().contains("shyness"));
    }
}
