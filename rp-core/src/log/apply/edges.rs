//! Applying the records of relationships: directed edges between two entities, and group
//! nodes.

use super::{check_name, check_text, check_texts, check_unit};
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{BeliefSource, Edge, EntityId, Group, GroupId, MIN_GROUP_SIZE};
use std::borrow::Cow;

impl World {
    pub(super) fn update_edge(&mut self, edge: Cow<'_, Edge>) -> Result<()> {
        self.check_edge(&edge)?;
        self.edges.insert(edge.into_owned());
        Ok(())
    }

    fn check_edge(&self, edge: &Edge) -> Result<()> {
        if edge.from == edge.to {
            return Err(Error::invalid(
                "edge",
                format!("an edge cannot point from {} to itself", edge.from),
            ));
        }
        self.get_entity(edge.from)?;
        self.get_entity(edge.to)?;
        check_unit("edge", "affinity", edge.affinity, -1.0)?;
        check_unit("edge", "trust", edge.trust, -1.0)?;
        check_text("edge", &edge.summary)?;
        check_texts("edge", &edge.knowledge)?;
        check_texts("edge", &edge.imprints)?;
        check_texts("edge", &edge.private_moments)?;
        // A teller must exist when named; one kept from before may have left the world since.
        if let Some(BeliefSource::ToldBy(by)) = edge.source
            && self.edge(edge.from, edge.to).and_then(|e| e.source) != edge.source
        {
            self.get_entity(by)?;
        }
        Ok(())
    }

    /// `edge_removed`: the edge `from` → `to`, which must exist.
    pub(super) fn remove_edge(&mut self, from: EntityId, to: EntityId) -> Result<()> {
        if self.edges.remove(&(from, to)).is_none() {
            return Err(Error::not_found("edge", format!("{from} → {to}")));
        }
        Ok(())
    }

    /// `group_updated`: a group node, new or replaced, of at least [`MIN_GROUP_SIZE`] members.
    pub(super) fn update_group(&mut self, group: &Group) -> Result<()> {
        if !self.groups.contains(&group.id) {
            self.check_fresh(group.id.0)?;
        }
        if group.members.len() < MIN_GROUP_SIZE {
            return Err(Error::invalid(
                "group",
                format!("a group node needs at least {MIN_GROUP_SIZE} members"),
            ));
        }
        for m in &group.members {
            self.get_entity(*m)?;
        }
        if let Some(n) = &group.name {
            check_name("group", n)?;
        }
        check_text("group", &group.summary)?;
        check_texts("group", &group.shared)?;
        self.take_id(group.id.0);
        self.groups.insert(group.clone());
        Ok(())
    }

    /// `group_removed`: the group node, which must exist.
    pub(super) fn remove_group(&mut self, id: GroupId) -> Result<()> {
        if self.groups.remove(&id).is_none() {
            return Err(Error::not_found("group", id));
        }
        Ok(())
    }
}
