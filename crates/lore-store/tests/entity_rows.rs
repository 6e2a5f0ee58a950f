//! `Entity::same_but_derived` agrees with what a revision keeps of an entity row (the row without
//! `Entity::DERIVED_FIELDS`): two rows are the same but for derived fields exactly when their
//! revision rows are equal.

use lore_core::model::{Entity, EntityKind, EntityStatus, Revision};
use lore_core::Ts;
use lore_store::conformance::sample_entity;

/// The row a revision keeps of an entity.
fn revision_row(entity: &Entity) -> serde_json::Value {
    let mut snapshot = serde_json::json!({ "entity:e1": entity });
    Revision::strip_derived_entity_fields(&mut snapshot);
    snapshot
}

#[test]
fn same_but_derived_is_equality_of_the_rows_revisions_keep() {
    type Change = fn(&mut Entity);
    let changes: [(&str, Change); 21] = [
        ("id", |e| e.id = "e2".into()),
        ("kind", |e| e.kind = EntityKind::Company),
        ("canonical_name", |e| e.canonical_name = "Al Chen".into()),
        ("manual_name", |e| e.manual_name = Some("Dr Chen".into())),
        ("normalized_key", |e| e.normalized_key = Some("k".into())),
        ("emails", |e| e.emails.clear()),
        ("domains", |e| e.domains.push("acme.com".into())),
        ("external_keys", |e| e.external_keys.push("gh:ac".into())),
        ("status", |e| e.status = EntityStatus::Merged),
        ("merged_into", |e| e.merged_into = Some("e9".into())),
        ("do_not_merge_with", |e| {
            e.do_not_merge_with.push("e3".into())
        }),
        ("manual_attributes", |e| {
            e.manual_attributes.insert("role".into(), "CTO".into());
        }),
        ("manual_brief", |e| e.manual_brief = Some("brief".into())),
        ("pinned", |e| e.pinned = true),
        ("scope_meeting", |e| e.scope_meeting = Some("m1".into())),
        ("first_observed_at", |e| e.first_observed_at = Some(Ts(0))),
        ("last_observed_at", |e| e.last_observed_at = None),
        ("current_attributes", |e| {
            e.current_attributes
                .insert("role".into(), serde_json::json!("CEO"));
        }),
        ("current_brief", |e| {
            e.current_brief = "Alice (person)".into()
        }),
        ("weight_basis", |e| e.weight_basis = 2.0),
        ("weight_latest", |e| e.weight_latest = Some(Ts(9))),
    ];
    let base = sample_entity("e1");
    for (field, change) in changes {
        let mut changed = base.clone();
        change(&mut changed);
        assert_ne!(changed, base, "{field}: the change changes nothing");
        assert_eq!(
            base.same_but_derived(&changed),
            revision_row(&base) == revision_row(&changed),
            "{field}"
        );
        let derived = Entity::DERIVED_FIELDS.contains(&field) || field.starts_with("weight_");
        assert_eq!(base.same_but_derived(&changed), derived, "{field}");
    }
}
