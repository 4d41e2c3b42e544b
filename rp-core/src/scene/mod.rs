//! Scenes (docs/architecture.md): a stretch of story in one container, the compression boundary
//! of the dialogue.
//!
//! **Opening.** A turn opens a scene in the speaker's container when that container has no
//! current scene (or its current scene is closing in that same turn); the host can open one
//! with [`crate::Engine::open_scene`]. Its witnesses start as the entities present, and every
//! line said in it ([`crate::Utterance::scene`]) adds the line's hearers.
//!
//! **Closing.** A scene is due to close ([`due`]) when
//! 1. a newer scene opened in its container (an older one left open, e.g. by a turn that never
//!    finished: it waits for its summaries),
//! 2. one of its witnesses is no longer in its container ([`SceneOptions::close_on_departure`]),
//! 3. at least [`SceneOptions::max_gap_ms`] passed since its newest line (or its opening, if it
//!    has none).
//!
//! A turn closes, before its replies, every due scene of the speaker's container and every due
//! scene witnessed by someone who hears the input ([`crate::turn::TurnOptions::scenes`]); the
//! host closes any open scene with [`crate::Engine::begin_scene_close`] or the current scene of
//! a container with [`crate::Engine::begin_close_current_scene`], and asks which are due with
//! [`crate::Engine::due_scenes`].
//!
//! **Summaries.** Closing runs through the sans-IO loop of [`SceneClose`]: one
//! [`crate::turn::Purpose::Summary`] request per witness, whose prompt carries only that
//! witness's view (its identity, its edges, the lines of the scene it heard), so each summary
//! is written from its own point of view. [`SceneClose::finish`] commits, in one transaction,
//! the generations, [`crate::Event::SceneClosed`], and one
//! [`crate::MemoryKind::SceneSummary`] memory per witness, owned by that witness and never by
//! anyone else; with three or more witnesses, a group node of exactly them if there is none
//! yet. Replay reads the recorded summaries and never generates. A scene with no lines closes
//! with no summaries: nothing happened in it.
//!
//! Later prompts load a speaker's most recent summaries
//! ([`crate::turn::PromptOptions::recent_scenes`]) instead of the lines they summarise: the
//! dialogue section shows only what the speaker heard since its current scene opened, and
//! never a line of a closed scene.

mod close;

pub use close::{SceneClose, SceneCloseOutcome};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::{Event, World};
use crate::machine::Sampling;
use crate::model::{ContainerId, EntityId, Millis, Scene, SceneId, WitnessSet};
use serde::{Deserialize, Serialize};

/// When scenes close and how their summaries are asked for. Reads from JSON with these field
/// names, every one optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SceneOptions {
    /// Whether turns open and close scenes at all (false: a turn's lines join no scene).
    pub enabled: bool,
    /// A scene whose newest line (or, with none, its opening) is at least this old, in ms on
    /// the host clock, is due to close. 0: never by time.
    pub max_gap_ms: u64,
    /// A scene one of whose witnesses has left its container is due to close.
    pub close_on_departure: bool,
    /// Sampling parameters of summary requests.
    pub sampling: Sampling,
    /// The most lines of the scene a summary prompt carries (its newest), at least 1. Lines
    /// older than the world's dialogue window are not in the world any more; the witness's
    /// own memories of them are.
    pub summary_lines: usize,
    /// Significance of the summary memories, 0–1.
    pub significance: f64,
    /// With three or more witnesses, create a group node of exactly them if none exists.
    pub group_nodes: bool,
}

impl Default for SceneOptions {
    fn default() -> Self {
        SceneOptions {
            enabled: true,
            max_gap_ms: 3_600_000,
            close_on_departure: true,
            sampling: Sampling::default(),
            summary_lines: 64,
            significance: 0.6,
            group_nodes: true,
        }
    }
}

impl SceneOptions {
    /// Reads options from a JSON object (every field optional, unknown fields refused).
    pub fn from_json(json: &str) -> Result<SceneOptions> {
        crate::json::json_object("scene options", json)
    }

    /// Checks ranges: a clear error instead of a surprising close.
    pub fn check(&self) -> Result<()> {
        if self.summary_lines == 0 {
            return Err(Error::invalid(
                "scene options",
                "summary_lines must be at least 1",
            ));
        }
        if !(0.0..=1.0).contains(&self.significance) {
            return Err(Error::invalid(
                "scene options",
                "significance must be within 0–1",
            ));
        }
        if i64::try_from(self.max_gap_ms).is_err() {
            return Err(Error::invalid("scene options", "max_gap_ms is too large"));
        }
        Ok(())
    }
}

/// Why a scene is due to close.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum CloseReason {
    /// A newer scene opened in its container.
    Superseded {
        /// The newer scene.
        by: SceneId,
    },
    /// A witness is no longer in its container.
    Departure {
        /// Who left.
        entity: EntityId,
    },
    /// Its newest line (or its opening) is at least `max_gap_ms` old.
    Gap {
        /// When its newest line was said (or it opened).
        since: Millis,
    },
}

/// Whether `scene` is due to close at `now` under `options`, and why (the first reason in the
/// order of the module's docs). A closed scene is never due.
pub fn due(
    world: &World,
    scene: &Scene,
    now: Millis,
    options: &SceneOptions,
) -> Option<CloseReason> {
    if !scene.is_open() {
        return None;
    }
    if let Some(newer) = world.current_scene(scene.container)
        && newer.id != scene.id
    {
        return Some(CloseReason::Superseded { by: newer.id });
    }
    if options.close_on_departure
        && let Some(entity) = scene.witnesses.iter().find(|w| {
            world
                .entity(*w)
                .and_then(|e| e.activity.position.as_ref())
                .is_none_or(|p| p.container != scene.container)
        })
    {
        return Some(CloseReason::Departure { entity });
    }
    let since = scene.last_line.unwrap_or(scene.opened);
    let gap = i64::try_from(options.max_gap_ms).unwrap_or(i64::MAX);
    (gap > 0 && now.saturating_sub(since) >= gap).then_some(CloseReason::Gap { since })
}

/// The scene `world` would open in `container` now: a fresh id, the entities present as its
/// first witnesses.
pub(crate) fn new_scene(world: &World, id: SceneId, container: ContainerId, now: Millis) -> Scene {
    Scene {
        id,
        container,
        opened: now,
        closed: None,
        witnesses: world.entities_in(container).map(|e| e.id).collect(),
        lines: 0,
        last_line: None,
    }
}

/// The scene a line `speaker` says at `now` joins: the current scene of its container, unless
/// that one is `closing`, in which case a new scene (returned, to be opened first) takes the
/// next id of `world`. `(None, None)` when the speaker stands nowhere.
pub(crate) fn scene_for_line(
    world: &World,
    speaker: EntityId,
    now: Millis,
    closing: &[SceneId],
) -> (Option<Scene>, Option<SceneId>) {
    let Some(here) = world
        .entity(speaker)
        .and_then(|e| e.activity.position.as_ref())
        .map(|p| p.container)
    else {
        return (None, None);
    };
    match world.current_scene(here) {
        Some(s) if !closing.contains(&s.id) => (None, Some(s.id)),
        _ => {
            let id = SceneId(world.next_id());
            (Some(new_scene(world, id, here, now)), Some(id))
        }
    }
}

/// The open scenes a turn by `speaker` at `now` closes: the due scenes of its container and
/// the due scenes witnessed by anyone in `hearers`, oldest first.
pub(crate) fn due_for_turn(
    world: &World,
    speaker: EntityId,
    hearers: &WitnessSet,
    now: Millis,
    options: &SceneOptions,
) -> Vec<SceneId> {
    let here = world
        .entity(speaker)
        .and_then(|e| e.activity.position.as_ref())
        .map(|p| p.container);
    let mut out: Vec<SceneId> = world
        .open_scenes()
        .filter(|s| Some(s.container) == here || s.witnesses.iter().any(|w| hearers.contains(w)))
        .filter(|s| due(world, s, now, options).is_some())
        .map(|s| s.id)
        .collect();
    out.sort();
    out
}

impl Engine {
    /// Opens a scene in `container` at `now` (the clock advances to it): one
    /// [`Event::SceneOpened`] whose witnesses are the entities there. Refused if the container
    /// already has an open scene (close it first) or `now` is before the world's clock.
    pub fn open_scene(&mut self, container: ContainerId, now: Millis) -> Result<SceneId> {
        let world = self.world();
        if world.container(container).is_none() {
            return Err(Error::not_found("container", container));
        }
        if let Some(open) = world.current_scene(container) {
            return Err(Error::conflict(format!(
                "{container} already has an open scene ({}); close it first",
                open.id
            )));
        }
        check_now(world, now)?;
        let mut events = Vec::new();
        if now > world.now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        let id = SceneId(world.next_id());
        events.push(Event::SceneOpened {
            scene: new_scene(world, id, container, now),
        });
        self.append(events)?;
        Ok(id)
    }

    /// The open scenes due to close at `now` under `options`, oldest first, with why.
    pub fn due_scenes(&self, now: Millis, options: &SceneOptions) -> Vec<(SceneId, CloseReason)> {
        let world = self.world();
        world
            .open_scenes()
            .filter_map(|s| due(world, s, now, options).map(|r| (s.id, r)))
            .collect()
    }

    /// Starts closing `scene` at `now` (whether or not it is due): see [`SceneClose`]. Refused
    /// for an unknown or closed scene, `now` before the world's clock or the scene's opening,
    /// or bad options; nothing changes until [`SceneClose::finish`].
    pub fn begin_scene_close(
        &mut self,
        scene: SceneId,
        now: Millis,
        options: &SceneOptions,
    ) -> Result<SceneClose> {
        options.check()?;
        check_now(self.world(), now)?;
        SceneClose::begin(self, scene, now, options)
    }

    /// Starts closing the current scene of `container`: see [`Engine::begin_scene_close`].
    /// Refused if the container has no open scene.
    pub fn begin_close_current_scene(
        &mut self,
        container: ContainerId,
        now: Millis,
        options: &SceneOptions,
    ) -> Result<SceneClose> {
        let world = self.world();
        if world.container(container).is_none() {
            return Err(Error::not_found("container", container));
        }
        let scene = world
            .current_scene(container)
            .ok_or_else(|| Error::not_found("open scene", container))?
            .id;
        self.begin_scene_close(scene, now, options)
    }

    /// Closes `scene` at `now` through `generator` (every summary asked for in turn), and
    /// commits: see [`SceneClose`].
    pub async fn close_scene(
        &mut self,
        scene: SceneId,
        now: Millis,
        options: &SceneOptions,
        generator: &dyn crate::machine::Generate,
    ) -> Result<SceneCloseOutcome> {
        let close = self.begin_scene_close(scene, now, options)?;
        crate::machine::run(self, close, generator, &mut crate::machine::NoSink).await
    }
}

fn check_now(world: &World, now: Millis) -> Result<()> {
    if now < world.now() {
        return Err(Error::invalid(
            "scene",
            format!("now ({now}) is before the world's clock ({})", world.now()),
        ));
    }
    Ok(())
}
