//! `--card FILE`: a SillyTavern character card (JSON or PNG) brought into the tavern's booth,
//! greeting the player with its first message (docs/cards.md).

use rp_core::{Activity, Engine, EntityId, Event, Position, Utterance, UtteranceId, WitnessSet};
use std::path::Path;

/// Imports the card at `path` into `engine`, stands its character in the booth and has it say
/// its first message (its macros expanded: `{{user}}` is the player), heard by whoever is in
/// earshot.
/// Returns the character and its greeting (empty when the card has none).
pub fn bring_card(
    engine: &mut Engine,
    path: &Path,
    player: EntityId,
) -> Result<(EntityId, String), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let now = engine.world().now();
    let imported = engine.import_card(&bytes, now)?;
    let booth = engine
        .world()
        .container_by_key("booth")
        .map(|c| c.id)
        .ok_or("the tavern has no booth")?;
    engine.append(vec![Event::ActivityChanged {
        entity: imported.entity,
        activity: Activity {
            position: Some(Position {
                container: booth,
                slot: None,
            }),
            ..Activity::default()
        },
    }])?;
    let greeting = engine
        .expand_macros(&imported.greetings.first, imported.entity, player)?
        .trim()
        .to_owned();
    if !greeting.is_empty() {
        let mut witnesses: Vec<EntityId> = engine.world().hearers(imported.entity).iter().collect();
        witnesses.push(imported.entity);
        engine.append(vec![Event::AssistantTurn {
            utterance: Utterance {
                id: UtteranceId(engine.world().next_id()),
                speaker: imported.entity,
                text: greeting.clone(),
                at: now,
                witnesses: WitnessSet::from_iter(witnesses),
                model: None,
                scene: None,
            },
        }])?;
    }
    Ok((imported.entity, greeting))
}
