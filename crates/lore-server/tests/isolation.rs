//! Owner isolation (L20) across the whole server surface. The routes come from the OpenAPI document,
//! which is generated from the router's own route list, and the tools from the MCP tool list, so an
//! endpoint or tool added without a case here fails `every_route_and_tool_has_a_case`.
//!
//! Owners A and B each hold data whose every readable string carries their canary. A's token is used
//! against B's ids and canaries in paths, bodies and filters: no B canary may appear in any response
//! (status, headers, body, error) beyond what A itself sent, and B's ids must answer exactly like ids
//! that do not exist.

mod common;

use std::collections::BTreeSet;

use common::*;
use lore_engine::TokenScope;
use serde_json::{json, Value};

const CANARY_A: &str = "canaryaaq";
const CANARY_B: &str = "canarybbq";

/// Ids that exist for nobody, shaped like real ones.
fn unknown_ids() -> OwnerIds {
    OwnerIds {
        meeting: "m_00000000000000000000000000000000".into(),
        external_id: "nobody-meeting".into(),
        note: "n_00000000000000000000000000000000".into(),
        attachment: "a_00000000000000000000000000000000".into(),
        person: "e_00000000000000000000000000000000".into(),
        person_email: "nobody-person@nobody.test".into(),
        person_name: "nobody Person".into(),
        project: "e_11111111111111111111111111111111".into(),
        claim: "c_00000000000000000000000000000000".into(),
        segment: "s1".into(),
        evidence: "v_00000000000000000000000000000000".into(),
        revision: "r_00000000000000000000000000000000".into(),
        suggestion: "s_0000000000000000".into(),
    }
}

/// A's own person, for probes that pair A's entity with one of B's.
fn a_person() -> String {
    format!("{CANARY_A}-person@{CANARY_A}.test")
}

/// Routes that create A's own meeting under an external id B also uses: probed after all others.
fn creates_meeting(method: &str, path: &str) -> bool {
    method == "POST" && (path == "/api/v1/meetings" || path == "/api/v1/transcripts")
}

/// One request: method, uri, body.
type Call = (String, String, Option<Value>);

/// The requests that probe a REST route with `ids` (B's, or unknown ones). `None`: no case written.
fn rest_cases(method: &str, path: &str, ids: &OwnerIds) -> Option<Vec<Call>> {
    let call = |uri: String, body: Option<Value>| (method.to_string(), uri, body);
    let claim_body = |entity: &str| json!({"entity": entity, "predicate": "has_title", "value": "x", "owner": "b"});
    let cases = match (method, path) {
        ("GET", "/api/v1/meetings") => vec![call("/api/v1/meetings?limit=500".into(), None)],
        ("POST", "/api/v1/meetings") => {
            // A bundle reusing B's external id creates A's own meeting: it must not touch or show B's.
            let mut bundle = canary_bundle(CANARY_A);
            bundle["meeting"]["external_id"] = json!(ids.external_id);
            vec![call("/api/v1/meetings".into(), Some(bundle))]
        }
        ("GET", "/api/v1/meetings/{meeting}") | ("DELETE", "/api/v1/meetings/{meeting}") => vec![
            call(format!("/api/v1/meetings/{}", ids.meeting), None),
            call(format!("/api/v1/meetings/{}", ids.external_id), None),
        ],
        ("GET", "/api/v1/meetings/{meeting}/transcript")
        | ("GET", "/api/v1/meetings/{meeting}/delete-preview")
        | ("GET", "/api/v1/meetings/{meeting}/notes") => {
            let suffix = path.rsplit('/').next().unwrap();
            vec![
                call(format!("/api/v1/meetings/{}/{suffix}", ids.meeting), None),
                call(
                    format!("/api/v1/meetings/{}/{suffix}", ids.external_id),
                    None,
                ),
            ]
        }
        ("GET", "/api/v1/meetings/{meeting}/excerpt") => vec![call(
            format!(
                "/api/v1/meetings/{}/excerpt?segment={}&around=2",
                ids.meeting, ids.segment
            ),
            None,
        )],
        ("POST", "/api/v1/meetings/{meeting}/notes") => vec![call(
            format!("/api/v1/meetings/{}/notes", ids.meeting),
            Some(json!({"text": "a note from A"})),
        )],
        ("POST", "/api/v1/meetings/{meeting}/links") => vec![call(
            format!("/api/v1/meetings/{}/links", ids.meeting),
            Some(json!({"url": "https://example.com/a"})),
        )],
        ("POST", "/api/v1/meetings/{meeting}/attachments") => vec![call(
            format!(
                "/api/v1/meetings/{}/attachments?filename=a.txt",
                ids.meeting
            ),
            Some(json!("bytes")),
        )],
        ("DELETE", "/api/v1/notes/{note}") => {
            vec![call(format!("/api/v1/notes/{}", ids.note), None)]
        }
        ("DELETE", "/api/v1/attachments/{attachment}") => {
            vec![call(
                format!("/api/v1/attachments/{}", ids.attachment),
                None,
            )]
        }
        ("GET", "/api/v1/entities") => vec![call("/api/v1/entities?limit=500".into(), None)],
        ("GET", "/api/v1/entities/{entity}")
        | ("GET", "/api/v1/entities/{entity}/history")
        | ("GET", "/api/v1/entities/{entity}/revisions")
        | ("GET", "/api/v1/entities/{entity}/neighborhood") => {
            let queries: &[&str] = match path.rsplit('/').next().unwrap() {
                "history" => &["/history"],
                "revisions" => &["/revisions", "/revisions?limit=200"],
                "neighborhood" => &[
                    "/neighborhood",
                    "/neighborhood?hops=2&limit=500",
                    "/neighborhood?valid_at=2026-11-15",
                ],
                _ => &[
                    "",
                    "?include_provisional=true",
                    "?valid_at=2026-11-15",
                    "?known_at=2026-11-29T00:00:00Z&valid_at=2026-11-02",
                ],
            };
            let mut calls = Vec::new();
            for entity in [
                &ids.person,
                &ids.project,
                &ids.person_email,
                &ids.person_name,
            ] {
                for query in queries {
                    calls.push(call(
                        format!("/api/v1/entities/{}{query}", entity.replace(' ', "%20")),
                        None,
                    ));
                }
            }
            calls
        }
        ("POST", "/api/v1/entities/{entity}/merge") => vec![
            call(
                format!("/api/v1/entities/{}/merge", ids.person),
                Some(json!({"entity": a_person()})),
            ),
            call(
                format!("/api/v1/entities/{}/merge", a_person()),
                Some(json!({"entity": ids.person})),
            ),
            call(
                format!("/api/v1/entities/{}/merge", a_person()),
                Some(json!({"entity": ids.person_email})),
            ),
        ],
        ("PUT", "/api/v1/entities/{entity}/name") => vec![
            call(
                format!("/api/v1/entities/{}/name", ids.person),
                Some(json!({"name": "Renamed by A"})),
            ),
            call(
                format!("/api/v1/entities/{}/name", ids.person_email),
                Some(json!({"name": null})),
            ),
        ],
        ("POST", "/api/v1/entities/{entity}/split") => vec![
            call(
                format!("/api/v1/entities/{}/split", ids.person),
                Some(json!({"meetings": [ids.meeting]})),
            ),
            call(
                format!("/api/v1/entities/{}/split", ids.person_email),
                Some(json!({"evidence": [ids.evidence]})),
            ),
            call(
                format!("/api/v1/entities/{}/split", a_person()),
                Some(json!({"evidence": [ids.evidence]})),
            ),
            call(
                format!("/api/v1/entities/{}/split", a_person()),
                Some(json!({"meetings": [ids.meeting]})),
            ),
        ],
        ("POST", "/api/v1/revisions/{revision}/undo") => vec![call(
            format!("/api/v1/revisions/{}/undo", ids.revision),
            None,
        )],
        ("POST", "/api/v1/suggestions/{suggestion}/accept")
        | ("POST", "/api/v1/suggestions/{suggestion}/reject") => {
            let verb = path.rsplit('/').next().unwrap();
            vec![call(
                format!("/api/v1/suggestions/{}/{verb}", ids.suggestion),
                None,
            )]
        }
        ("GET", "/api/v1/search") => [
            format!("q={CANARY_B}"),
            format!("q=%22{CANARY_B}%20Person%22&kind=entity"),
            format!("q={CANARY_B}*&newest=true&limit=200"),
            format!("q={CANARY_B}&kind=segment"),
            format!("q={CANARY_B}&kind=note"),
            format!("q={CANARY_B}%20chief&kind=claim"),
        ]
        .into_iter()
        .map(|query| call(format!("/api/v1/search?{query}"), None))
        .collect(),
        ("POST", "/api/v1/transcripts") => vec![
            call(
                "/api/v1/transcripts".into(),
                Some(json!({
                    "format": "vtt",
                    "text": format!("WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v {CANARY_A} Person>I am now {CANARY_A} lead.\n"),
                    "meeting": {"external_id": ids.external_id, "started_at": "2026-11-02T10:00:00Z",
                                "title": format!("{CANARY_A} transcript")},
                    "participants": [{"display_name": format!("{CANARY_A} Person"), "email": ids.person_email}]
                })),
            ),
            call(
                "/api/v1/transcripts".into(),
                Some(json!({
                    "format": "txt", "text": "Someone: hello", "owner": "owner-b",
                    "meeting": {"external_id": ids.external_id, "started_at": "2026-11-02"}
                })),
            ),
        ],
        // A form upload; a JSON body naming B's external id and canaries is refused before anything
        // is read (the multipart path itself is covered in rest.rs, the owner comes from the token).
        ("POST", "/api/v1/transcripts/file") => vec![call(
            "/api/v1/transcripts/file".into(),
            Some(
                json!({"metadata": {"meeting": {"external_id": ids.external_id, "started_at": "2026-11-02"}},
                        "file": format!("Someone: {CANARY_A}")}),
            ),
        )],
        ("POST", "/api/v1/claims") | ("POST", "/api/v1/claims/override") => vec![
            call(path.to_string(), Some(claim_body(&ids.person))),
            call(path.to_string(), Some(claim_body(&ids.person_email))),
            call(
                path.to_string(),
                Some(
                    claim_body(&ids.person)
                        .as_object()
                        .map(|o| {
                            let mut o = o.clone();
                            o.remove("owner");
                            Value::Object(o)
                        })
                        .unwrap(),
                ),
            ),
        ],
        ("POST", "/api/v1/claims/{claim}/retract") => {
            vec![call(format!("/api/v1/claims/{}/retract", ids.claim), None)]
        }
        ("GET", "/api/v1/suggestions") => vec![call("/api/v1/suggestions".into(), None)],
        ("GET", "/api/v1/deadlines") => vec![call("/api/v1/deadlines?limit=500".into(), None)],
        ("GET", "/api/v1/tasks") => vec![call("/api/v1/tasks?limit=500".into(), None)],
        _ => return None,
    };
    Some(cases)
}

/// The arguments that probe an MCP tool with `ids`. `None`: no case written.
fn tool_cases(name: &str, ids: &OwnerIds) -> Option<Vec<Value>> {
    let entities = [
        &ids.person,
        &ids.project,
        &ids.person_email,
        &ids.person_name,
    ];
    let cases = match name {
        "get_entity" => entities
            .iter()
            .map(|e| json!({"entity": e, "include_provisional": true}))
            .collect(),
        "entity_history" => entities.iter().map(|e| json!({"entity": e})).collect(),
        "list_deadlines" => vec![json!({})],
        "list_tasks" => vec![json!({}), json!({"status": "open"})],
        "get_meeting_excerpt" => vec![
            json!({"meeting": ids.meeting, "segment": ids.segment}),
            json!({"meeting": ids.external_id, "segment": ids.segment, "around": 20}),
        ],
        "add_note" => vec![json!({"meeting": ids.meeting, "text": "a note from A"})],
        "add_claim" => vec![
            json!({"entity": ids.person, "predicate": "has_title", "value": "x"}),
            json!({"entity": ids.person_email, "predicate": "has_title", "value": "x"}),
        ],
        "retract_claim" => vec![json!({"claim": ids.claim})],
        "search" => vec![
            json!({"query": CANARY_B}),
            json!({"query": format!("\"{CANARY_B} Person\""), "kind": "entity"}),
            json!({"query": format!("{CANARY_B}*"), "newest_first": true, "limit": 200}),
            json!({"query": format!("{CANARY_B} note"), "kind": "note"}),
        ],
        "neighborhood" => entities
            .iter()
            .map(|e| json!({"entity": e, "hops": 2, "limit": 500}))
            .collect(),
        _ => return None,
    };
    Some(cases)
}

fn openapi_routes() -> Vec<(String, String)> {
    let document = serde_json::to_value(lore_server::openapi()).unwrap();
    let mut routes = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                routes.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    routes
}

/// Replaces every string A sent (path segments, query values, body strings) so that echoes of A's own
/// input do not count as leaks.
fn strip_inputs(text: &str, inputs: &[String]) -> String {
    let mut text = text.to_string();
    let mut inputs: Vec<&String> = inputs.iter().filter(|s| s.len() > 2).collect();
    inputs.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for input in inputs {
        text = text.replace(input.as_str(), "<input>");
    }
    text
}

fn inputs_of(uri: &str, body: &Option<Value>) -> Vec<String> {
    let mut inputs: Vec<String> = uri
        .split(['/', '?', '&', '='])
        .map(|s| s.replace("%20", " "))
        .collect();
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    if let Some(body) = body {
        walk(body, &mut inputs);
    }
    inputs
}

fn assert_no_canary(what: &str, text: &str) {
    assert!(
        !text.to_lowercase().contains(CANARY_B),
        "{what}: B's canary leaked to A:\n{text}"
    );
}

/// Makes a B-id response comparable with the unknown-id one.
fn normalize(text: &str, ids: &OwnerIds) -> String {
    let mut text = text.to_string();
    for (value, kind) in [
        (&ids.meeting, "<meeting>"),
        (&ids.external_id, "<external>"),
        (&ids.note, "<note>"),
        (&ids.attachment, "<attachment>"),
        (&ids.person, "<person>"),
        (&ids.person_email, "<email>"),
        (&ids.person_name, "<name>"),
        (&ids.project, "<project>"),
        (&ids.claim, "<claim>"),
        (&ids.evidence, "<evidence>"),
        (&ids.revision, "<revision>"),
        (&ids.suggestion, "<suggestion>"),
    ] {
        text = text.replace(value.as_str(), kind);
    }
    // serde reports the byte column of a problem, which moves with the length of the id sent.
    if let Some(index) = text.find(" at line ") {
        let end = text[index..]
            .find('"')
            .map(|e| index + e)
            .unwrap_or(text.len());
        text.replace_range(index..end, "");
    }
    // Revision ids and fresh row ids differ between two writes by nature.
    let revision = regex_lite_replace(&text, "r_", 32);
    regex_lite_replace(&revision, "t_", 20)
}

/// Replaces `prefix` followed by `len` hex digits with `prefix<id>`.
fn regex_lite_replace(text: &str, prefix: &str, len: usize) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(index) = rest.find(prefix) {
        out.push_str(&rest[..index + prefix.len()]);
        let after = &rest[index + prefix.len()..];
        let hex = after.chars().take_while(|c| c.is_ascii_hexdigit()).count();
        if hex >= len {
            out.push_str("<id>");
            rest = &after[hex..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn every_route_and_tool_has_a_case() {
    let ids = unknown_ids();
    let missing_routes: Vec<String> = openapi_routes()
        .into_iter()
        .filter(|(method, path)| rest_cases(method, path, &ids).is_none())
        .map(|(method, path)| format!("{method} {path}"))
        .collect();
    assert!(
        missing_routes.is_empty(),
        "routes without an isolation case: {missing_routes:?}"
    );
    let missing_tools: Vec<&str> = lore_server::tool_specs()
        .iter()
        .map(|spec| spec.name)
        .filter(|name| tool_cases(name, &ids).is_none())
        .collect();
    assert!(
        missing_tools.is_empty(),
        "tools without an isolation case: {missing_tools:?}"
    );
    assert!(
        openapi_routes().len() >= 26,
        "the route list is read from the router"
    );
}

#[tokio::test]
async fn owner_a_never_sees_owner_b() {
    let fixture = fixture();
    let engine = fixture.engine.clone();
    let a_ids = seed_owner(&engine, "owner-a", CANARY_A);
    let mut b_ids = seed_owner(&engine, "owner-b", CANARY_B);
    seed_review_work(&engine, "owner-b", CANARY_B, &mut b_ids);
    let token_a = token(&engine, "owner-a", TokenScope::Write);
    let unknown = unknown_ids();
    let b_state_before = lore_engine::state_dump(&engine, "owner-b").unwrap();

    // Positive control: A's own data does carry A's canary, so the probe below could see a leak.
    let own = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/entities/{}", a_ids.person),
        Some(&token_a),
        None,
    )
    .await;
    assert!(own.body.contains(CANARY_A), "{}", own.body);

    // Ingesting a bundle or transcript that reuses B's external id gives A a meeting of its own
    // under the same (hash-derived) id, so those cases run last, after every probe of B's ids.
    let mut routes = openapi_routes();
    routes.sort_by_key(|(method, path)| creates_meeting(method, path));
    let mut probed = BTreeSet::new();
    let mut mcp_probed = false;
    for (method, path) in routes.iter() {
        if creates_meeting(method, path) && !mcp_probed {
            mcp_probes(&fixture, &token_a, &b_ids, &unknown).await;
            mcp_probed = true;
        }
        let b_cases = rest_cases(method, path, &b_ids).unwrap();
        let unknown_cases = rest_cases(method, path, &unknown).unwrap();
        for (b_case, unknown_case) in b_cases.into_iter().zip(unknown_cases) {
            let (method, uri, body) = b_case;
            let raw_body = path.ends_with("/attachments");
            let b_reply = if raw_body {
                send_raw(&fixture.router, &method, &uri, &token_a).await
            } else {
                send(&fixture.router, &method, &uri, Some(&token_a), body.clone()).await
            };
            let what = format!("{method} {uri}");
            assert!(
                b_reply.status.as_u16() < 500,
                "{what}: {} {}",
                b_reply.status,
                b_reply.body
            );
            let inputs = inputs_of(&uri, &body);
            assert_no_canary(&what, &strip_inputs(&b_reply.headers, &inputs));
            assert_no_canary(&what, &strip_inputs(&b_reply.body, &inputs));
            if uri.contains(&b_ids.meeting)
                || uri.contains(&b_ids.note)
                || uri.contains(&b_ids.attachment)
                || uri.contains(&b_ids.claim)
                || uri.contains(&b_ids.revision)
                || uri.contains(&b_ids.suggestion)
                || uri.contains("/entities/")
                || body.as_ref().is_some_and(|b| b.get("entity").is_some())
            {
                let (u_method, u_uri, u_body) = unknown_case;
                let u_reply = if raw_body {
                    send_raw(&fixture.router, &u_method, &u_uri, &token_a).await
                } else {
                    send(&fixture.router, &u_method, &u_uri, Some(&token_a), u_body).await
                };
                assert_eq!(
                    (b_reply.status, normalize(&b_reply.body, &b_ids)),
                    (u_reply.status, normalize(&u_reply.body, &unknown)),
                    "{what}: B's id must answer exactly like an unknown id"
                );
                if !matches!(b_reply.status.as_u16(), 400 | 422) {
                    assert_eq!(b_reply.status, 404, "{what}: {}", b_reply.body);
                }
            }
            probed.insert(format!("{method} {path}"));
        }
    }
    assert!(mcp_probed);
    assert_eq!(probed.len(), openapi_routes().len());

    // Nothing A did changed B's data.
    assert_eq!(
        lore_engine::state_dump(&engine, "owner-b").unwrap(),
        b_state_before,
        "B's state changed"
    );
    let _ = a_ids;
}

/// Every MCP tool, through the real streamable HTTP endpoint.
async fn mcp_probes(fixture: &Fixture, token_a: &str, b_ids: &OwnerIds, unknown: &OwnerIds) {
    let mut session = McpSession::open(&fixture.router, token_a).await;
    for spec in lore_server::tool_specs() {
        let b_cases = tool_cases(spec.name, b_ids).unwrap();
        let unknown_cases = tool_cases(spec.name, unknown).unwrap();
        for (b_args, unknown_args) in b_cases.into_iter().zip(unknown_cases) {
            let what = format!("tool {} {b_args}", spec.name);
            let b_result = session.call(spec.name, b_args.clone()).await;
            let text = b_result.to_string();
            assert!(b_result.get("result").is_some(), "{what}: {text}");
            assert_no_canary(
                &what,
                &strip_inputs(&text, &inputs_of("", &Some(b_args.clone()))),
            );
            let names_b = b_args.to_string().contains(&b_ids.person)
                || b_args.to_string().contains(&b_ids.meeting)
                || b_args.to_string().contains(&b_ids.claim)
                || b_args.get("entity").is_some()
                || b_args.get("meeting").is_some();
            if names_b {
                let u_result = session.call(spec.name, unknown_args).await;
                assert_eq!(
                    normalize(&b_result["result"].to_string(), b_ids),
                    normalize(&u_result["result"].to_string(), unknown),
                    "{what}: B's id must answer exactly like an unknown id"
                );
                assert_eq!(b_result["result"]["isError"], json!(true), "{what}: {text}");
            }
        }
    }
}

async fn send_raw(router: &axum::Router, method: &str, uri: &str, token: &str) -> Reply {
    use tower::ServiceExt;
    let request = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1:7700")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "text/plain")
        .body(axum::body::Body::from("some bytes"))
        .unwrap();
    reply(router.clone().oneshot(request).await.unwrap()).await
}

// ---------------------------------------------------------------------------------------------
// The web workspace: every page and form, signed in as A, probed with B's ids.

/// The requests that probe a workspace route (`lore_server::web::ROUTES`) with `ids`; `a` is A's
/// own ids (for forms whose path names A's entity and whose fields name B's). `None`: no case.
fn web_cases(method: &str, path: &str, ids: &OwnerIds, a: &OwnerIds) -> Option<Vec<WebCall>> {
    let get = |uri: String| (String::from("GET"), uri, Vec::new());
    let post = |uri: String, fields: Vec<(&str, String)>| {
        (
            String::from("POST"),
            uri,
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect::<Vec<_>>(),
        )
    };
    let entity_form = |suffix: &str, fields: Vec<(&str, String)>| {
        vec![post(format!("/entities/{}/{suffix}", ids.person), fields)]
    };
    let cases = match (method, path) {
        ("GET", "/") => vec![get("/".into()), get("/?page=2".into())],
        ("GET", "/signin") => vec![get("/signin".into())],
        ("POST", "/signin") => vec![post(
            "/signin".into(),
            vec![
                ("username", "owner-b".into()),
                ("password", "not a password".into()),
            ],
        )],
        ("POST", "/signout") => return Some(Vec::new()),
        ("GET", "/search") => vec![
            get(format!("/search?q={CANARY_B}")),
            get(format!("/search?q={}", ids.person_name.replace(' ', "+"))),
        ],
        ("GET", "/entities/{id}") => vec![
            get(format!("/entities/{}", ids.person)),
            get(format!("/entities/{}?tab=history", ids.person)),
            get(format!("/entities/{}", ids.project)),
        ],
        ("POST", "/entities/{id}/claims") => entity_form(
            "claims",
            vec![("predicate", "has_title".into()), ("value", "x".into())],
        ),
        ("POST", "/entities/{id}/override") => entity_form(
            "override",
            vec![("predicate", "has_title".into()), ("value", "x".into())],
        ),
        ("POST", "/entities/{id}/retract") => {
            let mut cases = entity_form("retract", vec![("claim", ids.claim.clone())]);
            // A's own entity with B's claim.
            cases.push(post(
                format!("/entities/{}/retract", a.person),
                vec![("claim", ids.claim.clone())],
            ));
            cases
        }
        ("POST", "/entities/{id}/merge") => {
            let mut cases = entity_form("merge", vec![("other", a.person.clone())]);
            // A's own entity absorbing B's, by id and by email: B's entity is not found.
            for other in [&ids.person, &ids.person_email] {
                cases.push(post(
                    format!("/entities/{}/merge", a.person),
                    vec![("other", other.clone())],
                ));
            }
            cases
        }
        ("POST", "/entities/{id}/split") => {
            let mut cases = entity_form("split", vec![("meeting", ids.external_id.clone())]);
            cases.push(post(
                format!("/entities/{}/split", a.person),
                vec![("meeting", ids.external_id.clone())],
            ));
            cases.push(post(
                format!("/entities/{}/split", a.person),
                vec![("evidence", ids.evidence.clone())],
            ));
            cases
        }
        ("POST", "/entities/{id}/pin") => entity_form("pin", vec![("pinned", "true".into())]),
        ("POST", "/entities/{id}/name") => {
            let mut requests = entity_form("name", vec![("name", "Renamed by B".into())]);
            requests.extend(entity_form("name", vec![("clear", "true".into())]));
            requests
        }
        ("POST", "/revisions/{id}/undo") => vec![post(
            format!("/revisions/{}/undo", ids.revision),
            vec![("back", a.person.clone())],
        )],
        ("GET", "/meetings/{id}") => vec![
            get(format!("/meetings/{}", ids.meeting)),
            get(format!(
                "/meetings/{}?seg={}#seg-{}",
                ids.meeting, ids.segment, ids.segment
            )),
            get(format!("/meetings/{}", ids.external_id)),
        ],
        ("GET", "/meetings/{id}/delete") => vec![get(format!("/meetings/{}/delete", ids.meeting))],
        ("POST", "/meetings/{id}/delete") => vec![
            post(format!("/meetings/{}/delete", ids.meeting), Vec::new()),
            post(format!("/meetings/{}/delete", ids.external_id), Vec::new()),
        ],
        ("GET", "/meetings/{id}/attachments/{attachment}") => vec![
            get(format!(
                "/meetings/{}/attachments/{}",
                ids.meeting, ids.attachment
            )),
            // A's meeting with B's attachment.
            get(format!(
                "/meetings/{}/attachments/{}",
                a.meeting, ids.attachment
            )),
        ],
        ("GET", "/graph/{id}") => vec![
            get(format!("/graph/{}?hops=1", ids.person)),
            get(format!("/graph/{}?hops=2", ids.project)),
        ],
        ("GET", "/graph/{id}/edge/{claim}") => vec![
            get(format!("/graph/{}/edge/{}", ids.person, ids.claim)),
            get(format!("/graph/{}/edge/{}", a.person, ids.claim)),
        ],
        ("GET", "/review") => vec![get("/review".into())],
        ("POST", "/review/{id}/accept") | ("POST", "/review/{id}/reject") => {
            let verb = path.rsplit('/').next().unwrap();
            vec![post(
                format!("/review/{}/{verb}", ids.suggestion),
                Vec::new(),
            )]
        }
        ("GET", "/assets/app.css") => vec![get("/assets/app.css".into())],
        _ => return None,
    };
    Some(cases)
}

/// One workspace request: method, uri, form fields (the CSRF token is added when sent).
type WebCall = (String, String, Vec<(String, String)>);

#[test]
fn every_web_route_has_a_case() {
    let ids = unknown_ids();
    let missing: Vec<String> = lore_server::web::ROUTES
        .iter()
        .filter(|(method, path)| web_cases(method, path, &ids, &ids).is_none())
        .map(|(method, path)| format!("{method} {path}"))
        .collect();
    assert!(
        missing.is_empty(),
        "web routes without an isolation case: {missing:?}"
    );
}

#[tokio::test]
async fn owner_a_never_sees_or_changes_owner_b_in_the_workspace() {
    use common::web::Browser;

    let fixture = fixture();
    let engine = fixture.engine.clone();
    let a_ids = seed_owner(&engine, "owner-a", CANARY_A);
    let mut b_ids = seed_owner(&engine, "owner-b", CANARY_B);
    seed_review_work(&engine, "owner-b", CANARY_B, &mut b_ids);
    let unknown = unknown_ids();
    let b_state_before = lore_engine::state_dump(&engine, "owner-b").unwrap();
    let browser = Browser::signed_in(&fixture, "owner-a").await;
    let csrf = browser.get("/").await.csrf();

    // Positive control: A's own page shows A's canary.
    let own = browser.get(&format!("/entities/{}", a_ids.person)).await;
    assert!(own.body.contains(CANARY_A), "{}", own.body);

    let send = |call: WebCall| {
        let browser = &browser;
        let csrf = csrf.clone();
        async move {
            let (method, uri, fields) = call;
            if method == "GET" {
                browser.get(&uri).await
            } else {
                let mut all: Vec<(&str, &str)> = vec![("csrf", csrf.as_str())];
                all.extend(fields.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                browser.post(&uri, &all).await
            }
        }
    };
    for (method, path) in lore_server::web::ROUTES {
        let b_cases = web_cases(method, path, &b_ids, &a_ids).unwrap();
        let unknown_cases = web_cases(method, path, &unknown, &a_ids).unwrap();
        for (b_case, unknown_case) in b_cases.into_iter().zip(unknown_cases) {
            let what = format!("{} {}", b_case.0, b_case.1);
            let inputs: Vec<String> = inputs_of(&b_case.1, &None)
                .into_iter()
                .chain(b_case.2.iter().map(|(_, v)| v.clone()))
                .chain(
                    b_case
                        .1
                        .split(['?', '&', '=', '+', '#'])
                        .map(str::to_string),
                )
                .collect();
            let names_b = [
                &b_ids.person,
                &b_ids.project,
                &b_ids.meeting,
                &b_ids.external_id,
                &b_ids.attachment,
                &b_ids.claim,
                &b_ids.revision,
                &b_ids.suggestion,
                &b_ids.evidence,
                &b_ids.person_email,
            ]
            .iter()
            .any(|id| b_case.1.contains(id.as_str()) || b_case.2.iter().any(|(_, v)| v == *id));
            let b_reply = send(b_case).await;
            assert!(b_reply.status.as_u16() < 500, "{what}: {}", b_reply.body);
            // The flash of a refused form shows on the next page: read it too.
            let shown = if b_reply.status == 303 {
                browser.get(b_reply.location()).await.body
            } else {
                b_reply.body.clone()
            };
            assert_no_canary(&what, &strip_inputs(&b_reply.body, &inputs));
            assert_no_canary(&what, &strip_inputs(&shown, &inputs));
            if names_b {
                let u_reply = send(unknown_case).await;
                let u_shown = if u_reply.status == 303 {
                    browser.get(u_reply.location()).await.body
                } else {
                    u_reply.body.clone()
                };
                assert_eq!(
                    (b_reply.status, normalize(&shown, &b_ids)),
                    (u_reply.status, normalize(&u_shown, &unknown)),
                    "{what}: B's id must answer exactly like an unknown id"
                );
                if b_reply.status != 303 {
                    assert_eq!(b_reply.status, 404, "{what}: {}", b_reply.body);
                }
            }
        }
    }

    // Nothing A did changed B's data.
    assert_eq!(
        lore_engine::state_dump(&engine, "owner-b").unwrap(),
        b_state_before,
        "B's state changed"
    );
}
