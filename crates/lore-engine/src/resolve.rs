//! Entity resolution by strong identifiers only (L15–L17, first cut): people by exact email, companies
//! by domain or external key, projects and concepts by key. A name alone never joins two entities
//! across meetings: it yields a provisional entity scoped to its meeting (or, for a company, its series).

use std::collections::{BTreeMap, BTreeSet};

use lore_core::ids::short_id;
use lore_core::model::*;
use lore_core::normalize::{normalize_domain, slug, value_key};
use lore_core::Ts;
use lore_ingest::EntityRef;
use lore_store::Tx;
use serde_json::json;

use crate::apply::Changes;
use crate::EngineResult;

/// What is known about the meeting an entity was named in.
pub struct MeetingScope<'a> {
    pub meeting_id: &'a str,
    pub series_id: Option<&'a str>,
    pub observed_at: Ts,
    /// Participants' person entities by normalized display name (names resolve within one meeting only).
    pub participants_by_name: BTreeMap<String, String>,
    /// Domains of the participants' verified emails (L16).
    pub participant_domains: Vec<String>,
    /// Tags this meeting linked to projects and concepts: `(kind, slug or key)` -> tag key (L17).
    pub tag_keys: BTreeMap<(EntityKind, String), String>,
    /// `(entity, name)` pairs this meeting already recorded: an entity named in several statements
    /// of one meeting is one alias row, and its same-name check has nothing new to find.
    pub recorded_aliases: std::cell::RefCell<std::collections::HashSet<(String, String)>>,
}

/// L16: a company named without a domain takes the verified email domain of a participant of the
/// same meeting when the domain's name is exactly the company's name (`Globex` and `globex.com`);
/// never a public mail domain.
fn participant_domain_for(name: &str, scope: Option<&MeetingScope>) -> Option<String> {
    let compact: String = slug(name).chars().filter(|c| *c != '-').collect();
    if compact.is_empty() {
        return None;
    }
    let scope = scope?;
    let mut candidates: Vec<&String> = scope
        .participant_domains
        .iter()
        .filter(|domain| !is_public_mail_domain(domain))
        .filter(|domain| domain.split('.').next() == Some(compact.as_str()))
        .collect();
    candidates.sort();
    candidates.dedup();
    // Two different domains with that name (acme.com, acme.io) say nothing about which one is meant.
    (candidates.len() == 1).then(|| candidates[0].clone())
}

/// The strong identifier an entity reference carries, as `(scheme, value)`.
fn identifier(
    reference: &EntityRef,
    scope: Option<&MeetingScope>,
) -> (String, String, EntityStatus) {
    let name_key = value_key(&reference.name);
    match reference.kind {
        EntityKind::Person => match &reference.email {
            Some(email) => ("email".into(), email.to_lowercase(), EntityStatus::Active),
            None => {
                let meeting = scope.map_or("manual", |s| s.meeting_id);
                (
                    format!("scoped:{meeting}"),
                    name_key,
                    EntityStatus::Provisional,
                )
            }
        },
        EntityKind::Company => {
            if let Some(domain) = reference
                .domain
                .as_deref()
                .and_then(normalize_domain)
                .filter(|domain| !is_public_mail_domain(domain))
            {
                ("domain".into(), domain, EntityStatus::Active)
            } else if let Some(key) = &reference.external_key {
                ("external".into(), key.to_lowercase(), EntityStatus::Active)
            } else if let Some(domain) = participant_domain_for(&reference.name, scope) {
                ("domain".into(), domain, EntityStatus::Active)
            } else {
                let scope_id = scope.map_or("manual", |s| s.series_id.unwrap_or(s.meeting_id));
                (
                    format!("company-name:{scope_id}"),
                    name_key,
                    EntityStatus::Provisional,
                )
            }
        }
        EntityKind::Project | EntityKind::Concept => {
            let key = reference_key(reference);
            // L17: a tag the meeting linked to this entity is its key there.
            let key = scope
                .and_then(|s| s.tag_keys.get(&(reference.kind, key.clone())).cloned())
                .unwrap_or(key);
            (format!("key:{}", reference.kind), key, EntityStatus::Active)
        }
    }
}

/// The identifier scheme that redirects, within one meeting, an entity to the one a user split
/// that meeting's evidence off to (`split:<meeting>`, value = the original entity).
pub fn split_scheme(meeting: &str) -> String {
    format!("split:{meeting}")
}

/// The entity `id` stands for in the scope's meeting: the split-off one when the user split this
/// meeting away from it (L18), else itself.
fn split_redirect(
    tx: &mut dyn Tx,
    id: String,
    scope: Option<&MeetingScope>,
) -> EngineResult<String> {
    let Some(scope) = scope else {
        return Ok(id);
    };
    Ok(tx
        .find_entity_by_identifier(&split_scheme(scope.meeting_id), &id)?
        .unwrap_or(id))
}

/// The key a project or concept reference carries: its `key`, else the slug of its name.
pub fn reference_key(reference: &EntityRef) -> String {
    reference
        .key
        .clone()
        .unwrap_or_else(|| slug(&reference.name))
}

/// Mail providers whose domain says nothing about where a person works (L16).
const PUBLIC_MAIL_DOMAINS: &[&str] = &[
    "gmail.com",
    "googlemail.com",
    "outlook.com",
    "hotmail.com",
    "live.com",
    "msn.com",
    "yahoo.com",
    "ymail.com",
    "icloud.com",
    "me.com",
    "mac.com",
    "aol.com",
    "proton.me",
    "protonmail.com",
    "pm.me",
    "gmx.com",
    "gmx.net",
    "gmx.de",
    "web.de",
    "mail.com",
    "zoho.com",
    "yandex.com",
    "yandex.ru",
    "mail.ru",
    "qq.com",
    "163.com",
    "126.com",
    "fastmail.com",
    "hey.com",
    "tutanota.com",
];

pub fn is_public_mail_domain(domain: &str) -> bool {
    PUBLIC_MAIL_DOMAINS.contains(&domain)
}

/// Finds or creates the entity a reference names, and records the name it was called by.
pub fn resolve(
    tx: &mut dyn Tx,
    reference: &EntityRef,
    scope: Option<&MeetingScope>,
    changes: &mut Changes,
) -> EngineResult<String> {
    if reference.kind == EntityKind::Person && reference.email.is_none() {
        if let Some(scope) = scope {
            if let Some(person) = scope.participants_by_name.get(&value_key(&reference.name)) {
                record_alias(tx, person, &reference.name, scope)?;
                return Ok(person.clone());
            }
        }
    }
    let (scheme, value, status) = identifier(reference, scope);
    let id = find_or_create(tx, reference, &scheme, &value, status, scope, changes)?;
    if let (Some(scope), "email") = (scope, scheme.as_str()) {
        if tx.find_entity_by_identifier("email", &value)?.as_deref() == Some(id.as_str()) {
            record_source(
                tx,
                "email",
                &value,
                scope,
                &format!("email:{value}"),
                true,
                changes,
            )?;
        }
    }
    Ok(id)
}

/// Resolves a meeting participant (L15): by its email or any of its additional emails, then by a
/// stable platform id, and otherwise as a provisional person scoped to the meeting. The device id is
/// meeting-scoped and never used. Additional emails become identifiers of the person.
pub fn resolve_participant(
    tx: &mut dyn Tx,
    participant: &lore_ingest::ParticipantInput,
    scope: &MeetingScope,
    changes: &mut Changes,
) -> EngineResult<String> {
    let reference = EntityRef {
        kind: EntityKind::Person,
        name: participant.display_name.clone(),
        email: participant.email.clone(),
        domain: None,
        external_key: None,
        key: None,
    };
    let emails: Vec<String> = participant
        .email
        .iter()
        .chain(participant.additional_emails.iter())
        .cloned()
        .collect();
    let mut known = None;
    for email in &emails {
        if let Some(id) = tx.find_entity_by_identifier("email", email)? {
            known = Some(id);
            break;
        }
    }
    let known = match known {
        Some(id) => Some(split_redirect(tx, id, Some(scope))?),
        None => None,
    };
    let person = match (&known, &participant.email, &participant.platform_stable_id) {
        (Some(id), _, _) => {
            changes.touch_mention(id);
            record_alias(tx, id, &participant.display_name, scope)?;
            id.clone()
        }
        (None, Some(_), _) => resolve(tx, &reference, Some(scope), changes)?,
        // Additional emails without a primary one: the smallest identifies the person.
        (None, None, _) if !emails.is_empty() => {
            let first = emails.iter().min().cloned().unwrap_or_default();
            find_or_create(
                tx,
                &reference,
                "email",
                &first,
                EntityStatus::Active,
                Some(scope),
                changes,
            )?
        }
        (None, None, Some(platform_id)) => find_or_create(
            tx,
            &reference,
            "platform",
            platform_id.trim(),
            EntityStatus::Active,
            Some(scope),
            changes,
        )?,
        (None, None, None) => resolve(tx, &reference, Some(scope), changes)?,
    };
    // Every identifier the participant was given is taught by this meeting (item of provenance:
    // deleting the meeting forgets what only it taught), grouped as one person (L15).
    let group = participant_group(participant);
    if let Some(platform_id) = &participant.platform_stable_id {
        add_identifier(tx, &person, "platform", platform_id.trim(), changes)?;
        record_source(
            tx,
            "platform",
            platform_id.trim(),
            scope,
            &group,
            false,
            changes,
        )?;
    }
    for (index, email) in emails.iter().enumerate() {
        add_identifier(tx, &person, "email", email, changes)?;
        let primary = index == 0 && participant.email.is_some();
        record_source(tx, "email", email, scope, &group, primary, changes)?;
    }
    Ok(person)
}

/// The identifiers one participant was given form one group: named by its first identifier.
fn participant_group(participant: &lore_ingest::ParticipantInput) -> String {
    match (
        &participant.email,
        participant.additional_emails.first(),
        &participant.platform_stable_id,
    ) {
        (Some(email), _, _) => format!("email:{email}"),
        (None, Some(email), _) => format!("email:{email}"),
        (None, None, Some(platform)) => format!("platform:{}", platform.trim()),
        (None, None, None) => String::new(),
    }
}

pub fn identifier_source_key(source: &IdentifierSource) -> String {
    format!(
        "identifier_source:{}|{}|{}|{}",
        source.scheme, source.value, source.meeting, source.group
    )
}

/// Records that the scope's meeting taught an identifier (never for a manual reference).
fn record_source(
    tx: &mut dyn Tx,
    scheme: &str,
    value: &str,
    scope: &MeetingScope,
    group: &str,
    primary: bool,
    changes: &mut Changes,
) -> EngineResult<()> {
    if value.is_empty() || scope.meeting_id.is_empty() {
        return Ok(());
    }
    let source = IdentifierSource {
        scheme: scheme.to_string(),
        value: value.to_string(),
        meeting: scope.meeting_id.to_string(),
        group: group.to_string(),
        primary,
    };
    // Rows are per meeting, so they are new in this transaction (a replaced meeting's were removed
    // first); a second row for the same group only ever upgrades it to primary.
    tx.insert_identifier_source(&source)?;
    changes.record_row(identifier_source_key(&source), None, Some(&source));
    Ok(())
}

/// L13 for identifiers: forgets what a deleted meeting taught. An email or platform id that no
/// remaining meeting taught stops resolving to its person (and leaves the person's emails), unless
/// it is the one the person's id derives from (its identity), or the person carries a
/// `do_not_merge_with` tombstone, whose identifiers keep a split pair apart.
pub fn forget_meeting_identifiers(
    tx: &mut dyn Tx,
    meeting: &str,
    changes: &mut Changes,
) -> EngineResult<()> {
    let sources = tx.delete_identifier_sources_by_meeting(meeting)?;
    forget_deleted_sources(tx, &sources, changes)
}

/// A participant the user removed from a meeting no longer teaches its identifiers there, exactly
/// as if the meeting were re-ingested with the removal in place.
pub fn forget_participant_identifiers(
    tx: &mut dyn Tx,
    participant: &Participant,
    changes: &mut Changes,
) -> EngineResult<()> {
    let groups: Vec<String> = participant
        .email
        .iter()
        .map(|email| format!("email:{email}"))
        .chain(
            participant
                .platform_stable_id
                .iter()
                .map(|id| format!("platform:{}", id.trim())),
        )
        .collect();
    let sources: Vec<IdentifierSource> = tx
        .list_identifier_sources_by_meeting(&participant.meeting)?
        .into_iter()
        .filter(|source| groups.contains(&source.group))
        .collect();
    for source in &sources {
        tx.delete_identifier_source(source)?;
    }
    forget_deleted_sources(tx, &sources, changes)
}

/// After these identifier sources were deleted: each identifier no other source teaches any more
/// stops resolving (see `forget_meeting_identifiers`). Which ones are left is read in one statement.
fn forget_deleted_sources(
    tx: &mut dyn Tx,
    sources: &[IdentifierSource],
    changes: &mut Changes,
) -> EngineResult<()> {
    let mut identifiers = BTreeSet::new();
    for source in sources {
        changes.record_row(identifier_source_key(source), Some(source), None);
        identifiers.insert((source.scheme.clone(), source.value.clone()));
    }
    let identifiers: Vec<(String, String)> = identifiers.into_iter().collect();
    let still_taught: BTreeSet<(String, String)> = tx
        .list_identifiers_still_taught(&identifiers)?
        .into_iter()
        .collect();
    for identifier in identifiers.iter().filter(|i| !still_taught.contains(*i)) {
        let (scheme, value) = identifier;
        let Some(entity_id) = tx.find_entity_by_identifier(scheme, value)? else {
            continue;
        };
        let Some(entity) = tx.find_entity(&entity_id)? else {
            continue;
        };
        // The identifier the entity's id derives from is its identity, not something learned.
        let intrinsic = short_id("e_", &[entity.kind.as_str(), scheme, value]) == entity.id;
        if intrinsic || !entity.do_not_merge_with.is_empty() {
            continue;
        }
        tx.delete_identifier(scheme, value)?;
        changes.record(
            format!("identifier:{scheme}|{value}"),
            Some(json!({"scheme": scheme, "value": value, "entity": entity_id})),
            None,
        );
        if scheme == "email" && entity.emails.contains(value) {
            let mut updated = entity.clone();
            updated.emails.retain(|email| email != value);
            tx.upsert_entity(&updated)?;
            changes.record_row(format!("entity:{entity_id}"), Some(&entity), Some(&updated));
        }
        changes.entities.insert(entity_id);
    }
    Ok(())
}

/// Adds an identifier to a person (and an email to its list) unless another entity holds it.
fn add_identifier(
    tx: &mut dyn Tx,
    person: &str,
    scheme: &str,
    value: &str,
    changes: &mut Changes,
) -> EngineResult<()> {
    if value.is_empty() {
        return Ok(());
    }
    match tx.find_entity_by_identifier(scheme, value)? {
        Some(holder) if holder != person => return Ok(()),
        Some(_) => {}
        None => {
            tx.insert_identifier(scheme, value, person)?;
            changes.record(
                format!("identifier:{scheme}|{value}"),
                None,
                Some(json!({"scheme": scheme, "value": value, "entity": person})),
            );
        }
    }
    // The row is read whole only when it gains the email (most persons already list it).
    if scheme == "email" && tx.entity_has_email(person, value)? == Some(false) {
        if let Some(entity) = tx.find_entity(person)? {
            let mut updated = entity.clone();
            updated.emails.push(value.to_string());
            updated.emails = crate::people::canonical_emails(person, &updated.emails);
            tx.upsert_entity(&updated)?;
            changes.record_row(format!("entity:{person}"), Some(&entity), Some(&updated));
        }
    }
    Ok(())
}

/// Records the name a participant was called by for a person chosen by the user.
pub fn record_participant_alias(
    tx: &mut dyn Tx,
    person: &str,
    name: &str,
    scope: &MeetingScope,
) -> EngineResult<()> {
    record_alias(tx, person, name, scope)
}

fn find_or_create(
    tx: &mut dyn Tx,
    reference: &EntityRef,
    scheme: &str,
    value: &str,
    status: EntityStatus,
    scope: Option<&MeetingScope>,
    changes: &mut Changes,
) -> EngineResult<String> {
    let (scheme, value) = (scheme.to_string(), value.to_string());
    let id = match tx.find_entity_by_identifier(&scheme, &value)? {
        Some(existing) => {
            let id = split_redirect(tx, existing, scope)?;
            changes.touch_mention(&id);
            id
        }
        None if reference_id_exists(tx, reference.kind, &scheme, &value)?.is_some() => {
            let id = reference_id_exists(tx, reference.kind, &scheme, &value)?.unwrap_or_default();
            changes.entities.insert(id.clone());
            id
        }
        None => {
            let id = short_id("e_", &[reference.kind.as_str(), &scheme, &value]);
            let entity = Entity {
                id: id.clone(),
                kind: reference.kind,
                canonical_name: reference.name.clone(),
                manual_name: None,
                normalized_key: matches!(reference.kind, EntityKind::Project | EntityKind::Concept)
                    .then(|| value.clone()),
                emails: reference.email.iter().map(|e| e.to_lowercase()).collect(),
                domains: if scheme == "domain" {
                    vec![value.clone()]
                } else {
                    Vec::new()
                },
                external_keys: reference.external_key.iter().cloned().collect(),
                status,
                merged_into: None,
                do_not_merge_with: Vec::new(),
                manual_attributes: Default::default(),
                manual_brief: None,
                pinned: false,
                scope_meeting: (status == EntityStatus::Provisional
                    && reference.kind == EntityKind::Person)
                    .then(|| scope.map(|s| s.meeting_id.to_string()))
                    .flatten(),
                first_observed_at: scope.map(|s| s.observed_at),
                last_observed_at: scope.map(|s| s.observed_at),
                current_attributes: Default::default(),
                current_brief: String::new(),
                weight_basis: 0.0,
                weight_latest: None,
            };
            tx.upsert_entity(&entity)?;
            tx.insert_identifier(&scheme, &value, &id)?;
            changes.record(
                format!("entity:{id}"),
                None,
                serde_json::to_value(&entity).ok(),
            );
            // A new entity has no projection yet.
            changes.entities.insert(id.clone());
            id
        }
    };
    if let Some(scope) = scope {
        record_alias(tx, &id, &reference.name, scope)?;
    }
    Ok(id)
}

/// The entity this identifier would create already exists (for instance merged away, its identifiers
/// moved to the survivor): use it, or its survivor.
fn reference_id_exists(
    tx: &mut dyn Tx,
    kind: EntityKind,
    scheme: &str,
    value: &str,
) -> EngineResult<Option<String>> {
    let id = short_id("e_", &[kind.as_str(), scheme, value]);
    match tx.find_entity(&id)? {
        Some(entity) => Ok(Some(follow_merged(tx, entity)?.id)),
        None => Ok(None),
    }
}

fn record_alias(
    tx: &mut dyn Tx,
    entity: &str,
    name: &str,
    scope: &MeetingScope,
) -> EngineResult<()> {
    if name.trim().is_empty() {
        return Ok(());
    }
    let first_time = scope
        .recorded_aliases
        .borrow_mut()
        .insert((entity.to_string(), name.trim().to_string()));
    if !first_time {
        return Ok(());
    }
    tx.insert_alias(&Alias {
        entity: entity.to_string(),
        alias: name.trim().to_string(),
        meeting: scope.meeting_id.to_string(),
        observed_at: scope.observed_at,
    })?;
    suggest_same_name_merges(tx, entity, name, scope.observed_at)
}

/// L15: a provisional, name-only entity that shares a name with another entity of its kind raises a
/// merge suggestion — never a merge. Checked whenever a name is recorded, from either side, so the
/// queue does not depend on which meeting arrived first (L14).
pub(crate) fn suggest_same_name_merges(
    tx: &mut dyn Tx,
    entity_id: &str,
    name: &str,
    now: Ts,
) -> EngineResult<()> {
    // Most names are one entity's: then no row is read.
    let others: Vec<String> = tx
        .list_entities_by_alias_key(&value_key(name))?
        .into_iter()
        .filter(|other| other != entity_id)
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    let Some(entity) = tx.find_entity(entity_id)? else {
        return Ok(());
    };
    for other in others {
        if entity.do_not_merge_with.contains(&other) {
            continue;
        }
        let Some(other_entity) = tx.find_entity(&other)? else {
            continue;
        };
        let provisional = [&entity, &other_entity]
            .into_iter()
            .filter(|e| e.status == EntityStatus::Provisional)
            .count();
        if other_entity.kind != entity.kind
            || provisional == 0
            || other_entity.do_not_merge_with.contains(&entity.id)
        {
            continue;
        }
        // The provisional side is the one to fold in; with two provisional entities, the smaller id.
        let (target, secondary) = if entity.status == EntityStatus::Provisional
            && (other_entity.status != EntityStatus::Provisional || entity.id < other_entity.id)
        {
            (&entity, &other_entity)
        } else {
            (&other_entity, &entity)
        };
        let id = short_id("s_", &["entity_merge", &target.id, &secondary.id]);
        if tx.find_suggestion(&id)?.is_none() {
            tx.upsert_suggestion(&Suggestion {
                id,
                kind: "entity_merge".into(),
                status: SuggestionStatus::Open,
                target: target.id.clone(),
                secondary: Some(secondary.id.clone()),
                payload: json!({"name": name.trim(), "reason": "same display name"}),
                created_at: now,
            })?;
        }
    }
    Ok(())
}

/// Finds an entity by id, email, `kind:key`, or an unambiguous name (L20: only this owner's).
pub fn find_entity(tx: &mut dyn Tx, text: &str) -> EngineResult<Entity> {
    let text = text.trim();
    if let Some(entity) = tx.find_entity(text)? {
        return follow_merged(tx, entity);
    }
    // An id a re-keyed person had: follow it to the id it has now (a few hops at most).
    let mut redirected = text.to_string();
    for _ in 0..16 {
        let Some(next) = tx.find_entity_redirect(&redirected)? else {
            break;
        };
        if let Some(entity) = tx.find_entity(&next)? {
            return follow_merged(tx, entity);
        }
        redirected = next;
    }
    if let Some(email) = lore_core::normalize::normalize_email(text) {
        if let Some(id) = tx.find_entity_by_identifier("email", &email)? {
            return tx.find_entity(&id)?.ok_or_else(|| not_found(text));
        }
        return Err(not_found(text));
    }
    if let Some((kind, key)) = text.split_once(':') {
        if let Some(kind) = EntityKind::parse(kind) {
            let scheme = match kind {
                EntityKind::Company => "domain".to_string(),
                _ => format!("key:{kind}"),
            };
            if let Some(id) = tx.find_entity_by_identifier(&scheme, &key.to_lowercase())? {
                return tx.find_entity(&id)?.ok_or_else(|| not_found(text));
            }
        }
    }
    let key = value_key(text);
    let mut candidates: Vec<Entity> = Vec::new();
    for id in tx.list_entities_by_alias_key(&key)? {
        if let Some(entity) = tx.find_entity(&id)? {
            candidates.push(entity);
        }
    }
    for entity in tx.list_entities()? {
        let names_match = entity.manual_name.as_deref().map(value_key) == Some(key.clone())
            || value_key(&entity.canonical_name) == key;
        if names_match && !candidates.iter().any(|c| c.id == entity.id) {
            candidates.push(entity);
        }
    }
    candidates.retain(|entity| entity.status != EntityStatus::Merged);
    match candidates.len() {
        0 => Err(not_found(text)),
        1 => Ok(candidates.remove(0)),
        _ => {
            let listed: Vec<String> = candidates
                .iter()
                .map(|e| {
                    let email = e
                        .emails
                        .first()
                        .map(|m| format!(" <{m}>"))
                        .unwrap_or_default();
                    format!("  {} ({}) {}{email}", e.id, e.kind, e.display_name())
                })
                .collect();
            Err(crate::EngineError::Invalid(format!(
                "'{text}' is ambiguous; use one of these ids:\n{}",
                listed.join("\n")
            )))
        }
    }
}

/// Reading a merged entity reads its survivor (L18); a chain of merges is followed to its end.
pub fn follow_merged(tx: &mut dyn Tx, mut entity: Entity) -> EngineResult<Entity> {
    for _ in 0..64 {
        let Some(next) = entity.merged_into.clone() else {
            return Ok(entity);
        };
        match tx.find_entity(&next)? {
            Some(survivor) => entity = survivor,
            None => return Ok(entity),
        }
    }
    Ok(entity)
}

fn not_found(text: &str) -> crate::EngineError {
    crate::EngineError::NotFound(format!("no entity matches '{text}'"))
}
