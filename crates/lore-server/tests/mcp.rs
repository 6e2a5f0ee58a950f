//! The MCP server over streamable HTTP: tools per scope, results as structured JSON plus readable
//! text with verbatim quotes, meeting titles and `mm:ss` offsets.

mod common;

use common::*;
use lore_engine::{ShowOptions, TokenScope};
use serde_json::json;

const WRITE_TOOLS: [&str; 3] = ["add_note", "add_claim", "retract_claim"];

#[tokio::test]
async fn write_tools_exist_only_for_write_tokens() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let write = token(&fixture.engine, "alice", TokenScope::Write);

    let mut reader = McpSession::open(&fixture.router, &read).await;
    let names = reader.tool_names().await;
    for tool in [
        "search",
        "neighborhood",
        "get_entity",
        "entity_history",
        "list_deadlines",
        "list_tasks",
        "get_meeting_excerpt",
    ] {
        assert!(names.contains(&tool.to_string()), "{names:?}");
    }
    assert!(
        WRITE_TOOLS.iter().all(|t| !names.contains(&t.to_string())),
        "{names:?}"
    );
    let refused = reader
        .call(
            "add_note",
            json!({"meeting": ids.meeting, "text": "sneaky"}),
        )
        .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(refused.to_string().contains("write scope"), "{refused}");
    assert_eq!(
        fixture
            .engine
            .list_notes("alice", &ids.meeting)
            .unwrap()
            .len(),
        1
    );

    let mut writer = McpSession::open(&fixture.router, &write).await;
    let names = writer.tool_names().await;
    assert_eq!(names.len(), lore_server::tool_specs().len(), "{names:?}");
    let added = writer
        .call(
            "add_note",
            json!({"meeting": ids.meeting, "text": "from the assistant"}),
        )
        .await;
    assert_eq!(added["result"]["isError"], false, "{added}");
    assert_eq!(
        fixture
            .engine
            .list_notes("alice", &ids.meeting)
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn get_entity_cites_quotes_meetings_and_offsets() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let mut session = McpSession::open(&fixture.router, &read).await;

    let result = session
        .call("get_entity", json!({"entity": "project:zzalice-project"}))
        .await;
    let result = &result["result"];
    let expected = fixture
        .engine
        .show("alice", &ids.project, &ShowOptions::default())
        .unwrap();
    assert_eq!(
        result["structuredContent"],
        serde_json::to_value(&expected).unwrap()
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("\"The zzalice project launch is due by 2026-12-20.\""),
        "{text}"
    );
    assert!(text.contains("zzalice title meeting at 01:05"), "{text}");
    assert!(text.contains("due 2026-12-20"), "{text}");

    let excerpt = session
        .call(
            "get_meeting_excerpt",
            json!({"meeting": ids.external_id, "segment": "s2", "around": 1}),
        )
        .await;
    let excerpt = &excerpt["result"];
    assert_eq!(excerpt["structuredContent"]["cited"], "s2");
    assert_eq!(
        excerpt["structuredContent"]["segments"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(excerpt["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains(">> [01:05] zzalice Person:"));

    let deadlines = session.call("list_deadlines", json!({})).await;
    assert_eq!(
        deadlines["result"]["structuredContent"]["deadlines"][0]["state"], "upcoming",
        "{deadlines}"
    );
    let tasks = session.call("list_tasks", json!({"status": "open"})).await;
    assert_eq!(
        tasks["result"]["structuredContent"]["tasks"][0]["title"],
        "zzalice task"
    );
}

#[tokio::test]
async fn claims_added_and_retracted_over_mcp_are_manual_edits() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let write = token(&fixture.engine, "alice", TokenScope::Write);
    let mut session = McpSession::open(&fixture.router, &write).await;
    let added = session
        .call(
            "add_claim",
            json!({"entity": ids.person_email, "predicate": "located_in", "value": "Lisbon"}),
        )
        .await;
    let claim = added["result"]["structuredContent"]["claim"]
        .as_str()
        .unwrap()
        .to_string();
    let view = fixture
        .engine
        .show("alice", &ids.person, &ShowOptions::default())
        .unwrap();
    assert_eq!(view.entity.attributes["located_in"], "Lisbon");
    assert_eq!(
        view.claims
            .iter()
            .find(|c| c.id == claim)
            .unwrap()
            .authority
            .as_str(),
        "manual"
    );

    let retracted = session.call("retract_claim", json!({"claim": claim})).await;
    assert_eq!(retracted["result"]["isError"], false, "{retracted}");
    let view = fixture
        .engine
        .show("alice", &ids.person, &ShowOptions::default())
        .unwrap();
    assert!(!view.entity.attributes.contains_key("located_in"));
}

#[tokio::test]
async fn bad_tool_calls_are_readable_errors() {
    let fixture = fixture();
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let mut session = McpSession::open(&fixture.router, &read).await;
    let unknown = session.call("drop_tables", json!({})).await;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{unknown}"
    );
    let owner = session
        .call("get_entity", json!({"entity": "x", "owner": "bob"}))
        .await;
    assert_eq!(owner["result"]["isError"], true);
    assert!(
        owner.to_string().contains("unknown field `owner`"),
        "{owner}"
    );
    let missing = session.call("get_entity", json!({})).await;
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    let not_found = session
        .call("get_entity", json!({"entity": "nobody@nowhere.test"}))
        .await;
    assert!(
        not_found.to_string().contains("no entity matches"),
        "{not_found}"
    );
}

#[tokio::test]
async fn search_and_neighborhood_serve_read_tokens() {
    let fixture = fixture();
    let ids = seed_owner(&fixture.engine, "alice", "zzalice");
    let read = token(&fixture.engine, "alice", TokenScope::Read);
    let mut session = McpSession::open(&fixture.router, &read).await;

    let found = session
        .call("search", json!({"query": "zzalice launch", "limit": 5}))
        .await;
    let found = &found["result"];
    assert_eq!(found["isError"], false, "{found}");
    let expected = fixture
        .engine
        .search(
            "alice",
            &lore_engine::SearchRequest {
                query: "zzalice launch".into(),
                kind: None,
                limit: 5,
                newest_first: false,
            },
        )
        .unwrap();
    assert!(!expected.is_empty());
    assert_eq!(
        found["structuredContent"]["hits"],
        serde_json::to_value(&expected).unwrap()
    );
    let text = found["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("[launch]"), "{text}");
    assert!(text.contains("zzalice title meeting"), "{text}");

    let segments = session
        .call(
            "search",
            json!({"query": "zzalice", "kind": "segment", "newest_first": true}),
        )
        .await;
    let hits = segments["result"]["structuredContent"]["hits"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!hits.is_empty(), "{segments}");
    assert!(hits.iter().all(|hit| hit["kind"] == "segment"), "{hits:?}");
    assert!(segments["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains(" at 00:00"));

    let graph = session
        .call(
            "neighborhood",
            json!({"entity": ids.person_email, "hops": 2}),
        )
        .await;
    let graph = &graph["result"];
    assert_eq!(graph["isError"], false, "{graph}");
    let expected = fixture
        .engine
        .graph(
            "alice",
            &ids.person,
            &lore_engine::GraphOptions {
                hops: 2,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        graph["structuredContent"],
        serde_json::to_value(&expected).unwrap()
    );
    let text = graph["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Neighborhood of zzalice Person:"),
        "{text}"
    );
    assert!(text.contains("zzalice title meeting"), "{text}");

    for (tool, arguments, message) in [
        (
            "search",
            json!({"query": "x", "kind": "meeting"}),
            "unknown search kind",
        ),
        (
            "search",
            json!({"query": "x", "limit": 0}),
            "limit must be between 1 and 200",
        ),
        ("search", json!({"query": "\"open"}), "invalid search query"),
        (
            "neighborhood",
            json!({"entity": ids.person, "hops": 3}),
            "hops must be 1 or 2, not 3",
        ),
        (
            "neighborhood",
            json!({"entity": ids.person, "limit": 501}),
            "limit must be between 1 and 500",
        ),
        (
            "neighborhood",
            json!({"entity": ids.person, "valid_at": "soon"}),
            "valid_at",
        ),
        (
            "neighborhood",
            json!({"entity": "nobody@nowhere.test"}),
            "nobody@nowhere.test",
        ),
    ] {
        let reply = session.call(tool, arguments.clone()).await;
        assert_eq!(
            reply["result"]["isError"], true,
            "{tool} {arguments}: {reply}"
        );
        assert!(
            reply["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(message),
            "{tool} {arguments}: {reply}"
        );
    }
}
