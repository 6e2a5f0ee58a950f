//! Participants of a meeting and the user's decisions about them (SPEC 2.1). A mapping comes from
//! the bundle (`auto`), from the user (`manual`), or was removed by the user (`excluded`). User
//! decisions live in their own table, keyed by the meeting and the participant's email (or name), so
//! that re-ingesting the meeting re-applies them: a removed participant is never re-added
//! automatically, and a manual add survives.

use lore_core::model::*;
use lore_core::normalize::value_key;
use lore_store::Tx;
use serde::Serialize;

use crate::apply::{settle, Changes};
use crate::edit::EditReport;
use crate::identity::{alias_key, participant_key};
use crate::resolve::{find_entity, follow_merged};
use crate::{Engine, EngineError, EngineResult};

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ParticipantView {
    pub idx: i64,
    pub display_name: String,
    pub email: Option<String>,
    pub person: Option<String>,
    pub source: MappingSource,
}

/// The key a user decision about a participant is stored under.
pub fn mapping_key(display_name: &str, email: Option<&str>) -> String {
    match email {
        Some(email) => email.to_lowercase(),
        None => format!("name:{}", value_key(display_name)),
    }
}

pub fn mapping_record_key(mapping: &ParticipantMapping) -> String {
    format!("participant_mapping:{}|{}", mapping.meeting, mapping.key)
}

fn find_meeting(tx: &mut dyn Tx, text: &str) -> EngineResult<Meeting> {
    match tx.find_meeting(text)? {
        Some(meeting) => Ok(meeting),
        None => tx.find_meeting_by_external_id(text)?.ok_or_else(|| {
            EngineError::NotFound(format!("no meeting with id or external id '{text}'"))
        }),
    }
}

/// What the user decided about a participant of this meeting, if anything.
pub fn decision_for(
    mappings: &[ParticipantMapping],
    display_name: &str,
    email: Option<&str>,
) -> Option<ParticipantMapping> {
    let key = mapping_key(display_name, email);
    mappings.iter().find(|m| m.key == key).cloned()
}

/// The person a manual mapping names, following merges; `None` when it is gone.
pub fn mapped_person(
    tx: &mut dyn Tx,
    mapping: &ParticipantMapping,
) -> EngineResult<Option<String>> {
    let Some(id) = &mapping.person_entity else {
        return Ok(None);
    };
    match tx.find_entity(id)? {
        Some(entity) => Ok(Some(follow_merged(tx, entity)?.id)),
        None => Ok(None),
    }
}

impl Engine {
    /// The meeting's participants with where each mapping came from.
    pub fn list_participants(
        &self,
        owner: &str,
        meeting: &str,
    ) -> EngineResult<Vec<ParticipantView>> {
        self.read(owner, |tx| {
            let meeting = find_meeting(tx, meeting)?;
            let mappings = tx.list_participant_mappings(&meeting.id)?;
            Ok(tx
                .list_participants(&meeting.id)?
                .into_iter()
                .map(|row| {
                    let decision = decision_for(&mappings, &row.display_name, row.email.as_deref());
                    let source = if row.excluded {
                        MappingSource::Excluded
                    } else {
                        match decision.map(|d| d.source) {
                            Some(MappingSource::Manual) => MappingSource::Manual,
                            _ => MappingSource::Auto,
                        }
                    };
                    ParticipantView {
                        idx: row.idx,
                        display_name: row.display_name,
                        email: row.email,
                        person: row.person_entity,
                        source,
                    }
                })
                .collect())
        })
    }

    /// Ids of the meetings an entity was named in or took part in.
    pub fn entity_meetings(&self, owner: &str, entity: &str) -> EngineResult<Vec<String>> {
        self.read(owner, |tx| {
            let mut meetings: Vec<String> = tx
                .list_aliases(entity)?
                .into_iter()
                .map(|a| a.meeting)
                .collect();
            meetings.extend(
                tx.list_participants_by_person(entity)?
                    .into_iter()
                    .map(|p| p.meeting),
            );
            meetings.sort();
            meetings.dedup();
            Ok(meetings)
        })
    }

    /// Removes a person from a meeting's participants, leaving a tombstone that automatic sync
    /// (re-ingesting the meeting) never re-adds.
    pub fn remove_participant(
        &self,
        owner: &str,
        meeting: &str,
        entity: &str,
    ) -> EngineResult<EditReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let meeting = find_meeting(tx, meeting)?;
            let person = find_entity(tx, entity)?;
            let rows: Vec<Participant> = tx
                .list_participants(&meeting.id)?
                .into_iter()
                .filter(|p| !p.excluded && p.person_entity.as_deref() == Some(&person.id))
                .collect();
            if rows.is_empty() {
                return Err(EngineError::NotFound(format!(
                    "{} is not a participant of meeting {}",
                    person.display_name(),
                    meeting.external_id
                )));
            }
            let mut changes = Changes::default();
            let existing = tx.list_participant_mappings(&meeting.id)?;
            for row in rows {
                let mut excluded = row.clone();
                excluded.excluded = true;
                excluded.person_entity = None;
                tx.update_participant(&excluded)?;
                changes.record_row(participant_key(&row), Some(&row), Some(&excluded));
                crate::resolve::forget_participant_identifiers(tx, &row, &mut changes)?;
                let mapping = ParticipantMapping {
                    meeting: meeting.id.clone(),
                    key: mapping_key(&row.display_name, row.email.as_deref()),
                    source: MappingSource::Excluded,
                    display_name: row.display_name.clone(),
                    email: row.email.clone(),
                    person_entity: Some(person.id.clone()),
                };
                let previous = existing.iter().find(|m| m.key == mapping.key);
                tx.upsert_participant_mapping(&mapping)?;
                changes.record_row(mapping_record_key(&mapping), previous, Some(&mapping));
                for alias in tx.list_aliases(&person.id)? {
                    if alias.meeting == meeting.id
                        && value_key(&alias.alias) == value_key(&row.display_name)
                    {
                        tx.delete_alias(&alias)?;
                        changes.record_row(alias_key(&alias), Some(&alias), None);
                    }
                }
            }
            changes.entities.insert(person.id.clone());
            let people = [person.id.clone()].into_iter().collect();
            crate::people::reconcile_people(tx, None, &people, &mut changes)?;
            settle(tx, &mut changes, now)?;
            let revision = changes.write_revision(
                tx,
                RevisionAction::ManualOverride,
                &meeting.id,
                Some(&person.id),
                now,
            )?;
            Ok(EditReport {
                revision,
                claim: None,
                deleted: Vec::new(),
            })
        })
    }

    /// Adds a person to a meeting's participants by hand: revives a removed mapping of the same
    /// participant, never duplicates a live one.
    pub fn add_participant(
        &self,
        owner: &str,
        meeting: &str,
        entity: &str,
    ) -> EngineResult<EditReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let meeting = find_meeting(tx, meeting)?;
            let person = find_entity(tx, entity)?;
            if person.kind != EntityKind::Person {
                return Err(EngineError::Invalid(format!(
                    "{} is a {}, not a person",
                    person.display_name(),
                    person.kind
                )));
            }
            let rows = tx.list_participants(&meeting.id)?;
            if rows
                .iter()
                .any(|p| !p.excluded && p.person_entity.as_deref() == Some(&person.id))
            {
                return Err(EngineError::Conflict(format!(
                    "{} is already a participant of meeting {}",
                    person.display_name(),
                    meeting.external_id
                )));
            }
            let mappings = tx.list_participant_mappings(&meeting.id)?;
            let name_key = value_key(person.display_name());
            let revived = rows.iter().find(|p| {
                p.excluded
                    && (p.email.as_ref().is_some_and(|e| person.emails.contains(e))
                        || (p.email.is_none() && value_key(&p.display_name) == name_key)
                        || decision_for(&mappings, &p.display_name, p.email.as_deref())
                            .and_then(|m| m.person_entity)
                            .as_deref()
                            == Some(&person.id))
            });
            let mut changes = Changes::default();
            let row = match revived {
                Some(row) => {
                    let mut live = row.clone();
                    live.excluded = false;
                    live.person_entity = Some(person.id.clone());
                    tx.update_participant(&live)?;
                    changes.record_row(participant_key(row), Some(row), Some(&live));
                    live
                }
                None => {
                    let added = Participant {
                        meeting: meeting.id.clone(),
                        idx: rows.iter().map(|p| p.idx + 1).max().unwrap_or(0),
                        display_name: person.display_name().to_string(),
                        email: person.emails.first().cloned(),
                        platform_stable_id: None,
                        device_id: None,
                        speaker_label: None,
                        person_entity: Some(person.id.clone()),
                        excluded: false,
                    };
                    tx.insert_participant(&added)?;
                    changes.record_row(participant_key(&added), None, Some(&added));
                    added
                }
            };
            let mapping = ParticipantMapping {
                meeting: meeting.id.clone(),
                key: mapping_key(&row.display_name, row.email.as_deref()),
                source: MappingSource::Manual,
                display_name: row.display_name.clone(),
                email: row.email.clone(),
                person_entity: Some(person.id.clone()),
            };
            let previous = mappings.iter().find(|m| m.key == mapping.key);
            tx.upsert_participant_mapping(&mapping)?;
            changes.record_row(mapping_record_key(&mapping), previous, Some(&mapping));
            let alias = Alias {
                entity: person.id.clone(),
                alias: row.display_name.clone(),
                meeting: meeting.id.clone(),
                observed_at: meeting.started_at,
            };
            if !tx.list_aliases(&person.id)?.contains(&alias) {
                tx.insert_alias(&alias)?;
                changes.record_row(alias_key(&alias), None, Some(&alias));
            }
            changes.entities.insert(person.id.clone());
            settle(tx, &mut changes, now)?;
            let revision = changes.write_revision(
                tx,
                RevisionAction::ManualOverride,
                &meeting.id,
                Some(&person.id),
                now,
            )?;
            Ok(EditReport {
                revision,
                claim: None,
                deleted: Vec::new(),
            })
        })
    }
}
