//! [`SceneClose`]: the sans-IO machine that closes a scene with one summary per witness.
//!
//! ```
//! use rp_core::{Engine, EntityId, Event, scene::SceneOptions, turn::{GenerateResult, Step}};
//! # let mut engine = Engine::in_memory("Demo", 0)?;
//! # let room = rp_core::ContainerId(engine.world().next_id());
//! # engine.append(vec![Event::ContainerCreated { id: room, key: None, name: "Room".into(),
//! #     facts: Default::default(), parent: None, slots: vec![], properties: Default::default() }])?;
//! let scene = engine.open_scene(room, 0)?;
//! # let mira = EntityId(engine.world().next_id());
//! # engine.append(vec![Event::EntityCreated { id: mira, key: None, name: "Mira".into(),
//! #     aliases: vec![], facts: Default::default(), host_controlled: false, state: Default::default() }])?;
//! # engine.append(vec![Event::AssistantTurn { utterance: rp_core::Utterance { id: rp_core::UtteranceId(engine.world().next_id()),
//! #     speaker: mira, text: "Quiet tonight.".into(), at: 0, witnesses: [mira].into_iter().collect(), model: None, scene: Some(scene) } }])?;
//! let mut close = engine.begin_scene_close(scene, 1_000, &SceneOptions::default())?;
//! while let Step::Generate(request) = close.step(&mut engine)? {
//!     // one request per witness, each from its own point of view
//!     close.provide(&mut engine, GenerateResult::text("I kept the bar; nobody came."))?;
//! }
//! let outcome = close.finish(&mut engine)?; // SceneClosed and the summaries, in one commit
//! assert_eq!(outcome.summaries.len(), 1);
//! # Ok::<(), rp_core::Error>(())
//! ```

use super::SceneOptions;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::{Event, World};
use crate::machine::{ChatMessage, GenerateRequest, GenerateResult, Purpose, Role, Step};
use crate::model::{
    EntityId, Group, GroupId, MIN_GROUP_SIZE, Memory, MemoryId, MemoryKind, Millis, SceneId, Seq,
};
use serde::{Deserialize, Serialize};

/// A scene being closed. It borrows nothing: every call takes the engine, which must not change
/// meanwhile (a commit in between makes the machine refuse; begin again).
///
/// [`SceneClose::step`] asks for one [`Purpose::Summary`] generation per witness, in id order;
/// [`SceneClose::provide`] feeds each (an empty text is refused and changes nothing);
/// [`SceneClose::finish`] commits everything in one transaction. Dropping it commits nothing.
#[derive(Clone, Debug)]
pub struct SceneClose {
    scene: SceneId,
    at: Millis,
    options: SceneOptions,
    /// (witness, its request), in witness id order.
    requests: Vec<(EntityId, GenerateRequest)>,
    /// The results provided so far, in the same order.
    results: Vec<GenerateResult>,
    /// The head and epoch of the engine when it began (standalone use only).
    base: Option<(Seq, u64)>,
    /// Why the host could not answer, once it said so ([`SceneClose::fail`]).
    failed: Option<String>,
}

/// What closing a scene committed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SceneCloseOutcome {
    /// The head after the commit.
    pub seq: Seq,
    /// The scene.
    pub scene: SceneId,
    /// Each witness and the id of its summary memory, in witness id order.
    pub summaries: Vec<(EntityId, MemoryId)>,
    /// The group node created for the witnesses, if one was.
    pub group: Option<GroupId>,
}

impl SceneClose {
    /// Starts closing `scene` of `engine` at `at` (see [`Engine::begin_scene_close`]).
    pub(super) fn begin(
        engine: &Engine,
        scene: SceneId,
        at: Millis,
        options: &SceneOptions,
    ) -> Result<SceneClose> {
        let mut close = SceneClose::plan(engine.world(), scene, at, options)?;
        close.base = Some((engine.head(), engine.epoch()));
        Ok(close)
    }

    /// Plans closing `scene` of `world` at `at`: the summary request of each witness. Refused
    /// for an unknown or closed scene, or `at` before it opened.
    pub(crate) fn plan(
        world: &World,
        scene: SceneId,
        at: Millis,
        options: &SceneOptions,
    ) -> Result<SceneClose> {
        let s = world
            .scene(scene)
            .ok_or_else(|| Error::not_found("scene", scene))?;
        if let Some(closed) = s.closed {
            return Err(Error::conflict(format!(
                "{scene} is already closed (at {closed})"
            )));
        }
        if at < s.opened {
            return Err(Error::invalid(
                "scene",
                format!(
                    "{scene} cannot close at {at}, before it opened ({})",
                    s.opened
                ),
            ));
        }
        let requests = if s.lines == 0 {
            Vec::new()
        } else {
            s.witnesses
                .iter()
                .filter(|w| world.entity(*w).is_some())
                .map(|w| (w, summary_request(world, scene, w, options)))
                .collect()
        };
        Ok(SceneClose {
            scene,
            at,
            options: options.clone(),
            requests,
            results: Vec::new(),
            base: None,
            failed: None,
        })
    }

    /// The scene being closed.
    pub fn scene(&self) -> SceneId {
        self.scene
    }

    /// The witnesses that get a summary, in id order (none if nothing was said in the scene).
    pub fn witnesses(&self) -> Vec<EntityId> {
        self.requests.iter().map(|(w, _)| *w).collect()
    }

    /// Whether every summary has been provided.
    pub fn is_done(&self) -> bool {
        self.results.len() == self.requests.len()
    }

    /// What closing needs next: the next witness's summary, or [`Step::Done`]. Calling it
    /// again without providing returns the same request.
    pub fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        self.check_engine(engine)?;
        if self.failed.is_some() {
            return Ok(Step::Done);
        }
        Ok(self
            .next_request()
            .map_or(Step::Done, |r| Step::Generate(r.clone())))
    }

    /// Feeds the summary asked for by the last [`SceneClose::step`]. Its text (trimmed) is the
    /// witness's memory of the scene; an empty or oversized text is refused and changes
    /// nothing (provide again).
    pub fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        self.check_engine(engine)?;
        if self.failed.is_some() {
            return Err(Error::conflict(
                "the scene close failed; it asks for nothing more",
            ));
        }
        self.accept(result)
    }

    /// The host could not produce the summary asked for (its model failed): the close ends.
    /// [`SceneClose::step`] returns [`Step::Done`] from now on, and [`SceneClose::finish`]
    /// commits nothing and returns an [`crate::ErrorKind::Generation`] error naming `reason`;
    /// the scene stays open. Refused when nothing is asked for.
    pub fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        self.check_engine(engine)?;
        if self.failed.is_some() || self.next_request().is_none() {
            return Err(Error::conflict(
                "the scene close asks for nothing to fail; finish it",
            ));
        }
        self.failed = Some(reason.to_owned());
        Ok(())
    }

    /// Commits the close: the generations, [`Event::SceneClosed`], one summary memory per
    /// witness (and a group node, see [`SceneOptions::group_nodes`]), in one transaction.
    /// Refused while a summary is still needed.
    pub fn finish(self, engine: &mut Engine) -> Result<SceneCloseOutcome> {
        self.check_engine(engine)?;
        if let Some(reason) = self.failed {
            return Err(Error::Generation { message: reason });
        }
        let mut scratch = engine.world().clone();
        let mut events = Vec::new();
        if self.at > scratch.now() {
            let tick = Event::TimeAdvanced { to: self.at };
            scratch.apply(&tick)?;
            events.push(tick);
        }
        let (closing, summaries, group) = self.events(&mut scratch)?;
        events.extend(closing);
        let epoch = engine.epoch();
        let (seq, ()) = engine.append_applied(events, Some((scratch, epoch)), |_| ())?;
        Ok(SceneCloseOutcome {
            seq,
            scene: self.scene,
            summaries,
            group,
        })
    }

    /// The request waiting for an answer, if any.
    pub(crate) fn next_request(&self) -> Option<&GenerateRequest> {
        self.requests.get(self.results.len()).map(|(_, r)| r)
    }

    /// Takes the answer to [`SceneClose::next_request`].
    pub(crate) fn accept(&mut self, mut result: GenerateResult) -> Result<()> {
        let Some((witness, _)) = self.requests.get(self.results.len()) else {
            return Err(Error::conflict(
                "the scene close is not waiting for a summary",
            ));
        };
        let text = result.text.trim();
        if text.is_empty() {
            return Err(Error::invalid(
                "scene summary",
                format!("the summary of {witness} is empty"),
            ));
        }
        if text.len() > crate::log::MAX_TEXT_BYTES {
            return Err(Error::invalid(
                "scene summary",
                format!("longer than {} bytes", crate::log::MAX_TEXT_BYTES),
            ));
        }
        result.text = text.to_owned();
        self.results.push(result);
        Ok(())
    }

    /// The events of the close, applied to `scratch` as they are made: each generation, the
    /// close, each summary, the group node. Returns them with the summaries and the group.
    /// Refused (with `scratch` possibly part-changed: pass a copy) while a summary is still
    /// needed or when an event does not apply.
    #[allow(clippy::type_complexity)]
    pub(crate) fn events(
        &self,
        scratch: &mut World,
    ) -> Result<(Vec<Event>, Vec<(EntityId, MemoryId)>, Option<GroupId>)> {
        if !self.is_done() {
            return Err(Error::conflict(
                "the scene close still needs summaries; provide them before finishing",
            ));
        }
        let mut events = Vec::new();
        let mut push = |scratch: &mut World, e: Event| -> Result<()> {
            scratch.apply(&e)?;
            events.push(e);
            Ok(())
        };
        for result in &self.results {
            push(
                scratch,
                Event::Generated {
                    purpose: Purpose::Summary,
                    result: result.clone(),
                },
            )?;
        }
        let witnesses = scratch
            .scene(self.scene)
            .ok_or_else(|| Error::not_found("scene", self.scene))?
            .witnesses
            .clone();
        push(
            scratch,
            Event::SceneClosed {
                id: self.scene,
                at: self.at,
            },
        )?;
        let mut summaries = Vec::new();
        for ((owner, _), result) in self.requests.iter().zip(&self.results) {
            let id = MemoryId(scratch.next_id());
            push(
                scratch,
                Event::MemoryAdded {
                    memory: Memory::new(
                        id,
                        *owner,
                        witnesses.clone(),
                        result.text.clone(),
                        MemoryKind::SceneSummary,
                        self.options.significance,
                        self.at,
                    ),
                },
            )?;
            summaries.push((*owner, id));
        }
        let mut group = None;
        let members: std::collections::BTreeSet<EntityId> = summaries.iter().map(|s| s.0).collect();
        if self.options.group_nodes
            && members.len() >= MIN_GROUP_SIZE
            && !scratch.groups().any(|g| g.members == members)
        {
            let id = GroupId(scratch.next_id());
            push(
                scratch,
                Event::GroupUpdated {
                    group: Group {
                        id,
                        members,
                        name: None,
                        summary: String::new(),
                        shared: Vec::new(),
                    },
                },
            )?;
            group = Some(id);
        }
        Ok((events, summaries, group))
    }

    fn check_engine(&self, engine: &Engine) -> Result<()> {
        if let Some((head, epoch)) = self.base
            && (engine.head() != head || engine.epoch() != epoch)
        {
            return Err(Error::conflict(
                "the world changed since the scene close began; begin it again",
            ));
        }
        Ok(())
    }
}

/// The summary request of `witness` for `scene`: only what the witness knows (its identity,
/// its edges to the other witnesses, the lines of the scene it heard).
fn summary_request(
    world: &World,
    scene: SceneId,
    witness: EntityId,
    options: &SceneOptions,
) -> GenerateRequest {
    let name_of = |id: EntityId| world.entity(id).map_or("someone", |e| e.name.as_str());
    let name = name_of(witness);
    let mut system = format!("You are {name}.");
    if let Some(me) = world.entity(witness) {
        for line in me.facts.lines().iter().filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('$')
        }) {
            system.push('\n');
            system.push_str(line);
        }
        if let Some(mood) = &me.state.mood {
            system.push_str(&format!("\nMood: {mood}."));
        }
    }
    let s = world.scene(scene);
    let place = s
        .and_then(|s| world.container(s.container))
        .map_or("somewhere", |c| c.name.as_str());
    system.push_str(&format!(
        "\n\nA scene has just ended in {place}. Write {name}'s own memory of it, in the first \
         person and from {name}'s point of view: what {name} saw, heard, did and felt, and what \
         it meant to {name}. Only what {name} witnessed: nothing of what others thought or did \
         out of {name}'s sight. One short paragraph, no heading."
    ));
    let others: Vec<EntityId> = s
        .map(|s| s.witnesses.iter().filter(|w| *w != witness).collect())
        .unwrap_or_default();
    if !others.is_empty() {
        system.push_str("\n\n# Who was there");
        for o in &others {
            match world.edge(witness, *o) {
                Some(e) if !e.summary.is_empty() => {
                    system.push_str(&format!("\n{}: {}", name_of(*o), e.summary))
                }
                _ => system.push_str(&format!("\n{}", name_of(*o))),
            }
        }
    }
    let heard: Vec<String> = world
        .dialogue()
        .filter(|u| u.scene == Some(scene) && u.witnesses.contains(witness))
        .map(|u| format!("{}: {}", name_of(u.speaker), u.text))
        .collect();
    let from = heard.len().saturating_sub(options.summary_lines);
    system.push_str("\n\n# What you heard (most recent last)");
    if heard.is_empty() {
        system.push_str("\n(nothing you heard is still in mind word for word)");
    }
    for line in &heard[from..] {
        system.push('\n');
        system.push_str(line);
    }
    GenerateRequest {
        purpose: Purpose::Summary,
        messages: vec![
            ChatMessage::new(Role::System, system),
            ChatMessage::new(Role::User, format!("Write {name}'s memory of the scene.")),
        ],
        params: options.sampling.clone(),
        json_schema: None,
        tools: Vec::new(),
    }
}

impl crate::machine::Machine for SceneClose {
    type Outcome = SceneCloseOutcome;

    fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        SceneClose::step(self, engine)
    }

    fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        SceneClose::provide(self, engine, result)
    }

    fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        SceneClose::fail(self, engine, reason)
    }

    fn finish(self, engine: &mut Engine) -> Result<SceneCloseOutcome> {
        SceneClose::finish(self, engine)
    }
}
