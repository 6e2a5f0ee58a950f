//! The predicate registry (SPEC 2.3): what each predicate relates, its cardinality, and whether it is a deadline.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{Cardinality, EntityKind};

/// What a predicate points at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObjectSpec {
    /// Free text in `value_text`.
    Text,
    /// Another entity of one of these kinds.
    Entity(Vec<EntityKind>),
    /// Either free text or an entity of one of these kinds (`blocked_by`).
    TextOrEntity(Vec<EntityKind>),
    /// An external resource, recorded as a resource link.
    Resource,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredicateDef {
    pub name: String,
    /// Empty means any kind.
    pub subject_kinds: Vec<EntityKind>,
    pub object: ObjectSpec,
    pub cardinality: Cardinality,
    /// The kind a `context` must have, when the predicate takes one (`has_role` in a project).
    pub context_kind: Option<EntityKind>,
    pub is_deadline: bool,
}

/// Built-in predicates, plus those an owner added.
#[derive(Clone, Debug)]
pub struct Registry {
    predicates: BTreeMap<String, PredicateDef>,
}

impl Registry {
    pub fn builtin() -> Registry {
        use Cardinality::{Multi, Single};
        use EntityKind::{Company, Concept, Person, Project};
        let entity = |kind: EntityKind| ObjectSpec::Entity(vec![kind]);
        let rows: Vec<(&str, Vec<EntityKind>, ObjectSpec, Cardinality)> = vec![
            ("works_at", vec![Person], entity(Company), Single),
            ("has_title", vec![Person], ObjectSpec::Text, Single),
            ("located_in", vec![Person], ObjectSpec::Text, Single),
            ("reports_to", vec![Person], entity(Person), Single),
            ("has_role", vec![Person], ObjectSpec::Text, Single),
            ("owns_project", vec![Person], entity(Project), Multi),
            ("contributes_to", vec![Person], entity(Project), Multi),
            ("has_skill", vec![Person], ObjectSpec::Text, Multi),
            ("has_responsibility", vec![Person], ObjectSpec::Text, Multi),
            ("focuses_on_concept", vec![Person], entity(Concept), Multi),
            ("partners_with", vec![Company], entity(Company), Multi),
            ("uses_project", vec![Company], entity(Project), Multi),
            ("tracks_concept", vec![Company], entity(Concept), Multi),
            ("has_status", vec![Project], ObjectSpec::Text, Single),
            ("owned_by_company", vec![Project], entity(Company), Single),
            ("led_by_person", vec![Project], entity(Person), Single),
            ("has_deadline", vec![Project], ObjectSpec::Text, Multi),
            ("relates_to_concept", vec![Project], entity(Concept), Multi),
            (
                "blocked_by",
                vec![Project],
                ObjectSpec::TextOrEntity(vec![Project]),
                Multi,
            ),
            ("co_occurs_with", vec![Concept], entity(Concept), Multi),
            ("applies_to_project", vec![Concept], entity(Project), Multi),
            ("has_link", vec![], ObjectSpec::Resource, Multi),
            ("note", vec![], ObjectSpec::Text, Multi),
        ];
        let mut predicates = BTreeMap::new();
        for (name, subject_kinds, object, cardinality) in rows {
            predicates.insert(
                name.to_string(),
                PredicateDef {
                    name: name.to_string(),
                    subject_kinds,
                    object,
                    cardinality,
                    context_kind: (name == "has_role").then_some(Project),
                    is_deadline: name == "has_deadline",
                },
            );
        }
        Registry { predicates }
    }

    /// Adds or replaces an owner-defined predicate.
    pub fn extend(&mut self, definition: PredicateDef) {
        self.predicates.insert(definition.name.clone(), definition);
    }

    pub fn get(&self, name: &str) -> Option<&PredicateDef> {
        self.predicates.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.predicates.keys().map(String::as_str)
    }

    /// Predicates that can be stated about a subject of this kind.
    pub fn for_subject(&self, kind: EntityKind) -> impl Iterator<Item = &PredicateDef> {
        self.predicates
            .values()
            .filter(move |def| def.subject_kinds.is_empty() || def.subject_kinds.contains(&kind))
    }
}

impl PredicateDef {
    pub fn accepts_subject(&self, kind: EntityKind) -> bool {
        self.subject_kinds.is_empty() || self.subject_kinds.contains(&kind)
    }

    pub fn takes_entity_object(&self) -> bool {
        matches!(self.object, ObjectSpec::Entity(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_set_matches_the_spec_table() {
        let registry = Registry::builtin();
        assert_eq!(registry.names().count(), 23);
        let has_role = registry.get("has_role").unwrap();
        assert_eq!(has_role.context_kind, Some(EntityKind::Project));
        assert_eq!(has_role.cardinality, Cardinality::Single);
        assert!(registry.get("has_deadline").unwrap().is_deadline);
        assert!(registry
            .get("note")
            .unwrap()
            .accepts_subject(EntityKind::Concept));
        assert!(!registry
            .get("works_at")
            .unwrap()
            .accepts_subject(EntityKind::Project));
    }
}
