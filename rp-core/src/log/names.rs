//! How a host names an entity or a container: the one rule every caller resolves names by,
//! in Rust, C and Python alike.
//!
//! A [`Named`] is an id or a text. A text resolves, in order, to:
//!
//! 1. the entity (container) whose world-file key it is, exactly;
//! 2. the one whose name it is, exactly (case and all);
//! 3. the one whose name it is, ignoring case (entity names are unique in any case, so this
//!    finds at most one entity; two containers may share a name);
//! 4. for an entity, the one that has it as an alias, ignoring case.
//!
//! The first step that finds exactly one wins. A step that finds several is an
//! [`crate::ErrorKind::Invalid`] error listing the candidates (name and id), so the host can
//! name one by id or key instead; nothing found is a [`crate::ErrorKind::NotFound`].

use super::World;
use crate::error::{Error, Result};
use crate::model::{ContainerId, EntityId};

/// An entity or a container as a host names it: by id, or by a key, name or alias.
///
/// A text resolves ([`World::resolve_entity`], [`World::resolve_container`]), in order, to the
/// one whose world-file key it is (exactly), whose name it is (exactly, then ignoring case),
/// then, for an entity, which has it as an alias (ignoring case). The first step that finds
/// exactly one wins; a step that finds several is an [`crate::ErrorKind::Invalid`] error
/// listing them; nothing found is a [`crate::ErrorKind::NotFound`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named<'a> {
    /// An id.
    Id(u64),
    /// A world-file key, a name or (for an entity) an alias.
    Text(&'a str),
}

impl From<u64> for Named<'_> {
    fn from(id: u64) -> Self {
        Named::Id(id)
    }
}

impl From<EntityId> for Named<'_> {
    fn from(id: EntityId) -> Self {
        Named::Id(id.0)
    }
}

impl From<ContainerId> for Named<'_> {
    fn from(id: ContainerId) -> Self {
        Named::Id(id.0)
    }
}

impl<'a> From<&'a str> for Named<'a> {
    fn from(text: &'a str) -> Self {
        Named::Text(text)
    }
}

impl<'a> From<&'a String> for Named<'a> {
    fn from(text: &'a String) -> Self {
        Named::Text(text)
    }
}

impl std::fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Named::Id(id) => write!(f, "{id}"),
            Named::Text(text) => write!(f, "{text:?}"),
        }
    }
}

/// `text` lowercased char by char, as [`same_ignoring_case`] compares.
fn lowercase(text: &str) -> String {
    text.chars().flat_map(char::to_lowercase).collect()
}

/// Whether `name` is `lower` (already [`lowercase`]d) ignoring case, without allocating.
fn same_ignoring_case(name: &str, lower: &str) -> bool {
    name.chars().flat_map(char::to_lowercase).eq(lower.chars())
}

/// The one of `candidates` (id, name) a step found, if exactly one; an error listing them if
/// several (`what` names the refusal: `"entity name"`); `None` if none.
fn one(
    what: &'static str,
    noun: &str,
    text: &str,
    candidates: Vec<(u64, &str)>,
) -> Result<Option<u64>> {
    match candidates.as_slice() {
        [] => Ok(None),
        [(id, _)] => Ok(Some(*id)),
        many => Err(Error::invalid(
            what,
            format!(
                "{text:?} names more than one {noun}: {}; use an id or a key",
                many.iter()
                    .map(|(id, name)| format!("{name} ({id})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

impl World {
    /// The entity `named` names (the rule is [`Named`]'s).
    ///
    /// ```
    /// # let mut engine = rp_core::Engine::in_memory("Inn", 0)?;
    /// # engine.apply_world_file("inn.toml", r#"
    /// # [world]
    /// # name = "Inn"
    /// # [[entities]]
    /// # id = "mira"
    /// # name = "Mira Holt"
    /// # aliases = ["the innkeeper"]
    /// # "#)?;
    /// let world = engine.world();
    /// let mira = world.resolve_entity("mira")?; // its key
    /// assert_eq!(world.resolve_entity("MIRA HOLT")?, mira); // its name, any case
    /// assert_eq!(world.resolve_entity("The Innkeeper")?, mira); // an alias
    /// assert_eq!(world.resolve_entity(mira)?, mira); // its id
    /// assert_eq!(world.resolve_entity("Tobias").unwrap_err().kind(), rp_core::ErrorKind::NotFound);
    /// # Ok::<(), rp_core::Error>(())
    /// ```
    pub fn resolve_entity<'a>(&self, named: impl Into<Named<'a>>) -> Result<EntityId> {
        let named = named.into();
        let text = match named {
            Named::Id(id) => {
                return self
                    .entity(EntityId(id))
                    .map(|e| e.id)
                    .ok_or_else(|| Error::not_found("entity", id));
            }
            Named::Text(text) => text,
        };
        if let Some(e) = self.entity_by_key(text) {
            return Ok(e.id);
        }
        // Names are unique in any case (the world refuses a second "sam" beside "Sam"), so
        // the name index finds the exact name and the name in another case alike.
        if let Some(e) = self.entity_by_name(text) {
            return Ok(e.id);
        }
        let lower = lowercase(text);
        let found = self
            .entities()
            .filter(|e| e.aliases.iter().any(|a| same_ignoring_case(a, &lower)))
            .map(|e| (e.id.0, e.name.as_str()))
            .collect();
        match one("entity name", "entity", text, found)? {
            Some(id) => Ok(EntityId(id)),
            None => Err(Error::not_found("entity", named)),
        }
    }

    /// The container `named` names (the rule is [`Named`]'s; containers have no aliases).
    pub fn resolve_container<'a>(&self, named: impl Into<Named<'a>>) -> Result<ContainerId> {
        let named = named.into();
        let text = match named {
            Named::Id(id) => {
                return self
                    .container(ContainerId(id))
                    .map(|c| c.id)
                    .ok_or_else(|| Error::not_found("container", id));
            }
            Named::Text(text) => text,
        };
        if let Some(c) = self.container_by_key(text) {
            return Ok(c.id);
        }
        let lower = lowercase(text);
        let steps: [&dyn Fn(&crate::model::Container) -> bool; 2] = [&|c| c.name == text, &|c| {
            same_ignoring_case(&c.name, &lower)
        }];
        for step in steps {
            let found = self
                .containers()
                .filter(|c| step(c))
                .map(|c| (c.id.0, c.name.as_str()))
                .collect();
            if let Some(id) = one("container name", "container", text, found)? {
                return Ok(ContainerId(id));
            }
        }
        Err(Error::not_found("container", named))
    }
}

#[cfg(test)]
mod tests {
    use super::Named;
    use crate::model::ContainerProperties;
    use crate::{ContainerId, EntityId, ErrorKind, Event, World};

    fn entity(world: &mut World, key: Option<&str>, name: &str, aliases: &[&str]) -> EntityId {
        let id = EntityId(world.next_id());
        world
            .apply(&Event::EntityCreated {
                id,
                key: key.map(str::to_owned),
                name: name.into(),
                aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
                facts: Default::default(),
                host_controlled: false,
                state: Default::default(),
            })
            .expect("entity");
        id
    }

    fn container(world: &mut World, key: Option<&str>, name: &str) -> ContainerId {
        let id = ContainerId(world.next_id());
        world
            .apply(&Event::ContainerCreated {
                id,
                key: key.map(str::to_owned),
                name: name.into(),
                facts: Default::default(),
                parent: None,
                slots: vec![],
                properties: ContainerProperties::default(),
            })
            .expect("container");
        id
    }

    fn world() -> World {
        let mut world = World::new();
        world
            .apply(&Event::WorldCreated {
                name: "Inn".into(),
                now: 0,
                settings: Default::default(),
            })
            .expect("world");
        world
    }

    #[test]
    fn entities_resolve_by_id_key_name_then_alias() {
        let mut w = world();
        let mira = entity(
            &mut w,
            Some("mira"),
            "Mira Holt",
            &["the innkeeper", "Holt"],
        );
        let tobias = entity(&mut w, None, "Tobias", &["the fisherman"]);
        assert_eq!(w.resolve_entity(mira).ok(), Some(mira));
        assert_eq!(w.resolve_entity(mira.0).ok(), Some(mira));
        assert_eq!(w.resolve_entity("mira").ok(), Some(mira));
        assert_eq!(w.resolve_entity("Mira Holt").ok(), Some(mira));
        assert_eq!(w.resolve_entity("mira holt").ok(), Some(mira));
        assert_eq!(w.resolve_entity("THE INNKEEPER").ok(), Some(mira));
        assert_eq!(w.resolve_entity("Tobias").ok(), Some(tobias));
        assert_eq!(w.resolve_entity("the fisherman").ok(), Some(tobias));
        for missing in [Named::Text("Wren"), Named::Text(""), Named::Id(999)] {
            let e = w.resolve_entity(missing).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::NotFound, "{missing}");
        }
        // A container's id is no entity's.
        let hall = container(&mut w, Some("hall"), "Hall");
        assert_eq!(
            w.resolve_entity(hall.0).unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }

    #[test]
    fn an_alias_two_entities_share_names_neither_and_the_error_lists_them() {
        let mut w = world();
        let a = entity(&mut w, None, "Ann", &["the twin"]);
        let b = entity(&mut w, None, "Bea", &["The Twin"]);
        let e = w.resolve_entity("the twin").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert!(e.to_string().contains(&format!("Ann ({})", a.0)), "{e}");
        assert!(e.to_string().contains(&format!("Bea ({})", b.0)), "{e}");
        assert!(e.to_string().contains("use an id or a key"), "{e}");
        // A name wins over another entity's alias, and a key over another entity's name.
        let twin = entity(&mut w, None, "The Twin", &[]);
        assert_eq!(w.resolve_entity("the twin").ok(), Some(twin));
        let keyed = entity(&mut w, Some("Ann"), "Someone", &[]);
        assert_eq!(w.resolve_entity("Ann").ok(), Some(keyed));
    }

    #[test]
    fn containers_resolve_by_id_key_then_name() {
        let mut w = world();
        let hall = container(&mut w, Some("hall"), "The Hall");
        let booth = container(&mut w, None, "Booth");
        let other = container(&mut w, None, "booth");
        assert_eq!(w.resolve_container(hall).ok(), Some(hall));
        assert_eq!(w.resolve_container("hall").ok(), Some(hall));
        assert_eq!(w.resolve_container("the hall").ok(), Some(hall));
        assert_eq!(w.resolve_container("Booth").ok(), Some(booth));
        assert_eq!(w.resolve_container("booth").ok(), Some(other));
        let e = w.resolve_container("BOOTH").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert!(e.to_string().contains("use an id or a key"), "{e}");
        assert_eq!(
            w.resolve_container("cellar").unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }
}
