//! [`resolve_entity`]: how the demo turns a name the player types ("Tobias", "mira", "the
//! innkeeper", "Holt") into an entity, for `/why` and `/prompt`: rp-core's rule, with one
//! convenience for a player at a prompt on top.

use rp_core::{Entity, World};

/// The entity the player means by `name`: the one rp-core resolves it to
/// ([`World::resolve_entity`]: key, name, alias), else, as the demo's own convenience, the one
/// whose name has `name` as a word, when exactly one name has that word. `None` when nothing
/// matches, when an alias is shared, or when a word is in more than one name.
///
/// ```
/// use rp_core::Engine;
/// let mut engine = Engine::in_memory("t", 0).unwrap();
/// engine
///     .apply_world_file("t.toml", r#"
///         [world]
///         name = "t"
///         [[entities]]
///         id = "mira"
///         name = "Mira Holt"
///         aliases = ["the innkeeper"]
///     "#)
///     .unwrap();
/// let w = engine.world();
/// for name in ["mira", "MIRA HOLT", "The Innkeeper", "holt"] {
///     assert_eq!(rp_demo::resolve_entity(w, name).map(|e| e.name.as_str()), Some("Mira Holt"));
/// }
/// assert!(rp_demo::resolve_entity(w, "Tobias").is_none());
/// ```
pub fn resolve_entity<'w>(world: &'w World, name: &str) -> Option<&'w Entity> {
    let lower = name.to_lowercase();
    let resolved = world.resolve_entity(name).ok();
    resolved.and_then(|id| world.entity(id)).or_else(|| {
        let by_word: Vec<_> = world
            .entities()
            .filter(|e| e.name.to_lowercase().split_whitespace().any(|w| w == lower))
            .collect();
        match by_word.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rp_core::Engine;

    fn tavern() -> Engine {
        let mut engine = Engine::in_memory("tavern", 0).unwrap();
        engine
            .apply_world_file("tavern.toml", include_str!("../../examples/tavern.toml"))
            .unwrap();
        engine
    }

    fn resolved(w: &World, name: &str) -> Option<String> {
        resolve_entity(w, name).map(|e| e.name.clone())
    }

    #[test]
    fn tavern_characters_are_found_by_key_name_alias_or_one_word() {
        let engine = tavern();
        let w = engine.world();
        for name in ["tobias", "Tobias", "tobias reed", "the fisherman", "Reed"] {
            assert_eq!(resolved(w, name).as_deref(), Some("Tobias Reed"), "{name}");
        }
        for name in ["mira", "Mira Holt", "the INNKEEPER", "holt"] {
            assert_eq!(resolved(w, name).as_deref(), Some("Mira Holt"), "{name}");
        }
        assert_eq!(resolved(w, "the traveller").as_deref(), Some("Wren"));
    }

    #[test]
    fn an_unknown_name_or_a_word_of_two_names_resolves_to_no_one() {
        let engine = tavern();
        assert_eq!(resolved(engine.world(), "Nobody"), None);
        assert_eq!(resolved(engine.world(), ""), None);
        let mut engine = Engine::in_memory("holts", 0).unwrap();
        let two_holts = "[world]\nname = \"holts\"\n\
                         [[entities]]\nid = \"mira\"\nname = \"Mira Holt\"\n\
                         [[entities]]\nid = \"ada\"\nname = \"Ada Holt\"\n";
        engine.apply_world_file("holts.toml", two_holts).unwrap();
        assert_eq!(resolved(engine.world(), "holt"), None);
        assert_eq!(resolved(engine.world(), "ada").as_deref(), Some("Ada Holt"));
    }
}
