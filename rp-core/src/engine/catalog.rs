//! The branch catalog: which branches exist, where each forked, and which is current. Stored
//! as the save file's metadata record.

use crate::error::{Error, Result};
use crate::model::Seq;
use crate::store::BranchId;
use serde::{Deserialize, Serialize};

pub(crate) const SAVE_MAGIC: &str = "rp-save";

/// Where a branch leaves its parent: it shares the parent's events up to `seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ForkPoint {
    pub branch: BranchId,
    pub seq: Seq,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BranchRecord {
    pub id: BranchId,
    /// `None` for a deleted branch whose early events other branches still share.
    pub name: Option<String>,
    pub parent: Option<ForkPoint>,
}

impl BranchRecord {
    /// The seq this branch's own events start after.
    pub fn base(&self) -> Seq {
        self.parent.map_or(0, |p| p.seq)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Catalog {
    pub magic: String,
    pub current: BranchId,
    pub next_branch: BranchId,
    pub branches: Vec<BranchRecord>,
}

/// A stretch of a branch's history stored under one branch id: seqs `first..=last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub branch: BranchId,
    pub first: Seq,
    pub last: Seq,
}

impl Catalog {
    pub fn new() -> Catalog {
        Catalog {
            magic: SAVE_MAGIC.into(),
            current: 1,
            next_branch: 2,
            branches: vec![BranchRecord {
                id: 1,
                name: Some("main".into()),
                parent: None,
            }],
        }
    }

    pub fn get(&self, id: BranchId) -> Option<&BranchRecord> {
        self.branches.iter().find(|b| b.id == id)
    }

    pub fn get_mut(&mut self, id: BranchId) -> Option<&mut BranchRecord> {
        self.branches.iter_mut().find(|b| b.id == id)
    }

    pub fn by_name(&self, name: &str) -> Result<&BranchRecord> {
        self.branches
            .iter()
            .find(|b| b.name.as_deref() == Some(name))
            .ok_or_else(|| Error::not_found("branch", name))
    }

    pub fn children(&self, id: BranchId) -> impl Iterator<Item = &BranchRecord> + '_ {
        self.branches
            .iter()
            .filter(move |b| b.parent.is_some_and(|p| p.branch == id))
    }

    /// The first free name among `base~2`, `base~3`, ...
    pub fn unique_name(&self, base: &str) -> String {
        let taken = |n: &str| self.branches.iter().any(|b| b.name.as_deref() == Some(n));
        (2..)
            .map(|i| format!("{base}~{i}"))
            .find(|n| !taken(n))
            .expect("an unbounded search finds a free name")
    }

    /// The stored stretches that make up `branch`'s history up to `head`, oldest first.
    pub fn segments(&self, branch: BranchId, head: Seq) -> Result<Vec<Segment>> {
        let mut out = Vec::new();
        let mut at = branch;
        let mut upper = head;
        for _ in 0..=self.branches.len() {
            let rec = self.get(at).ok_or_else(|| {
                Error::invalid("metadata", format!("branch {at} is referenced but missing"))
            })?;
            let base = rec.base();
            if upper > base {
                out.push(Segment {
                    branch: at,
                    first: base + 1,
                    last: upper,
                });
            }
            match rec.parent {
                Some(p) => {
                    at = p.branch;
                    upper = upper.min(p.seq);
                }
                None => {
                    out.reverse();
                    return Ok(out);
                }
            }
        }
        Err(Error::invalid("metadata", "the branch ancestry has a loop"))
    }

    /// Checks the catalog read from a file.
    pub fn validate(&self) -> Result<()> {
        if self.magic != SAVE_MAGIC {
            return Err(Error::invalid("metadata", "missing save signature"));
        }
        for (i, b) in self.branches.iter().enumerate() {
            if b.id >= self.next_branch || self.branches[..i].iter().any(|o| o.id == b.id) {
                return Err(Error::invalid(
                    "metadata",
                    format!("bad branch id {}", b.id),
                ));
            }
            if let Some(n) = &b.name
                && self.branches[..i]
                    .iter()
                    .any(|o| o.name.as_ref() == Some(n))
            {
                return Err(Error::invalid(
                    "metadata",
                    format!("branch name {n:?} twice"),
                ));
            }
            self.segments(b.id, Seq::MAX)?;
        }
        match self.get(self.current) {
            Some(b) if b.name.is_some() => Ok(()),
            _ => Err(Error::invalid("metadata", "the current branch is missing")),
        }
    }
}
