//! The current view of an entity (SPEC 2.4): manual attributes laid over active claims, and a brief built
//! from that alone. Pure: the store keeps its result and the invariant check recomputes it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::{Cardinality, Claim, ClaimStatus, Entity};

/// A claim as the projection needs it: the claim and the display names of its object and context.
pub struct ProjectedClaim<'a> {
    pub claim: &'a Claim,
    pub object_name: Option<&'a str>,
    pub context_name: Option<&'a str>,
}

impl ProjectedClaim<'_> {
    fn value(&self) -> String {
        let base = self
            .object_name
            .map(str::to_string)
            .or_else(|| self.claim.value_text.clone())
            .unwrap_or_default();
        match self.claim.due_at() {
            Some(due) => format!("{base} (due {})", &due.to_rfc3339()[..10]),
            None => base,
        }
    }
}

/// Builds `current_attributes` and `current_brief` from manual attributes and active claims.
pub fn project(entity: &Entity, claims: &[ProjectedClaim]) -> (BTreeMap<String, Value>, String) {
    let mut active: Vec<&ProjectedClaim> = claims
        .iter()
        .filter(|c| c.claim.derived.status == ClaimStatus::Active)
        .collect();
    active.sort_by(|a, b| {
        (&a.claim.predicate, a.context_name, a.value()).cmp(&(
            &b.claim.predicate,
            b.context_name,
            b.value(),
        ))
    });

    let mut attributes: BTreeMap<String, Value> = BTreeMap::new();
    for projected in active {
        let predicate = projected.claim.predicate.clone();
        let value = Value::String(projected.value());
        match (projected.claim.cardinality, projected.context_name) {
            (_, Some(context)) => {
                let map = attributes
                    .entry(predicate)
                    .or_insert_with(|| Value::Object(Default::default()));
                if let Value::Object(map) = map {
                    map.insert(context.to_string(), value);
                }
            }
            (Cardinality::Single, None) => {
                attributes.insert(predicate, value);
            }
            (Cardinality::Multi, None) => {
                let list = attributes
                    .entry(predicate)
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = list {
                    list.push(value);
                }
            }
        }
    }
    for (key, value) in &entity.manual_attributes {
        attributes.insert(key.clone(), Value::String(value.clone()));
    }
    let brief = entity
        .manual_brief
        .clone()
        .unwrap_or_else(|| brief(entity, &attributes));
    (attributes, brief)
}

fn phrase(predicate: &str) -> String {
    match predicate {
        "works_at" => "works at".into(),
        "has_title" => "title".into(),
        "located_in" => "located in".into(),
        "reports_to" => "reports to".into(),
        "has_role" => "role".into(),
        "owns_project" => "owns".into(),
        "contributes_to" => "contributes to".into(),
        "has_skill" => "skills".into(),
        "has_responsibility" => "responsible for".into(),
        "focuses_on_concept" => "focuses on".into(),
        "has_status" => "status".into(),
        "owned_by_company" => "owned by".into(),
        "led_by_person" => "led by".into(),
        "has_deadline" => "deadlines".into(),
        "relates_to_concept" => "relates to".into(),
        other => other.replace('_', " "),
    }
}

fn render(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(render).collect::<Vec<_>>().join(", "),
        Value::Object(map) => map
            .iter()
            .map(|(context, value)| format!("{} in {context}", render(value)))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

fn brief(entity: &Entity, attributes: &BTreeMap<String, Value>) -> String {
    let mut parts = vec![format!("{} ({})", entity.display_name(), entity.kind)];
    parts.extend(
        attributes
            .iter()
            .map(|(predicate, value)| format!("{}: {}", phrase(predicate), render(value))),
    );
    parts.join(" · ")
}
