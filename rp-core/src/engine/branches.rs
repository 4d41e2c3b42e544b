//! Branches and rewind. Rewinding never destroys: the abandoned tail stays reachable as a
//! branch of its own until it is deleted.

use super::catalog::{BranchRecord, Catalog, ForkPoint};
use super::{Engine, load_world_costed};
use crate::error::{Error, Result};
use crate::log::{Event, World, codec};
use crate::model::{ContainerId, EntityId, GroupId, MemoryId, Seq};
use crate::store::{BranchId, Commit};
use std::collections::{BTreeMap, BTreeSet};

/// A branch as users see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchInfo {
    /// Its name.
    pub name: String,
    /// The seq of its last event.
    pub head: Seq,
    /// The branch it was forked from (if that still has a name) and the seq it shares up to.
    pub forked_from: Option<(Option<String>, Seq)>,
    /// Whether it is the current branch.
    pub current: bool,
}

/// What a rewind would undo.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RewindPreview {
    /// The head now.
    pub from_seq: Seq,
    /// The head after the rewind.
    pub to_seq: Seq,
    /// Number of undone events by kind.
    pub events_by_kind: BTreeMap<&'static str, usize>,
    /// Entities the undone events touched.
    pub entities: BTreeSet<EntityId>,
    /// Containers they touched.
    pub containers: BTreeSet<ContainerId>,
    /// Directed edges they touched, as (from, to).
    pub edges: BTreeSet<(EntityId, EntityId)>,
    /// Groups they touched.
    pub groups: BTreeSet<GroupId>,
    /// Memories they touched.
    pub memories: BTreeSet<MemoryId>,
}

impl RewindPreview {
    /// The number of events the rewind would undo.
    pub fn event_count(&self) -> usize {
        self.events_by_kind.values().sum()
    }
}

fn check_branch_name(name: &str) -> Result<()> {
    crate::log::check_name("branch", name)
}

impl Engine {
    /// The name of the current branch.
    pub fn current_branch(&self) -> &str {
        self.catalog
            .get(self.catalog.current)
            .and_then(|b| b.name.as_deref())
            .unwrap_or("main")
    }

    /// Every named branch, in creation order.
    pub fn branches(&self) -> Vec<BranchInfo> {
        self.catalog
            .branches
            .iter()
            .filter_map(|b| {
                Some(BranchInfo {
                    name: b.name.clone()?,
                    head: self.heads.get(&b.id).copied().unwrap_or(0),
                    forked_from: b.parent.map(|p| {
                        (
                            self.catalog.get(p.branch).and_then(|r| r.name.clone()),
                            p.seq,
                        )
                    }),
                    current: b.id == self.catalog.current,
                })
            })
            .collect()
    }

    fn check_seq(&self, seq: Seq) -> Result<()> {
        if seq < 1 || seq > self.head() {
            return Err(Error::invalid(
                "seq",
                format!("{seq} is outside the current branch (1..={})", self.head()),
            ));
        }
        Ok(())
    }

    /// What [`Engine::rewind`] to `to_seq` would undo.
    pub fn preview_rewind(&self, to_seq: Seq) -> Result<RewindPreview> {
        self.check_seq(to_seq)?;
        let mut p = RewindPreview {
            from_seq: self.head(),
            to_seq,
            ..RewindPreview::default()
        };
        self.visit_events(
            self.catalog.current,
            to_seq + 1,
            self.head(),
            &mut |_, e| {
                *p.events_by_kind.entry(e.kind()).or_default() += 1;
                let t = e.touched();
                p.entities.extend(t.entities);
                p.containers.extend(t.containers);
                p.edges.extend(t.edges);
                p.groups.extend(t.groups);
                p.memories.extend(t.memories);
                Ok(())
            },
        )?;
        Ok(p)
    }

    /// Moves the head of the current branch back to `to_seq` (the world becomes what it was
    /// after that event). The undone events are kept as a new branch named after the current
    /// one (`main~2`, ...), returned here; `None` if nothing was undone.
    pub fn rewind(&mut self, to_seq: Seq) -> Result<Option<String>> {
        self.resync_if_stale()?;
        self.check_seq(to_seq)?;
        if to_seq == self.head() {
            return Ok(None);
        }
        let mut catalog = self.catalog.clone();
        let old = catalog.current;
        let name = self.current_branch().to_owned();
        let tail_name = catalog.unique_name(&name);
        catalog.get_mut(old).expect("current exists").name = Some(tail_name.clone());
        let new = self.add_branch(&mut catalog, name, old, to_seq);
        catalog.current = new;
        self.move_to(catalog, new, to_seq)?;
        Ok(Some(tail_name))
    }

    /// Replaces the current branch's events after `to_seq` with `events`, in one commit: the
    /// branch is rewound to `to_seq` (the events it had after it kept as a new branch named
    /// after it, returned, as [`Engine::rewind`] does) and `events` appended. The caller has
    /// the worlds already (an edit's plan replayed them): `base`, the world after `to_seq`, and
    /// `after`, the world after `events` on it; nothing is replayed or checked again. A crash
    /// leaves the branch as it was or as it becomes, never between.
    pub(crate) fn replace_tail(
        &mut self,
        to_seq: Seq,
        base: &World,
        events: &[Event],
        after: World,
    ) -> Result<(Option<String>, Seq)> {
        self.resync_if_stale()?;
        self.check_seq(to_seq)?;
        let new_head = to_seq + events.len() as Seq;
        if base.seq() != to_seq || after.seq() != new_head {
            return Err(Error::invalid(
                "world",
                format!(
                    "worlds at seqs {} and {} do not bracket {} events after seq {to_seq}",
                    base.seq(),
                    after.seq(),
                    events.len()
                ),
            ));
        }
        if to_seq == self.head() && events.is_empty() {
            return Ok((None, to_seq));
        }
        let mut catalog = self.catalog.clone();
        let old = catalog.current;
        let name = self.current_branch().to_owned();
        let tail_name = (to_seq < self.head()).then(|| {
            let tail = catalog.unique_name(&name);
            catalog.get_mut(old).expect("current exists").name = Some(tail.clone());
            tail
        });
        let branch = if tail_name.is_some() {
            let new = self.add_branch(&mut catalog, name, old, to_seq);
            catalog.current = new;
            new
        } else {
            old
        };
        let mut cost = super::load_cost(&self.store, &catalog, branch, to_seq)?;
        let commit = Commit {
            events: events
                .iter()
                .zip(to_seq + 1..)
                .map(|(e, s)| (branch, s, codec::encode_event(e)))
                .collect(),
            meta: Some(codec::encode(&catalog)),
            durable: true,
            ..Commit::default()
        };
        cost.tail_bytes += commit
            .events
            .iter()
            .map(|(_, _, b)| b.len() as u64)
            .sum::<u64>();
        self.write(commit)?;
        self.catalog = catalog;
        self.heads.insert(branch, new_head);
        self.world = after;
        self.drop_memory_index();
        self.cost = cost;
        Ok((tail_name, new_head))
    }

    /// Creates a branch named `name` that shares the current branch's history up to `at_seq`.
    /// The current branch does not change.
    pub fn fork(&mut self, at_seq: Seq, name: &str) -> Result<BranchInfo> {
        self.resync_if_stale()?;
        self.check_seq(at_seq)?;
        check_branch_name(name)?;
        if self.catalog.by_name(name).is_ok() {
            return Err(Error::conflict(format!("a branch named {name:?} exists")));
        }
        let mut catalog = self.catalog.clone();
        let current = catalog.current;
        let id = self.add_branch(&mut catalog, name.to_owned(), current, at_seq);
        self.commit_catalog(catalog, Vec::new())?;
        self.heads.insert(id, at_seq);
        Ok(self
            .branches()
            .into_iter()
            .find(|b| b.name == name)
            .expect("just created"))
    }

    /// Makes the branch named `name` current, loading its world.
    pub fn switch_branch(&mut self, name: &str) -> Result<()> {
        self.resync_if_stale()?;
        let id = self.catalog.by_name(name)?.id;
        if id == self.catalog.current {
            return Ok(());
        }
        let mut catalog = self.catalog.clone();
        catalog.current = id;
        let head = self.heads[&id];
        self.move_to(catalog, id, head)
    }

    /// Renames a branch.
    pub fn rename_branch(&mut self, from: &str, to: &str) -> Result<()> {
        self.resync_if_stale()?;
        check_branch_name(to)?;
        let id = self.catalog.by_name(from)?.id;
        if from == to {
            return Ok(());
        }
        if self.catalog.by_name(to).is_ok() {
            return Err(Error::conflict(format!("a branch named {to:?} exists")));
        }
        let mut catalog = self.catalog.clone();
        catalog.get_mut(id).expect("found above").name = Some(to.to_owned());
        self.commit_catalog(catalog, Vec::new())
    }

    /// Deletes a branch (not the current one). Events that other branches share stay; the
    /// rest are removed from the file.
    pub fn delete_branch(&mut self, name: &str) -> Result<()> {
        self.resync_if_stale()?;
        let id = self.catalog.by_name(name)?.id;
        if id == self.catalog.current {
            return Err(Error::conflict(format!(
                "{name:?} is the current branch; switch to another before deleting it"
            )));
        }
        let mut catalog = self.catalog.clone();
        catalog.get_mut(id).expect("found above").name = None;
        let purge = collect_garbage(&mut catalog, &self.heads);
        self.commit_catalog(catalog, purge.clone())?;
        for (branch, keep) in purge {
            self.history.forget(branch, keep);
        }
        let live: BTreeSet<BranchId> = self.catalog.branches.iter().map(|b| b.id).collect();
        self.heads.retain(|id, _| live.contains(id));
        Ok(())
    }

    fn add_branch(
        &self,
        catalog: &mut Catalog,
        name: String,
        parent: BranchId,
        seq: Seq,
    ) -> BranchId {
        let id = catalog.next_branch;
        catalog.next_branch += 1;
        catalog.branches.push(BranchRecord {
            id,
            name: Some(name),
            parent: Some(ForkPoint {
                branch: parent,
                seq,
            }),
        });
        id
    }

    /// Loads the world of `branch` at `head` under `catalog`, commits the catalog, then
    /// switches, so a failure anywhere leaves everything as it was.
    fn move_to(&mut self, catalog: Catalog, branch: BranchId, head: Seq) -> Result<()> {
        let (world, cost) = load_world_costed(&self.store, &catalog, branch, head)?;
        self.commit_catalog(catalog, Vec::new())?;
        self.heads.insert(branch, head);
        self.world = world;
        self.drop_memory_index();
        self.cost = cost;
        Ok(())
    }

    fn commit_catalog(&mut self, catalog: Catalog, purge: Vec<(BranchId, Seq)>) -> Result<()> {
        self.write(Commit {
            meta: Some(codec::encode(&catalog)),
            purge,
            durable: true,
            ..Commit::default()
        })?;
        self.catalog = catalog;
        Ok(())
    }
}

/// Drops unnamed branches nobody descends from, and the part of each unnamed branch beyond
/// the last fork point of its children. Returns what to purge from the store.
fn collect_garbage(catalog: &mut Catalog, heads: &BTreeMap<BranchId, Seq>) -> Vec<(BranchId, Seq)> {
    let mut purge = Vec::new();
    loop {
        let mut removed = false;
        let hidden: Vec<BranchId> = catalog
            .branches
            .iter()
            .filter(|b| b.name.is_none())
            .map(|b| b.id)
            .collect();
        for id in hidden {
            let keep = catalog.children(id).map(|c| c.base()).max();
            match keep {
                None => {
                    catalog.branches.retain(|b| b.id != id);
                    purge.retain(|(b, _)| *b != id);
                    purge.push((id, 0));
                    removed = true;
                }
                Some(keep) if heads.get(&id).is_some_and(|h| *h > keep) => {
                    purge.retain(|(b, _)| *b != id);
                    purge.push((id, keep));
                }
                Some(_) => {}
            }
        }
        if !removed {
            return purge;
        }
    }
}
