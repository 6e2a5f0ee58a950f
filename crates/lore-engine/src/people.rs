//! A person's identity as a function of the identifiers meetings taught (L14, L15).
//!
//! Every email and stable platform id a meeting gives for one participant is recorded with that
//! meeting (`identifier_sources`); the identifiers given together for one participant are one
//! person. A person is therefore a connected set of identifiers, and its id is derived from the
//! set's *anchor*: the smallest email ever given as a primary address, else the smallest email,
//! else the smallest platform id. So the id never depends on which meeting came first.
//!
//! After an ingest, the identifiers one participant was given that resolve to different people join
//! them (L15: an exact verified email, primary or additional); after a deletion, a person whose
//! identifiers no longer hang together is divided by meetings, and a person whose anchor changed is
//! re-keyed. Moving a person's rows uses the merge machinery (claims re-keyed, evidence ids
//! re-derived), so the result is the state a fresh ingestion of the remaining meetings gives.
//!
//! User decisions win: a person with a `do_not_merge_with` tombstone is never re-keyed, joined or
//! divided, and identifiers a user merge brought together stay together.

use std::collections::{BTreeMap, BTreeSet};

use lore_core::ids::short_id;
use lore_core::model::*;
use lore_store::Tx;

use crate::apply::Changes;
use crate::identity::{identifier_key, identifier_value, merge_in_tx, move_meetings_in_tx};
use crate::resolve::follow_merged;
use crate::EngineResult;

/// Identifier schemes that name a person across meetings.
const PERSON_SCHEMES: &[&str] = &["email", "platform"];

/// The id a person anchored at this identifier has.
pub fn person_id(scheme: &str, value: &str) -> String {
    short_id("e_", &[EntityKind::Person.as_str(), scheme, value])
}

/// A person's emails in a stable order: the one its id derives from first, then the others sorted.
pub fn canonical_emails(id: &str, emails: &[String]) -> Vec<String> {
    let mut sorted: Vec<String> = emails.to_vec();
    sorted.sort();
    sorted.dedup();
    if let Some(position) = sorted.iter().position(|e| person_id("email", e) == id) {
        let intrinsic = sorted.remove(position);
        sorted.insert(0, intrinsic);
    }
    sorted
}

/// The people the meeting's identifiers resolve to.
pub fn people_taught_by(tx: &mut dyn Tx, meeting: &str) -> EngineResult<BTreeSet<String>> {
    Ok(tx
        .list_entities_taught_by_meeting(meeting)?
        .into_iter()
        .map(|(_, person)| person)
        .collect())
}

/// Joins the people one participant of `meeting` was identified as, then re-anchors every person
/// the meeting (or `also`) touches.
pub fn reconcile_people(
    tx: &mut dyn Tx,
    meeting: Option<&str>,
    also: &BTreeSet<String>,
    changes: &mut Changes,
) -> EngineResult<()> {
    let mut touched: BTreeSet<String> = also.clone();
    if let Some(meeting) = meeting {
        let mut groups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (group, entity) in tx.list_entities_taught_by_meeting(meeting)? {
            groups.entry(group).or_default().insert(entity);
        }
        for people in groups.into_values() {
            let people: Vec<String> = people.into_iter().collect();
            touched.extend(people.iter().cloned());
            join(tx, &people, changes)?;
        }
    }
    for person in &touched {
        reconcile_person(tx, person, changes)?;
    }
    Ok(())
}

/// One connected part of a person's identifiers: the id its anchor gives, its identifiers, and the
/// meetings that taught them.
type Part = (String, Vec<(String, String)>, BTreeSet<String>);

/// Whether automatic resolution may change this person's identity.
fn adjustable(entity: &Entity) -> bool {
    adjustable_header(&entity.header())
}

/// `adjustable`, from the entity's header.
fn adjustable_header(header: &EntityHeader) -> bool {
    header.kind == EntityKind::Person && header.status != EntityStatus::Merged && !header.kept_apart
}

/// Folds the other people into the first (re-anchoring follows).
fn join(tx: &mut dyn Tx, people: &[String], changes: &mut Changes) -> EngineResult<()> {
    if people.len() < 2 {
        return Ok(());
    }
    let mut entities = Vec::new();
    for id in people {
        match tx.find_entity(id)? {
            Some(entity) if adjustable(&entity) => entities.push(entity),
            _ => return Ok(()),
        }
    }
    let survivor = entities[0].clone();
    for absorbed in &entities[1..] {
        rekey(tx, absorbed, &survivor.id, changes)?;
    }
    Ok(())
}

/// Re-anchors one person: re-keys it when its anchor changed, divides it by meetings when its
/// identifiers fell apart.
fn reconcile_person(tx: &mut dyn Tx, id: &str, changes: &mut Changes) -> EngineResult<()> {
    // The header tells the common cases apart without copying the row.
    if !tx
        .find_entity_header(id)?
        .is_some_and(|header| adjustable_header(&header))
    {
        return Ok(());
    }
    let identifiers: Vec<(String, String)> = tx
        .list_identifiers_by_entity(id)?
        .into_iter()
        .filter(|(scheme, _)| PERSON_SCHEMES.contains(&scheme.as_str()))
        .collect();
    // The common case, one identifier that the id derives from: nothing can change.
    if let [(scheme, value)] = identifiers.as_slice() {
        if person_id(scheme, value) == id {
            return Ok(());
        }
    }
    let Some(entity) = tx.find_entity(id)? else {
        return Ok(());
    };
    // The person's identifiers with the meetings that taught them.
    let mut sourced: BTreeMap<(String, String), Vec<IdentifierSource>> = BTreeMap::new();
    for (scheme, value) in identifiers {
        let sources = tx.list_identifier_sources(&scheme, &value)?;
        if !sources.is_empty() {
            sourced.insert((scheme, value), sources);
        }
    }
    if sourced.is_empty() {
        return Ok(());
    }
    let components = components(&sourced);
    let anchored: Vec<Part> = components
        .into_iter()
        .map(|members| {
            let anchor = members
                .iter()
                .min_by_key(|(scheme, value)| {
                    let primary = sourced[&(scheme.clone(), value.clone())]
                        .iter()
                        .any(|s| s.primary);
                    let rank = match (scheme.as_str(), primary) {
                        ("email", true) => 0,
                        ("email", false) => 1,
                        _ => 2,
                    };
                    (rank, scheme.clone(), value.clone())
                })
                .cloned()
                .unwrap_or_default();
            let meetings: BTreeSet<String> = members
                .iter()
                .flat_map(|key| sourced[key].iter().map(|s| s.meeting.clone()))
                .collect();
            (person_id(&anchor.0, &anchor.1), members, meetings)
        })
        .collect();
    if anchored.len() == 1 {
        let target = anchored[0].0.clone();
        if target != entity.id && !user_joined(tx, &target, &entity.id)? {
            rekey(tx, &entity, &target, changes)?;
        }
        return Ok(());
    }
    // Divided: each part whose anchor is another id moves there with the meetings only it has.
    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for (_, _, meetings) in &anchored {
        for meeting in meetings {
            *counts.entry(meeting).or_default() += 1;
        }
    }
    for (target, members, meetings) in &anchored {
        if *target == entity.id || user_joined(tx, target, &entity.id)? {
            continue;
        }
        let own: Vec<String> = meetings
            .iter()
            .filter(|m| counts[m] == 1)
            .cloned()
            .collect();
        if own.is_empty() {
            // Every meeting of this part also names another part: nothing can move apart.
            continue;
        }
        let current = tx
            .find_entity(&entity.id)?
            .unwrap_or_else(|| entity.clone());
        ensure_person(tx, &current, target, changes)?;
        move_meetings_in_tx(tx, &current, target, &own, members, changes)?;
        tidy_emails(tx, &entity.id, changes)?;
        tidy_emails(tx, target, changes)?;
    }
    Ok(())
}

/// Whether the user merged the entity with this id into `into` (a merge survives re-anchoring).
fn user_joined(tx: &mut dyn Tx, id: &str, into: &str) -> EngineResult<bool> {
    match tx.find_entity(id)? {
        Some(entity) if entity.status == EntityStatus::Merged => {
            Ok(follow_merged(tx, entity)?.id == into)
        }
        Some(entity) => Ok(!adjustable(&entity) && entity.id != into),
        None => Ok(false),
    }
}

/// Connected identifiers: those a meeting gave together for one participant.
fn components(
    sourced: &BTreeMap<(String, String), Vec<IdentifierSource>>,
) -> Vec<Vec<(String, String)>> {
    let keys: Vec<&(String, String)> = sourced.keys().collect();
    let mut parent: Vec<usize> = (0..keys.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut first_in_group: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (index, key) in keys.iter().enumerate() {
        for source in &sourced[*key] {
            let group = (source.meeting.clone(), source.group.clone());
            match first_in_group.get(&group) {
                Some(&other) => {
                    let (a, b) = (root(&mut parent, index), root(&mut parent, other));
                    parent[a.max(b)] = a.min(b);
                }
                None => {
                    first_in_group.insert(group, index);
                }
            }
        }
    }
    let mut by_root: BTreeMap<usize, Vec<(String, String)>> = BTreeMap::new();
    for (index, key) in keys.iter().enumerate() {
        let r = root(&mut parent, index);
        by_root.entry(r).or_default().push((*key).clone());
    }
    by_root.into_values().collect()
}

/// Creates the person `id` (a copy of `like`'s identity, without its identifiers) when missing.
fn ensure_person(
    tx: &mut dyn Tx,
    like: &Entity,
    id: &str,
    changes: &mut Changes,
) -> EngineResult<()> {
    if tx.find_entity(id)?.is_some() {
        return Ok(());
    }
    let created = Entity {
        id: id.to_string(),
        emails: Vec::new(),
        merged_into: None,
        do_not_merge_with: Vec::new(),
        manual_name: None,
        manual_attributes: Default::default(),
        manual_brief: None,
        pinned: false,
        scope_meeting: None,
        current_attributes: Default::default(),
        current_brief: String::new(),
        ..like.clone()
    };
    tx.upsert_entity(&created)?;
    changes.record_row(format!("entity:{id}"), None, Some(&created));
    changes.entities.insert(id.to_string());
    Ok(())
}

/// Moves everything of `from` to the person `to` (created when missing) and removes `from`: a
/// re-keying, not a user merge, so no redirect is left behind.
fn rekey(tx: &mut dyn Tx, from: &Entity, to: &str, changes: &mut Changes) -> EngineResult<()> {
    ensure_person(tx, from, to, changes)?;
    let survivor = tx.find_entity(to)?.unwrap_or_else(|| from.clone());
    // User decisions about participants follow the person.
    let mut meetings: BTreeSet<String> = BTreeSet::new();
    for participant in tx.list_participants_by_person(&from.id)? {
        meetings.insert(participant.meeting);
    }
    crate::identity::move_participant_mappings(tx, &meetings, &from.id, to, changes)?;
    merge_in_tx(tx, &survivor, from, changes)?;
    // The identifier the old id derived from is no identity of the survivor's, unless taught.
    for (scheme, value) in tx.list_identifiers_by_entity(to)? {
        let intrinsic_to_old = short_id("e_", &[from.kind.as_str(), &scheme, &value]) == from.id;
        if intrinsic_to_old && tx.list_identifier_sources(&scheme, &value)?.is_empty() {
            tx.delete_identifier(&scheme, &value)?;
            changes.record(
                identifier_key(&scheme, &value),
                Some(identifier_value(&scheme, &value, to)),
                None,
            );
        }
    }
    if let Some(gone) = tx.find_entity(&from.id)? {
        tx.delete_entity(&from.id)?;
        changes.record_row(format!("entity:{}", from.id), Some(&gone), None);
    }
    // The old id keeps finding the person (a link or a note that names it), outside the
    // knowledge itself: another ingest order would never have made it (L14).
    if from.id != to {
        tx.set_entity_redirect(&from.id, to)?;
    }
    changes.forget_entity(&from.id);
    tidy_emails(tx, to, changes)?;
    // Same-name merge suggestions name the new id, as a fresh ingestion would have raised them.
    let mut names: Vec<(String, lore_core::Ts)> = tx
        .list_aliases(to)?
        .into_iter()
        .map(|a| (a.alias, a.observed_at))
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.0 == b.0);
    for (name, at) in names {
        crate::resolve::suggest_same_name_merges(tx, to, &name, at)?;
    }
    Ok(())
}

/// Makes a person's `emails` exactly its email identifiers, in the canonical order.
fn tidy_emails(tx: &mut dyn Tx, id: &str, changes: &mut Changes) -> EngineResult<()> {
    let Some(entity) = tx.find_entity(id)? else {
        return Ok(());
    };
    let emails: Vec<String> = tx
        .list_identifiers_by_entity(id)?
        .into_iter()
        .filter(|(scheme, _)| scheme == "email")
        .map(|(_, value)| value)
        .collect();
    let emails = canonical_emails(id, &emails);
    if emails != entity.emails {
        let mut updated = entity.clone();
        updated.emails = emails;
        tx.upsert_entity(&updated)?;
        changes.record_row(format!("entity:{id}"), Some(&entity), Some(&updated));
    }
    changes.entities.insert(id.to_string());
    Ok(())
}
