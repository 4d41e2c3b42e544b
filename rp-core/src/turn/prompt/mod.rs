//! A speaker's prompt, in the order of docs/turn.md §4, built only from what that speaker knows:
//! its own edges, the dialogue it witnessed, its own memories.
//!
//! Sections, in order: `identity` (name, active facts, state), `edges` (the speaker's edge to
//! each present entity, then what it believes of them: docs/beliefs.md), `group` (a group
//! node of the present, when three or more are), `world` (time and place), `scene` (the
//! place's description), `activity` (what every present entity is doing), `threads` (open
//! threads the speaker is part of, or that name no one), `dialogue` (the lines it witnessed
//! since its current scene opened, never a line of a closed scene: see [`scene_dialogue`]),
//! `memories` (pinned, then its summaries of its most recent scenes, then recalled: its own,
//! witness-filtered), `lore` (entities mentioned in what it recently witnessed), `events`
//! (active scoped events the speaker takes part in, with their props; never a planned or
//! closed one).
//!
//! The `group` section shows a group node (its summary, then its shared history) only when
//! the speaker is a member and every member is present (within earshot of the speaker).
//!
//! **Trimming.** When the rendered prompt exceeds the token budget, pieces are dropped in this
//! order until it fits: recalled memories (lowest score first), lore (least recently mentioned
//! first), dialogue (oldest first, never the newest line), events, threads, scene summaries
//! (oldest first), pinned memories.
//! Identity, edges, group, world, scene and activity are never dropped; a prompt that still
//! does not fit is returned with `tokens > budget_tokens`.

use crate::log::World;
use crate::lore::{LoreIndex, cut};
use crate::memory::RecallOptions;
use crate::model::{EntityId, EventStatus, MemoryId, Millis, ThreadStatus, Utterance};

/// The rule of a scene summary's piece (always loaded; trimmed after threads).
pub const SCENE_SUMMARY: &str =
    "the speaker's own summary of a recent scene it witnessed (always loaded)";
use crate::turn::ChatMessage;

mod fit;
pub(crate) mod macros;

use fit::fit;
#[cfg(test)]
use fit::render;
use serde::{Deserialize, Serialize};

/// Counts tokens. The default, [`CharsPerToken`], assumes four characters per token.
pub trait TokenCounter: Send + Sync {
    /// Tokens in `text`.
    fn count(&self, text: &str) -> usize;
}

/// A token counter of `n` characters per token, rounded up.
#[derive(Clone, Copy, Debug)]
pub struct CharsPerToken(pub usize);

impl Default for CharsPerToken {
    fn default() -> Self {
        CharsPerToken(4)
    }
}

impl TokenCounter for CharsPerToken {
    fn count(&self, text: &str) -> usize {
        text.chars().count().div_ceil(self.0.max(1))
    }
}

/// A part of the prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// Who the speaker is.
    Identity,
    /// How it sees each present entity.
    Edges,
    /// The group of the present.
    Group,
    /// Time and place.
    World,
    /// The place's description.
    Scene,
    /// What the present are doing.
    Activity,
    /// Open threads.
    Threads,
    /// Recent lines it witnessed.
    Dialogue,
    /// Its memories.
    Memories,
    /// Entities mentioned lately.
    Lore,
    /// Active scoped events.
    Events,
}

impl Section {
    /// Every section, in prompt order.
    pub const ALL: [Section; 11] = [
        Section::Identity,
        Section::Edges,
        Section::Group,
        Section::World,
        Section::Scene,
        Section::Activity,
        Section::Threads,
        Section::Dialogue,
        Section::Memories,
        Section::Lore,
        Section::Events,
    ];

    /// The section's name, as in templates (`{{identity}}`).
    pub fn as_str(self) -> &'static str {
        match self {
            Section::Identity => "identity",
            Section::Edges => "edges",
            Section::Group => "group",
            Section::World => "world",
            Section::Scene => "scene",
            Section::Activity => "activity",
            Section::Threads => "threads",
            Section::Dialogue => "dialogue",
            Section::Memories => "memories",
            Section::Lore => "lore",
            Section::Events => "events",
        }
    }

    fn heading(self) -> &'static str {
        match self {
            Section::Identity => "# You",
            Section::Edges => "# How you see the others here",
            Section::Group => "# The group",
            Section::World => "# Where and when",
            Section::Scene => "# The scene",
            Section::Activity => "# What everyone here is doing",
            Section::Threads => "# Unresolved",
            Section::Dialogue => "# What you heard (most recent last)",
            Section::Memories => "# What you remember",
            Section::Lore => "# Things mentioned",
            Section::Events => "# Happening now",
        }
    }
}

/// One piece of a prompt and why it is there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptPiece {
    /// Its section.
    pub section: Section,
    /// Its text.
    pub text: String,
    /// The rule that put it there.
    pub why: String,
    /// The memory it shows, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryId>,
    /// The entity it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<EntityId>,
    /// A recalled memory's score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Its tokens.
    pub tokens: usize,
}

/// How prompts are rendered: a system and a user message, each a text with `{{section}}`
/// placeholders (see [`Section::as_str`]) and `{{name}}` (the speaker's name). A section is
/// rendered as its heading and its pieces, one per line, or as nothing when it is empty; runs
/// of blank lines collapse to one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptTemplate {
    /// The system message.
    pub system: String,
    /// The user message (empty: none).
    pub user: String,
}

impl Default for PromptTemplate {
    fn default() -> Self {
        PromptTemplate {
            system: "You are {{name}}, a character in a story. Stay in character. Write only what \
                     {{name}} says or does next: one line of dialogue or a short paragraph, with \
                     no name prefix. Know only what is written here.\n\n{{identity}}\n\n{{edges}}\n\n\
                     {{group}}\n\n{{world}}\n\n{{scene}}\n\n{{activity}}\n\n{{threads}}\n\n\
                     {{dialogue}}\n\n{{memories}}\n\n{{lore}}\n\n{{events}}"
                .into(),
            user: "What does {{name}} say?".into(),
        }
    }
}

/// What goes into a prompt and how big it may be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PromptOptions {
    /// The token budget of the whole prompt.
    pub budget_tokens: usize,
    /// Recalled memories (top-K).
    pub memories_k: usize,
    /// Dialogue lines, at most.
    pub dialogue_lines: usize,
    /// The speaker's most recent scene summaries always loaded (0: none).
    pub recent_scenes: usize,
    /// Witnessed lines scanned for lore.
    pub lore_lines: usize,
    /// Tokens lore may take.
    pub lore_budget_tokens: usize,
    /// How tokens are counted: this many characters per token, rounded up (Rust hosts can
    /// pass any [`TokenCounter`] to `TurnMachine::begin_counting` instead).
    pub chars_per_token: usize,
    /// The template.
    pub template: PromptTemplate,
    /// Recall settings (`k` is taken from `memories_k`).
    pub recall: RecallOptions,
}

impl Default for PromptOptions {
    fn default() -> Self {
        PromptOptions {
            budget_tokens: 4096,
            memories_k: 6,
            dialogue_lines: 32,
            recent_scenes: 3,
            lore_lines: 16,
            lore_budget_tokens: 400,
            chars_per_token: 4,
            template: PromptTemplate::default(),
            recall: RecallOptions::default(),
        }
    }
}

impl PromptOptions {
    /// Reads options from a JSON object (every field optional, unknown fields refused).
    pub fn from_json(json: &str) -> crate::Result<PromptOptions> {
        crate::json::json_object("prompt options", json)
    }

    /// Checks ranges: a clear error instead of a surprising prompt.
    pub fn check(&self) -> crate::Result<()> {
        let bad = |reason: &str| Err(crate::Error::invalid("prompt options", reason.to_string()));
        if self.budget_tokens == 0 {
            return bad("budget_tokens must be at least 1");
        }
        if self.memories_k > 1000 {
            return bad("memories_k is at most 1000");
        }
        if self.recent_scenes > 1000 {
            return bad("recent_scenes is at most 1000");
        }
        if self.dialogue_lines == 0 {
            return bad("dialogue_lines must be at least 1");
        }
        if !(1..=64).contains(&self.chars_per_token) {
            return bad("chars_per_token must be within 1–64");
        }
        if !self.template.system.contains("{{dialogue}}")
            && !self.template.user.contains("{{dialogue}}")
        {
            return bad("the template must place {{dialogue}}");
        }
        Ok(())
    }
}

/// A built prompt: the messages sent to the model and, for inspection, every piece with the
/// reason it is there and every piece the budget dropped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Whose prompt.
    pub speaker: EntityId,
    /// The messages.
    pub messages: Vec<ChatMessage>,
    /// The pieces kept, in prompt order.
    pub pieces: Vec<PromptPiece>,
    /// The pieces dropped to fit the budget, in the order they were dropped.
    pub trimmed: Vec<PromptPiece>,
    /// Tokens of the messages.
    pub tokens: usize,
    /// The budget.
    pub budget_tokens: usize,
    /// The speaker's lorebook timers after this prompt, when it changed them (docs/cards.md,
    /// "Timed effects"): what the turn that uses the prompt records.
    #[serde(skip)]
    pub lore_timers: Option<Vec<crate::model::LoreTimer>>,
}

impl Prompt {
    /// The prompt as one text (messages separated by a blank line), for logs and tests.
    pub fn text(&self) -> String {
        self.messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// A memory to show: pinned or recalled.
pub(crate) struct MemoryPick {
    pub id: MemoryId,
    pub text: String,
    pub why: String,
    pub score: Option<f64>,
}

/// What the caller has gathered for a prompt (the parts that need the engine).
pub(crate) struct Gathered<'a> {
    pub memories: Vec<MemoryPick>,
    pub lore: Option<&'a LoreIndex>,
    /// Active facts of the speaker (from its response decision), if known.
    pub facts: Option<Vec<String>>,
    /// Why the speaker speaks first, when it initiates (docs/drives.md).
    pub initiative: Option<String>,
}

/// The utterances `speaker` witnessed in the world's dialogue window, oldest first.
pub fn witnessed(world: &World, speaker: EntityId) -> Vec<&Utterance> {
    world
        .dialogue()
        .filter(|u| u.witnesses.contains(speaker))
        .collect()
}

/// The lines of `speaker`'s dialogue section, oldest first: those it witnessed in the world's
/// dialogue window since its current scene opened (all of them when it has no current scene),
/// without the lines of closed scenes, which its scene summaries stand for.
pub fn scene_dialogue(world: &World, speaker: EntityId) -> Vec<&Utterance> {
    let since = world.scene_of(speaker).map_or(0, |s| s.id.0);
    world
        .dialogue()
        .filter(|u| {
            u.id.0 > since
                && u.witnesses.contains(speaker)
                && u.scene
                    .and_then(|s| world.scene(s))
                    .is_none_or(|s| s.is_open())
        })
        .collect()
}

/// The last `n` lines of `speaker`'s dialogue section as its prompt shows them ("Name: text"),
/// which is also how a remembered line reads.
pub(crate) fn dialogue_lines(world: &World, speaker: EntityId, n: usize) -> ShownLines {
    let heard = scene_dialogue(world, speaker);
    ShownLines(
        heard[heard.len().saturating_sub(n)..]
            .iter()
            .map(|u| {
                let name = world
                    .entity(u.speaker)
                    .map_or("someone", |e| e.name.as_str());
                format!("{name}: {}", u.text)
            })
            .collect(),
    )
}

/// The lines a prompt's dialogue section shows, as remembered lines read (a few dozen: a look
/// at each line's length rules out almost all of them without reading a byte).
pub(crate) struct ShownLines(Vec<String>);

impl ShownLines {
    /// Whether `text` is one of them.
    pub fn contains(&self, text: &str) -> bool {
        self.0.iter().any(|l| l.len() == text.len() && l == text)
    }
}

/// The rule of a system line's piece: it is never trimmed.
pub const SYSTEM_LINE: &str = "a system line to process (injected; never trimmed)";

/// Builds the prompt of `speaker` in `world`.
pub(crate) fn build(
    world: &World,
    speaker: EntityId,
    now: Millis,
    options: &PromptOptions,
    counter: &dyn TokenCounter,
    gathered: Gathered<'_>,
) -> crate::Result<Prompt> {
    let me = world
        .entity(speaker)
        .ok_or_else(|| crate::Error::not_found("entity", speaker))?;
    let name_of = |id: EntityId| world.entity(id).map_or("someone", |e| e.name.as_str());
    // Who is there, sleepers included (shown asleep): what the speaker can see.
    let hearers = world.within_earshot(speaker);
    let present: Vec<EntityId> = hearers.iter().collect();
    let mut pieces: Vec<PromptPiece> = Vec::new();
    let plain = |section, text: String, why: &str| PromptPiece {
        section,
        tokens: counter.count(&text),
        text,
        why: why.into(),
        memory: None,
        entity: None,
        score: None,
    };

    // Identity and state.
    let aliases = if me.aliases.is_empty() {
        String::new()
    } else {
        format!(" (also called {})", me.aliases.join(", "))
    };
    pieces.push(plain(
        Section::Identity,
        format!("You are {}{aliases}.", me.name),
        "the speaker",
    ));
    let facts = gathered.facts.unwrap_or_else(|| {
        me.facts
            .lines()
            .iter()
            .filter(|l| !l.trim_start().starts_with('$') && !l.trim().is_empty())
            .cloned()
            .collect()
    });
    for f in facts {
        pieces.push(plain(
            Section::Identity,
            f,
            "an active fact of the speaker's sheet",
        ));
    }
    // A character card's own instructions and examples (docs/cards.md, "What a card
    // becomes"): its system prompt, how it speaks, and its post-history instructions.
    if let Some(card) = world
        .card_json(speaker)
        .and_then(|j| crate::model::Card::from_json(j).ok())
    {
        for (field, lead, why) in [
            ("system_prompt", "", "the speaker's card: its system prompt"),
            (
                "mes_example",
                "How you speak:\n",
                "the speaker's card: its example dialogue",
            ),
            (
                "post_history_instructions",
                "",
                "the speaker's card: its post-history instructions",
            ),
        ] {
            let text = card
                .text(field)
                .replace("{{original}}", "")
                .trim()
                .to_owned();
            if !text.is_empty() {
                pieces.push(plain(Section::Identity, format!("{lead}{text}"), why));
            }
        }
    }
    let s = &me.state;
    if let Some(m) = &s.mood {
        pieces.push(plain(
            Section::Identity,
            format!("Mood: {m}."),
            "the speaker's state",
        ));
    }
    if !s.goals.is_empty() {
        pieces.push(plain(
            Section::Identity,
            format!("Goals: {}.", s.goals.join("; ")),
            "the speaker's state",
        ));
    }
    if let Some(st) = &s.status {
        pieces.push(plain(
            Section::Identity,
            format!("Status: {st}."),
            "the speaker's state",
        ));
    }
    if let Some(mind) = world.mind(speaker) {
        if mind.personality != crate::model::Personality::default() {
            pieces.push(plain(
                Section::Identity,
                crate::drives::style_line(&mind.personality),
                "the speaker's personality (docs/drives.md)",
            ));
        }
        if !mind.noticed.is_empty() {
            let noticed: Vec<String> = mind
                .noticed
                .iter()
                .map(|n| {
                    let what = if n.payload.is_empty() {
                        &n.kind
                    } else {
                        &n.payload
                    };
                    if n.count > 1 {
                        format!("{what} (×{})", n.count)
                    } else {
                        what.clone()
                    }
                })
                .collect();
            pieces.push(plain(
                Section::Identity,
                format!("Since you last spoke you noticed: {}.", noticed.join("; ")),
                "stimuli the speaker processed since it last spoke (docs/drives.md)",
            ));
        }
        if !mind.intentions.is_empty() {
            let name = |id| world.entity(id).map_or("someone", |e| e.name.as_str());
            let meant: Vec<String> = (mind.intentions.iter())
                .map(|i| match i.to {
                    Some(to) => format!("talk with {} about {}", name(to), i.text),
                    None => i.text.clone(),
                })
                .collect();
            pieces.push(plain(
                Section::Identity,
                format!("You have in mind: {}.", meant.join("; ")),
                "what the speaker's rules left in mind (docs/rules.md)",
            ));
        }
    }
    if let Some(why) = gathered.initiative {
        pieces.push(plain(
            Section::Identity,
            why,
            "the speaker starts a conversation: why now (docs/drives.md)",
        ));
    }

    // The speaker's edges to the present.
    for &other in present.iter().filter(|&&o| o != speaker) {
        let text = match world.edge(speaker, other) {
            Some(e) => {
                let mut t = format!(
                    "{}: affinity {:+.2}, trust {:+.2}.",
                    name_of(other),
                    e.affinity,
                    e.trust
                );
                if !e.summary.is_empty() {
                    t.push(' ');
                    t.push_str(&e.summary);
                }
                if !e.knowledge.is_empty() {
                    t.push_str(&format!(" You know: {}.", e.knowledge.join("; ")));
                }
                if !e.private_moments.is_empty() {
                    t.push_str(&format!(" Between you: {}.", e.private_moments.join("; ")));
                }
                t
            }
            None => format!("{}: you have no history together.", name_of(other)),
        };
        pieces.push(PromptPiece {
            section: Section::Edges,
            tokens: counter.count(&text),
            text,
            why: format!("the speaker's edge to {}, who is present", name_of(other)),
            memory: None,
            entity: Some(other),
            score: None,
        });
        // What the speaker believes of them (its own beliefs only: docs/beliefs.md).
        if let Some(text) = world
            .belief_about(speaker, other, now)
            .and_then(|b| b.describe(world, now))
        {
            pieces.push(PromptPiece {
                section: Section::Edges,
                tokens: counter.count(&text),
                text,
                why: format!(
                    "the speaker's beliefs about {}, who is present (docs/beliefs.md)",
                    name_of(other)
                ),
                memory: None,
                entity: Some(other),
                score: None,
            });
        }
    }

    // A group node, when three or more are present: groups of the speaker all present.
    if present.len() >= crate::model::MIN_GROUP_SIZE {
        for g in world.groups() {
            if g.members.contains(&speaker) && g.members.iter().all(|m| hearers.contains(*m)) {
                let label = g.name.clone().unwrap_or_else(|| {
                    let names: Vec<&str> = g.members.iter().map(|m| name_of(*m)).collect();
                    names.join(", ")
                });
                let mut texts = Vec::new();
                if !g.summary.trim().is_empty() {
                    texts.push(format!("{label}: {}", g.summary));
                }
                if !g.shared.is_empty() {
                    texts.push(format!("{label}, shared: {}.", g.shared.join("; ")));
                }
                for t in texts {
                    pieces.push(PromptPiece {
                        section: Section::Group,
                        tokens: counter.count(&t),
                        text: t,
                        why: format!(
                            "{}: a group of the speaker whose members are all present",
                            g.id
                        ),
                        memory: None,
                        entity: None,
                        score: None,
                    });
                }
            }
        }
    }

    // World state and scene.
    let place = me
        .activity
        .position
        .as_ref()
        .and_then(|p| world.container(p.container));
    let (day, hour, minute) = clock(now);
    let mut here = format!("Day {day}, {hour:02}:{minute:02}.");
    if let Some(c) = place {
        let mut chain = vec![c];
        let mut up = c.parent;
        while let Some(p) = up.and_then(|p| world.container(p)) {
            chain.push(p);
            up = p.parent;
            if chain.len() > 32 {
                break;
            }
        }
        let names: Vec<&str> = chain.iter().map(|c| c.name.as_str()).collect();
        here.push_str(&format!(" You are in {}.", names.join(", in ")));
        // What the places are like: on the move (a carriage, a ship), open to passers-by.
        for c in &chain {
            if c.properties.moving {
                here.push_str(&format!(" {} is moving.", capitalized(&c.name)));
            }
        }
        if c.properties.public {
            here.push_str(&format!(
                " {} is public: people around it see and hear what happens there.",
                capitalized(&c.name)
            ));
        }
    }
    let mut pieces_world = vec![(
        Section::World,
        here,
        "the host clock and the speaker's place",
    )];
    if let Some(c) = place {
        for line in c.facts.lines().iter().filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('$')
        }) {
            pieces_world.push((
                Section::Scene,
                line.clone(),
                "a fact of the speaker's place",
            ));
        }
    }
    for (section, text, why) in pieces_world {
        pieces.push(plain(section, text, why));
    }

    // Activity of everyone present.
    for &id in &present {
        let Some(e) = world.entity(id) else { continue };
        let a = &e.activity;
        let mut t = e.name.clone();
        if let Some(p) = &a.position {
            let c = world
                .container(p.container)
                .map_or("somewhere", |c| c.name.as_str());
            match &p.slot {
                Some(s) => t.push_str(&format!(": in {c} ({s})")),
                None => t.push_str(&format!(": in {c}")),
            }
        }
        if let Some(p) = &a.posture {
            t.push_str(&format!(", {p}"));
        }
        if let Some(x) = &a.action {
            t.push_str(&format!(", {}", x.verb));
        }
        if !a.holding.is_empty() {
            let held: Vec<&str> = a.holding.iter().map(|h| name_of(*h)).collect();
            t.push_str(&format!(", holding {}", held.join(" and ")));
        }
        if let Some(s) = &a.status {
            t.push_str(&format!(" ({s})"));
        }
        if world.mind(id).is_some_and(|m| m.asleep) {
            t.push_str(", asleep");
        }
        t.push('.');
        pieces.push(PromptPiece {
            section: Section::Activity,
            tokens: counter.count(&t),
            text: t,
            why: if id == speaker {
                "the speaker's activity".into()
            } else {
                "present: within earshot of the speaker".into()
            },
            memory: None,
            entity: Some(id),
            score: None,
        });
    }

    // Pending requirements of those present (docs/requirements.md): first, never trimmed.
    for r in world.pending_requirements_for(speaker) {
        let text = crate::log::announcement_text(r);
        pieces.push(plain(Section::Threads, text, crate::log::DECISION_REQUIRED));
    }

    // Open threads the speaker is part of.
    for th in world.threads() {
        if th.status == ThreadStatus::Open
            && (th.participants.is_empty() || th.participants.contains(&speaker))
        {
            let t = th.text.clone();
            pieces.push(PromptPiece {
                section: Section::Threads,
                tokens: counter.count(&t),
                text: t,
                why: "an open thread of the speaker".into(),
                memory: None,
                entity: None,
                score: None,
            });
        }
    }

    // Dialogue it witnessed in its current scene.
    let heard = scene_dialogue(world, speaker);
    let from = heard.len().saturating_sub(options.dialogue_lines);
    for u in &heard[from..] {
        let t = format!("{}: {}", name_of(u.speaker), u.text);
        pieces.push(PromptPiece {
            section: Section::Dialogue,
            tokens: counter.count(&t),
            text: t,
            why: "a line the speaker witnessed in its current scene".into(),
            memory: None,
            entity: Some(u.speaker),
            score: None,
        });
    }

    // System lines to process, after the newest line; never trimmed.
    for line in world.system_lines().filter(|l| l.reaches(speaker)) {
        let t = format!("[SYSTEM: {}]", line.text);
        pieces.push(PromptPiece {
            section: Section::Dialogue,
            tokens: counter.count(&t),
            text: t,
            why: SYSTEM_LINE.into(),
            memory: None,
            entity: None,
            score: None,
        });
    }

    // Memories: pinned and recalled, all the speaker's own.
    for m in gathered.memories {
        pieces.push(PromptPiece {
            section: Section::Memories,
            tokens: counter.count(&m.text),
            text: m.text,
            why: m.why,
            memory: Some(m.id),
            entity: None,
            score: m.score,
        });
    }

    // Lore: entities mentioned in what it recently witnessed, not present.
    if let Some(lore) = gathered.lore {
        let window_from = heard.len().saturating_sub(options.lore_lines);
        let window: String = heard[window_from..]
            .iter()
            .map(|u| u.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let mut spent = 0;
        for hit in lore.scan(&window) {
            let entry = &lore.entries()[hit.entry];
            if hearers.contains(entry.entity) || entry.summary.is_empty() {
                continue;
            }
            let t = format!("{}: {}", entry.name, entry.summary);
            let tokens = counter.count(&t);
            if spent + tokens > options.lore_budget_tokens {
                continue;
            }
            spent += tokens;
            pieces.push(PromptPiece {
                section: Section::Lore,
                tokens,
                text: t,
                why: format!("\"{}\" was mentioned in what the speaker heard", hit.key),
                memory: None,
                entity: Some(entry.entity),
                score: None,
            });
        }
    }

    // Lorebooks (docs/cards.md): the world's and the speaker's own, activated by what it heard
    // with SillyTavern's rules; highest insertion order first while the budget lasts.
    let books = world.lorebooks_of(speaker);
    let mut lore_timers = None;
    if !books.is_empty() {
        let said: Vec<&str> = heard.iter().map(|u| u.text.as_str()).collect();
        let chat_len = u32::try_from(said.len()).unwrap_or(u32::MAX);
        let held = world.lore_timers(speaker);
        let (timed, kept) = crate::lore::timers::check(held, &books, chat_len);
        // Probabilities and groups draw from the world's seed and position: the same world
        // builds the same prompt.
        let seed = world.meta().map_or(0, |m| m.settings.seed) ^ world.seq().rotate_left(29);
        let how = crate::lore::book::Scan {
            seed: Some(seed),
            timed: Some(&timed),
        };
        let mut hits = crate::lore::book::scan(&books, &said, how);
        let entry = |h: &crate::lore::book::BookHit| {
            let (_, book) = books
                .iter()
                .find(|(id, _)| *id == h.book)
                .expect("a hit's book");
            (&book.entries[h.entry], *book)
        };
        hits.sort_by_key(|h| std::cmp::Reverse(entry(h).0.order));
        let mut spent: std::collections::BTreeMap<u64, usize> = Default::default();
        let mut used = Vec::new();
        let mut at_depth: Vec<(usize, i64, PromptPiece)> = Vec::new();
        for h in &hits {
            let (e, book) = entry(h);
            let text = e.content.trim().to_owned();
            if text.is_empty() {
                continue;
            }
            let tokens = counter.count(&text);
            let budget = book
                .token_budget
                .map_or(options.lore_budget_tokens, |b| b as usize);
            let spent = spent.entry(h.book).or_default();
            if *spent + tokens > budget {
                continue;
            }
            *spent += tokens;
            used.push(h);
            let why = match &h.key {
                None if h.sticky => format!(
                    "sticky: active since it activated (lorebook {:?})",
                    book.name
                ),
                None => format!("a constant entry of lorebook {:?}", book.name),
                Some(k) if h.recursion => {
                    format!("\"{k}\" in lore already active (lorebook {:?})", book.name)
                }
                Some(k) => format!(
                    "\"{k}\" in what the speaker heard (lorebook {:?})",
                    book.name
                ),
            };
            // Before or after the character's description: with who the speaker is; at a
            // depth: among the lines of the dialogue; every other position in the lore
            // section (docs/cards.md, "Lorebooks").
            let (section, text) = match e.position {
                0 | 1 => (Section::Identity, text),
                4 => (Section::Dialogue, format!("[{text}]")),
                _ => (Section::Lore, text),
            };
            let piece = PromptPiece {
                section,
                tokens: counter.count(&text),
                text,
                why,
                memory: None,
                entity: None,
                score: None,
            };
            if e.position == 4 {
                at_depth.push((
                    usize::try_from(e.depth.max(0)).unwrap_or(usize::MAX),
                    e.order,
                    piece,
                ));
            } else {
                pieces.push(piece);
            }
        }
        place_at_depth(&mut pieces, at_depth);
        let timers = crate::lore::timers::after_scan(kept, &used, &books, chat_len);
        if timers != held {
            lore_timers = Some(timers);
        }
    }

    // Active scoped events the speaker takes part in, with their props. Planned and closed
    // events show nowhere: props live and die with their event (docs/story.md).
    for ev in world.scoped_events() {
        if ev.status == EventStatus::Active && ev.participants.contains(&speaker) {
            let mut t = ev.name.clone();
            if !ev.props.is_empty() {
                let props: Vec<String> =
                    ev.props.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                t.push_str(&format!(" ({})", props.join("; ")));
            }
            pieces.push(PromptPiece {
                section: Section::Events,
                tokens: counter.count(&t),
                text: t,
                why: "an active event the speaker takes part in".into(),
                memory: None,
                entity: None,
                score: None,
            });
        }
    }

    // The macros of cards and lorebooks (docs/cards.md, "Macros"), in everything but what was
    // said and remembered.
    let user = present
        .iter()
        .filter(|id| **id != speaker)
        .filter_map(|id| world.entity(*id))
        .find(|e| e.host_controlled)
        .map_or("you", |e| e.name.as_str());
    let macros = macros::Macros {
        char: &me.name,
        user,
        seed: world.meta().map_or(0, |m| m.settings.seed),
        turn: world.seq(),
    };
    for (i, p) in pieces.iter_mut().enumerate() {
        if p.section == Section::Memories || is_line(p) || p.why == SYSTEM_LINE {
            continue;
        }
        let text = macros.expand(&p.text, i as u64);
        if text != p.text {
            p.tokens = counter.count(&text);
            p.text = text;
        }
    }

    let mut prompt = fit(me.name.as_str(), speaker, pieces, options, counter)?;
    prompt.lore_timers = lore_timers;
    Ok(prompt)
}

/// Places lorebook entries written for a depth among the dialogue's lines (SillyTavern's
/// position 4): depth 0 after the newest line, depth n before the n-th newest, a depth past
/// the oldest line before it; entries at one depth by insertion order, lowest first.
fn place_at_depth(pieces: &mut Vec<PromptPiece>, mut at_depth: Vec<(usize, i64, PromptPiece)>) {
    if at_depth.is_empty() {
        return;
    }
    let lines: Vec<usize> = (0..pieces.len()).filter(|&i| is_line(&pieces[i])).collect();
    let place = |depth: usize| match (lines.first(), lines.last()) {
        (None, _) | (_, None) => pieces.len(),
        (Some(_), Some(newest)) if depth == 0 => newest + 1,
        (Some(oldest), _) if depth >= lines.len() => *oldest,
        _ => lines[lines.len() - depth],
    };
    let mut placed: Vec<(usize, i64, PromptPiece)> = at_depth
        .drain(..)
        .map(|(depth, order, piece)| (place(depth), order, piece))
        .collect();
    // From the last place back, so earlier places keep their index; at one place, lowest
    // order first.
    placed.sort_by_key(|(at, order, _)| (std::cmp::Reverse(*at), std::cmp::Reverse(*order)));
    for (at, _, piece) in placed {
        pieces.insert(at, piece);
    }
}

/// Whether `p` is a line the speaker heard (not a system line, not lore placed at a depth).
pub(crate) fn is_line(p: &PromptPiece) -> bool {
    p.section == Section::Dialogue && p.entity.is_some()
}

/// `text` with its first letter in upper case ("the carriage" → "The carriage").
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Day (from 1), hour and minute of a host clock reading.
fn clock(now: Millis) -> (i64, i64, i64) {
    let day = now.div_euclid(86_400_000) + 1;
    let in_day = now.rem_euclid(86_400_000);
    (day, in_day / 3_600_000, in_day % 3_600_000 / 60_000)
}

/// A memory's line for the prompt.
pub(crate) fn memory_line(text: &str) -> String {
    cut(text, 600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars_per_token_rounds_up() {
        let c = CharsPerToken::default();
        assert_eq!(c.count(""), 0);
        assert_eq!(c.count("abcde"), 2);
        assert_eq!(c.count("éééé"), 1);
    }

    #[test]
    fn templates_drop_empty_sections_and_blank_runs() {
        let piece = |section, text: &str| PromptPiece {
            section,
            text: text.into(),
            why: String::new(),
            memory: None,
            entity: None,
            score: None,
            tokens: 1,
        };
        let m = render(
            "Mira",
            &[
                &piece(Section::Identity, "You are Mira."),
                &piece(Section::Dialogue, "Wren: hi"),
            ],
            &PromptTemplate::default(),
        );
        assert_eq!(m.len(), 2);
        assert!(
            m[0].content
                .contains("# You\nYou are Mira.\n\n# What you heard")
        );
        assert!(!m[0].content.contains("{{"));
        assert!(!m[0].content.contains("\n\n\n"));
        assert_eq!(m[1].content, "What does Mira say?");
    }

    #[test]
    fn the_clock_reads_days_hours_minutes() {
        assert_eq!(clock(0), (1, 0, 0));
        assert_eq!(clock(86_400_000 + 3_600_000 * 13 + 60_000 * 5), (2, 13, 5));
    }
}
