//! Shared fixtures for the server tests: an engine on a temporary database, canary bundles for two
//! owners, and small HTTP and MCP clients that drive the router in-process (`oneshot`, no sockets).
#![allow(dead_code)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use axum::Router;
use lore_core::Ts;
use lore_engine::{Engine, ShowOptions, TokenScope};
use lore_server::ServerConfig;
use lore_store::SqliteStore;
use serde_json::{json, Value};
use tower::ServiceExt;

/// The fixed clock of every server test.
pub const NOW: &str = "2026-11-29T12:00:00Z";

pub mod web;

pub struct Fixture {
    pub engine: Arc<Engine>,
    pub router: Router,
    pub sessions: Arc<lore_server::web::Sessions>,
    pub _dir: tempfile::TempDir,
}

pub fn engine_at(dir: &std::path::Path, now: &str) -> Engine {
    let store = SqliteStore::open(&dir.join("lore.db")).expect("open database");
    let fixed = Ts::parse(now).expect("valid time");
    Engine::new(Box::new(store)).with_clock(Arc::new(move || fixed))
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Arc::new(engine_at(dir.path(), NOW));
    let app = lore_server::app(engine.clone(), test_config());
    Fixture {
        engine,
        router: app.router,
        sessions: app.sessions.clone(),
        _dir: dir,
    }
}

pub fn test_config() -> ServerConfig {
    ServerConfig::local("127.0.0.1:7700".parse().unwrap())
}

pub fn token(engine: &Engine, owner: &str, scope: TokenScope) -> String {
    engine
        .create_token(owner, scope, None, None)
        .expect("create token")
        .secret
}

/// A bundle whose every human-readable string contains `canary`, so any leak of it is detectable.
pub fn canary_bundle(canary: &str) -> Value {
    let person = json!({"kind": "person", "name": format!("{canary} Person"), "email": format!("{canary}-person@{canary}.test")});
    let project = json!({"kind": "project", "name": format!("{canary} project"), "key": format!("{canary}-project")});
    json!({
        "meeting": {"external_id": format!("{canary}-meeting"), "title": format!("{canary} title meeting"),
                    "started_at": "2026-11-01T10:00:00Z", "ended_at": "2026-11-01T10:30:00Z"},
        "participants": [{"display_name": format!("{canary} Person"), "email": format!("{canary}-person@{canary}.test"), "speaker_label": "S1"}],
        "segments": [
            {"id": "s1", "start_ms": 0, "end_ms": 4000, "speaker": "S1", "attribution": "one_mapped_source",
             "text": format!("I am now {canary} chief at the company.")},
            {"id": "s2", "start_ms": 65000, "end_ms": 69000, "speaker": "S1", "attribution": "one_mapped_source",
             "text": format!("The {canary} project launch is due by 2026-12-20.")}
        ],
        "notes": [{"id": "n1", "created_at": "2026-11-01T10:10:00Z", "text": format!("{canary} note text")}],
        "links": [{"url": format!("https://{canary}.test/page"), "label": format!("{canary} link"), "provenance": "meeting_chat"}],
        "tasks": [{"title": format!("{canary} task"), "assignee": person, "project": project, "due_at": "2026-12-20",
                   "status": "open", "evidence": {"segment_ids": ["s2"], "quote": format!("{canary} project launch")}}],
        "claims": [
            {"subject": person, "predicate": "has_title", "value": format!("{canary} chief"), "authority": "first_party",
             "confidence": 0.9, "evidence": {"segment_ids": ["s1"], "quote": format!("I am now {canary} chief")}},
            {"subject": project, "predicate": "has_deadline", "value": format!("{canary} project launch"), "due_at": "2026-12-20",
             "authority": "first_party", "confidence": 0.9,
             "evidence": {"segment_ids": ["s2"], "quote": format!("The {canary} project launch is due by 2026-12-20.")}}
        ]
    })
}

/// Every id a canary owner's data has, by kind.
#[derive(Clone, Debug, Default)]
pub struct OwnerIds {
    pub meeting: String,
    pub external_id: String,
    pub note: String,
    pub attachment: String,
    pub person: String,
    pub person_email: String,
    pub person_name: String,
    pub project: String,
    pub claim: String,
    pub segment: String,
    /// Filled by [`seed_review_work`].
    pub evidence: String,
    pub revision: String,
    pub suggestion: String,
}

/// Ingests the canary bundle for `owner`, adds an attachment, and returns the ids.
pub fn seed_owner(engine: &Engine, owner: &str, canary: &str) -> OwnerIds {
    let report = engine
        .ingest_bundle_json(owner, &canary_bundle(canary).to_string())
        .expect("canary bundle ingests");
    let detail = engine.get_meeting(owner, &report.meeting).unwrap();
    let attachment = engine
        .add_attachment(
            owner,
            &report.meeting,
            &format!("{canary}-file.txt"),
            "text/plain",
            format!("{canary} bytes").as_bytes(),
        )
        .unwrap();
    let person_email = format!("{canary}-person@{canary}.test");
    let person = engine
        .show(owner, &person_email, &ShowOptions::default())
        .unwrap();
    let project = engine
        .show(
            owner,
            &format!("project:{canary}-project"),
            &ShowOptions::default(),
        )
        .unwrap();
    OwnerIds {
        meeting: report.meeting,
        external_id: report.external_id,
        note: detail.notes[0].id.clone(),
        attachment: attachment.id,
        person: person.entity.id.clone(),
        person_email,
        person_name: format!("{canary} Person"),
        project: project.entity.id.clone(),
        claim: person.claims[0].id.clone(),
        segment: "s1".into(),
        ..OwnerIds::default()
    }
}

/// Gives `owner` a review-queue entry (a manual title, then a meeting after it contradicting it: a
/// claim conflict, L6) and fills `ids` with it, the later meeting's revision and an evidence id.
pub fn seed_review_work(engine: &Engine, owner: &str, canary: &str, ids: &mut OwnerIds) {
    engine
        .override_claim(
            owner,
            &lore_engine::ManualClaim {
                entity: ids.person_email.clone(),
                predicate: "has_title".into(),
                value: Some(format!("{canary} manual title")),
                object: None,
                context: None,
                due_at: None,
            },
        )
        .expect("manual title");
    let mut later = canary_bundle(canary);
    later["meeting"]["external_id"] = json!(format!("{canary}-meeting-2"));
    later["meeting"]["started_at"] = json!("2026-11-29T12:10:00Z");
    later["meeting"]["ended_at"] = json!("2026-11-29T12:40:00Z");
    later["segments"][0]["text"] = json!(format!("I am now {canary} director at the company."));
    later["claims"][0]["value"] = json!(format!("{canary} director"));
    later["claims"][0]["evidence"]["quote"] = json!(format!("I am now {canary} director"));
    let report = engine
        .ingest_bundle_json(owner, &later.to_string())
        .expect("later bundle ingests");
    let suggestions = engine.list_suggestions(owner).unwrap();
    let suggestion = suggestions
        .iter()
        .find(|s| s.kind == "claim_conflict")
        .unwrap_or_else(|| panic!("a claim conflict: {suggestions:?}"));
    let person = engine
        .show(owner, &ids.person_email, &ShowOptions::default())
        .unwrap();
    ids.suggestion = suggestion.id.clone();
    ids.revision = report.revision;
    ids.evidence = person.claims[0].evidence[0].id.clone();
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: String,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

pub async fn reply(response: Response<Body>) -> Reply {
    let status = response.status();
    let headers = format!("{:?}", response.headers());
    let bytes = axum::body::to_bytes(response.into_body(), 64 * 1024 * 1024)
        .await
        .expect("body");
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// Sends one request through the router.
pub async fn send(
    router: &Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Reply {
    let mut builder = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1:7700");
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    let request = match body {
        Some(body) => builder
            .header("content-type", "application/json")
            .body(Body::from(body.to_string())),
        None => builder.body(Body::empty()),
    }
    .unwrap();
    reply(router.clone().oneshot(request).await.unwrap()).await
}

/// A minimal MCP client over the router's streamable HTTP endpoint.
pub struct McpSession {
    router: Router,
    token: String,
    session: Option<String>,
    next_id: u64,
}

impl McpSession {
    pub async fn open(router: &Router, token: &str) -> McpSession {
        let mut session = McpSession {
            router: router.clone(),
            token: token.to_string(),
            session: None,
            next_id: 1,
        };
        let (headers, result) = session
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "lore-tests", "version": "1"}}}),
            )
            .await;
        assert!(result["result"]["serverInfo"]["name"] == "lore", "{result}");
        session.session = headers
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        session
    }

    async fn post(&mut self, message: Value) -> (axum::http::HeaderMap, Value) {
        let mut builder = Request::builder()
            .method("POST")
            .uri("/mcp")
            .header("host", "127.0.0.1:7700")
            .header("authorization", format!("Bearer {}", self.token))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            builder = builder.header("mcp-session-id", session);
        }
        let response = self
            .router
            .clone()
            .oneshot(builder.body(Body::from(message.to_string())).unwrap())
            .await
            .unwrap();
        let headers = response.headers().clone();
        let reply = reply(response).await;
        let value = reply
            .body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|v| v.get("id").is_some())
            .or_else(|| serde_json::from_str(&reply.body).ok())
            .unwrap_or(Value::Null);
        (headers, value)
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
            .1
    }

    pub async fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({})).await;
        listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list: {listed}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// Calls a tool; returns the whole JSON-RPC response.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }
}
