//! The web workspace (SPEC 5.6): server-rendered HTML pages over the same engine calls as REST.
//!
//! No front-end build and no script: pages are plain HTML from `maud` templates, forms post back
//! and redirect (303) with a flash message, and one stylesheet is compiled into the binary. Every
//! response carries a Content-Security-Policy that allows no inline script or style.
//!
//! Sign-in: a one-time link (`/signin?token=...`, printed by `lore serve` and `lore demo`) or a
//! user name and password (`lore user add`); either starts a session (cookie `lore_session`,
//! HttpOnly, SameSite=Strict) whose owner is the only owner every page reads (L20). Every form
//! carries the session's CSRF token.

mod actions;
mod graph_svg;
mod pages;
mod session;

use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use lore_engine::{Engine, EngineError, EngineResult};
use maud::{html, Markup, DOCTYPE};
use serde::de::DeserializeOwned;

use crate::AppState;
pub use session::{Sessions, COOKIE};

/// The Content-Security-Policy of every page.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// Items per page of every paginated list.
pub const PAGE_SIZE: usize = 50;

const APP_CSS: &str = include_str!("app.css");

/// Every workspace route as (method, path template), for the isolation suite: a route added to
/// `router` must be listed here, and the suite fails for a listed route without a case.
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/"),
    ("GET", "/signin"),
    ("POST", "/signin"),
    ("POST", "/signout"),
    ("GET", "/search"),
    ("GET", "/entities/{id}"),
    ("POST", "/entities/{id}/claims"),
    ("POST", "/entities/{id}/override"),
    ("POST", "/entities/{id}/retract"),
    ("POST", "/entities/{id}/merge"),
    ("POST", "/entities/{id}/split"),
    ("POST", "/entities/{id}/pin"),
    ("POST", "/entities/{id}/name"),
    ("POST", "/revisions/{id}/undo"),
    ("GET", "/meetings/{id}"),
    ("GET", "/meetings/{id}/delete"),
    ("POST", "/meetings/{id}/delete"),
    ("GET", "/meetings/{id}/attachments/{attachment}"),
    ("GET", "/graph/{id}"),
    ("GET", "/graph/{id}/edge/{claim}"),
    ("GET", "/review"),
    ("POST", "/review/{id}/accept"),
    ("POST", "/review/{id}/reject"),
    ("GET", "/assets/app.css"),
];

/// The workspace's routes (they need the state's sessions).
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(pages::home))
        .route(
            "/signin",
            get(pages::signin_page).post(actions::signin_password),
        )
        .route("/signout", post(actions::signout))
        .route("/search", get(pages::search))
        .route("/entities/{id}", get(pages::entity))
        .route("/entities/{id}/claims", post(actions::add_claim))
        .route("/entities/{id}/override", post(actions::override_value))
        .route("/entities/{id}/retract", post(actions::retract))
        .route("/entities/{id}/merge", post(actions::merge))
        .route("/entities/{id}/split", post(actions::split))
        .route("/entities/{id}/pin", post(actions::pin))
        .route("/entities/{id}/name", post(actions::rename))
        .route("/revisions/{id}/undo", post(actions::undo))
        .route("/meetings/{id}", get(pages::meeting))
        .route(
            "/meetings/{id}/delete",
            get(pages::meeting_delete).post(actions::delete_meeting),
        )
        .route(
            "/meetings/{id}/attachments/{attachment}",
            get(pages::attachment),
        )
        .route("/graph/{id}", get(pages::graph))
        .route("/graph/{id}/edge/{claim}", get(pages::edge))
        .route("/review", get(pages::review))
        .route("/review/{id}/accept", post(actions::accept))
        .route("/review/{id}/reject", post(actions::reject))
        .route("/assets/app.css", get(stylesheet))
        .layer(axum::middleware::from_fn(security_headers))
        .with_state(state)
}

/// CSP and friends on every workspace response; pages are never cached.
async fn security_headers(request: Request, next: Next) -> Response {
    let is_asset = request.uri().path().starts_with("/assets/");
    // Only the sign-in link's own response (a redirect) carries a secret in its URL.
    let is_signin = request.uri().path() == "/signin"
        && request
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|pair| pair.starts_with("token=")));
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // The sign-in link carries its secret in the URL: never send it on. Elsewhere `same-origin`:
    // with `no-referrer` browsers send `Origin: null` on form posts, which the origin guard refuses.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static(if is_signin {
            "no-referrer"
        } else {
            "same-origin"
        }),
    );
    if !is_asset && !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        APP_CSS,
    )
        .into_response()
}

// ---------------------------------------------------------------------------------------------
// The signed-in user.

/// The session of a request; a request without one is sent to `/signin` (303).
pub struct WebUser {
    pub owner: String,
    pub csrf: String,
    pub flash: Option<(String, bool)>,
    cookie: String,
}

fn session_cookie(parts: &Parts) -> Option<String> {
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim().to_string())
}

impl FromRequestParts<AppState> for WebUser {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let Some(cookie) = session_cookie(parts) else {
            return Err(see_other("/signin"));
        };
        let idle = state.sessions.idle_limit();
        let presented = cookie.clone();
        let owner = run(state, move |engine| {
            engine.web_session_owner(&presented, idle)
        })
        .await
        .map_err(IntoResponse::into_response)?;
        match owner {
            Some(owner) => Ok(WebUser {
                owner,
                csrf: session::csrf_token(&cookie),
                flash: state.sessions.take_flash(&cookie),
                cookie,
            }),
            None => Err(see_other("/signin")),
        }
    }
}

/// Starts a session for `owner` (in the database); the cookie value for `set_cookie`.
pub async fn start_session(state: &AppState, owner: String) -> Result<String, WebError> {
    let idle = state.sessions.idle_limit();
    run(state, move |engine| engine.start_web_session(&owner, idle)).await
}

impl WebUser {
    /// 403 unless `presented` is this session's CSRF token.
    pub fn check_csrf(&self, presented: &str) -> Result<(), WebError> {
        if session::same_secret(presented, &self.csrf) {
            Ok(())
        } else {
            Err(WebError::new(
                StatusCode::FORBIDDEN,
                "This form is out of date or came from another site. Go back, reload the page and try again.",
            ))
        }
    }

    /// Leaves a message for the next page.
    pub fn flash(&self, state: &AppState, message: impl Into<String>, error: bool) {
        state.sessions.flash(&self.cookie, message.into(), error);
    }
}

/// 303 See Other to a local path.
pub fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()
}

/// A form body; a malformed one is a 400 page.
pub struct WebForm<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for WebForm<T> {
    type Rejection = WebError;

    async fn from_request(request: Request, state: &S) -> Result<Self, WebError> {
        match axum::Form::<T>::from_request(request, state).await {
            Ok(axum::Form(value)) => Ok(WebForm(value)),
            Err(rejection) => Err(WebError::new(
                StatusCode::BAD_REQUEST,
                format!("The form could not be read: {}", rejection.body_text()),
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Errors and the engine.

/// An error page.
#[derive(Debug)]
pub struct WebError {
    pub status: StatusCode,
    pub message: String,
}

impl WebError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> WebError {
        WebError {
            status,
            message: message.into(),
        }
    }

    pub fn not_found(what: &str) -> WebError {
        WebError::new(StatusCode::NOT_FOUND, format!("No {what} here."))
    }
}

impl From<EngineError> for WebError {
    fn from(error: EngineError) -> WebError {
        match error {
            EngineError::NotFound(message) => WebError::new(StatusCode::NOT_FOUND, message),
            EngineError::Invalid(message) => WebError::new(StatusCode::BAD_REQUEST, message),
            EngineError::Conflict(message) => WebError::new(StatusCode::CONFLICT, message),
            other => {
                tracing::error!(error = %other, "page failed");
                WebError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong; the server log has the details.",
                )
            }
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let title = match self.status {
            StatusCode::NOT_FOUND => "Not found",
            StatusCode::FORBIDDEN => "Forbidden",
            StatusCode::BAD_REQUEST => "Bad request",
            StatusCode::CONFLICT => "Conflict",
            _ => "Error",
        };
        let body = html! {
            h1 { (title) }
            p.error-message { (self.message) }
            p { a href="/" { "Back to the start page" } }
        };
        render(self.status, title, None, body)
    }
}

/// Runs a synchronous engine call off the async runtime.
pub async fn run<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce(&Engine) -> EngineResult<T> + Send + 'static,
) -> Result<T, WebError> {
    let engine = state.engine.clone();
    tokio::task::spawn_blocking(move || work(&engine))
        .await
        .map_err(|error| {
            tracing::error!(error = %error, "page task failed");
            WebError::new(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong.")
        })?
        .map_err(WebError::from)
}

/// Whether `text` looks like an engine id with this prefix (`e_`, `m_`, `c_`, `r_`, `s_`).
pub fn is_id(text: &str, prefix: &str) -> bool {
    text.strip_prefix(prefix).is_some_and(|rest| {
        !rest.is_empty()
            && rest.len() <= 64
            && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

// ---------------------------------------------------------------------------------------------
// Layout.

/// A whole page: header with the search form, the flash message, `<main id="main">`.
pub fn render(status: StatusCode, title: &str, user: Option<&WebUser>, body: Markup) -> Response {
    render_with_query(status, title, user, None, body)
}

/// [`render`] with the header's search box filled in (the search results page).
pub fn render_with_query(
    status: StatusCode,
    title: &str,
    user: Option<&WebUser>,
    query: Option<&str>,
    body: Markup,
) -> Response {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Lore" }
                link rel="stylesheet" href="/assets/app.css";
            }
            body {
                a.skip-link href="#main" { "Skip to content" }
                header.site-header {
                    a.brand href="/" { "Lore" }
                    form.search-form role="search" action="/search" method="get" {
                        input type="search" name="q" aria-label="Search" placeholder="Search people, projects, meetings" value=[query];
                        button type="submit" { "Search" }
                    }
                    nav.site-nav aria-label="Main" {
                        a href="/" { "Home" }
                        a href="/review" { "Review" }
                        @if let Some(user) = user {
                            form.inline action="/signout" method="post" {
                                input type="hidden" name="csrf" value=(user.csrf);
                                button.link-button type="submit" { "Sign out (" (user.owner) ")" }
                            }
                        }
                    }
                }
                main id="main" tabindex="-1" {
                    @if let Some((message, error)) = user.and_then(|u| u.flash.as_ref()) {
                        @if *error {
                            p.flash.flash-error role="status" { (message) }
                        } @else {
                            p.flash role="status" { (message) }
                        }
                    }
                    (body)
                }
            }
        }
    };
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        page.into_string(),
    )
        .into_response()
}

/// A 200 page.
pub fn page(title: &str, user: &WebUser, body: Markup) -> Response {
    render(StatusCode::OK, title, Some(user), body)
}

/// The hidden CSRF field of a form.
pub fn csrf_field(user: &WebUser) -> Markup {
    html! { input type="hidden" name="csrf" value=(user.csrf); }
}

/// Pagination links for a list of `total` items.
pub fn pager(base: &str, page: usize, total: usize) -> Markup {
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let join = if base.contains('?') { '&' } else { '?' };
    html! {
        @if pages > 1 {
            nav.pager aria-label="Pages" {
                @if page > 1 {
                    a rel="prev" href={ (base) (join) "page=" (page - 1) } { "← Previous" }
                }
                span { "Page " (page) " of " (pages) }
                @if page < pages {
                    a rel="next" href={ (base) (join) "page=" (page + 1) } { "Next →" }
                }
            }
        }
    }
}

/// The slice of `items` on page `page` (1-based).
pub fn page_of<T>(items: Vec<T>, page: usize) -> Vec<T> {
    items
        .into_iter()
        .skip(page.saturating_sub(1) * PAGE_SIZE)
        .take(PAGE_SIZE)
        .collect()
}

/// Sets the session cookie (HttpOnly, SameSite=Strict, Path=/).
pub fn set_cookie(value: &str) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/"
    ))
    .expect("hex cookie values are valid header text")
}

/// Expires the session cookie.
pub fn clear_cookie() -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
    ))
    .expect("valid header text")
}

/// Shared state handle for the handlers.
pub type WebState = State<AppState>;

/// The search snippet rendering (`[`…`]` → `<mark>`, everything else escaped), for tests.
pub fn highlight_for_tests(snippet: &str) -> String {
    pages::highlight(snippet).into_string()
}
