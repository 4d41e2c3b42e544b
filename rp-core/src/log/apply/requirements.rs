//! Applying requirements (docs/requirements.md): added (checked as the host's are), removed,
//! announced. An announcement is checked against the world: a log cannot announce a
//! requirement pending that is met, or met that is pending.

use crate::error::{Error, Result};
use crate::log::World;
use crate::model::*;

impl World {
    pub(super) fn add_requirement(&mut self, r: &Requirement) -> Result<()> {
        self.check_requirement(r)?;
        self.requirements.insert(
            r.id.clone(),
            HeldRequirement {
                requirement: r.clone(),
                announced: false,
            },
        );
        Ok(())
    }

    pub(super) fn remove_requirement(&mut self, id: &str) -> Result<()> {
        let Some(held) = self.requirements.remove(id) else {
            return Err(Error::not_found("requirement", id));
        };
        if held.announced {
            // Its announcement, if no responder was shown it yet, goes with it.
            let text = crate::log::requirements::announcement_text(&held.requirement);
            self.system_lines.retain(|l| l.text != text);
        }
        Ok(())
    }

    pub(super) fn announce_requirement(
        &mut self,
        id: &str,
        line: Option<&SystemLine>,
    ) -> Result<()> {
        let held = self
            .requirements
            .get(id)
            .ok_or_else(|| Error::not_found("requirement", id))?
            .clone();
        let pending = self.requirement_pending(&held.requirement);
        match line {
            Some(line) => {
                if !pending {
                    return Err(Error::conflict(format!(
                        "requirement {id:?} is met: it is not announced pending"
                    )));
                }
                if held.announced {
                    return Err(Error::conflict(format!(
                        "requirement {id:?} was announced already"
                    )));
                }
                if line.text != crate::log::requirements::announcement_text(&held.requirement) {
                    return Err(Error::invalid(
                        "requirement",
                        "an announcement's line is the requirement's warning",
                    ));
                }
                self.add_system_line(line)?;
            }
            None => {
                if pending || !held.announced {
                    return Err(Error::conflict(format!(
                        "requirement {id:?} is not an announced one that is now met"
                    )));
                }
                // Its announcement, if no responder was shown it yet, is withdrawn: the
                // prompts no longer warn of a decision that was made.
                let text = crate::log::requirements::announcement_text(&held.requirement);
                self.system_lines.retain(|l| l.text != text);
            }
        }
        let mut held = held;
        held.announced = line.is_some();
        self.requirements.insert(id.to_owned(), held);
        Ok(())
    }
}
