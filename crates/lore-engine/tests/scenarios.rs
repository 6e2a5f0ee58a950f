//! Lifecycle scenarios as data: each file in `tests/scenarios/` is a sequence of steps (ingest, edit,
//! delete, set the clock) with the expected state after them, citing the rules it covers. After every
//! step the invariant check runs: stored state must equal a rebuild from scratch.
//!
//! A compact meeting step is expanded into a full bundle (SPEC 5.1):
//! `{"meeting": "m1", "at": "2026-01-05T10:00:00Z", "people": {"alice": "alice@acme.com", "sam": null},
//!   "says": [{"who": "alice", "ms": 0, "text": "...", "claims": [{"subject": "alice", ...}]}]}`
//! Subjects and objects are a person key from `people`, or `project:KEY`, `concept:KEY`, `company:DOMAIN`.

mod common;

use std::path::Path;

use lore_core::Ts;
use lore_engine::{
    Engine, GraphOptions, ManualClaim, SearchRequest, ShowOptions, SourceRef, TimeTravel,
};
use serde_json::{json, Map, Value};

use common::{assert_consistent, backend_engines, TestClock};

const OWNER: &str = "scenario-owner";

fn person_name(key: &str) -> String {
    let mut chars = key.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}

fn entity_ref(text: &str, people: &Map<String, Value>) -> Value {
    if let Some((kind, key)) = text.split_once(':') {
        return match kind {
            "company" => {
                json!({"kind": "company", "name": person_name(key.split('.').next().unwrap_or(key)), "domain": key})
            }
            "company-name" => json!({"kind": "company", "name": key}),
            _ => json!({"kind": kind, "name": person_name(&key.replace('-', " ")), "key": key}),
        };
    }
    match people.get(text) {
        Some(Value::String(email)) => {
            json!({"kind": "person", "name": person_name(text), "email": email})
        }
        Some(Value::Object(fields)) if fields.contains_key("email") => {
            json!({"kind": "person", "name": person_name(text), "email": fields["email"]})
        }
        Some(_) => json!({"kind": "person", "name": person_name(text)}),
        None => panic!("scenario names unknown person '{text}'"),
    }
}

/// Expands a compact meeting step into bundle JSON.
fn expand_meeting(step: &Value, state: &ScenarioState) -> Value {
    let people = step["people"].as_object().cloned().unwrap_or_default();
    let participants: Vec<Value> = people
        .iter()
        .map(|(key, email)| {
            let mut participant = json!({"display_name": person_name(key), "speaker_label": key});
            match email {
                Value::String(email) => participant["email"] = json!(email),
                Value::Object(fields) => {
                    for (field, value) in fields {
                        participant[field] = value.clone();
                    }
                }
                _ => {}
            }
            participant
        })
        .collect();
    let mut segments = Vec::new();
    let mut claims = Vec::new();
    for (index, said) in step["says"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let segment_id = format!("s{index}");
        let mut segment = json!({"id": segment_id, "start_ms": said["ms"].as_i64().unwrap_or(index as i64 * 1000),
                                 "speaker": said["who"], "text": said["text"]});
        if let Some(attribution) = said.get("attribution") {
            segment["attribution"] = attribution.clone();
        }
        segments.push(segment);
        for claim in said["claims"].as_array().cloned().unwrap_or_default() {
            let mut candidate = Map::new();
            for (key, value) in claim.as_object().expect("claim object") {
                match key.as_str() {
                    "subject" | "object" | "context" => {
                        candidate.insert(
                            key.clone(),
                            entity_ref(value.as_str().expect("entity text"), &people),
                        );
                    }
                    "supersedes_value" => {
                        let subject = claim["subject"].as_str().expect("subject");
                        let target = state.claim_id(
                            subject,
                            &people,
                            claim["predicate"].as_str().unwrap(),
                            value.as_str().unwrap(),
                        );
                        candidate.insert("supersedes".into(), json!([target]));
                    }
                    _ => {
                        candidate.insert(key.clone(), value.clone());
                    }
                }
            }
            candidate.insert("evidence".into(), json!({"segment_ids": [segment_id]}));
            candidates_push(&mut claims, candidate);
        }
    }
    let mut bundle = json!({
        "meeting": {"external_id": step["meeting"], "title": step.get("title").cloned().unwrap_or(step["meeting"].clone()),
                    "started_at": step["at"]},
        "participants": participants, "segments": segments, "claims": claims,
    });
    for field in ["notes", "links", "tags"] {
        if let Some(value) = step.get(field) {
            bundle[field] = value.clone();
        }
    }
    bundle
}

fn candidates_push(claims: &mut Vec<Value>, candidate: Map<String, Value>) {
    claims.push(Value::Object(candidate));
}

struct ScenarioState<'a> {
    engine: &'a Engine,
}

impl ScenarioState<'_> {
    fn view(&self, entity: &str) -> Option<lore_engine::EntityView> {
        let resolved;
        let entity = if entity
            .split_once('@')
            .is_some_and(|(_, m)| !m.contains('.'))
        {
            resolved = entity_id(self.engine, entity);
            resolved.as_str()
        } else {
            entity
        };
        self.engine
            .show(
                OWNER,
                entity,
                &ShowOptions {
                    history: true,
                    include_provisional: true,
                },
            )
            .ok()
    }

    fn claim_id(
        &self,
        subject: &str,
        people: &Map<String, Value>,
        predicate: &str,
        value: &str,
    ) -> String {
        let reference = entity_ref(subject, people);
        let handle = reference["email"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| subject.to_string());
        let view = self
            .view(&handle)
            .unwrap_or_else(|| panic!("no entity {handle}"));
        find_claim(&view, predicate, value, None)
            .unwrap_or_else(|| panic!("no claim {predicate}={value}"))
            .id
            .clone()
    }
}

fn claim_value(claim: &lore_engine::ClaimView) -> String {
    claim
        .object
        .as_ref()
        .map(|o| o.name.clone())
        .or_else(|| claim.value.clone())
        .unwrap_or_default()
}

fn find_claim<'v>(
    view: &'v lore_engine::EntityView,
    predicate: &str,
    value: &str,
    due_at: Option<&str>,
) -> Option<&'v lore_engine::ClaimView> {
    view.claims.iter().find(|claim| {
        claim.predicate == predicate
            && claim_value(claim).eq_ignore_ascii_case(value)
            && due_at.is_none_or(|due| claim.due_at == Ts::parse(due).ok())
    })
}

fn check_expectation(state: &ScenarioState, expect: &Value, context: &str) {
    let entity = expect["entity"].as_str().expect("expect.entity");
    if expect.get("absent") == Some(&json!(true)) {
        assert!(
            state.view(entity).is_none(),
            "{context}: entity {entity} should be gone"
        );
        return;
    }
    let view = state
        .view(entity)
        .unwrap_or_else(|| panic!("{context}: entity {entity} not found"));
    for expected in expect["claims"].as_array().cloned().unwrap_or_default() {
        let predicate = expected["predicate"].as_str().expect("predicate");
        let value = expected["value"].as_str().expect("value");
        let claim = find_claim(&view, predicate, value, expected["due_at"].as_str());
        if expected.get("exists") == Some(&json!(false)) {
            assert!(
                claim.is_none(),
                "{context}: claim {predicate}={value} should not exist"
            );
            continue;
        }
        let claim = claim.unwrap_or_else(|| {
            let known: Vec<String> = view
                .claims
                .iter()
                .map(|c| format!("{}={}", c.predicate, claim_value(c)))
                .collect();
            panic!("{context}: no claim {predicate}={value} on {entity}; has {known:?}")
        });
        let actual = serde_json::to_value(claim).unwrap();
        for (field, wanted) in expected.as_object().unwrap() {
            match field.as_str() {
                "predicate" | "value" | "due_at" | "exists" => {}
                "evidence_count" => assert_eq!(
                    claim.evidence.len() as u64,
                    wanted.as_u64().unwrap(),
                    "{context}: {predicate}={value} evidence count"
                ),
                "superseded_by_value" => {
                    let successor = view
                        .claims
                        .iter()
                        .find(|c| Some(&c.id) == claim.superseded_by.as_ref());
                    assert_eq!(
                        successor.map(claim_value).as_deref(),
                        wanted.as_str(),
                        "{context}: {predicate}={value} superseded_by"
                    );
                }
                "periods" => assert_eq!(
                    claim.periods.len() as u64,
                    wanted.as_u64().unwrap(),
                    "{context}: {predicate}={value} periods"
                ),
                other => assert_eq!(
                    &actual[other], wanted,
                    "{context}: {predicate}={value} field {other}"
                ),
            }
        }
    }
    if let Some(attributes) = expect.get("attributes").and_then(Value::as_object) {
        for (key, wanted) in attributes {
            assert_eq!(
                view.entity.attributes.get(key),
                Some(wanted),
                "{context}: attribute {key} of {entity}"
            );
        }
    }
    if let Some(urls) = expect.get("links").and_then(Value::as_array) {
        let shown: Vec<Value> = view
            .links
            .iter()
            .map(|l| {
                json!({"url": l.url, "type": l.resource_type, "key": l.external_key,
                            "ingested_status": l.ingested_status})
            })
            .collect();
        let shown_urls: Vec<&str> = view.links.iter().map(|l| l.url.as_str()).collect();
        let wanted: Vec<&str> = urls.iter().filter_map(Value::as_str).collect();
        assert_eq!(
            shown_urls, wanted,
            "{context}: links of {entity}: {shown:?}"
        );
        assert!(
            view.links.iter().all(|l| l.ingested_status == "url_only"),
            "{context}: links seen in meetings are url_only"
        );
    }
    if let Some(emails) = expect.get("emails") {
        assert_eq!(
            &json!(view.entity.emails),
            emails,
            "{context}: emails of {entity}"
        );
    }
    if let Some(id) = expect.get("same_as").and_then(Value::as_str) {
        let other = state
            .view(id)
            .unwrap_or_else(|| panic!("{context}: entity {id} not found"));
        assert_eq!(
            view.entity.id, other.entity.id,
            "{context}: {entity} and {id} should be one entity"
        );
    }
    if let Some(id) = expect.get("not_same_as").and_then(Value::as_str) {
        let other = state
            .view(id)
            .unwrap_or_else(|| panic!("{context}: entity {id} not found"));
        assert_ne!(
            view.entity.id, other.entity.id,
            "{context}: {entity} and {id} should be different entities"
        );
    }
    if let Some(status) = expect.get("status") {
        assert_eq!(
            &json!(view.entity.status),
            status,
            "{context}: status of {entity}"
        );
    }
    if let Some(weight) = expect.get("topic_weight").and_then(Value::as_f64) {
        assert!(
            (view.entity.topic_weight - weight).abs() < 1e-3,
            "{context}: topic weight {}",
            view.entity.topic_weight
        );
    }
}

fn run_scenario(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let scenario: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_stem().unwrap().to_string_lossy().to_string();
    for (backend, engine, _dir) in backend_engines(
        &TestClock::new("2026-12-01T00:00:00Z"),
        "scenarios on postgres",
    ) {
        let clock = TestClock::new(scenario["now"].as_str().unwrap_or("2026-12-01T00:00:00Z"));
        let engine = engine.with_clock({
            let shared = clock.0.clone();
            std::sync::Arc::new(move || *shared.lock().unwrap())
        });
        run_steps(&scenario, &format!("{name} [{backend}]"), &engine, &clock);
    }
}

fn run_steps(scenario: &Value, name: &str, engine: &Engine, clock: &TestClock) {
    let state = ScenarioState { engine };
    let mut memory = Memory::default();
    for (index, step) in scenario["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .enumerate()
    {
        let context = format!("{name} step {index}");
        if let Some(now) = step.get("now") {
            clock.set(Ts::parse(now.as_str().unwrap()).unwrap());
        }
        if step.get("meeting").is_some() || step.get("bundle").is_some() {
            let bundle = step
                .get("bundle")
                .cloned()
                .unwrap_or_else(|| expand_meeting(step, &state));
            let parsed = lore_ingest::parse_bundle(&bundle.to_string(), engine.registry(), None);
            match (parsed, step.get("error")) {
                (Ok(bundle), None) => {
                    let report = engine
                        .ingest_bundle(OWNER, &bundle)
                        .unwrap_or_else(|e| panic!("{context}: {e}"));
                    memory.last_revision = Some(report.revision.clone());
                    if let Some(wanted) = step.get("outcome") {
                        assert_eq!(&json!(report.outcome), wanted, "{context}: ingest outcome");
                    }
                    if let Some(wanted) = step.get("rejected") {
                        assert_eq!(
                            report.rejected as u64,
                            wanted.as_u64().unwrap(),
                            "{context}: rejected candidates"
                        );
                    }
                }
                (Err(errors), Some(wanted)) => {
                    let text = errors.to_string();
                    assert!(
                        text.contains(wanted.as_str().unwrap()),
                        "{context}: error {text:?} lacks {wanted}"
                    );
                }
                (Ok(_), Some(wanted)) => panic!("{context}: expected error {wanted}"),
                (Err(errors), None) => panic!("{context}: bundle rejected: {errors}"),
            }
        }
        if let Some(meeting) = step.get("delete_meeting").and_then(Value::as_str) {
            engine
                .delete_source(OWNER, SourceRef::Meeting(meeting))
                .unwrap_or_else(|e| panic!("{context}: {e}"));
        }
        if let Some(manual) = step.get("manual") {
            let field = |name: &str| manual.get(name).and_then(Value::as_str).map(str::to_string);
            let report = engine
                .add_manual_claim(
                    OWNER,
                    &ManualClaim {
                        entity: field("entity").unwrap(),
                        predicate: field("predicate").unwrap(),
                        value: field("value"),
                        object: field("object"),
                        context: field("context"),
                        due_at: field("due_at").map(|d| Ts::parse(&d).unwrap()),
                    },
                )
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            memory.last_revision = Some(report.revision);
        }
        if let Some(retract) = step.get("retract") {
            let entity = retract["entity"].as_str().unwrap();
            let view = state.view(entity).unwrap();
            let claim = find_claim(
                &view,
                retract["predicate"].as_str().unwrap(),
                retract["value"].as_str().unwrap(),
                None,
            )
            .unwrap_or_else(|| panic!("{context}: nothing to retract"));
            let report = engine
                .retract_claim(OWNER, &claim.id)
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            memory.last_revision = Some(report.revision);
        }
        identity_steps(engine, &state, step, &context, &mut memory);
        assert_consistent(engine, OWNER, &context);
        read_side_step(engine, step, &context);
        for expect in step["expect"].as_array().cloned().unwrap_or_default() {
            check_expectation(&state, &expect, &context);
        }
        if let Some(wanted) = step.get("suggestions").and_then(Value::as_object) {
            let suggestions = engine.list_suggestions(OWNER).unwrap();
            for (kind, count) in wanted {
                let actual = suggestions.iter().filter(|s| &s.kind == kind).count() as u64;
                assert_eq!(
                    actual,
                    count.as_u64().unwrap(),
                    "{context}: {kind} suggestions"
                );
            }
        }
    }
}

/// Read-side steps: `search`, `graph`, time travel (`expect_at`) and the erasure check on history.
fn read_side_step(engine: &Engine, step: &Value, context: &str) {
    if let Some(query) = step.get("search").and_then(Value::as_str) {
        let request = SearchRequest {
            query: query.to_string(),
            kind: step.get("kind").and_then(Value::as_str).map(str::to_string),
            limit: 50,
            newest_first: false,
        };
        match (engine.search(OWNER, &request), step.get("expect_error")) {
            (Ok(hits), None) => {
                if let Some(wanted) = step.get("expect_hits").and_then(Value::as_u64) {
                    assert_eq!(
                        hits.len() as u64,
                        wanted,
                        "{context}: hits for {query}: {hits:#?}"
                    );
                }
                if let Some(wanted) = step.get("expect_snippet").and_then(Value::as_str) {
                    assert!(
                        hits.iter().any(|h| h.snippet.contains(wanted)),
                        "{context}: no snippet with {wanted}: {hits:#?}"
                    );
                }
                if let Some(wanted) = step.get("expect_offset").and_then(Value::as_str) {
                    assert_eq!(hits[0].offset.as_deref(), Some(wanted), "{context}: offset");
                    assert!(
                        hits[0].meeting.is_some(),
                        "{context}: hit names its meeting"
                    );
                }
            }
            (Err(error), Some(wanted)) => {
                assert!(
                    error.is_bad_input(),
                    "{context}: {error} should be bad input"
                );
                let text = error.to_string();
                assert!(text.contains(wanted.as_str().unwrap()), "{context}: {text}");
            }
            (Ok(hits), Some(wanted)) => panic!("{context}: expected error {wanted}, got {hits:?}"),
            (Err(error), None) => panic!("{context}: search failed: {error}"),
        }
    }
    if let Some(entity) = step.get("graph").and_then(Value::as_str) {
        let options = GraphOptions {
            hops: step["hops"].as_u64().unwrap_or(1) as u8,
            limit: step["limit"].as_u64().unwrap_or(50) as usize,
            valid_at: step["valid_at"].as_str().map(|t| Ts::parse(t).unwrap()),
        };
        let graph = engine
            .graph(OWNER, entity, &options)
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        if let Some(wanted) = step.get("expect_nodes").and_then(Value::as_u64) {
            assert_eq!(
                graph.node_count() as u64,
                wanted,
                "{context}: nodes {:#?}",
                graph.nodes().collect::<Vec<_>>()
            );
        }
        if let Some(wanted) = step.get("expect_truncated").and_then(Value::as_bool) {
            assert_eq!(graph.truncated, wanted, "{context}: truncated");
        }
        for name in step["expect_node_names"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            assert!(
                graph.nodes().any(|n| json!(n.name) == name),
                "{context}: no node {name}: {:#?}",
                graph.nodes().collect::<Vec<_>>()
            );
        }
        for name in step["expect_no_node_names"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            assert!(
                !graph.nodes().any(|n| json!(n.name) == name),
                "{context}: unexpected node {name}"
            );
        }
        let ids: std::collections::BTreeSet<&str> = graph.nodes().map(|n| n.id).collect();
        for edge in graph.edges() {
            assert!(
                ids.contains(edge.from) && ids.contains(edge.to),
                "{context}: edge to a node that is not shown: {edge:?}"
            );
        }
        if let Some(wanted) = step.get("expect_edges").and_then(Value::as_u64) {
            assert_eq!(
                graph.edge_count() as u64,
                wanted,
                "{context}: edges {:#?}",
                graph.edges().collect::<Vec<_>>()
            );
        }
    }
    for expect in step["expect_at"].as_array().cloned().unwrap_or_default() {
        let at = TimeTravel {
            valid_at: expect["valid_at"].as_str().map(|t| Ts::parse(t).unwrap()),
            known_at: expect["known_at"].as_str().map(|t| Ts::parse(t).unwrap()),
        };
        let entity = expect["entity"].as_str().unwrap();
        let view = engine
            .show_at(OWNER, entity, &at)
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        let label = format!("{context} at {at:?}");
        for expected in expect["claims"].as_array().cloned().unwrap_or_default() {
            let predicate = expected["predicate"].as_str().unwrap();
            let value = expected["value"].as_str().unwrap();
            let claim = find_claim(&view, predicate, value, None).unwrap_or_else(|| {
                panic!(
                    "{label}: no {predicate}={value}; has {:?}",
                    view.claims.iter().map(claim_value).collect::<Vec<_>>()
                )
            });
            let actual = serde_json::to_value(claim).unwrap();
            for (field, wanted) in expected.as_object().unwrap() {
                if !matches!(field.as_str(), "predicate" | "value") {
                    assert_eq!(
                        &actual[field], wanted,
                        "{label}: {predicate}={value} {field}"
                    );
                }
            }
        }
        for absent in expect["absent"].as_array().cloned().unwrap_or_default() {
            let predicate = absent["predicate"].as_str().unwrap();
            let value = absent["value"].as_str().unwrap();
            assert!(
                find_claim(&view, predicate, value, None).is_none(),
                "{label}: {predicate}={value} should not show"
            );
        }
    }
    if step.get("expect_history_clean") == Some(&json!(true)) {
        let problems = engine
            .read(OWNER, |tx| {
                let mut problems = Vec::new();
                for claim in tx.list_claims()? {
                    for row in tx.list_status_changes(&claim.id)? {
                        if let Some(successor) = &row.derived.superseded_by {
                            if tx.find_claim(successor)?.is_none() {
                                problems.push(format!(
                                    "history of {} names deleted claim {successor}",
                                    claim.id
                                ));
                            }
                        }
                    }
                }
                Ok(problems)
            })
            .unwrap();
        assert!(problems.is_empty(), "{context}: {problems:?}");
    }
}

/// What identity steps remember between steps: revisions to undo and saved entity pages.
#[derive(Default)]
struct Memory {
    last_revision: Option<String>,
    revisions: std::collections::BTreeMap<String, String>,
    /// Saved `show --history --include-provisional` JSON by entity id.
    pages: std::collections::BTreeMap<String, String>,
}

/// The entity a step names: an id, email or `kind:key` as `show` takes them, or `NAME@MEETING`
/// for the name-only person of one meeting.
fn entity_id(engine: &Engine, handle: &str) -> String {
    if let Some((name, meeting)) = handle.split_once('@').filter(|(_, m)| !m.contains('.')) {
        let meeting_id = engine
            .list_meetings(OWNER)
            .unwrap()
            .into_iter()
            .find(|m| m.external_id == meeting)
            .unwrap_or_else(|| panic!("no meeting {meeting}"))
            .id;
        return engine
            .list_entities(OWNER)
            .unwrap()
            .into_iter()
            .map(|row| {
                engine
                    .show(OWNER, &row.id, &ShowOptions::default())
                    .unwrap()
            })
            .find(|view| {
                view.entity.name.eq_ignore_ascii_case(name)
                    && view.entity.emails.is_empty()
                    && engine
                        .entity_meetings(OWNER, &view.entity.id)
                        .unwrap()
                        .contains(&meeting_id)
            })
            .unwrap_or_else(|| panic!("no name-only {name} in {meeting}"))
            .entity
            .id;
    }
    engine
        .show(OWNER, handle, &ShowOptions::default())
        .unwrap_or_else(|e| panic!("entity {handle}: {e}"))
        .entity
        .id
}

fn page(engine: &Engine, id: &str) -> String {
    let view = engine
        .show(
            OWNER,
            id,
            &ShowOptions {
                history: true,
                include_provisional: true,
            },
        )
        .unwrap();
    serde_json::to_string_pretty(&view).unwrap()
}

fn identity_steps(
    engine: &Engine,
    _state: &ScenarioState,
    step: &Value,
    context: &str,
    memory: &mut Memory,
) {
    let remember = |memory: &mut Memory, name: Option<&str>, revision: String| {
        if let Some(name) = name {
            memory.revisions.insert(name.to_string(), revision.clone());
        }
        memory.last_revision = Some(revision);
    };
    if let Some(handles) = step.get("save_pages").and_then(Value::as_array) {
        for handle in handles {
            let id = entity_id(engine, handle.as_str().unwrap());
            memory.pages.insert(id.clone(), page(engine, &id));
        }
    }
    if let Some(merge) = step.get("merge") {
        let into = entity_id(engine, merge["into"].as_str().unwrap());
        let from = entity_id(engine, merge["from"].as_str().unwrap());
        let report = engine
            .merge_entities(OWNER, &into, &from)
            .unwrap_or_else(|e| panic!("{context}: merge: {e}"));
        remember(memory, merge["name"].as_str(), report.revision);
    }
    if let Some(split) = step.get("split") {
        let id = entity_id(engine, split["entity"].as_str().unwrap());
        let meetings: Vec<String> = split["meetings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        let report = engine
            .split_entity(OWNER, &id, &lore_engine::SplitSelection::Meetings(meetings))
            .unwrap_or_else(|e| panic!("{context}: split: {e}"));
        remember(memory, split["name"].as_str(), report.revision);
    }
    for (field, accept) in [("accept", true), ("reject", false)] {
        if let Some(kind) = step.get(field).and_then(Value::as_str) {
            let suggestion = engine
                .list_suggestions(OWNER)
                .unwrap()
                .into_iter()
                .find(|s| s.kind == kind && s.status == lore_core::SuggestionStatus::Open)
                .unwrap_or_else(|| panic!("{context}: no open {kind} suggestion"));
            let report = if accept {
                engine.accept_suggestion(OWNER, &suggestion.id)
            } else {
                engine.reject_suggestion(OWNER, &suggestion.id)
            }
            .unwrap_or_else(|e| panic!("{context}: {field}: {e}"));
            remember(memory, None, report.revision);
        }
    }
    if let Some(name) = step.get("save_revision").and_then(Value::as_str) {
        let last = memory.last_revision.clone().expect("a revision to save");
        memory.revisions.insert(name.to_string(), last);
    }
    if let Some(undo) = step.get("undo").and_then(Value::as_str) {
        let revision = if undo == "last" {
            memory.last_revision.clone().expect("a revision to undo")
        } else {
            memory.revisions[undo].clone()
        };
        let result = engine.undo(OWNER, &revision);
        match step.get("undo_error").and_then(Value::as_str) {
            Some(wanted) => {
                let error = result.expect_err("undo should fail").to_string();
                assert!(error.contains(wanted), "{context}: undo error {error}");
            }
            None => {
                let report = result.unwrap_or_else(|e| panic!("{context}: undo: {e}"));
                memory.last_revision = Some(report.revision);
            }
        }
    }
    if let Some(remove) = step.get("remove_participant") {
        let report = engine
            .remove_participant(
                OWNER,
                remove["meeting"].as_str().unwrap(),
                remove["entity"].as_str().unwrap(),
            )
            .unwrap_or_else(|e| panic!("{context}: remove participant: {e}"));
        remember(memory, None, report.revision);
    }
    if let Some(add) = step.get("add_participant") {
        let report = engine
            .add_participant(
                OWNER,
                add["meeting"].as_str().unwrap(),
                add["entity"].as_str().unwrap(),
            )
            .unwrap_or_else(|e| panic!("{context}: add participant: {e}"));
        remember(memory, None, report.revision);
    }
    if let Some(wanted) = step.get("expect_attachments") {
        check_attachments(engine, wanted, context);
    }
    if step.get("pages_unchanged") == Some(&json!(true)) {
        for (id, saved) in &memory.pages {
            assert_eq!(&page(engine, id), saved, "{context}: page of {id} differs");
        }
    }
    if let Some(wanted) = step.get("entity_counts").and_then(Value::as_object) {
        let rows = engine.list_entities(OWNER).unwrap();
        for (kind, count) in wanted {
            let actual = rows.iter().filter(|r| r.kind.as_str() == kind).count() as u64;
            assert_eq!(
                actual,
                count.as_u64().unwrap(),
                "{context}: {kind} entities"
            );
        }
    }
    if let Some(wanted) = step.get("participants") {
        let meeting = wanted["meeting"].as_str().unwrap();
        let rows = engine.list_participants(OWNER, meeting).unwrap();
        let live: Vec<String> = rows
            .iter()
            .filter(|p| p.source != lore_core::MappingSource::Excluded)
            .map(|p| p.display_name.clone())
            .collect();
        let expected: Vec<String> = wanted["live"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        assert_eq!(live, expected, "{context}: live participants of {meeting}");
    }
}

/// `{"meeting": "m1", "rows": [{"url", "entity", "reason", "evidence": true}]}`: the link attachments
/// stored for the meeting, exactly.
fn check_attachments(engine: &Engine, wanted: &Value, context: &str) {
    let external = wanted["meeting"].as_str().unwrap();
    let meeting = engine
        .list_meetings(OWNER)
        .unwrap()
        .into_iter()
        .find(|m| m.external_id == external)
        .unwrap_or_else(|| panic!("{context}: no meeting {external}"))
        .id;
    let (rows, links) = engine
        .read(OWNER, |tx| {
            Ok((
                tx.list_link_attachments_by_meeting(&meeting)?,
                tx.list_resource_links_by_meeting(&meeting)?,
            ))
        })
        .unwrap();
    let mut actual: Vec<Value> = rows
        .iter()
        .map(|row| {
            let url = links
                .iter()
                .find(|l| l.id == row.link)
                .map(|l| l.url.clone());
            json!({"url": url, "entity": row.entity, "reason": row.reason,
                   "evidence": row.evidence.is_some(), "meeting": row.meeting == meeting})
        })
        .collect();
    let mut expected: Vec<Value> = wanted["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            json!({"url": row["url"], "entity": entity_id(engine, row["entity"].as_str().unwrap()),
                   "reason": row["reason"], "evidence": row.get("evidence") == Some(&json!(true)),
                   "meeting": true})
        })
        .collect();
    let key = |v: &Value| v.to_string();
    actual.sort_by_key(key);
    expected.sort_by_key(key);
    assert_eq!(
        actual, expected,
        "{context}: link attachments of {external}"
    );
}

#[test]
fn lifecycle_scenarios() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 14,
        "expected the full scenario suite, found {}",
        files.len()
    );
    let mut covered = std::collections::BTreeSet::new();
    for file in &files {
        let scenario: Value =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        covered.extend(
            scenario["rules"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap().to_string()),
        );
        run_scenario(file);
    }
    for rule in [
        "L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "L9", "L10", "L11", "L12", "L13", "L15",
        "L16", "L18", "L19", "L21",
    ] {
        assert!(covered.contains(rule), "no scenario covers {rule}");
    }
}
