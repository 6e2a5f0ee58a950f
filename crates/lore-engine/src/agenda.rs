//! Deadlines (L10) and tasks across all of an owner's knowledge.

use lore_core::model::*;
use lore_core::reading::deadline_state;
use lore_core::time::format_offset;
use lore_core::Ts;
use lore_store::Tx;
use serde::Serialize;

use crate::resolve::find_entity;
use crate::views::NamedRef;
use crate::{Engine, EngineResult};

/// Commitments still in force: upcoming, and past due without evidence of completion (L10).
pub const DEADLINES_IN_FORCE: [DeadlineState; 2] =
    [DeadlineState::Upcoming, DeadlineState::PastDue];

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeadlineRow {
    pub claim: String,
    pub subject: NamedRef,
    pub commitment: Option<String>,
    pub due_at: Ts,
    pub state: DeadlineState,
    pub status: ClaimStatus,
    pub valid_from: Option<Ts>,
    /// The meeting (external id) and `mm:ss` of the first evidence.
    pub meeting: Option<String>,
    pub offset: Option<String>,
    pub quote: Option<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskRow {
    pub id: String,
    pub title: String,
    pub status: TaskStatus,
    pub due_at: Option<Ts>,
    pub assignee: Option<NamedRef>,
    pub project: Option<NamedRef>,
    pub meeting: Option<String>,
}

fn named(tx: &mut dyn Tx, id: Option<&str>) -> EngineResult<Option<NamedRef>> {
    let Some(id) = id else { return Ok(None) };
    Ok(tx.find_entity(id)?.map(|e| NamedRef {
        id: e.id.clone(),
        kind: e.kind,
        name: e.display_name().to_string(),
    }))
}

impl Engine {
    /// Every commitment whose state (read now, L10) is one of `states`, by due date.
    pub fn deadlines(
        &self,
        owner: &str,
        states: &[DeadlineState],
    ) -> EngineResult<Vec<DeadlineRow>> {
        let now = self.now();
        let predicates: Vec<String> = self
            .registry
            .names()
            .filter(|name| self.registry.get(name).is_some_and(|d| d.is_deadline))
            .map(str::to_string)
            .collect();
        self.read(owner, |tx| {
            let mut rows = Vec::new();
            for predicate in &predicates {
                for claim in tx.list_claims_by_predicate(predicate)? {
                    let Some(due_at) = claim.due_at() else {
                        continue;
                    };
                    let Some(state) = deadline_state(&claim.derived, due_at, now) else {
                        continue;
                    };
                    if !states.contains(&state) {
                        continue;
                    }
                    let Some(subject) = named(tx, Some(&claim.subject))? else {
                        continue;
                    };
                    let evidence = tx.list_evidence_by_claim(&claim.id)?;
                    let first = evidence.iter().find(|e| e.kind == EvidenceKind::Support);
                    let meeting = match first.and_then(|e| e.meeting.as_deref()) {
                        Some(id) => tx.find_meeting(id)?.map(|m| m.external_id),
                        None => None,
                    };
                    rows.push(DeadlineRow {
                        claim: claim.id.clone(),
                        subject,
                        commitment: claim.value_text.clone(),
                        due_at,
                        state,
                        status: claim.derived.status,
                        valid_from: claim.derived.valid_from,
                        meeting,
                        offset: first.and_then(|e| e.start_ms).map(format_offset),
                        quote: first.map(|e| e.quote.clone()),
                    });
                }
            }
            rows.sort_by(|a, b| (a.due_at, &a.claim).cmp(&(b.due_at, &b.claim)));
            Ok(rows)
        })
    }

    /// Tasks across the owner's meetings, optionally for one assignee and of one status.
    pub fn tasks(
        &self,
        owner: &str,
        assignee: Option<&str>,
        status: Option<TaskStatus>,
    ) -> EngineResult<Vec<TaskRow>> {
        self.read(owner, |tx| {
            let tasks = match assignee {
                Some(assignee) => {
                    let entity = find_entity(tx, assignee)?;
                    tx.list_tasks_by_assignee(&entity.id)?
                }
                None => tx.list_tasks()?,
            };
            let mut rows = Vec::new();
            for task in tasks {
                if status.is_some_and(|wanted| task.status != wanted) {
                    continue;
                }
                let meeting = match &task.meeting {
                    Some(id) => tx.find_meeting(id)?.map(|m| m.external_id),
                    None => None,
                };
                rows.push(TaskRow {
                    assignee: named(tx, task.assignee.as_deref())?,
                    project: named(tx, task.project.as_deref())?,
                    id: task.id,
                    title: task.title,
                    status: task.status,
                    due_at: task.due_at,
                    meeting,
                });
            }
            Ok(rows)
        })
    }
}
