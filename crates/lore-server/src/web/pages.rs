//! The workspace's pages (GET). Each reads through one or a few engine calls and renders HTML.

use std::collections::{BTreeMap, BTreeSet};

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use lore_core::model::{Authority, ClaimStatus, DeadlineState, TaskStatus};
use lore_core::Ts;
use lore_engine::{
    ClaimView, EntitySort, EntityView, EvidenceView, GraphOptions, SearchRequest, ShowOptions,
    DEADLINES_IN_FORCE,
};
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;

use super::{
    csrf_field, is_id, page, page_of, pager, render, run, see_other, set_cookie, WebError, WebUser,
    PAGE_SIZE,
};
use crate::AppState;

#[derive(Deserialize, Default)]
pub struct PageQuery {
    page: Option<String>,
    q: Option<String>,
    tab: Option<String>,
    seg: Option<String>,
    hops: Option<String>,
    token: Option<String>,
}

impl PageQuery {
    fn page(&self) -> usize {
        self.page
            .as_deref()
            .and_then(|p| p.parse::<usize>().ok())
            .filter(|p| *p >= 1 && *p <= 100_000)
            .unwrap_or(1)
    }
}

/// `2026-10-05` from a time.
pub fn day(ts: Ts) -> String {
    ts.to_rfc3339().chars().take(10).collect()
}

/// A predicate's key on pages (`data-predicate`): the registry name without `has_` (`title`).
pub fn predicate_key(predicate: &str) -> &str {
    predicate.strip_prefix("has_").unwrap_or(predicate)
}

/// An authority or status as people read it: `first_party` → `first party`.
fn word_label(value: &str) -> String {
    value.replace('_', " ")
}

/// A predicate as people read it: `has_title` → `title`, `works_at` → `works at`.
pub fn predicate_label(predicate: &str) -> String {
    predicate_key(predicate).replace('_', " ")
}

fn claim_value(claim: &ClaimView) -> Markup {
    html! {
        @if let Some(object) = &claim.object {
            a href={ "/entities/" (object.id) } { (object.name) }
        } @else if let Some(value) = &claim.value {
            (value)
        }
    }
}

fn claim_value_text(claim: &ClaimView) -> String {
    match (&claim.object, &claim.value) {
        (Some(object), _) => object.name.clone(),
        (None, Some(value)) => value.clone(),
        _ => String::new(),
    }
}

/// Meeting ids for the external ids the evidence of these claims names.
async fn meeting_ids(
    state: &AppState,
    owner: &str,
    claims: &[ClaimView],
) -> Result<BTreeMap<String, String>, WebError> {
    let externals: BTreeSet<String> = claims
        .iter()
        .flat_map(|c| c.evidence.iter().filter_map(|e| e.meeting.clone()))
        .collect();
    let owner = owner.to_string();
    let externals: Vec<String> = externals.into_iter().collect();
    run(state, move |engine| engine.meeting_ids(&owner, &externals)).await
}

/// An evidence chip, `Meeting title · mm:ss · speaker`, opening the transcript at the cited segment.
fn evidence_chip(evidence: &EvidenceView, meetings: &BTreeMap<String, String>) -> Markup {
    let meeting_id = evidence.meeting.as_ref().and_then(|m| meetings.get(m));
    let mut text = evidence
        .meeting_title
        .clone()
        .unwrap_or_else(|| "manual edit".into());
    if let Some(offset) = &evidence.offset {
        text.push_str(" · ");
        text.push_str(offset);
    }
    if let Some(speaker) = &evidence.speaker {
        text.push_str(" · ");
        text.push_str(speaker);
    }
    let quote = (!evidence.quote.is_empty()).then(|| format!("“{}”", evidence.quote));
    html! {
        @if let Some(meeting) = meeting_id {
            @let href = match evidence.segment_ids.first() {
                Some(seg) => format!("/meetings/{meeting}?seg={seg}#seg-{seg}"),
                None => format!("/meetings/{meeting}"),
            };
            span.evidence {
                a.chip data-testid="evidence-chip" href=(href) { (text) }
                @if let Some(quote) = quote { q.quote { (quote.trim_matches(|c| c == '“' || c == '”')) } }
                @if evidence.kind == lore_core::model::EvidenceKind::Termination {
                    span.badge { "ended it" }
                }
            }
        } @else if evidence.authority == Authority::Manual {
            span.evidence.muted { "set by hand on " (day(evidence.observed_at)) }
        } @else {
            span.evidence.muted { (text) }
        }
    }
}

fn entity_link(id: &str, name: &str) -> Markup {
    html! { a href={ "/entities/" (id) } { (name) } }
}

// ---------------------------------------------------------------------------------------------
// Sign-in.

/// `GET /signin?token=T` redeems a one-time link; `GET /signin` shows the password form.
pub async fn signin_page(
    State(state): State<AppState>,
    Query(query): Query<PageQuery>,
) -> Response {
    if let Some(token) = query.token.as_deref() {
        return match state.sessions.redeem_signin_secret(token) {
            Some(owner) => {
                let cookie = match super::start_session(&state, owner).await {
                    Ok(cookie) => cookie,
                    Err(error) => return error.into_response(),
                };
                let mut response = see_other("/");
                response
                    .headers_mut()
                    .insert(header::SET_COOKIE, set_cookie(&cookie));
                response
            }
            // No form on this page: it is served with `no-referrer` (its URL holds a token), and a
            // form posted from it would arrive with `Origin: null`.
            None => render(
                StatusCode::FORBIDDEN,
                "Sign in",
                None,
                html! {
                    h1 { "Sign in" }
                    p.flash.flash-error role="alert" { "This sign-in link was already used or is not valid." }
                    p { "Restart " code { "lore serve" } " for a new link, or " a href="/signin" { "sign in with a password" } "." }
                },
            ),
        };
    }
    signin_form(StatusCode::OK, None)
}

/// The password form, with an optional error.
pub fn signin_form(status: StatusCode, error: Option<&str>) -> Response {
    let body = html! {
        h1 { "Sign in" }
        @if let Some(error) = error {
            p.flash.flash-error role="alert" { (error) }
        }
        p { "Open the sign-in link that " code { "lore serve" } " printed, or sign in with a user created by " code { "lore user add NAME" } "." }
        form.stack.signin action="/signin" method="post" {
            label for="username" { "User name" }
            input id="username" name="username" autocomplete="username" required;
            label for="password" { "Password" }
            input id="password" name="password" type="password" autocomplete="current-password" required;
            button type="submit" { "Sign in" }
        }
    };
    render(status, "Sign in", None, body)
}

// ---------------------------------------------------------------------------------------------
// Home.

pub async fn home(
    State(state): State<AppState>,
    user: WebUser,
    Query(query): Query<PageQuery>,
) -> Result<Response, WebError> {
    let owner = user.owner.clone();
    let (entities, deadlines, tasks, mut meetings, review) = run(&state, move |engine| {
        Ok((
            engine.list_entities_sorted(&owner, EntitySort::Weight)?,
            engine.deadlines(&owner, &DEADLINES_IN_FORCE)?,
            engine.tasks(&owner, None, Some(TaskStatus::Open))?,
            engine.list_meetings(&owner)?,
            engine.review_queue(&owner, false)?.len(),
        ))
    })
    .await?;
    meetings.sort_by(|a, b| (b.started_at, &b.id).cmp(&(a.started_at, &a.id)));
    let page_number = query.page();
    let total = entities.len();
    let entities = page_of(entities, page_number);
    let body = html! {
        h1 { "Your workspace" }
        p.review-summary {
            a href="/review" {
                span data-testid="review-count" { (review) }
                @if review == 1 { " item waits" } @else { " items wait" }
                " for review"
            }
        }
        @if total == 0 {
            section.empty {
                h2 { "Nothing here yet" }
                p { "Ingest a meeting: " code { "lore ingest examples/meetings" } ", or run " code { "lore demo" } " for sample data. Then reload this page." }
            }
        }
        div.home-grid {
            section aria-labelledby="h-entities" {
                h2 id="h-entities" { "People, companies and projects" }
                p.hint { "Pinned first, then by how much they come up." }
                ul.entity-list {
                    @for row in &entities {
                        li {
                            (entity_link(&row.id, &row.name))
                            " " span.badge { (row.kind.as_str()) }
                            @if row.pinned { " " span.badge.pinned { "pinned" } }
                            @if row.status == lore_core::model::EntityStatus::Provisional { " " span.badge.muted { "provisional" } }
                        }
                    }
                }
                (pager("/", page_number, total))
            }
            section aria-labelledby="h-deadlines" {
                h2 id="h-deadlines" { "Deadlines" }
                @if deadlines.is_empty() {
                    p.empty { "No upcoming or past-due deadlines. Deadlines said in meetings show up here." }
                }
                ul {
                    @for row in deadlines.iter().take(20) {
                        li {
                            @if row.state == DeadlineState::PastDue { span.badge.warn { "past due" } " " }
                            strong { (day(row.due_at)) } " · "
                            (entity_link(&row.subject.id, &row.subject.name))
                            @if let Some(commitment) = &row.commitment { ": " (commitment) }
                        }
                    }
                }
            }
            section aria-labelledby="h-tasks" {
                h2 id="h-tasks" { "Open tasks" }
                @if tasks.is_empty() {
                    p.empty { "No open tasks. Action items from meetings show up here." }
                }
                ul {
                    @for task in tasks.iter().take(20) {
                        li {
                            (task.title)
                            @if let Some(assignee) = &task.assignee { " · " (entity_link(&assignee.id, &assignee.name)) }
                            @if let Some(due) = task.due_at { " · due " (day(due)) }
                        }
                    }
                }
            }
            section aria-labelledby="h-meetings" {
                h2 id="h-meetings" { "Recent meetings" }
                @if meetings.is_empty() {
                    p.empty { "No meetings yet." }
                }
                ul {
                    @for meeting in meetings.iter().take(10) {
                        li {
                            a href={ "/meetings/" (meeting.id) } { (meeting.title) }
                            " · " (day(meeting.started_at))
                        }
                    }
                }
            }
        }
    };
    Ok(page("Home", &user, body))
}

// ---------------------------------------------------------------------------------------------
// Search.

/// A snippet with the engine's `[`…`]` match markers turned into `<mark>`, everything escaped.
pub fn highlight(snippet: &str) -> Markup {
    let mut out = String::new();
    let mut open = false;
    for c in snippet.chars() {
        match c {
            '[' if !open => {
                out.push_str("<mark>");
                open = true;
            }
            ']' if open => {
                out.push_str("</mark>");
                open = false;
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    if open {
        out.push_str("</mark>");
    }
    PreEscaped(out)
}

pub async fn search(
    State(state): State<AppState>,
    user: WebUser,
    Query(query): Query<PageQuery>,
) -> Result<Response, WebError> {
    let text = query.q.clone().unwrap_or_default().trim().to_string();
    let page_number = query.page();
    if text.is_empty() {
        let body = html! {
            h1 { "Search" }
            p.empty { "Type a name, a word from a meeting, or a phrase in quotes into the search box above." }
        };
        return Ok(page("Search", &user, body));
    }
    let owner = user.owner.clone();
    let request = SearchRequest {
        query: text.clone(),
        kind: None,
        limit: (page_number * PAGE_SIZE + 1).min(1000),
        newest_first: false,
    };
    let hits = match run(&state, move |engine| engine.search(&owner, &request)).await {
        Ok(hits) => hits,
        Err(error) if error.status == StatusCode::BAD_REQUEST => {
            let body = html! {
                h1 { "Results for “" (text) "”" }
                p.flash.flash-error role="alert" { (error.message) }
                p.hint { "Words match as typed; put a phrase in double quotes, end a word with * for a prefix, use OR between words and - before a word to exclude it." }
            };
            return Ok(super::render_with_query(
                StatusCode::BAD_REQUEST,
                "Search",
                Some(&user),
                Some(&text),
                body,
            ));
        }
        Err(error) => return Err(error),
    };
    let more = hits.len() > page_number * PAGE_SIZE;
    let total = hits.len();
    let hits = page_of(hits, page_number);
    let base = format!("/search?q={}", url_encode(&text));
    let body = html! {
        h1 { "Results for “" (text) "”" }
        @if hits.is_empty() {
            p.empty { "Nothing matches. Try fewer words, a prefix like " code { "atl*" } ", or " code { "OR" } " between words." }
        }
        ol.results {
            @for hit in &hits {
                @let href = match (hit.kind.as_str(), &hit.entity, &hit.meeting) {
                    ("segment", _, Some(meeting)) => format!("/meetings/{}?seg={}#seg-{}", meeting.id, hit.id, hit.id),
                    ("note", _, Some(meeting)) => format!("/meetings/{}", meeting.id),
                    (_, Some(entity), _) => format!("/entities/{}", entity.id),
                    (_, None, Some(meeting)) => format!("/meetings/{}", meeting.id),
                    _ => format!("/entities/{}", hit.id),
                };
                li.result {
                    a data-testid="search-result" href=(href) { (hit.title) }
                    " " span.badge { (hit.kind) }
                    @if let Some(status) = hit.status { " " span.badge.muted { (status.as_str()) } }
                    p.snippet { (highlight(&hit.snippet)) }
                    @if let Some(meeting) = &hit.meeting {
                        p.hint { (meeting.title) @if let Some(offset) = &hit.offset { " · " (offset) } }
                    }
                }
            }
        }
        @if page_number > 1 || more {
            nav.pager aria-label="Pages" {
                @if page_number > 1 { a rel="prev" href={ (base) "&page=" (page_number - 1) } { "← Previous" } }
                span { "Page " (page_number) }
                @if more { a rel="next" href={ (base) "&page=" (page_number + 1) } { "Next →" } }
            }
        }
        @if total >= 1000 { p.hint { "Showing the best 1000 matches." } }
    };
    Ok(super::render_with_query(
        StatusCode::OK,
        &format!("Search: {text}"),
        Some(&user),
        Some(&text),
        body,
    ))
}

/// Percent-encodes a query value.
pub fn url_encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Entity.

/// Reads an entity page's view; a merged id redirects to its survivor, anything that is not an
/// entity id of this owner is a 404.
async fn entity_view(
    state: &AppState,
    user: &WebUser,
    id: &str,
    history: bool,
) -> Result<Result<EntityView, Response>, WebError> {
    if !is_id(id, "e_") {
        return Err(WebError::not_found("entity with this id"));
    }
    let owner = user.owner.clone();
    let entity = id.to_string();
    let options = ShowOptions {
        history,
        include_provisional: true,
    };
    let view = run(state, move |engine| engine.show(&owner, &entity, &options)).await?;
    if view.entity.id != id {
        return Ok(Err(see_other(&format!("/entities/{}", view.entity.id))));
    }
    Ok(Ok(view))
}

pub async fn entity(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    Query(query): Query<PageQuery>,
) -> Result<Response, WebError> {
    let history_tab = query.tab.as_deref() == Some("history");
    let view = match entity_view(&state, &user, &id, true).await? {
        Ok(view) => view,
        Err(redirect) => return Ok(redirect),
    };
    let owner = user.owner.clone();
    let entity_id = id.clone();
    let kind = view.entity.kind;
    let (revisions, (predicates, single)) = run(&state, move |engine| {
        let registry = engine.registry();
        let predicates: Vec<String> = registry
            .names()
            .filter(|name| {
                registry.get(name).is_some_and(|d| {
                    d.accepts_subject(kind) && !matches!(d.object, lore_core::ObjectSpec::Resource)
                })
            })
            .map(str::to_string)
            .collect();
        let single: Vec<String> = predicates
            .iter()
            .filter(|name| {
                registry.get(name).is_some_and(|d| {
                    d.cardinality == lore_core::Cardinality::Single
                        && !d.is_deadline
                        && d.context_kind.is_none()
                        && !matches!(d.object, lore_core::ObjectSpec::Entity(_))
                })
            })
            .cloned()
            .collect();
        Ok((
            engine.entity_revisions(&owner, &entity_id, 10)?,
            (predicates, single),
        ))
    })
    .await?;
    let meetings = meeting_ids(&state, &user.owner, &view.claims).await?;
    let entity = &view.entity;
    let by_id: BTreeMap<&str, &ClaimView> =
        view.claims.iter().map(|c| (c.id.as_str(), c)).collect();
    // What each claim replaced: the claims it superseded.
    let mut replaced: BTreeMap<&str, Vec<&ClaimView>> = BTreeMap::new();
    for claim in &view.claims {
        if let Some(by) = &claim.superseded_by {
            replaced.entry(by.as_str()).or_default().push(claim);
        }
    }
    let mut current: Vec<&ClaimView> = view
        .claims
        .iter()
        .filter(|c| matches!(c.status, ClaimStatus::Active | ClaimStatus::Provisional))
        .collect();
    current.sort_by(|a, b| {
        (&a.predicate, a.valid_from, &a.id).cmp(&(&b.predicate, b.valid_from, &b.id))
    });
    let evidence_meetings: BTreeSet<(String, String)> = view
        .claims
        .iter()
        .flat_map(|c| c.evidence.iter())
        .filter_map(|e| {
            Some((
                e.meeting.clone()?,
                e.meeting_title.clone().unwrap_or_default(),
            ))
        })
        .collect();

    let header = html! {
        nav.crumbs aria-label="Breadcrumb" { a href="/" { "Home" } " › " (entity.kind.as_str()) }
        div.entity-header {
            h1 data-testid="entity-name" { (entity.name) }
            p.meta {
                span.badge { (entity.kind.as_str()) }
                @if entity.status != lore_core::model::EntityStatus::Active { " " span.badge.muted { (entity.status.as_str()) } }
                @if entity.pinned { " " span.badge.pinned { "pinned" } }
                @for email in &entity.emails { " · " (email) }
                @for domain in &entity.domains { " · " (domain) }
            }
            @if !entity.aliases.is_empty() {
                p.meta { "Also called: " (entity.aliases.join(", ")) }
            }
            @if !entity.brief.is_empty() { p.brief { (entity.brief) } }
            form.inline action={ "/entities/" (entity.id) "/pin" } method="post" {
                (csrf_field(&user))
                input type="hidden" name="pinned" value=(if entity.pinned { "false" } else { "true" });
                button.secondary type="submit" { @if entity.pinned { "Unpin" } @else { "Pin to home" } }
            }
            details.rename {
                summary { "Rename" }
                form data-testid="rename-form" action={ "/entities/" (entity.id) "/name" } method="post" {
                    (csrf_field(&user))
                    label for="rename-name" { "Name to show" }
                    input id="rename-name" type="text" name="name" value=(entity.name) required maxlength="200";
                    button type="submit" { "Save name" }
                }
                @if let Some(derived) = &entity.derived_name {
                    form.inline data-testid="rename-clear" action={ "/entities/" (entity.id) "/name" } method="post" {
                        (csrf_field(&user))
                        input type="hidden" name="clear" value="true";
                        button.secondary type="submit" { "Show the name from the sources (" (derived) ")" }
                    }
                }
            }
        }
        nav.tabs aria-label="Entity views" {
            a data-testid="tab-snapshot" href={ "/entities/" (entity.id) } aria-current=[(!history_tab).then_some("page")] { "Snapshot" }
            a data-testid="tab-history" href={ "/entities/" (entity.id) "?tab=history" } aria-current=[history_tab.then_some("page")] { "History" }
            a href={ "/graph/" (entity.id) "?hops=1" } { "Graph" }
        }
    };

    let snapshot = html! {
        section aria-labelledby="h-current" {
            h2 id="h-current" { "Current facts" }
            @if current.is_empty() {
                p.empty { "No current facts. Add one below, or ingest a meeting that mentions " (entity.name) "." }
            }
            ul.claims {
                @for claim in &current {
                    li.claim data-testid="claim" data-predicate=(predicate_key(&claim.predicate)) {
                        div.claim-main {
                            span.predicate { (predicate_label(&claim.predicate)) }
                            span.value { (claim_value(claim)) }
                            @if let Some(context) = &claim.context { span.context { " on " (entity_link(&context.id, &context.name)) } }
                            @if claim.authority == Authority::Manual { " " span.badge.manual data-testid="manual-badge" { "manual" } }
                            @if claim.status == ClaimStatus::Provisional { " " span.badge.warn { "provisional" } }
                        }
                        p.claim-meta {
                            @if let Some(from) = claim.valid_from { "since " time datetime=(from.to_rfc3339()) { (day(from)) } }
                            @if let Some(to) = claim.valid_to { " · until " time datetime=(to.to_rfc3339()) { (day(to)) } }
                            @if let Some(due) = claim.due_at { " · due " (day(due)) }
                            @if let Some(state) = claim.deadline_state { " " span.badge { (state.as_str()) } }
                            @if let Some(previous) = replaced.get(claim.id.as_str()) {
                                @for old in previous {
                                    " · before: " span.previous { (claim_value_text(old)) }
                                    @if let Some(to) = old.valid_to { " (until " (day(to)) ")" }
                                }
                            }
                        }
                        div.chips {
                            @for evidence in &claim.evidence { (evidence_chip(evidence, &meetings)) }
                        }
                        form.inline data-testid="retract-form" action={ "/entities/" (entity.id) "/retract" } method="post" {
                            (csrf_field(&user))
                            input type="hidden" name="claim" value=(claim.id);
                            button.secondary.small type="submit" aria-label={ "Retract " (predicate_label(&claim.predicate)) " " (claim_value_text(claim)) } { "Retract" }
                        }
                    }
                }
            }
        }
        @if !view.links.is_empty() {
            section aria-labelledby="h-links" {
                h2 id="h-links" { "Links and files" }
                ul.links {
                    @for link in &view.links {
                        li {
                            a data-testid="resource-link" href=(link.url) rel="noopener noreferrer" {
                                (link.title.clone().unwrap_or_else(|| link.url.clone()))
                                @if link.ingested_status == "url_only" { " " span.badge.muted data-testid="url-only-badge" { "url only" } }
                            }
                            " " span.hint { (link.resource_type.as_str()) }
                        }
                    }
                }
            }
        }
        section aria-labelledby="h-tasks" {
            h2 id="h-tasks" { "Tasks" }
            @if view.tasks.is_empty() { p.empty { "No tasks mention " (entity.name) "." } }
            ul {
                @for task in &view.tasks {
                    li {
                        span.badge { (task.status.as_str()) } " " (task.title)
                        @if let Some(assignee) = &task.assignee { " · " (assignee) }
                        @if let Some(project) = &task.project { " · " (project) }
                        @if let Some(due) = task.due_at { " · due " (day(due)) }
                    }
                }
            }
        }
        (edit_forms(&user, &view, &predicates, &single, &evidence_meetings))
        (revision_list(&user, &entity.id, &revisions))
    };

    let history = html! {
        section aria-labelledby="h-history" {
            h2 id="h-history" { "History" }
            p.hint { "Every claim, in the order it was first heard, with what replaced it." }
            @if view.claims.is_empty() { p.empty { "No claims yet." } }
            ol.history {
                @for claim in &view.claims {
                    li.history-claim data-testid="history-claim" data-status=(claim.status.as_str()) data-predicate=(predicate_key(&claim.predicate)) {
                        div.claim-main {
                            span.predicate { (predicate_label(&claim.predicate)) }
                            span.value { (claim_value(claim)) }
                            " " span.badge.status { (claim.status.as_str()) }
                            @if claim.authority == Authority::Manual { " " span.badge.manual data-testid="manual-badge" { "manual" } }
                        }
                        p.claim-meta {
                            @for period in &claim.periods {
                                span.period {
                                    (period_text(period))
                                }
                                " "
                            }
                            @if claim.periods.is_empty() {
                                @if let Some(from) = claim.valid_from { "from " (day(from)) }
                                @if let Some(to) = claim.valid_to { " to " (day(to)) }
                            }
                            @if let Some(by) = &claim.superseded_by {
                                " · replaced by "
                                @if let Some(newer) = by_id.get(by.as_str()) {
                                    strong { (claim_value_text(newer)) }
                                    @if let Some(from) = newer.valid_from { " on " (day(from)) }
                                } @else { "a newer claim" }
                            }
                        }
                        div.chips {
                            @for evidence in &claim.evidence { (evidence_chip(evidence, &meetings)) }
                        }
                    }
                }
            }
        }
    };

    let body = html! {
        (header)
        @if history_tab { (history) } @else { (snapshot) }
    };
    let title = if history_tab {
        format!("{} · History", entity.name)
    } else {
        entity.name.clone()
    };
    Ok(page(&title, &user, body))
}

fn period_text(period: &lore_core::model::Period) -> String {
    match period.to {
        Some(to) => format!("{} – {}", day(period.from), day(to)),
        None => format!("since {}", day(period.from)),
    }
}

fn edit_forms(
    user: &WebUser,
    view: &EntityView,
    predicates: &[String],
    single: &[String],
    evidence_meetings: &BTreeSet<(String, String)>,
) -> Markup {
    let id = &view.entity.id;
    html! {
        section.edit aria-labelledby="h-edit" {
            h2 id="h-edit" { "Fix or add" }
            details open {
                summary { "Override a value" }
                form.stack data-testid="override-form" action={ "/entities/" (id) "/override" } method="post" {
                    (csrf_field(user))
                    label for="override-predicate" { "Attribute" }
                    select id="override-predicate" name="predicate" {
                        @for predicate in single {
                            option value=(predicate) { (predicate_label(predicate)) }
                        }
                    }
                    label for="override-value" { "New value" }
                    input id="override-value" name="value" required;
                    p.hint { "The new value is marked manual and holds against later meetings." }
                    button type="submit" { "Save value" }
                }
            }
            details {
                summary { "Add a claim" }
                form.stack data-testid="add-claim-form" action={ "/entities/" (id) "/claims" } method="post" {
                    (csrf_field(user))
                    label for="add-predicate" { "Predicate" }
                    select id="add-predicate" name="predicate" {
                        @for predicate in predicates {
                            option value=(predicate) { (predicate_label(predicate)) }
                        }
                    }
                    label for="add-value" { "Value (text)" }
                    input id="add-value" name="value";
                    label for="add-object" { "Or another entity (id, email or exact name)" }
                    input id="add-object" name="object";
                    label for="add-context" { "Project (for a role)" }
                    input id="add-context" name="context";
                    label for="add-due" { "Due date (for a deadline, YYYY-MM-DD)" }
                    input id="add-due" name="due_at";
                    button type="submit" { "Add claim" }
                }
            }
            details {
                summary { "Merge another entity into this one" }
                form.stack data-testid="merge-form" action={ "/entities/" (id) "/merge" } method="post" {
                    (csrf_field(user))
                    label for="merge-other" { "The duplicate (id, email or exact name)" }
                    input id="merge-other" name="other" required;
                    p.hint { "Everything the duplicate knows moves here. Undo it from Recent changes." }
                    button type="submit" { "Merge into " (view.entity.name) }
                }
            }
            details {
                summary { "Split off what one meeting said" }
                @if evidence_meetings.is_empty() {
                    p.empty { "No meeting evidence to split off." }
                } @else {
                    form.stack data-testid="split-form" action={ "/entities/" (id) "/split" } method="post" {
                        (csrf_field(user))
                        label for="split-meeting" { "Meeting whose mentions belong to someone else" }
                        select id="split-meeting" name="meeting" {
                            @for (external, title) in evidence_meetings {
                                option value=(external) { (title) }
                            }
                        }
                        button type="submit" { "Split into a new entity" }
                    }
                }
            }
        }
    }
}

fn revision_list(user: &WebUser, entity: &str, revisions: &[lore_engine::RevisionRow]) -> Markup {
    html! {
        section aria-labelledby="h-revisions" {
            h2 id="h-revisions" { "Recent changes" }
            @if revisions.is_empty() { p.empty { "No changes yet." } }
            ul.revisions {
                @for revision in revisions {
                    li data-testid="revision" {
                        span.badge { (revision.action.as_str().replace('_', " ")) } " "
                        span.summary { (revision.summary) } " "
                        time.hint datetime=(revision.created_at.to_rfc3339()) { (day(revision.created_at)) }
                        @if revision.undoable {
                            form.inline data-testid="undo-form" action={ "/revisions/" (revision.id) "/undo" } method="post" {
                                (csrf_field(user))
                                input type="hidden" name="back" value=(entity);
                                button.secondary.small type="submit" { "Undo" }
                            }
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Meeting.

pub async fn meeting(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    Query(query): Query<PageQuery>,
) -> Result<Response, WebError> {
    if !is_id(&id, "m_") {
        return Err(WebError::not_found("meeting with this id"));
    }
    let owner = user.owner.clone();
    let meeting_id = id.clone();
    let (detail, transcript, claims) = run(&state, move |engine| {
        Ok((
            engine.get_meeting(&owner, &meeting_id)?,
            engine.meeting_transcript(&owner, &meeting_id)?,
            engine.meeting_claims(&owner, &meeting_id)?,
        ))
    })
    .await?;
    if detail.id != id {
        return Err(WebError::not_found("meeting with this id"));
    }
    let cited = query.seg.clone();
    let total = transcript.segments.len();
    let page_number = match (&query.page, &cited) {
        (None, Some(seg)) => transcript
            .segments
            .iter()
            .position(|s| &s.id == seg)
            .map(|index| index / PAGE_SIZE + 1)
            .unwrap_or(1),
        _ => query.page(),
    };
    let segments = page_of(transcript.segments, page_number);
    let body = html! {
        nav.crumbs aria-label="Breadcrumb" { a href="/" { "Home" } " › meeting" }
        h1 { (detail.title) }
        p.meta {
            time datetime=(detail.started_at.to_rfc3339()) { (detail.started_at.to_rfc3339().chars().take(16).collect::<String>().replace('T', " ")) " UTC" }
            @if let Some(platform) = &detail.platform { " · " (platform) }
            " · " (detail.external_id)
        }
        @if !detail.participants.is_empty() {
            p.meta { "With: "
                @for (i, p) in detail.participants.iter().enumerate() {
                    @if i > 0 { ", " }
                    @if let Some(person) = &p.person { (entity_link(person, &p.display_name)) } @else { (p.display_name) }
                }
            }
        }
        p { a.danger-link data-testid="delete-meeting" href={ "/meetings/" (detail.id) "/delete" } { "Delete this meeting…" } }
        div.meeting-grid {
            section aria-labelledby="h-transcript" {
                h2 id="h-transcript" { "Transcript" }
                @if total == 0 { p.empty { "This meeting has no transcript." } }
                ol.transcript {
                    @for segment in &segments {
                        @let highlighted = cited.as_deref() == Some(segment.id.as_str());
                        li.segment.highlighted[highlighted] data-testid="segment" id={ "seg-" (segment.id) } aria-current=[highlighted.then_some("true")] {
                            span.offset { (segment.offset) }
                            " "
                            span.speaker { (segment.speaker.clone().unwrap_or_else(|| "unknown speaker".into())) }
                            p.text { (segment.text) }
                        }
                    }
                }
                (pager(&format!("/meetings/{}", detail.id), page_number, total))
            }
            div {
                section aria-labelledby="h-claims" {
                    h2 id="h-claims" { "What Lore learned here" }
                    @if claims.is_empty() { p.empty { "No claims cite this meeting." } }
                    ul {
                        @for claim in &claims {
                            li {
                                (entity_link(&claim.subject.id, &claim.subject.name)) ": "
                                (predicate_label(&claim.predicate)) " "
                                @if let Some(object) = &claim.object { (entity_link(&object.id, &object.name)) }
                                @else if let Some(value) = &claim.value { strong { (value) } }
                                " " span.badge.muted { (claim.status.as_str()) }
                                @if let (Some(seg), Some(offset)) = (claim.segment_ids.first(), &claim.offset) {
                                    " " a href={ "/meetings/" (detail.id) "?seg=" (seg) "#seg-" (seg) } { "at " (offset) }
                                }
                            }
                        }
                    }
                }
                @if !detail.notes.is_empty() {
                    section aria-labelledby="h-notes" {
                        h2 id="h-notes" { "Notes" }
                        @for note in &detail.notes {
                            div.note { p { (note.text) } @if let Some(author) = &note.author { p.hint { "— " (author) } } }
                        }
                    }
                }
                @if !detail.links.is_empty() {
                    section aria-labelledby="h-mlinks" {
                        h2 id="h-mlinks" { "Links" }
                        ul {
                            @for link in &detail.links {
                                li {
                                    a data-testid="resource-link" href=(link.url) rel="noopener noreferrer" {
                                        (link.title.clone().unwrap_or_else(|| link.url.clone()))
                                        @if link.ingested_status == "url_only" { " " span.badge.muted data-testid="url-only-badge" { "url only" } }
                                    }
                                }
                            }
                        }
                    }
                }
                section aria-labelledby="h-attachments" {
                    h2 id="h-attachments" { "Attachments" }
                    @if detail.attachments.is_empty() { p.empty { "No attachments." } }
                    ul {
                        @for attachment in &detail.attachments {
                            li {
                                a data-testid="attachment" href={ "/meetings/" (detail.id) "/attachments/" (attachment.id) } download=(attachment.filename) { (attachment.filename) }
                                " " span.hint { (attachment.media_type) ", " (attachment.size) " bytes" }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(page(&detail.title, &user, body))
}

pub async fn attachment(
    State(state): State<AppState>,
    user: WebUser,
    Path((id, attachment)): Path<(String, String)>,
) -> Result<Response, WebError> {
    if !is_id(&id, "m_") {
        return Err(WebError::not_found("meeting with this id"));
    }
    let owner = user.owner.clone();
    let (view, bytes) = run(&state, move |engine| {
        engine.attachment_bytes(&owner, &id, &attachment)
    })
    .await?;
    let filename: String = view
        .filename
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{filename}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

pub async fn meeting_delete(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
) -> Result<Response, WebError> {
    if !is_id(&id, "m_") {
        return Err(WebError::not_found("meeting with this id"));
    }
    let owner = user.owner.clone();
    let meeting_id = id.clone();
    let (detail, items) = run(&state, move |engine| {
        Ok((
            engine.get_meeting(&owner, &meeting_id)?,
            engine.preview_delete_meeting(&owner, &meeting_id)?,
        ))
    })
    .await?;
    if detail.id != id {
        return Err(WebError::not_found("meeting with this id"));
    }
    let body = html! {
        nav.crumbs aria-label="Breadcrumb" { a href="/" { "Home" } " › " a href={ "/meetings/" (detail.id) } { (detail.title) } }
        h1 { "Delete “" (detail.title) "”?" }
        p { "Deleting a meeting erases it and everything only it supported. Facts other meetings also support stay, re-evaluated without it. This is what would happen:" }
        ul.cascade {
            @for item in &items {
                li data-testid="cascade-item" data-change=(item.change) data-table=(item.table) {
                    span.badge.warn[item.change == "removed"] { (item.change) } " " (item.label)
                }
            }
        }
        p.warning { "This cannot be undone." }
        form.inline data-testid="confirm-delete" action={ "/meetings/" (detail.id) "/delete" } method="post" {
            (csrf_field(&user))
            button.danger type="submit" { "Delete the meeting" }
        }
        " "
        a href={ "/meetings/" (detail.id) } { "Cancel" }
    };
    Ok(page(&format!("Delete {}", detail.title), &user, body))
}

// ---------------------------------------------------------------------------------------------
// Graph.

pub async fn graph(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    Query(query): Query<PageQuery>,
) -> Result<Response, WebError> {
    if !is_id(&id, "e_") {
        return Err(WebError::not_found("entity with this id"));
    }
    let hops: u8 = match query.hops.as_deref() {
        None | Some("1") => 1,
        Some("2") => 2,
        Some(other) => {
            return Err(WebError::new(
                StatusCode::BAD_REQUEST,
                format!("hops must be 1 or 2, not '{other}'"),
            ))
        }
    };
    let owner = user.owner.clone();
    let center = id.clone();
    let graph = run(&state, move |engine| {
        engine.graph(
            &owner,
            &center,
            &GraphOptions {
                hops,
                limit: 40,
                valid_at: None,
            },
        )
    })
    .await?;
    if graph.center() != id.as_str() {
        return Ok(see_other(&format!("/graph/{}?hops={hops}", graph.center())));
    }
    let names: BTreeMap<&str, &str> = graph.nodes().map(|n| (n.id, n.name)).collect();
    let center_name = names.get(id.as_str()).copied().unwrap_or("this entity");
    let body = html! {
        nav.crumbs aria-label="Breadcrumb" { a href="/" { "Home" } " › " (entity_link(&id, center_name)) }
        h1 { "Connections of " (center_name) }
        nav.tabs aria-label="Graph depth" {
            a href={ "/graph/" (id) "?hops=1" } aria-current=[(hops == 1).then_some("page")] { "1 hop" }
            a href={ "/graph/" (id) "?hops=2" } aria-current=[(hops == 2).then_some("page")] { "2 hops" }
        }
        @if graph.truncated { p.hint { "Only the strongest connections are drawn." } }
        (super::graph_svg::draw(&graph))
        section aria-labelledby="h-edges" {
            h2 id="h-edges" { "Connections" }
            @if graph.edge_count() == 0 { p.empty { "No connections yet: they come from meetings and claims that name other entities." } }
            // Facts first, each opening its inspector; meetings (attended, mentioned in) folded away.
            @let (facts, meetings): (Vec<_>, Vec<_>) = graph.edges().partition(|e| e.claim.is_some());
            @let edge_item = |edge: &lore_engine::GraphEdge| html! {
                li {
                    (names.get(edge.from).copied().unwrap_or("?")) " "
                    @if let Some(claim) = edge.claim {
                        a href={ "/graph/" (id) "/edge/" (claim) } { (predicate_label(edge.predicate)) }
                    } @else { (predicate_label(edge.predicate)) }
                    " " (names.get(edge.to).copied().unwrap_or("?"))
                    @if let Some(label) = edge.label { " (" (label) ")" }
                }
            };
            ul { @for edge in &facts { (edge_item(edge)) } }
            @if !meetings.is_empty() {
                details {
                    summary { "Meetings (" (meetings.len()) ")" }
                    ul { @for edge in &meetings { (edge_item(edge)) } }
                }
            }
        }
    };
    Ok(page(&format!("Graph of {center_name}"), &user, body))
}

pub async fn edge(
    State(state): State<AppState>,
    user: WebUser,
    Path((id, claim)): Path<(String, String)>,
) -> Result<Response, WebError> {
    if !is_id(&id, "e_") {
        return Err(WebError::not_found("entity with this id"));
    }
    let owner = user.owner.clone();
    let claim_id = claim.clone();
    let inspection = run(&state, move |engine| {
        engine.inspect_claim(&owner, &claim_id)
    })
    .await?;
    let claim = &inspection.claim;
    let touches = inspection.subject.id == id
        || claim.object.as_ref().is_some_and(|o| o.id == id)
        || claim.context.as_ref().is_some_and(|c| c.id == id);
    if !touches {
        return Err(WebError::not_found("connection of this entity"));
    }
    let meetings = meeting_ids(&state, &user.owner, std::slice::from_ref(claim)).await?;
    let body = html! {
        nav.crumbs aria-label="Breadcrumb" { a href="/" { "Home" } " › " a href={ "/graph/" (id) "?hops=1" } { "Graph" } }
        section.inspector data-testid="edge-inspector" {
            h1 { "Connection" }
            dl.facts {
                dt { "From" } dd { (entity_link(&inspection.subject.id, &inspection.subject.name)) }
                dt { "Predicate" } dd data-testid="edge-predicate" { (predicate_label(&claim.predicate)) }
                dt { "To" } dd { (claim_value(claim)) }
                @if let Some(context) = &claim.context {
                    dt { "Role context" } dd { (entity_link(&context.id, &context.name)) }
                }
                @if claim.predicate == "has_role" {
                    @if let Some(value) = &claim.value { dt { "Role" } dd { (value) } }
                }
                dt { "Status" } dd { (claim.status.as_str()) " (" (word_label(claim.authority.as_str())) ")" }
                dt { "Valid" } dd {
                    @if let Some(from) = claim.valid_from { "from " (day(from)) } @else { "from unknown" }
                    @if let Some(to) = claim.valid_to { " to " (day(to)) } @else { ", still in force" }
                }
            }
            h2 { "Evidence" }
            @if claim.evidence.is_empty() { p.empty { "No evidence left." } }
            ul.evidence-list {
                @for evidence in &claim.evidence {
                    li { (evidence_chip(evidence, &meetings)) }
                }
            }
        }
    };
    Ok(page("Connection", &user, body))
}

// ---------------------------------------------------------------------------------------------
// Review queue.

fn value_str(value: &serde_json::Value, field: &str) -> String {
    value
        .get(field)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

/// One piece of review evidence: a chip like the entity page's (meeting title · mm:ss · speaker,
/// opening the cited segment) and the quote.
fn review_evidence(evidence: &serde_json::Value) -> Markup {
    let mut text = value_str(evidence, "meeting_title");
    if text.is_empty() {
        text = value_str(evidence, "meeting");
    }
    for part in [
        value_str(evidence, "offset"),
        value_str(evidence, "speaker"),
    ] {
        if !part.is_empty() {
            text.push_str(" · ");
            text.push_str(&part);
        }
    }
    let meeting = value_str(evidence, "meeting_id");
    let segment = value_str(evidence, "segment");
    let quote = value_str(evidence, "quote");
    html! {
        @if meeting.is_empty() {
            (text)
        } @else if segment.is_empty() {
            a.chip data-testid="evidence-chip" href={ "/meetings/" (meeting) } { (text) }
        } @else {
            a.chip data-testid="evidence-chip" href={ "/meetings/" (meeting) "?seg=" (segment) "#seg-" (segment) } { (text) }
        }
        @if !quote.is_empty() { " " q.quote { (quote) } }
    }
}

fn review_claim(claim: &serde_json::Value) -> Markup {
    html! {
        @if !claim.is_null() {
            div.review-claim {
                a href={ "/entities/" (value_str(claim, "subject")) } { (value_str(claim, "subject_name")) }
                ": " (predicate_label(&value_str(claim, "predicate"))) " = " strong { (value_str(claim, "value")) }
                " " span.badge.muted { (value_str(claim, "status")) ", " (word_label(&value_str(claim, "authority"))) }
                ul.evidence-list {
                    @for evidence in claim.get("evidence").and_then(|e| e.as_array()).into_iter().flatten() {
                        li { (review_evidence(evidence)) }
                    }
                }
            }
        }
    }
}

pub async fn review(
    State(state): State<AppState>,
    user: WebUser,
    Query(query): Query<PageQuery>,
) -> Result<Response, WebError> {
    let owner = user.owner.clone();
    let items = run(&state, move |engine| engine.review_queue(&owner, false)).await?;
    let total = items.len();
    let page_number = query.page();
    let items = page_of(items, page_number);
    let body = html! {
        h1 { "Review queue" }
        p.hint { "Possible duplicates, and statements that disagree with a current value, with the words behind each." }
        @if total == 0 { p.empty { "Nothing to review. New conflicts and likely duplicates appear here after ingesting meetings." } }
        ul.review {
            @for item in &items {
                li.suggestion data-testid="suggestion" data-kind=(item.kind) {
                    @if item.kind == "claim_conflict" {
                        h2 { "A meeting contradicts a value" }
                        p { "New statement:" }
                        (review_claim(&item.details["claim"]))
                        @if !item.details["holder"].is_null() {
                            p { "Current value:" }
                            (review_claim(&item.details["holder"]))
                        }
                        p.hint { "Accept to take the new statement; reject to drop it." }
                    } @else {
                        h2 { "Are these the same?" }
                        ul {
                            @for entity in item.details["entities"].as_array().into_iter().flatten() {
                                @if !entity.is_null() {
                                    li {
                                        a href={ "/entities/" (value_str(entity, "id")) } { (value_str(entity, "name")) }
                                        " " span.badge { (value_str(entity, "kind")) }
                                        @for email in entity.get("emails").and_then(|e| e.as_array()).into_iter().flatten() {
                                            " · " (email.as_str().unwrap_or_default())
                                        }
                                        @let meetings: Vec<&str> = entity.get("meetings").and_then(|m| m.as_array()).into_iter().flatten().filter_map(|m| m.as_str()).collect();
                                        @if !meetings.is_empty() { " · in " (meetings.join(", ")) }
                                    }
                                }
                            }
                        }
                        p.hint { "Accept to merge them; reject to keep them apart." }
                    }
                    div.actions {
                        form.inline data-testid="accept-form" action={ "/review/" (item.id) "/accept" } method="post" {
                            (csrf_field(&user))
                            button type="submit" { "Accept" }
                        }
                        form.inline data-testid="reject-form" action={ "/review/" (item.id) "/reject" } method="post" {
                            (csrf_field(&user))
                            button.secondary type="submit" { "Reject" }
                        }
                    }
                }
            }
        }
        (pager("/review", page_number, total))
    };
    Ok(page("Review", &user, body))
}
