//! The web workspace over HTTP (the router in-process): sign-in links and sessions, CSRF, the
//! Content-Security-Policy, every page on the demo data, and the forms (override, merge + undo,
//! delete after the dry run). Owner isolation of every page and form is in `isolation.rs`.

mod common;

use axum::http::StatusCode;
use common::web::{Browser, Page};
use common::*;
use lore_engine::ShowOptions;

const OWNER: &str = "local";

/// The demo data: the example meetings and `examples/edits.json`, as `lore demo` ingests them.
fn demo_fixture() -> Fixture {
    let fixture = fixture();
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<_> = std::fs::read_dir(examples.join("meetings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for file in &files {
        fixture.engine.ingest_bundle_file(OWNER, file).unwrap();
    }
    let edits: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(examples.join("edits.json")).unwrap())
            .unwrap();
    for edit in edits {
        let field = |name: &str| edit[name].as_str().unwrap().to_string();
        fixture
            .engine
            .apply_override(
                OWNER,
                &field("entity"),
                &field("predicate"),
                &field("value"),
            )
            .unwrap();
    }
    fixture
}

fn entity_id(fixture: &Fixture, name: &str) -> String {
    fixture
        .engine
        .show(OWNER, name, &ShowOptions::default())
        .unwrap()
        .entity
        .id
}

/// What every page must have: CSP, the landmarks, the search form, no inline script or style.
fn assert_page_shape(uri: &str, page: &Page) {
    let csp = page
        .headers
        .get("content-security-policy")
        .unwrap_or_else(|| panic!("{uri}: no CSP"))
        .to_str()
        .unwrap();
    assert_eq!(csp, lore_server::web::CSP, "{uri}");
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"));
    let body = &page.body;
    for needle in [
        "<html lang=\"en\">",
        "<title>",
        "<main id=\"main\"",
        "href=\"#main\"",
        "role=\"search\" action=\"/search\"",
        "name=\"q\" aria-label=\"Search\"",
    ] {
        assert!(body.contains(needle), "{uri}: missing {needle}");
    }
    assert!(!body.contains("<script"), "{uri}: inline script");
    assert!(!body.contains(" style="), "{uri}: inline style attribute");
    assert!(!body.contains("<style"), "{uri}: inline style element");
    assert!(!has_inline_handler(body), "{uri}: an inline event handler");
}

/// Whether the HTML has an attribute like ` onclick=`.
fn has_inline_handler(body: &str) -> bool {
    body.match_indices(" on").any(|(at, _)| {
        let rest = &body[at + 3..];
        let letters = rest.bytes().take_while(|b| b.is_ascii_lowercase()).count();
        letters > 0 && rest[letters..].starts_with('=')
    })
}

#[tokio::test]
async fn a_signin_link_works_once_and_sets_a_strict_http_only_cookie() {
    let fixture = fixture();
    let mut browser = Browser::anonymous(&fixture);
    let secret = fixture.sessions.create_signin_secret(OWNER);
    let first = browser.get(&format!("/signin?token={secret}")).await;
    assert_eq!(first.status, StatusCode::SEE_OTHER);
    assert_eq!(first.location(), "/");
    let cookie = first.headers["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.starts_with("lore_session="), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(cookie.contains("Path=/"), "{cookie}");
    let value = cookie
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("lore_session=");
    assert_eq!(value.len(), 64, "32 random bytes, hex");
    assert_eq!(first.headers["referrer-policy"], "no-referrer");

    let again = browser.get(&format!("/signin?token={secret}")).await;
    assert_eq!(again.status, StatusCode::FORBIDDEN, "a link works once");
    assert!(again.headers.get("set-cookie").is_none());
    let wrong = browser.get("/signin?token=00").await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);

    browser.take_cookie(&first);
    let home = browser.get("/").await;
    assert_eq!(home.status, StatusCode::OK, "{}", home.body);
    // Pages send the referrer to this origin only: with `no-referrer` a browser would post forms
    // with `Origin: null`, which the origin guard refuses. The password form page too.
    assert_eq!(home.headers["referrer-policy"], "same-origin");
    assert_eq!(
        Browser::anonymous(&fixture).get("/signin").await.headers["referrer-policy"],
        "same-origin"
    );
    assert!(
        !again.body.contains("<form action=\"/signin\""),
        "no form under no-referrer"
    );
    assert!(home.body.contains("Sign out (local)"));

    // Signing out ends the session.
    let csrf = home.csrf();
    let out = browser.post("/signout", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert_eq!(out.location(), "/signin");
    assert!(out.headers["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let after = browser.get("/").await;
    assert_eq!(after.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn pages_and_forms_without_a_session_redirect_to_signin() {
    let fixture = demo_fixture();
    let alice = entity_id(&fixture, "alice@northwind.io");
    let anonymous = Browser::anonymous(&fixture);
    for uri in [
        "/".to_string(),
        "/search?q=alice".into(),
        format!("/entities/{alice}"),
        format!("/graph/{alice}"),
        "/review".into(),
    ] {
        let page = anonymous.get(&uri).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{uri}");
        assert_eq!(page.location(), "/signin", "{uri}");
    }
    let post = anonymous
        .post(
            &format!("/entities/{alice}/override"),
            &[("predicate", "has_title"), ("value", "x")],
        )
        .await;
    assert_eq!(post.status, StatusCode::SEE_OTHER);
    assert_eq!(post.location(), "/signin");
    // A made-up cookie is no session.
    let mut forged = Browser::anonymous(&fixture);
    forged.cookie = Some(format!("lore_session={}", "ab".repeat(32)));
    assert_eq!(forged.get("/").await.status, StatusCode::SEE_OTHER);
    // The sign-in form and the stylesheet need no session.
    let signin = anonymous.get("/signin").await;
    assert_eq!(signin.status, StatusCode::OK);
    assert_page_shape("/signin", &signin);
    let css = anonymous.get("/assets/app.css").await;
    assert_eq!(css.status, StatusCode::OK);
    assert!(css.headers["cache-control"]
        .to_str()
        .unwrap()
        .contains("max-age=31536000"));
    assert!(css.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/css"));
}

#[tokio::test]
async fn a_form_without_the_session_csrf_token_is_refused_and_changes_nothing() {
    let fixture = demo_fixture();
    let alice = entity_id(&fixture, "alice@northwind.io");
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let before = lore_engine::state_dump(&fixture.engine, OWNER).unwrap();
    let uri = format!("/entities/{alice}/override");
    let missing = browser
        .post(&uri, &[("predicate", "has_title"), ("value", "Chief")])
        .await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN, "{}", missing.body);
    assert_page_shape(&uri, &missing);
    let wrong = browser
        .post(
            &uri,
            &[
                ("csrf", &"0".repeat(64)),
                ("predicate", "has_title"),
                ("value", "Chief"),
            ],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    // Another session's token is wrong too.
    let other = Browser::signed_in(&fixture, OWNER).await;
    let other_csrf = other.get("/").await.csrf();
    let foreign = browser
        .post(
            &uri,
            &[
                ("csrf", &other_csrf),
                ("predicate", "has_title"),
                ("value", "Chief"),
            ],
        )
        .await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN);
    for (path, fields) in [
        (
            format!("/entities/{alice}/merge"),
            vec![("other", "bob@northwind.io")],
        ),
        (format!("/entities/{alice}/retract"), vec![("claim", "c_x")]),
        ("/signout".to_string(), vec![]),
    ] {
        let page = browser.post(&path, &fields).await;
        assert_eq!(page.status, StatusCode::FORBIDDEN, "{path}");
    }
    assert_eq!(
        lore_engine::state_dump(&fixture.engine, OWNER).unwrap(),
        before
    );
    // A cross-site form post is stopped before it reaches the page (Origin check).
    let mut request = axum::http::Request::builder()
        .method("POST")
        .uri(&uri)
        .header("host", "127.0.0.1:7700")
        .header("origin", "https://evil.example")
        .header("content-type", "application/x-www-form-urlencoded");
    request = request.header("cookie", browser.cookie.clone().unwrap());
    let response = tower::ServiceExt::oneshot(
        fixture.router.clone(),
        request
            .body(axum::body::Body::from("predicate=has_title&value=x"))
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn every_page_renders_on_the_demo_data_with_csp_and_no_inline_script() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let alice = entity_id(&fixture, "alice@northwind.io");
    let mut uris = vec![
        "/".to_string(),
        "/?page=2".into(),
        "/search?q=alice".into(),
        "/search?q=%22Principal+Researcher%22".into(),
        "/search?q=zzznothing".into(),
        "/search".into(),
        "/review".into(),
        format!("/graph/{alice}?hops=1"),
        format!("/graph/{alice}?hops=2"),
    ];
    for row in fixture.engine.list_entities(OWNER).unwrap() {
        uris.push(format!("/entities/{}", row.id));
        uris.push(format!("/entities/{}?tab=history", row.id));
    }
    for meeting in fixture.engine.list_meetings(OWNER).unwrap() {
        uris.push(format!("/meetings/{}", meeting.id));
        uris.push(format!("/meetings/{}/delete", meeting.id));
    }
    let graph = browser.get(&format!("/graph/{alice}?hops=1")).await;
    let edge = graph
        .body
        .split("data-testid=\"graph-edge\" href=\"")
        .nth(1)
        .expect("Alice's graph has a claim edge")
        .split('"')
        .next()
        .unwrap()
        .to_string();
    uris.push(edge);
    for uri in &uris {
        let page = browser.get(uri).await;
        assert_eq!(page.status, StatusCode::OK, "{uri}: {}", page.body);
        assert_page_shape(uri, &page);
    }
    assert!(graph.body.contains("<svg data-testid=\"graph\""));
    assert!(graph
        .body
        .contains("data-testid=\"graph-node\" href=\"/entities/"));
    let home = browser.get("/").await;
    assert!(home.body.contains("data-testid=\"review-count\""));
    let search = browser.get("/search?q=alice").await;
    assert!(search.body.contains("data-testid=\"search-result\""));
    assert!(search.body.contains(
        "aria-label=\"Search\" placeholder=\"Search people, projects, meetings\" value=\"alice\""
    ));
    // What a user types is escaped wherever it is shown.
    for uri in [
        "/search?q=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    ] {
        let page = browser.get(uri).await;
        assert_page_shape(uri, &page);
        assert!(page.body.contains("&lt;script&gt;"), "{}", page.body);
    }
    assert!(search.body.contains("<mark>"), "{}", search.body);
}

#[tokio::test]
async fn search_snippets_are_escaped_and_marked() {
    let page = lore_server::web::highlight_for_tests("a <b>[x]</b> & \"[y]");
    assert_eq!(
        page,
        "a &lt;b&gt;<mark>x</mark>&lt;/b&gt; &amp; &quot;<mark>y</mark>"
    );
}

/// The goal: Alice's current title, since when, who said so, and what it was before.
#[tokio::test]
async fn alices_title_history_is_on_her_page() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let search = browser.get("/search?q=Alice+Chen").await;
    let alice = entity_id(&fixture, "alice@northwind.io");
    assert!(
        search.body.contains(&format!(
            "data-testid=\"search-result\" href=\"/entities/{alice}\""
        )),
        "{}",
        search.body
    );
    let page = browser.get(&format!("/entities/{alice}")).await;
    assert!(page
        .body
        .contains("data-testid=\"entity-name\">Alice Chen<"));
    let row = page
        .body
        .split("data-testid=\"claim\" data-predicate=\"title\"")
        .nth(1)
        .expect("a title row")
        .split("</li>")
        .next()
        .unwrap();
    assert!(row.contains("Principal Researcher"), "{row}");
    assert!(row.contains("since <time"), "{row}");
    assert!(row.contains("2026-10-05"), "{row}");
    assert!(
        row.contains("before: <span class=\"previous\">Senior Researcher"),
        "{row}"
    );
    let chip = row
        .split("data-testid=\"evidence-chip\" href=\"")
        .nth(1)
        .expect("an evidence chip");
    let (href, text) = chip.split_once("\">").unwrap();
    assert!(
        href.starts_with("/meetings/m_") && href.contains("?seg="),
        "{href}"
    );
    let text = text.split('<').next().unwrap();
    assert!(
        text.contains(" · ") && text.ends_with("Alice Chen"),
        "{text}"
    );
    // The chip opens the transcript with the cited segment highlighted.
    let href = href.replace("&amp;", "&");
    let segment = href
        .split("seg=")
        .nth(1)
        .unwrap()
        .split('#')
        .next()
        .unwrap();
    let meeting = browser.get(&href).await;
    assert_eq!(meeting.status, StatusCode::OK);
    assert!(meeting.body.contains(&format!(
        "class=\"segment highlighted\" data-testid=\"segment\" id=\"seg-{segment}\" aria-current=\"true\""
    )), "{}", meeting.body);
    // The History tab lists the superseded title.
    let history = browser.get(&format!("/entities/{alice}?tab=history")).await;
    assert!(history.body.contains("data-testid=\"tab-history\""));
    let superseded = history
        .body
        .split("data-testid=\"history-claim\" data-status=\"superseded\" data-predicate=\"title\"")
        .nth(1)
        .expect("a superseded title")
        .split("</li>")
        .next()
        .unwrap();
    assert!(superseded.contains("Senior Researcher"), "{superseded}");
    assert!(
        superseded.contains("replaced by <strong>Principal Researcher"),
        "{superseded}"
    );
}

#[tokio::test]
async fn overriding_a_value_through_the_form_marks_it_manual() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let alice = entity_id(&fixture, "alice@northwind.io");
    let page = browser.get(&format!("/entities/{alice}")).await;
    assert!(page.body.contains("data-testid=\"override-form\""));
    let done = browser
        .post(
            &format!("/entities/{alice}/override"),
            &[
                ("csrf", &page.csrf()),
                ("predicate", "title"),
                ("value", "Chief Scientist"),
            ],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(done.location(), format!("/entities/{alice}"));
    let after = browser.follow(&done).await;
    assert!(
        after.flash().is_some_and(|f| f.contains("title")),
        "{}",
        after.body
    );
    let row = after
        .body
        .split("data-testid=\"claim\" data-predicate=\"title\"")
        .nth(1)
        .unwrap()
        .split("</li>")
        .next()
        .unwrap();
    assert!(row.contains("Chief Scientist"), "{row}");
    assert!(
        row.contains("data-testid=\"manual-badge\">manual<"),
        "{row}"
    );
    // The flash shows once.
    let again = browser.get(&format!("/entities/{alice}")).await;
    assert!(again.flash().is_none());
    // A refused edit is a flash error on the same page, nothing changes.
    let before = lore_engine::state_dump(&fixture.engine, OWNER).unwrap();
    let refused = browser
        .post(
            &format!("/entities/{alice}/override"),
            &[
                ("csrf", &page.csrf()),
                ("predicate", "has_skill"),
                ("value", "x"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::SEE_OTHER);
    let shown = browser.follow(&refused).await;
    assert!(shown.body.contains("flash-error"), "{}", shown.body);
    assert_eq!(
        lore_engine::state_dump(&fixture.engine, OWNER).unwrap(),
        before
    );
    assert!(lore_engine::check_invariants(&fixture.engine, OWNER)
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn merging_and_undoing_through_the_forms() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let chen = entity_id(&fixture, "alice@northwind.io");
    let novak = entity_id(&fixture, "Alice Novak");
    let before = lore_engine::state_dump(&fixture.engine, OWNER).unwrap();
    let page = browser.get(&format!("/entities/{chen}")).await;
    assert!(page.body.contains("data-testid=\"merge-form\""));
    let merged = browser
        .post(
            &format!("/entities/{chen}/merge"),
            &[("csrf", &page.csrf()), ("other", "Alice Novak")],
        )
        .await;
    assert_eq!(merged.location(), format!("/entities/{chen}"));
    let after = browser.follow(&merged).await;
    assert!(
        after.flash().is_some_and(|f| f.starts_with("Merged")),
        "{}",
        after.body
    );
    // The absorbed entity's page now redirects to the survivor.
    let absorbed = browser.get(&format!("/entities/{novak}")).await;
    assert_eq!(absorbed.status, StatusCode::SEE_OTHER);
    assert_eq!(absorbed.location(), format!("/entities/{chen}"));
    // Undo the newest revision from the entity's list.
    let undo_action = after
        .body
        .split("data-testid=\"undo-form\" action=\"")
        .nth(1)
        .expect("an undo form")
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let undone = browser
        .post(&undo_action, &[("csrf", &after.csrf()), ("back", &chen)])
        .await;
    assert_eq!(undone.location(), format!("/entities/{chen}"));
    let shown = browser.follow(&undone).await;
    assert_eq!(shown.flash().as_deref(), Some("Undone."));
    assert_eq!(
        browser.get(&format!("/entities/{novak}")).await.status,
        StatusCode::OK,
        "the absorbed entity is back"
    );
    // Entities are as before the merge, except that undoing a merge records the pair as
    // different (L18).
    let without_tombstones = |dump: serde_json::Value| {
        let mut entities = dump["entities"].clone();
        for entity in entities.as_array_mut().unwrap() {
            entity.as_object_mut().unwrap().remove("do_not_merge_with");
        }
        entities
    };
    let restored = lore_engine::state_dump(&fixture.engine, OWNER).unwrap();
    assert_eq!(without_tombstones(restored), without_tombstones(before));
    assert!(lore_engine::check_invariants(&fixture.engine, OWNER)
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn deleting_a_meeting_after_the_dry_run() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let meeting = fixture
        .engine
        .list_meetings(OWNER)
        .unwrap()
        .into_iter()
        .find(|m| m.title.contains("beta retro"))
        .expect("the beta retro meeting");
    let before = lore_engine::state_dump(&fixture.engine, OWNER).unwrap();
    let page = browser.get(&format!("/meetings/{}", meeting.id)).await;
    assert!(page.body.contains("data-testid=\"delete-meeting\""));
    let confirm = browser
        .get(&format!("/meetings/{}/delete", meeting.id))
        .await;
    assert!(confirm.body.contains("data-testid=\"confirm-delete\""));
    let items = confirm.body.matches("data-testid=\"cascade-item\"").count();
    assert!(items >= 2, "{}", confirm.body);
    assert!(
        confirm.body.contains("Principal Researcher"),
        "the title claim goes"
    );
    // The dry run changed nothing.
    assert_eq!(
        lore_engine::state_dump(&fixture.engine, OWNER).unwrap(),
        before
    );

    let deleted = browser
        .post(
            &format!("/meetings/{}/delete", meeting.id),
            &[("csrf", &confirm.csrf())],
        )
        .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    assert_eq!(deleted.location(), "/");
    let home = browser.follow(&deleted).await;
    assert!(
        home.flash().is_some_and(|f| f.starts_with("Deleted")),
        "{}",
        home.body
    );
    assert_eq!(
        browser
            .get(&format!("/meetings/{}", meeting.id))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let alice = fixture
        .engine
        .show(OWNER, "alice@northwind.io", &ShowOptions::default())
        .unwrap();
    assert!(
        !alice
            .claims
            .iter()
            .any(|c| c.value.as_deref() == Some("Principal Researcher")),
        "the title only that meeting supported is gone (L13)"
    );
    assert!(lore_engine::check_invariants(&fixture.engine, OWNER)
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn review_items_are_accepted_and_rejected_through_forms() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let review = browser.get("/review").await;
    let count = review.body.matches("data-testid=\"suggestion\"").count();
    assert_eq!(
        count,
        fixture.engine.review_queue(OWNER, false).unwrap().len()
    );
    assert!(count > 0, "the demo data raises at least one suggestion");
    // Evidence reads as chips opening the cited segment, not as meeting keys.
    assert!(
        review
            .body
            .contains("Northwind weekly: Beacon review · 00:35 · Dana Ruiz"),
        "review evidence is a chip: {}",
        review.body
    );
    assert!(review.body.contains("?seg=s4#seg-s4"));
    let action = review
        .body
        .split("data-testid=\"reject-form\" action=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let done = browser.post(&action, &[("csrf", &review.csrf())]).await;
    assert_eq!(done.location(), "/review");
    let after = browser.follow(&done).await;
    assert_eq!(after.flash().as_deref(), Some("Rejected."));
    assert_eq!(
        after.body.matches("data-testid=\"suggestion\"").count(),
        count - 1
    );
}

#[tokio::test]
async fn users_sign_in_with_a_password_as_their_own_owner() {
    let fixture = demo_fixture();
    fixture
        .engine
        .create_user("dana", "correct horse battery")
        .unwrap();
    assert!(fixture
        .engine
        .create_user("dana", "another password")
        .is_err());
    assert!(fixture.engine.create_user("eve", "short").is_err());
    let stored = fixture.engine.list_users().unwrap();
    assert_eq!(stored.len(), 1);
    assert!(stored[0].password_hash.starts_with("$argon2id$"));
    assert!(!stored[0].password_hash.contains("correct horse"));

    let mut browser = Browser::anonymous(&fixture);
    let form = browser.get("/signin").await;
    assert!(form.body.contains("name=\"password\" type=\"password\""));
    let wrong = browser
        .post(
            "/signin",
            &[("username", "dana"), ("password", "wrong password")],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(wrong.headers.get("set-cookie").is_none());
    let nobody = browser
        .post(
            "/signin",
            &[
                ("username", "nobody"),
                ("password", "correct horse battery"),
            ],
        )
        .await;
    assert_eq!(nobody.status, StatusCode::UNAUTHORIZED);
    let ok = browser
        .post(
            "/signin",
            &[("username", "dana"), ("password", "correct horse battery")],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    assert!(ok.headers["set-cookie"]
        .to_str()
        .unwrap()
        .contains("HttpOnly"));
    browser.take_cookie(&ok);
    let home = browser.get("/").await;
    assert!(home.body.contains("Sign out (dana)"));
    // dana is an owner of her own: the demo data belongs to `local`.
    assert!(home.body.contains("Nothing here yet"), "{}", home.body);
    let alice = entity_id(&fixture, "alice@northwind.io");
    assert_eq!(
        browser.get(&format!("/entities/{alice}")).await.status,
        StatusCode::NOT_FOUND
    );
    // Ten failed attempts lock the name for a while, even against the right password.
    for _ in 0..10 {
        let failed = browser
            .post(
                "/signin",
                &[("username", "dana"), ("password", "guess guess")],
            )
            .await;
        assert_eq!(failed.status, StatusCode::UNAUTHORIZED);
    }
    let locked = browser
        .post(
            "/signin",
            &[("username", "dana"), ("password", "correct horse battery")],
        )
        .await;
    assert_eq!(
        locked.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        locked.body
    );
    assert!(locked.headers.get("set-cookie").is_none());
    fixture.engine.remove_user("dana").unwrap();
    assert!(fixture.engine.remove_user("dana").is_err());
}

#[tokio::test]
async fn links_show_url_only_and_attachments_download() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let atlas = entity_id(&fixture, "project:atlas");
    let page = browser.get(&format!("/entities/{atlas}")).await;
    let link = page
        .body
        .split("data-testid=\"resource-link\"")
        .nth(1)
        .expect("Atlas has links")
        .split("</a>")
        .next()
        .unwrap();
    assert!(
        link.contains("data-testid=\"url-only-badge\">url only<"),
        "{link}"
    );

    // An attachment of the owner's meeting downloads; the file name is sanitized.
    let ids = seed_owner(&fixture.engine, OWNER, "zzfiles");
    let meeting = browser.get(&format!("/meetings/{}", ids.meeting)).await;
    let href = format!("/meetings/{}/attachments/{}", ids.meeting, ids.attachment);
    assert!(meeting.body.contains(&href), "{}", meeting.body);
    let file = browser.get(&href).await;
    assert_eq!(file.status, StatusCode::OK);
    assert_eq!(file.body, "zzfiles bytes");
    assert_eq!(
        file.headers["content-disposition"],
        "attachment; filename=\"zzfiles-file.txt\""
    );
    assert_eq!(file.headers["content-type"], "application/octet-stream");
    // Another meeting's path does not reach it.
    let other = fixture.engine.list_meetings(OWNER).unwrap()[0].id.clone();
    let wrong = browser
        .get(&format!("/meetings/{other}/attachments/{}", ids.attachment))
        .await;
    assert_eq!(wrong.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn long_lists_paginate_and_bad_input_is_a_page() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    // Page 2 of the home page's entity list is empty on the demo (fewer than 50) but renders.
    let second = browser.get("/?page=2").await;
    assert_eq!(second.status, StatusCode::OK);
    let alice = entity_id(&fixture, "alice@northwind.io");
    let bad_hops = browser.get(&format!("/graph/{alice}?hops=3")).await;
    assert_eq!(bad_hops.status, StatusCode::BAD_REQUEST);
    assert_page_shape("/graph?hops=3", &bad_hops);
    let bad_query = browser.get("/search?q=%22unclosed").await;
    assert!(bad_query.status.is_success() || bad_query.status == StatusCode::BAD_REQUEST);
    assert_page_shape("/search", &bad_query);
    // Not an entity id: a 404 page, not a name lookup.
    for uri in [
        "/entities/alice@northwind.io",
        "/entities/Alice%20Chen",
        "/meetings/northwind-weekly-2026-09-07",
    ] {
        let page = browser.get(uri).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{uri}");
        assert_page_shape(uri, &page);
    }
    // A long transcript: 50 segments a page, and a cited segment opens its page.
    let segments: Vec<serde_json::Value> = (1..=120)
        .map(|i| {
            serde_json::json!({"id": format!("s{i}"), "start_ms": i * 1000, "end_ms": i * 1000 + 900,
                "speaker": "S1", "attribution": "one_mapped_source", "text": format!("line number {i}")})
        })
        .collect();
    let bundle = serde_json::json!({
        "meeting": {"external_id": "long-meeting", "title": "A long meeting",
                    "started_at": "2026-11-01T10:00:00Z", "ended_at": "2026-11-01T12:00:00Z"},
        "participants": [{"display_name": "Pat Long", "email": "pat@long.test", "speaker_label": "S1"}],
        "segments": segments, "claims": []
    });
    let report = fixture
        .engine
        .ingest_bundle_json(OWNER, &bundle.to_string())
        .unwrap();
    let first = browser.get(&format!("/meetings/{}", report.meeting)).await;
    assert_eq!(first.body.matches("data-testid=\"segment\"").count(), 50);
    assert!(first.body.contains("Page 1 of 3"));
    assert!(first
        .body
        .contains(&format!("href=\"/meetings/{}?page=2\"", report.meeting)));
    let cited = browser
        .get(&format!("/meetings/{}?seg=s110#seg-s110", report.meeting))
        .await;
    assert!(cited.body.contains("Page 3 of 3"), "{}", cited.body);
    assert!(cited.body.contains("id=\"seg-s110\" aria-current=\"true\""));
    assert_eq!(cited.body.matches("data-testid=\"segment\"").count(), 20);
}

#[tokio::test]
async fn splitting_off_one_meeting_through_the_form_and_undoing_it() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let chen = entity_id(&fixture, "alice@northwind.io");
    let page = browser.get(&format!("/entities/{chen}")).await;
    let form = page
        .body
        .split("data-testid=\"split-form\"")
        .nth(1)
        .expect("a split form")
        .split("</form>")
        .next()
        .unwrap();
    let meeting = form
        .split("<option value=\"")
        .nth(1)
        .expect("a meeting to split off")
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let split = browser
        .post(
            &format!("/entities/{chen}/split"),
            &[("csrf", &page.csrf()), ("meeting", &meeting)],
        )
        .await;
    assert_eq!(split.location(), format!("/entities/{chen}"));
    let after = browser.follow(&split).await;
    let flash = after.flash().unwrap_or_default();
    assert!(flash.starts_with("Split:"), "{}", after.body);
    let new_id = flash
        .split("new entity (")
        .nth(1)
        .unwrap()
        .trim_end_matches(").")
        .to_string();
    assert_eq!(
        browser.get(&format!("/entities/{new_id}")).await.status,
        StatusCode::OK
    );
    // The split is the newest change of the entity; undoing it removes the new entity.
    let undo_action = after
        .body
        .split("data-testid=\"undo-form\" action=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let undone = browser
        .post(&undo_action, &[("csrf", &after.csrf()), ("back", &chen)])
        .await;
    assert_eq!(
        browser.follow(&undone).await.flash().as_deref(),
        Some("Undone.")
    );
    assert_eq!(
        browser.get(&format!("/entities/{new_id}")).await.status,
        StatusCode::NOT_FOUND
    );
    assert!(lore_engine::check_invariants(&fixture.engine, OWNER)
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn adding_and_retracting_a_claim_through_the_forms() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let bob = entity_id(&fixture, "bob@northwind.io");
    let page = browser.get(&format!("/entities/{bob}")).await;
    assert!(page.body.contains("data-testid=\"add-claim-form\""));
    let added = browser
        .post(
            &format!("/entities/{bob}/claims"),
            &[
                ("csrf", &page.csrf()),
                ("predicate", "has_skill"),
                ("value", "kernel tuning"),
                ("object", ""),
                ("context", ""),
                ("due_at", ""),
            ],
        )
        .await;
    let after = browser.follow(&added).await;
    assert_eq!(after.flash().as_deref(), Some("Claim added."));
    let row = after
        .body
        .split("data-testid=\"claim\" data-predicate=\"skill\"")
        .nth(1)
        .expect("the new skill row")
        .split("</li>")
        .next()
        .unwrap();
    assert!(
        row.contains("kernel tuning") && row.contains("manual-badge"),
        "{row}"
    );
    let claim = row
        .split("name=\"claim\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let retracted = browser
        .post(
            &format!("/entities/{bob}/retract"),
            &[("csrf", &after.csrf()), ("claim", &claim)],
        )
        .await;
    let shown = browser.follow(&retracted).await;
    assert!(shown
        .flash()
        .is_some_and(|f| f.starts_with("Claim retracted")));
    let current = shown
        .body
        .split("id=\"h-current\"")
        .nth(1)
        .unwrap()
        .split("id=\"h-tasks\"")
        .next()
        .unwrap();
    assert!(!current.contains("kernel tuning"), "{current}");
    let history = browser.get(&format!("/entities/{bob}?tab=history")).await;
    assert!(history.body.contains(
        "data-testid=\"history-claim\" data-status=\"retracted\" data-predicate=\"skill\""
    ));
    // A claim of another entity cannot be retracted from this page.
    let alice = entity_id(&fixture, "alice@northwind.io");
    let alices = fixture
        .engine
        .show(OWNER, &alice, &ShowOptions::default())
        .unwrap()
        .claims[0]
        .id
        .clone();
    let wrong = browser
        .post(
            &format!("/entities/{bob}/retract"),
            &[("csrf", &after.csrf()), ("claim", &alices)],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn renaming_through_the_form_and_back_to_the_sources_name() {
    let fixture = demo_fixture();
    let browser = Browser::signed_in(&fixture, OWNER).await;
    let atlas = entity_id(&fixture, "project:atlas");
    let alice = entity_id(&fixture, "alice@northwind.io");
    let page = browser.get(&format!("/entities/{atlas}")).await;
    assert!(page.body.contains("data-testid=\"rename-form\""));
    assert!(!page.body.contains("data-testid=\"rename-clear\""));
    let done = browser
        .post(
            &format!("/entities/{atlas}/name"),
            &[("csrf", &page.csrf()), ("name", "Orion")],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(done.location(), format!("/entities/{atlas}"));
    let after = browser.follow(&done).await;
    assert!(after.flash().is_some_and(|f| f.contains("Renamed")));
    assert!(
        after
            .body
            .contains("<h1 data-testid=\"entity-name\">Orion</h1>"),
        "{}",
        after.body
    );
    assert!(
        after.body.contains("data-testid=\"rename-clear\""),
        "the way back is offered"
    );
    // A page that links to the project names it so.
    let alice_page = browser.get(&format!("/entities/{alice}")).await;
    assert!(alice_page.body.contains(">Orion<"), "{}", alice_page.body);

    // An empty name is refused with a flash error; nothing changes.
    let before = lore_engine::state_dump(&fixture.engine, OWNER).unwrap();
    let refused = browser
        .post(
            &format!("/entities/{atlas}/name"),
            &[("csrf", &page.csrf()), ("name", "   ")],
        )
        .await;
    let shown = browser.follow(&refused).await;
    assert!(shown.body.contains("flash-error"), "{}", shown.body);
    assert_eq!(
        lore_engine::state_dump(&fixture.engine, OWNER).unwrap(),
        before
    );

    let cleared = browser
        .post(
            &format!("/entities/{atlas}/name"),
            &[("csrf", &page.csrf()), ("clear", "true")],
        )
        .await;
    let shown = browser.follow(&cleared).await;
    assert!(
        shown
            .body
            .contains("<h1 data-testid=\"entity-name\">Atlas</h1>"),
        "{}",
        shown.body
    );
    assert!(!shown.body.contains("data-testid=\"rename-clear\""));
    assert!(lore_engine::check_invariants(&fixture.engine, OWNER)
        .unwrap()
        .is_empty());
}

/// Sessions live in the database: a server started again on the same file keeps everyone signed
/// in (with the same form token, so a page loaded before the restart still posts), signing out ends
/// the session on every server, and removing a user ends theirs at once.
#[tokio::test]
async fn a_session_survives_a_restart_and_ends_with_its_user() {
    let fixture = fixture();
    fixture
        .engine
        .create_user("zoe", "correct horse battery")
        .unwrap();
    let mut browser = Browser::anonymous(&fixture);
    let ok = browser
        .post(
            "/signin",
            &[("username", "zoe"), ("password", "correct horse battery")],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    browser.take_cookie(&ok);
    let before = browser.get("/").await;
    assert!(before.body.contains("Sign out (zoe)"), "{}", before.body);
    let cookie = browser.cookie.clone().unwrap();
    assert!(
        !before.body.contains(&cookie),
        "the page never shows the cookie"
    );

    // A second server on the same database file, as after a restart.
    let engine = std::sync::Arc::new(engine_at(fixture._dir.path(), NOW));
    let restarted = lore_server::app(engine.clone(), test_config());
    let again = Browser {
        router: restarted.router.clone(),
        cookie: Some(cookie.clone()),
    };
    let home = again.get("/").await;
    assert_eq!(home.status, StatusCode::OK, "{}", home.body);
    assert!(home.body.contains("Sign out (zoe)"));
    assert_eq!(home.csrf(), before.csrf(), "the form token is the cookie's");
    // Another owner's session is another cookie: a made-up one is sent to sign in.
    let stranger = Browser {
        router: restarted.router.clone(),
        cookie: Some("0".repeat(64)),
    };
    assert_eq!(stranger.get("/").await.status, StatusCode::SEE_OTHER);

    // Removing the user (the CLI, another process) ends the session on every server.
    engine.remove_user("zoe").unwrap();
    for router in [&fixture.router, &restarted.router] {
        let gone = Browser {
            router: router.clone(),
            cookie: Some(cookie.clone()),
        };
        let page = gone.get("/").await;
        assert_eq!(page.status, StatusCode::SEE_OTHER);
        assert_eq!(page.location(), "/signin");
    }

    // Signing out on one server ends the session on the other.
    let owner_session = Browser::signed_in(&fixture, OWNER).await;
    let page = owner_session.get("/").await;
    let out = owner_session
        .post("/signout", &[("csrf", &page.csrf())])
        .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    let elsewhere = Browser {
        router: restarted.router.clone(),
        cookie: owner_session.cookie.clone(),
    };
    assert_eq!(elsewhere.get("/").await.status, StatusCode::SEE_OTHER);
}
