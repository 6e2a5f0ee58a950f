//! The REST API's contract: authentication and scopes, JSON errors, pagination caps, body limits,
//! the `lore show --json` shape, the OpenAPI document, and the public endpoints.

mod common;

use common::*;
use lore_engine::{ShowOptions, TokenScope};
use serde_json::json;

#[tokio::test]
async fn every_api_route_needs_a_bearer_token_and_says_how_to_get_one() {
    let fixture = fixture();
    for uri in ["/api/v1/entities", "/api/v1/meetings", "/mcp"] {
        let reply = send(&fixture.router, "GET", uri, None, None).await;
        assert_eq!(reply.status, 401, "{uri}");
        assert!(
            reply
                .headers
                .contains("Bearer realm=\\\"lore\\\", resource_metadata=\\\"http://127.0.0.1:7700/.well-known/oauth-protected-resource\\\""),
            "{uri}: {}",
            reply.headers
        );
        assert_eq!(reply.json()["error"]["code"], "unauthorized", "{uri}");
    }
    let reply = send(
        &fixture.router,
        "GET",
        "/api/v1/entities",
        Some("lore_not-a-real-token"),
        None,
    )
    .await;
    assert_eq!(reply.status, 401);
    assert!(reply.headers.contains("invalid_token"), "{}", reply.headers);
}

#[tokio::test]
async fn an_expired_or_revoked_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let created = {
        let engine = engine_at(dir.path(), "2026-01-01T00:00:00Z");
        engine
            .create_token("alice", TokenScope::Read, Some(30), None)
            .unwrap()
    };
    let later = std::sync::Arc::new(engine_at(dir.path(), "2026-02-01T00:00:00Z"));
    let router = lore_server::app(later.clone(), test_config()).router;
    let reply = send(
        &router,
        "GET",
        "/api/v1/entities",
        Some(&created.secret),
        None,
    )
    .await;
    assert_eq!(reply.status, 401, "{}", reply.body);

    let fresh = token(&later, "alice", TokenScope::Read);
    assert_eq!(
        send(&router, "GET", "/api/v1/entities", Some(&fresh), None)
            .await
            .status,
        200
    );
    let id = later
        .list_tokens(Some("alice"))
        .unwrap()
        .last()
        .unwrap()
        .id
        .clone();
    later.revoke_token(&id).unwrap();
    assert_eq!(
        send(&router, "GET", "/api/v1/entities", Some(&fresh), None)
            .await
            .status,
        401
    );
}

#[tokio::test]
async fn only_the_hash_of_a_token_is_stored() {
    let fixture = fixture();
    let secret = token(&fixture.engine, "alice", TokenScope::Write);
    let dump = std::fs::read(fixture._dir.path().join("lore.db")).unwrap();
    let wal = std::fs::read(fixture._dir.path().join("lore.db-wal")).unwrap_or_default();
    for bytes in [dump, wal] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the secret is in the database file"
        );
    }
    let listed = serde_json::to_string(&fixture.engine.list_tokens(None).unwrap()).unwrap();
    assert!(
        !listed.contains(&secret) && !listed.contains("hash"),
        "{listed}"
    );
}

#[tokio::test]
async fn a_read_token_cannot_write() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    for (method, uri, body) in [
        ("POST", "/api/v1/meetings", Some(canary_bundle("zzother"))),
        (
            "DELETE",
            &*format!("/api/v1/meetings/{}", ids.meeting),
            None,
        ),
        (
            "POST",
            "/api/v1/claims",
            Some(json!({"entity": ids.person, "predicate": "has_title", "value": "x"})),
        ),
        (
            "POST",
            &*format!("/api/v1/claims/{}/retract", ids.claim),
            None,
        ),
        (
            "POST",
            &*format!("/api/v1/meetings/{}/notes", ids.meeting),
            Some(json!({"text": "hi"})),
        ),
    ] {
        let reply = send(&fixture.router, method, uri, Some(&read), body).await;
        assert_eq!(reply.status, 403, "{method} {uri}: {}", reply.body);
        assert_eq!(reply.json()["error"]["code"], "insufficient_scope");
        assert!(
            reply.headers.contains("insufficient_scope"),
            "{}",
            reply.headers
        );
    }
    assert_eq!(fixture.engine.list_meetings("alice").unwrap().len(), 1);
    let reply = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/meetings/{}", ids.meeting),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn the_owner_comes_from_the_token_never_from_the_request() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "bob", "zzbob");
    let alice = token(&fixture.engine, "alice", TokenScope::Write);
    // An `owner` field in a body is rejected, not obeyed.
    let reply = send(
        &fixture.router,
        "POST",
        "/api/v1/claims",
        Some(&alice),
        Some(json!({"entity": ids.person, "predicate": "has_title", "value": "x", "owner": "bob"})),
    )
    .await;
    assert_eq!(reply.status, 422, "{}", reply.body);
    // ... and so is one in a query string, or in an ingested bundle.
    let reply = send(
        &fixture.router,
        "GET",
        "/api/v1/entities?owner=bob",
        Some(&alice),
        None,
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let mut bundle = canary_bundle("zzalice");
    bundle["owner"] = json!("bob");
    let reply = send(
        &fixture.router,
        "POST",
        "/api/v1/meetings",
        Some(&alice),
        Some(bundle),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(fixture.engine.list_meetings("alice").unwrap().is_empty());
    assert_eq!(fixture.engine.list_meetings("bob").unwrap().len(), 1);
}

#[tokio::test]
async fn entity_json_is_the_show_contract() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let reply = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/entities/{}", ids.person_email),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let expected = fixture
        .engine
        .show("alice", &ids.person_email, &ShowOptions::default())
        .unwrap();
    assert_eq!(reply.json(), serde_json::to_value(&expected).unwrap());
    let claim = &reply.json()["claims"][0];
    assert_eq!(claim["evidence"][0]["quote"], "I am now zzalice chief");
    assert_eq!(claim["evidence"][0]["meeting"], "zzalice-meeting");

    let history = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/entities/{}/history", ids.person),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(history.status, 200);
    assert!(!history.json()["claims"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn writes_go_through_the_engine_and_report_their_revision() {
    let fixture = fixture();
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let reply = send(
        &fixture.router,
        "POST",
        "/api/v1/meetings",
        Some(&write),
        Some(canary_bundle("zzalice")),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.json()["outcome"], "created");
    let meeting = reply.json()["meeting"].as_str().unwrap().to_string();
    // A bundle may not make the server read one of its own files.
    let mut bundle = canary_bundle("zzpath");
    bundle["attachments"] = json!([{"id": "a1", "kind": "file", "filename": "passwd", "created_at": "2026-11-01T10:00:00Z", "path": "../../etc/passwd"}]);
    let reply = send(
        &fixture.router,
        "POST",
        "/api/v1/meetings",
        Some(&write),
        Some(bundle),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);

    let note = send(
        &fixture.router,
        "POST",
        &format!("/api/v1/meetings/{meeting}/notes"),
        Some(&write),
        Some(json!({"text": "follow up"})),
    )
    .await;
    assert_eq!(note.status, 201, "{}", note.body);
    let link = send(
        &fixture.router,
        "POST",
        &format!("/api/v1/meetings/{meeting}/links"),
        Some(&write),
        Some(json!({"url": "https://github.com/acme/atlas/pull/7"})),
    )
    .await;
    assert_eq!(link.status, 201, "{}", link.body);
    let detail = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/meetings/{meeting}"),
        Some(&write),
        None,
    )
    .await
    .json();
    assert_eq!(detail["notes"].as_array().unwrap().len(), 2);
    assert_eq!(detail["links"][0]["ingested_status"], "url_only");

    let claim = send(&fixture.router, "POST", "/api/v1/claims/override", Some(&write), Some(json!({"entity": "zzalice-person@zzalice.test", "predicate": "has_title", "value": "CTO"}))).await;
    assert_eq!(claim.status, 201, "{}", claim.body);
    let multi = send(&fixture.router, "POST", "/api/v1/claims/override", Some(&write), Some(json!({"entity": "zzalice-person@zzalice.test", "predicate": "has_skill", "value": "Rust"}))).await;
    assert_eq!(multi.status, 400, "{}", multi.body);
    let view = fixture
        .engine
        .show(
            "alice",
            "zzalice-person@zzalice.test",
            &ShowOptions::default(),
        )
        .unwrap();
    assert_eq!(view.entity.attributes["has_title"], "CTO");

    let claim_id = claim.json()["claim"].as_str().unwrap().to_string();
    let retract = send(
        &fixture.router,
        "POST",
        &format!("/api/v1/claims/{claim_id}/retract"),
        Some(&write),
        None,
    )
    .await;
    assert_eq!(retract.status, 200);
    let again = send(
        &fixture.router,
        "POST",
        &format!("/api/v1/claims/{claim_id}/retract"),
        Some(&write),
        None,
    )
    .await;
    assert_eq!(again.status, 409, "{}", again.body);

    let deleted = send(
        &fixture.router,
        "DELETE",
        &format!("/api/v1/meetings/{meeting}"),
        Some(&write),
        None,
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert!(deleted.json()["revision"]
        .as_str()
        .unwrap()
        .starts_with("r_"));
    assert!(fixture.engine.list_meetings("alice").unwrap().is_empty());
    assert!(lore_engine::check_invariants(&fixture.engine, "alice")
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn attachments_are_uploaded_size_capped_and_content_addressed() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let upload = |bytes: Vec<u8>| {
        axum::http::Request::builder()
            .method("POST")
            .uri(format!(
                "/api/v1/meetings/{}/attachments?filename=plan.txt",
                ids.meeting
            ))
            .header("host", "127.0.0.1:7700")
            .header("authorization", format!("Bearer {write}"))
            .header("content-type", "text/plain")
            .body(axum::body::Body::from(bytes))
            .unwrap()
    };
    use tower::ServiceExt;
    let ok = reply(
        fixture
            .router
            .clone()
            .oneshot(upload(b"the plan".to_vec()))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(ok.status, 201, "{}", ok.body);
    let sha = lore_core::ids::sha256_hex(b"the plan");
    let blob = fixture.engine.store().blob_dir().join(&sha[..2]).join(&sha);
    assert_eq!(std::fs::read(&blob).unwrap(), b"the plan");
    let too_big = vec![0u8; lore_engine::MAX_ATTACHMENT_BYTES + 1];
    let refused = reply(
        fixture
            .router
            .clone()
            .oneshot(upload(too_big))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    let huge = vec![0u8; lore_server::MAX_BODY_BYTES + 1];
    let refused = reply(fixture.router.clone().oneshot(upload(huge)).await.unwrap()).await;
    assert_eq!(refused.status, 413);
    assert_eq!(
        refused.json()["error"]["code"],
        "payload_too_large",
        "{}",
        refused.body
    );

    let id = ok.json()["id"].as_str().unwrap().to_string();
    let deleted = send(
        &fixture.router,
        "DELETE",
        &format!("/api/v1/attachments/{id}"),
        Some(&write),
        None,
    )
    .await;
    assert_eq!(deleted.status, 200);
    assert!(
        !blob.exists(),
        "an unused blob is removed with its last attachment"
    );
}

#[tokio::test]
async fn bad_input_is_a_json_4xx_never_a_5xx() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let cases: Vec<(&str, String, Option<serde_json::Value>, u16)> = vec![
        ("GET", "/api/v1/entities?limit=501".into(), None, 400),
        ("GET", "/api/v1/entities?limit=0".into(), None, 400),
        ("GET", "/api/v1/entities?limit=abc".into(), None, 400),
        ("GET", "/api/v1/entities/nobody".into(), None, 404),
        (
            "GET",
            format!("/api/v1/meetings/{}/excerpt", ids.meeting),
            None,
            400,
        ),
        (
            "GET",
            format!(
                "/api/v1/meetings/{}/excerpt?segment=s1&around=21",
                ids.meeting
            ),
            None,
            400,
        ),
        (
            "GET",
            format!("/api/v1/meetings/{}/excerpt?segment=nope", ids.meeting),
            None,
            404,
        ),
        (
            "POST",
            "/api/v1/claims".into(),
            Some(json!({"entity": ids.person, "predicate": "is_wizard", "value": "x"})),
            400,
        ),
        (
            "POST",
            "/api/v1/claims".into(),
            Some(
                json!({"entity": ids.person, "predicate": "has_title", "value": "x", "due_at": "soon"}),
            ),
            400,
        ),
        (
            "POST",
            "/api/v1/claims".into(),
            Some(json!("not an object")),
            422,
        ),
        (
            "POST",
            "/api/v1/meetings".into(),
            Some(json!({"meeting": {}})),
            400,
        ),
        (
            "POST",
            format!("/api/v1/meetings/{}/notes", ids.meeting),
            Some(json!({"text": "  "})),
            400,
        ),
        (
            "POST",
            format!("/api/v1/meetings/{}/links", ids.meeting),
            Some(json!({"url": "javascript:alert(1)"})),
            400,
        ),
        ("GET", "/api/v1/no-such-route".into(), None, 404),
        ("PUT", "/api/v1/entities".into(), None, 405),
    ];
    for (method, uri, body, status) in cases {
        let reply = send(&fixture.router, method, &uri, Some(&write), body).await;
        assert_eq!(
            reply.status.as_u16(),
            status,
            "{method} {uri}: {}",
            reply.body
        );
        assert!(
            reply.json()["error"]["code"].is_string(),
            "{method} {uri}: {}",
            reply.body
        );
        assert!(reply.json()["error"]["message"].is_string());
    }
    let page = send(
        &fixture.router,
        "GET",
        "/api/v1/entities?limit=1&offset=1",
        Some(&write),
        None,
    )
    .await
    .json();
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert_eq!(page["limit"], 1);
    assert!(page["total"].as_u64().unwrap() >= 2);
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_refused() {
    let fixture = fixture();
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    use tower::ServiceExt;
    let request = |host: &str, origin: Option<&str>, uri: &str| {
        let mut builder = axum::http::Request::builder()
            .uri(uri)
            .header("host", host)
            .header("authorization", format!("Bearer {read}"));
        if let Some(origin) = origin {
            builder = builder.header("origin", origin);
        }
        builder.body(axum::body::Body::empty()).unwrap()
    };
    for uri in ["/api/v1/entities", "/mcp"] {
        let foreign = reply(
            fixture
                .router
                .clone()
                .oneshot(request("127.0.0.1:7700", Some("https://evil.example"), uri))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(foreign.status, 403, "{uri}");
        assert_eq!(foreign.json()["error"]["code"], "forbidden_origin");
        let rebinding = reply(
            fixture
                .router
                .clone()
                .oneshot(request("evil.example", None, uri))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(rebinding.status, 403, "{uri}");
        assert_eq!(rebinding.json()["error"]["code"], "forbidden_host");
    }
    let same = reply(
        fixture
            .router
            .clone()
            .oneshot(request(
                "localhost:7700",
                Some("http://localhost:7700"),
                "/api/v1/entities",
            ))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(same.status, 200, "{}", same.body);

    let mut config = test_config();
    config.allowed_hosts.push("lore.example.com".into());
    config
        .allowed_origins
        .push("https://app.example.com".into());
    let router = lore_server::app(fixture.engine.clone(), config).router;
    let allowed = reply(
        router
            .clone()
            .oneshot(request(
                "lore.example.com",
                Some("https://app.example.com"),
                "/api/v1/entities",
            ))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(allowed.status, 200, "{}", allowed.body);
}

#[tokio::test]
async fn public_endpoints_describe_the_server() {
    let fixture = fixture();
    let health = send(&fixture.router, "GET", "/healthz", None, None).await;
    assert_eq!(
        (health.status.as_u16(), health.json()["status"].clone()),
        (200, json!("ok"))
    );

    let openapi = send(&fixture.router, "GET", "/api/v1/openapi.json", None, None)
        .await
        .json();
    assert_eq!(openapi["openapi"], "3.1.0");
    assert_eq!(
        openapi["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    assert!(openapi["paths"]["/api/v1/entities/{entity}"]["get"].is_object());

    let metadata = send(
        &fixture.router,
        "GET",
        "/.well-known/oauth-protected-resource",
        None,
        None,
    )
    .await
    .json();
    assert_eq!(metadata["resource"], "http://127.0.0.1:7700/mcp");
    assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));

    let write = token(&fixture.engine, "alice", TokenScope::Write);
    send(
        &fixture.router,
        "POST",
        "/api/v1/meetings",
        Some(&write),
        Some(canary_bundle("zzm")),
    )
    .await;
    send(
        &fixture.router,
        "GET",
        "/api/v1/entities/nobody",
        Some(&write),
        None,
    )
    .await;
    let metrics = send(&fixture.router, "GET", "/metrics", None, None).await;
    assert!(
        metrics.body.contains(
            "lore_http_requests_total{method=\"POST\",route=\"/api/v1/meetings\",status=\"201\"} 1"
        ),
        "{}",
        metrics.body
    );
    assert!(metrics.body.contains("lore_http_requests_total{method=\"GET\",route=\"/api/v1/entities/{entity}\",status=\"404\"} 1"), "{}", metrics.body);
    assert!(metrics.body.contains("lore_http_request_duration_seconds_count{method=\"GET\",route=\"/api/v1/entities/{entity}\"} 1"));
    assert!(
        metrics
            .body
            .contains("lore_ingests_total{outcome=\"created\"} 1"),
        "{}",
        metrics.body
    );
    assert!(
        !metrics.body.contains("nobody"),
        "raw paths stay out of metric labels"
    );
}

fn value_of<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap()
}

#[tokio::test]
async fn search_answers_like_the_engine_and_checks_its_input() {
    let fixture = fixture();
    seed_owner(&fixture.engine, "alice", "zzalice");
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let reply = send(
        &fixture.router,
        "GET",
        "/api/v1/search?q=zzalice",
        Some(&read),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let request = lore_engine::SearchRequest {
        query: "zzalice".into(),
        kind: None,
        limit: 20,
        newest_first: false,
    };
    let hits = fixture.engine.search("alice", &request).unwrap();
    assert!(!hits.is_empty());
    assert_eq!(reply.json(), json!({"items": value_of(&hits)}));

    let notes = send(
        &fixture.router,
        "GET",
        "/api/v1/search?q=zzalice&kind=note&newest=true&limit=5",
        Some(&read),
        None,
    )
    .await;
    assert_eq!(notes.status, 200, "{}", notes.body);
    let items = notes.json()["items"].as_array().unwrap().clone();
    assert!(!items.is_empty());
    assert!(items.iter().all(|hit| hit["kind"] == "note"), "{items:?}");

    for (query, message) in [
        ("q=zzalice&limit=0", "limit must be between 1 and 200"),
        ("q=zzalice&limit=201", "limit must be between 1 and 200"),
        ("q=zzalice&kind=meeting", "kind"),
        ("q=%22unclosed", "invalid search query"),
        ("kind=note", "q"),
    ] {
        let reply = send(
            &fixture.router,
            "GET",
            &format!("/api/v1/search?{query}"),
            Some(&read),
            None,
        )
        .await;
        assert_eq!(reply.status, 400, "{query}: {}", reply.body);
        assert_eq!(reply.json()["error"]["code"], "bad_request");
        assert!(
            reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains(message),
            "{query}: {}",
            reply.body
        );
    }
}

#[tokio::test]
async fn neighborhood_is_the_engine_graph() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let reply = send(
        &fixture.router,
        "GET",
        &format!(
            "/api/v1/entities/{}/neighborhood?hops=2&limit=100",
            ids.person_email
        ),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let graph = fixture
        .engine
        .graph(
            "alice",
            &ids.person,
            &lore_engine::GraphOptions {
                hops: 2,
                limit: 100,
                valid_at: None,
            },
        )
        .unwrap();
    assert_eq!(reply.json(), value_of(&graph));
    assert_eq!(graph.center(), ids.person.as_str());
    assert!(
        graph.nodes().any(|node| node.id == ids.meeting.as_str()),
        "{graph:?}"
    );

    let past = send(
        &fixture.router,
        "GET",
        &format!(
            "/api/v1/entities/{}/neighborhood?valid_at=2026-11-02",
            ids.person
        ),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(past.status, 200, "{}", past.body);

    for (uri, status) in [
        (
            format!("/api/v1/entities/{}/neighborhood?hops=3", ids.person),
            400,
        ),
        (
            format!("/api/v1/entities/{}/neighborhood?limit=0", ids.person),
            400,
        ),
        (
            format!("/api/v1/entities/{}/neighborhood?valid_at=soon", ids.person),
            400,
        ),
        (
            "/api/v1/entities/nobody@nowhere.test/neighborhood".into(),
            404,
        ),
    ] {
        let reply = send(&fixture.router, "GET", &uri, Some(&read), None).await;
        assert_eq!(reply.status, status, "{uri}: {}", reply.body);
    }
}

#[tokio::test]
async fn the_entity_view_travels_in_valid_and_known_time() {
    // The first meeting is recorded on 2026-11-10, the manual title and the conflict at NOW.
    let dir = tempfile::tempdir().unwrap();
    let mut ids = seed_owner(
        &engine_at(dir.path(), "2026-11-10T00:00:00Z"),
        "alice",
        "zzalice",
    );
    let engine = std::sync::Arc::new(engine_at(dir.path(), NOW));
    let app = lore_server::app(engine.clone(), test_config());
    let fixture = Fixture {
        engine,
        router: app.router,
        sessions: app.sessions.clone(),
        _dir: dir,
    };
    seed_review_work(&fixture.engine, "alice", "zzalice", &mut ids);
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let entity = |query: &str| format!("/api/v1/entities/{}{query}", ids.person_email);

    let now = send(&fixture.router, "GET", &entity(""), Some(&read), None).await;
    assert!(now.body.contains("zzalice manual title"), "{}", now.body);

    // What Lore believed on 2026-11-15: the title from the first meeting, before the manual one.
    let at = lore_engine::TimeTravel {
        valid_at: None,
        known_at: Some(lore_core::Ts::parse("2026-11-15").unwrap()),
    };
    let believed = send(
        &fixture.router,
        "GET",
        &entity("?known_at=2026-11-15"),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(believed.status, 200, "{}", believed.body);
    assert_eq!(
        believed.json(),
        value_of(
            &fixture
                .engine
                .show_at("alice", &ids.person_email, &at)
                .unwrap()
        )
    );
    assert!(believed.body.contains("zzalice chief"), "{}", believed.body);
    assert!(!believed.body.contains("manual title"), "{}", believed.body);

    let at = lore_engine::TimeTravel {
        valid_at: Some(lore_core::Ts::parse("2026-11-02").unwrap()),
        known_at: Some(lore_core::Ts::parse("2026-11-29T12:00:00Z").unwrap()),
    };
    let both = send(
        &fixture.router,
        "GET",
        &entity("?valid_at=2026-11-02&known_at=2026-11-29T12:00:00Z"),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(both.status, 200, "{}", both.body);
    assert!(both.body.contains("zzalice chief"), "{}", both.body);
    assert_eq!(
        both.json(),
        value_of(
            &fixture
                .engine
                .show_at("alice", &ids.person_email, &at)
                .unwrap()
        )
    );

    for query in [
        "?valid_at=yesterday",
        "?known_at=2026-13-01",
        "?valid_at=2026-11-02&include_provisional=true",
    ] {
        let reply = send(&fixture.router, "GET", &entity(query), Some(&read), None).await;
        assert_eq!(reply.status, 400, "{query}: {}", reply.body);
        assert_eq!(reply.json()["error"]["code"], "bad_request");
    }
}

#[tokio::test]
async fn merge_split_and_undo_go_through_the_engine() {
    let fixture = fixture();
    let alice = seed_owner(&fixture.engine, "alice", "zzalice");
    let bob = seed_owner(&fixture.engine, "alice", "zzbob");
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let merge_uri = format!("/api/v1/entities/{}/merge", alice.person_email);

    let refused = send(
        &fixture.router,
        "POST",
        &merge_uri,
        Some(&read),
        Some(json!({"entity": bob.person_email})),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);

    let merged = send(
        &fixture.router,
        "POST",
        &merge_uri,
        Some(&write),
        Some(json!({"entity": bob.person_email})),
    )
    .await;
    assert_eq!(merged.status, 200, "{}", merged.body);
    let report = merged.json();
    assert_eq!(report["entity"], alice.person);
    assert_eq!(report["other"], bob.person);
    let shown = fixture
        .engine
        .show("alice", &bob.person_email, &ShowOptions::default())
        .unwrap();
    assert_eq!(shown.entity.id, alice.person, "bob's email now names alice");
    assert_eq!(
        lore_engine::check_invariants(&fixture.engine, "alice").unwrap(),
        Vec::<String>::new()
    );

    let again = send(
        &fixture.router,
        "POST",
        &merge_uri,
        Some(&write),
        Some(json!({"entity": bob.person_email})),
    )
    .await;
    assert_eq!(again.status, 400, "{}", again.body);

    let undone = send(
        &fixture.router,
        "POST",
        &format!(
            "/api/v1/revisions/{}/undo",
            report["revision"].as_str().unwrap()
        ),
        Some(&write),
        None,
    )
    .await;
    assert_eq!(undone.status, 200, "{}", undone.body);
    let shown = fixture
        .engine
        .show("alice", &bob.person_email, &ShowOptions::default())
        .unwrap();
    assert_eq!(shown.entity.id, bob.person, "the undo restored bob");

    let split_uri = format!("/api/v1/entities/{}/split", alice.person);
    for body in [
        json!({}),
        json!({"evidence": []}),
        json!({"evidence": ["x"], "meetings": ["y"]}),
    ] {
        let reply = send(
            &fixture.router,
            "POST",
            &split_uri,
            Some(&write),
            Some(body),
        )
        .await;
        assert_eq!(reply.status, 400, "{}", reply.body);
    }
    let view = fixture
        .engine
        .show("alice", &alice.person, &ShowOptions::default())
        .unwrap();
    let evidence = view.claims[0].evidence[0].id.clone();
    let split = send(
        &fixture.router,
        "POST",
        &split_uri,
        Some(&write),
        Some(json!({"evidence": [evidence]})),
    )
    .await;
    assert_eq!(split.status, 200, "{}", split.body);
    let split = split.json();
    assert_eq!(split["entity"], alice.person);
    assert!(split["claims_moved"].as_u64().unwrap() >= 1, "{split}");
    let new_entity = split["other"].as_str().unwrap();
    assert!(fixture
        .engine
        .show("alice", new_entity, &ShowOptions::default())
        .is_ok());

    let by_meeting = send(
        &fixture.router,
        "POST",
        &format!("/api/v1/entities/{}/split", bob.person),
        Some(&write),
        Some(json!({"meetings": [bob.external_id]})),
    )
    .await;
    assert_eq!(by_meeting.status, 200, "{}", by_meeting.body);
    assert_eq!(
        lore_engine::check_invariants(&fixture.engine, "alice").unwrap(),
        Vec::<String>::new()
    );

    let unknown = send(
        &fixture.router,
        "POST",
        "/api/v1/revisions/r_00000000000000000000000000000000/undo",
        Some(&write),
        None,
    )
    .await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
}

#[tokio::test]
async fn review_queue_entries_are_accepted_and_rejected() {
    for (verb, title, status) in [
        ("accept", "zzalice director", "accepted"),
        ("reject", "zzalice manual title", "rejected"),
    ] {
        let fixture = fixture();
        let mut ids = seed_owner(&fixture.engine, "alice", "zzalice");
        seed_review_work(&fixture.engine, "alice", "zzalice", &mut ids);
        let write = token(&fixture.engine, "alice", TokenScope::Write);
        let uri = format!("/api/v1/suggestions/{}/{verb}", ids.suggestion);
        let reply = send(&fixture.router, "POST", &uri, Some(&write), None).await;
        assert_eq!(reply.status, 200, "{verb}: {}", reply.body);
        assert!(reply.json()["revision"].is_string(), "{}", reply.body);
        let suggestion = fixture
            .engine
            .list_suggestions("alice")
            .unwrap()
            .into_iter()
            .find(|s| s.id == ids.suggestion)
            .unwrap();
        assert_eq!(suggestion.status.as_str(), status);
        let view = fixture
            .engine
            .show("alice", &ids.person_email, &ShowOptions::default())
            .unwrap();
        let current = view
            .claims
            .iter()
            .find(|c| c.predicate == "has_title")
            .and_then(|c| c.value.clone());
        assert_eq!(current.as_deref(), Some(title), "{verb}");

        let twice = send(&fixture.router, "POST", &uri, Some(&write), None).await;
        assert!(
            twice.status.is_client_error(),
            "{verb} twice: {}",
            twice.body
        );
    }
}

#[tokio::test]
async fn transcripts_are_ingested_with_their_metadata() {
    let fixture = fixture();
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let upload = json!({
        "format": "vtt",
        "text": "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Alice Chen>We ship Atlas next week.\n\n00:01:05.000 --> 00:01:08.000\n<v Bob>Sounds good.\n",
        "meeting": {"external_id": "standup-1", "title": "Standup", "started_at": "2026-11-20T09:00:00Z"},
        "participants": [{"display_name": "Alice Chen", "email": "alice@acme.test"}],
    });
    let refused = send(
        &fixture.router,
        "POST",
        "/api/v1/transcripts",
        Some(&read),
        Some(upload.clone()),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);

    let reply = send(
        &fixture.router,
        "POST",
        "/api/v1/transcripts",
        Some(&write),
        Some(upload.clone()),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.json()["outcome"], "created");
    assert_eq!(reply.json()["external_id"], "standup-1");
    let transcript = fixture
        .engine
        .meeting_transcript("alice", "standup-1")
        .unwrap();
    assert_eq!(transcript.title, "Standup");
    assert_eq!(transcript.segments.len(), 2);
    assert_eq!(transcript.segments[1].offset, "01:05");
    let detail = fixture.engine.get_meeting("alice", "standup-1").unwrap();
    assert!(
        value_of(&detail).to_string().contains("alice@acme.test"),
        "{detail:?}"
    );

    let again = send(
        &fixture.router,
        "POST",
        "/api/v1/transcripts",
        Some(&write),
        Some(upload.clone()),
    )
    .await;
    assert_eq!(again.json()["outcome"], "unchanged", "{}", again.body);

    // Without an external id, one is derived from the text; SRT and plain text are read too.
    let srt = send(
        &fixture.router,
        "POST",
        "/api/v1/transcripts",
        Some(&write),
        Some(json!({
            "format": "srt",
            "text": "1\n00:00:01,000 --> 00:00:03,000\nCarol: Hello there.\n",
            "meeting": {"started_at": "2026-11-21"},
            "speakers": {},
        })),
    )
    .await;
    assert_eq!(srt.status, 201, "{}", srt.body);
    assert!(srt.json()["external_id"]
        .as_str()
        .unwrap()
        .starts_with("transcript-"));
    let txt = send(
        &fixture.router,
        "POST",
        "/api/v1/transcripts",
        Some(&write),
        Some(json!({
            "format": "txt",
            "text": "Dana: first line\nEli: second line\n",
            "meeting": {"external_id": "plain-1", "started_at": "2026-11-22"},
            "participants": [{"display_name": "Dana", "email": "dana@acme.test"}],
            "speakers": {"Eli": "dana@acme.test"},
        })),
    )
    .await;
    assert_eq!(txt.status, 201, "{}", txt.body);

    for (body, status) in [
        (
            json!({"format": "vtt", "text": "not a transcript", "meeting": {"started_at": "2026-11-20"}}),
            400,
        ),
        (
            json!({"format": "vtt", "text": upload["text"], "meeting": {"title": "no start"}}),
            400,
        ),
        (
            json!({"format": "doc", "text": "x", "meeting": {"started_at": "2026-11-20"}}),
            422,
        ),
        (
            json!({"format": "txt", "text": "A: b", "meeting": {"started_at": "2026-11-20"}, "owner": "bob"}),
            422,
        ),
        (
            json!({"format": "txt", "text": "A: b", "meeting": {"started_at": "2026-11-20", "owner": "bob"}}),
            400,
        ),
    ] {
        let reply = send(
            &fixture.router,
            "POST",
            "/api/v1/transcripts",
            Some(&write),
            Some(body.clone()),
        )
        .await;
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
        assert!(reply.json()["error"]["message"].is_string());
    }
    assert!(fixture.engine.list_meetings("bob").unwrap().is_empty());
}

/// A `multipart/form-data` body with the given parts `(name, file name, content)`.
fn multipart_body(parts: &[(&str, Option<&str>, &str)]) -> (String, String) {
    let boundary = "lore-test-boundary-7f3a";
    let mut body = String::new();
    for (name, file_name, content) in parts {
        body.push_str(&format!("--{boundary}\r\n"));
        match file_name {
            Some(file_name) => body.push_str(&format!(
                "Content-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\nContent-Type: text/vtt\r\n\r\n"
            )),
            None => body.push_str(&format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n")),
        }
        body.push_str(content);
        body.push_str("\r\n");
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn send_multipart(
    router: &axum::Router,
    token: &str,
    content_type: &str,
    body: String,
) -> Reply {
    use tower::ServiceExt;
    let request = axum::http::Request::builder()
        .method("POST")
        .uri("/api/v1/transcripts/file")
        .header("host", "127.0.0.1:7700")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", content_type)
        .body(axum::body::Body::from(body))
        .unwrap();
    reply(router.clone().oneshot(request).await.unwrap()).await
}

#[tokio::test]
async fn transcript_files_are_ingested_from_multipart_uploads() {
    let fixture = fixture();
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Alice Chen>We ship Atlas next week.\n";
    let metadata = json!({
        "meeting": {"external_id": "upload-1", "title": "Uploaded standup", "started_at": "2026-11-21T09:00:00Z"},
        "participants": [{"display_name": "Alice Chen", "email": "alice@acme.test"}],
    })
    .to_string();
    let parts = [
        ("file", Some("standup.vtt"), vtt),
        ("metadata", None, metadata.as_str()),
    ];

    let (content_type, body) = multipart_body(&parts);
    let refused = send_multipart(&fixture.router, &read, &content_type, body).await;
    assert_eq!(
        refused.status, 403,
        "a read token cannot ingest: {}",
        refused.body
    );

    let (content_type, body) = multipart_body(&parts);
    let reply = send_multipart(&fixture.router, &write, &content_type, body).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.json()["external_id"], "upload-1");
    let transcript = fixture
        .engine
        .meeting_transcript("alice", "upload-1")
        .unwrap();
    assert_eq!(transcript.title, "Uploaded standup");
    assert_eq!(transcript.segments.len(), 1);

    // The format comes from the file name unless given; without either it is a clear 400.
    let (content_type, body) = multipart_body(&[
        ("file", Some("standup"), vtt),
        ("metadata", None, metadata.as_str()),
    ]);
    let unknown = send_multipart(&fixture.router, &write, &content_type, body).await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    assert!(unknown.body.contains("format"), "{}", unknown.body);
    let (content_type, body) = multipart_body(&[("metadata", None, metadata.as_str())]);
    let missing = send_multipart(&fixture.router, &write, &content_type, body).await;
    assert_eq!(missing.status, 400, "{}", missing.body);
    assert!(
        missing.body.contains("'file' part is required"),
        "{}",
        missing.body
    );
    // A JSON body is not a form upload.
    let wrong = send(
        &fixture.router,
        "POST",
        "/api/v1/transcripts/file",
        Some(&write),
        Some(json!({"text": "x"})),
    )
    .await;
    assert!(wrong.status == 400 || wrong.status == 415, "{}", wrong.body);
}

#[tokio::test]
async fn an_entitys_revisions_and_a_meetings_delete_preview() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    fixture
        .engine
        .apply_override("alice", &ids.person_email, "has_title", "Chief")
        .unwrap();
    let listed = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/entities/{}/revisions", ids.person_email),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let items = listed.json()["items"].as_array().unwrap().clone();
    assert_eq!(items[0]["action"], "manual_override", "{items:?}");
    assert_eq!(items[0]["undoable"], true);
    assert!(items[0]["summary"].as_str().unwrap().contains("Chief"));
    assert!(items.iter().any(|i| i["action"] == "extraction_commit"));
    let bad = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/entities/{}/revisions?limit=0", ids.person),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(bad.status, 400);
    let undone = send(
        &fixture.router,
        "POST",
        &format!(
            "/api/v1/revisions/{}/undo",
            items[0]["id"].as_str().unwrap()
        ),
        Some(&write),
        None,
    )
    .await;
    assert_eq!(undone.status, 200, "{}", undone.body);

    let before = lore_engine::state_dump(&fixture.engine, "alice").unwrap();
    let preview = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/meetings/{}/delete-preview", ids.external_id),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(preview.status, 200, "{}", preview.body);
    let items = preview.json()["items"].as_array().unwrap().clone();
    assert_eq!(
        items[0]["table"], "meeting",
        "the meeting comes first: {items:?}"
    );
    assert!(items.iter().any(|i| i["table"] == "claim"
        && i["change"] == "removed"
        && i["label"].as_str().unwrap().contains("zzalice chief")));
    assert_eq!(
        lore_engine::state_dump(&fixture.engine, "alice").unwrap(),
        before,
        "a preview writes nothing"
    );
}

#[tokio::test]
async fn an_entity_is_renamed_and_cleared_with_a_write_token() {
    let fixture = fixture();
    let alice = seed_owner(&fixture.engine, "alice", "zzalice");
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let uri = format!("/api/v1/entities/{}/name", alice.person);
    let name = |body: serde_json::Value| Some(body);

    let refused = send(
        &fixture.router,
        "PUT",
        &uri,
        Some(&read),
        name(json!({"name": "Ally"})),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let renamed = send(
        &fixture.router,
        "PUT",
        &uri,
        Some(&write),
        name(json!({"name": "Ally"})),
    )
    .await;
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    assert!(renamed.json()["revision"].as_str().is_some());
    let shown = send(
        &fixture.router,
        "GET",
        &format!("/api/v1/entities/{}", alice.person),
        Some(&read),
        None,
    )
    .await;
    assert_eq!(shown.json()["entity"]["name"], "Ally");
    assert!(shown.json()["entity"]["derived_name"].is_string());

    for (body, status) in [
        (json!({"name": "Ally"}), 409),
        (json!({"name": "  "}), 400),
        (json!({"name": "Ally", "extra": 1}), 422),
        (json!({"name": 7}), 422),
    ] {
        let reply = send(
            &fixture.router,
            "PUT",
            &uri,
            Some(&write),
            Some(body.clone()),
        )
        .await;
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
    }
    let cleared = send(
        &fixture.router,
        "PUT",
        &uri,
        Some(&write),
        name(json!({"name": null})),
    )
    .await;
    assert_eq!(cleared.status, 200, "{}", cleared.body);
    let shown = fixture
        .engine
        .show("alice", &alice.person, &ShowOptions::default())
        .unwrap();
    assert!(shown.entity.derived_name.is_none());
    assert_ne!(shown.entity.name, "Ally");
    assert_eq!(
        lore_engine::check_invariants(&fixture.engine, "alice").unwrap(),
        Vec::<String>::new()
    );
}
