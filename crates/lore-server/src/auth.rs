//! Request guards: `Host` and `Origin` checks (DNS rebinding, cross-site calls) and bearer-token
//! authentication. The owner of every request comes from its token and nowhere else (L20).

use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use lore_engine::Principal;

use crate::error::ApiError;
use crate::AppState;

/// The `host` part of a `Host` header or an origin's authority, lowercased, without the port.
fn host_part(authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default().to_string();
    }
    authority.split(':').next().unwrap_or_default().to_string()
}

/// Whether `authority` (a `Host` value) is in the allowed list: an entry with a port must match
/// exactly, an entry without one matches any port.
pub fn host_allowed(authority: &str, allowed: &[String]) -> bool {
    let authority = authority.trim().to_ascii_lowercase();
    allowed.iter().any(|entry| {
        let entry = entry.to_ascii_lowercase();
        let entry_has_port = entry.starts_with('[') && entry.contains("]:")
            || !entry.starts_with('[') && entry.matches(':').count() == 1;
        if entry_has_port {
            entry == authority
        } else {
            host_part(&entry) == host_part(&authority)
        }
    })
}

/// Rejects requests whose `Host` is not allowed (403) and browser requests from a foreign `Origin`
/// (403). An origin is accepted when it is listed, or when it is this server itself.
pub async fn guard_host_and_origin(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()))
        .unwrap_or_default()
        .to_string();
    if !state.config.allowed_hosts.is_empty() && !host_allowed(&host, &state.config.allowed_hosts) {
        return ApiError::forbidden(
            "forbidden_host",
            "this Host is not allowed; see --allowed-host",
        )
        .into_response();
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin
            .to_str()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let same_origin = origin
            .split_once("://")
            .is_some_and(|(_, authority)| authority == host.to_ascii_lowercase());
        let listed = state
            .config
            .allowed_origins
            .iter()
            .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(&origin));
        if !same_origin && !listed {
            return ApiError::forbidden(
                "forbidden_origin",
                "requests from this Origin are not allowed; see --allowed-origin",
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// The `WWW-Authenticate` challenge, pointing at the protected-resource metadata (RFC 9728).
fn challenge(state: &AppState, error: Option<&str>) -> String {
    let mut value = format!(
        "Bearer realm=\"lore\", resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
        state.config.public_url.trim_end_matches('/')
    );
    if let Some(error) = error {
        value.push_str(&format!(", error=\"{error}\""));
    }
    value
}

/// Requires a valid bearer token; stores its [`Principal`] in the request's extensions. Requests that
/// change state (anything but GET/HEAD on the REST API) also need the write scope.
pub async fn require_token(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    let Some(presented) = presented else {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing bearer token: send Authorization: Bearer <token> (create one with `lore token create`)",
        )
        .with_challenge(challenge(&state, None))
        .into_response();
    };
    let engine = state.engine.clone();
    let principal =
        match tokio::task::spawn_blocking(move || engine.authenticate_token(&presented)).await {
            Ok(Ok(principal)) => principal,
            Ok(Err(error)) => return ApiError::from(error).into_response(),
            Err(error) => return ApiError::internal(error).into_response(),
        };
    let Some(principal) = principal else {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "invalid, revoked or expired token",
        )
        .with_challenge(challenge(&state, Some("invalid_token")))
        .into_response();
    };
    let is_mcp = request.uri().path().starts_with("/mcp");
    if !is_mcp && !matches!(*request.method(), Method::GET | Method::HEAD) && !principal.can_write()
    {
        return insufficient_scope(&state).into_response();
    }
    request.extensions_mut().insert::<Principal>(principal);
    next.run(request).await
}

/// 403 for a read-only token asking to write.
pub fn insufficient_scope(state: &AppState) -> ApiError {
    ApiError::forbidden(
        "insufficient_scope",
        "this token is read-only; writing needs a token created with --scope write",
    )
    .with_challenge(format!(
        "{}, scope=\"write\"",
        challenge(state, Some("insufficient_scope"))
    ))
}
