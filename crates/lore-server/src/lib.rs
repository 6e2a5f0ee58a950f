//! `lore serve`: the REST API (with its OpenAPI document) and the MCP server, both thin adapters over
//! the engine; no use case lives here. Every request is authenticated by a bearer token that names
//! its owner (L20).
//!
//! The engine is synchronous; handlers call it through `spawn_blocking`. The SQLite store holds one
//! connection behind a mutex, so requests are served concurrently but touch the database one at a
//! time (fine for one person or a small team; a pooled backend lifts it).

mod auth;
mod error;
pub mod mcp;
mod metrics;
pub mod rest;
mod rest_knowledge;
mod rest_workspace;
mod text;
pub mod web;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use lore_engine::Engine;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

pub use auth::host_allowed;
pub use error::{ApiError, ErrorBody};
pub use mcp::{serve_stdio, tool_specs, LoreMcp, ToolSpec};
pub use metrics::Metrics;

/// Largest request body accepted (bundles and uploads included).
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// How the server is reached and whom it trusts.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// `Host` values accepted (an entry without a port matches any port). Empty: any host.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed besides the server's own (e.g. `https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// The URL clients use to reach this server, for the protected-resource metadata.
    pub public_url: String,
}

impl ServerConfig {
    /// Loopback only: what `lore serve` uses unless told otherwise.
    pub fn local(addr: SocketAddr) -> ServerConfig {
        ServerConfig {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            allowed_origins: Vec::new(),
            public_url: format!("http://{addr}"),
        }
    }
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
    pub config: Arc<ServerConfig>,
    pub metrics: Arc<Metrics>,
    /// Web workspace sign-in links and sessions.
    pub sessions: Arc<web::Sessions>,
}

/// The whole application, and the handle that stops its MCP sessions on shutdown.
pub struct App {
    pub router: Router,
    /// The web workspace's sessions: `create_signin_secret` makes the one-time sign-in link.
    pub sessions: Arc<web::Sessions>,
    shutdown: Box<dyn Fn() + Send + Sync>,
}

impl App {
    /// Ends open MCP streams so a graceful shutdown does not wait on them.
    pub fn shutdown_sessions(&self) {
        (self.shutdown)()
    }
}

/// The OpenAPI document, generated from the routes themselves.
pub fn openapi() -> utoipa::openapi::OpenApi {
    rest::router().split_for_parts().1
}

/// Builds the router: `/api/v1` (REST), `/mcp` (MCP over streamable HTTP), `/healthz`, `/metrics`,
/// `/.well-known/oauth-protected-resource` and `/api/v1/openapi.json`.
pub fn app(engine: Arc<Engine>, config: ServerConfig) -> App {
    let state = AppState {
        engine: engine.clone(),
        config: Arc::new(config.clone()),
        metrics: Arc::new(Metrics::default()),
        sessions: Arc::new(web::Sessions::default()),
    };
    let (rest_router, openapi) = rest::router().split_for_parts();
    let openapi = Arc::new(openapi);
    let authenticated_rest =
        rest_router
            .with_state(state.clone())
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                auth::require_token,
            ));

    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_sse_keep_alive(None);
    mcp_config = if config.allowed_hosts.is_empty() {
        mcp_config.disable_allowed_hosts()
    } else {
        mcp_config.with_allowed_hosts(config.allowed_hosts.iter().map(|h| {
            // rmcp's list takes bare hosts; brackets are ours.
            h.trim_start_matches('[').replace("]", "")
        }))
    };
    let cancel = mcp_config.cancellation_token.clone();
    let mcp_engine = engine.clone();
    let mcp_service: StreamableHttpService<LoreMcp, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(LoreMcp::for_http(mcp_engine.clone())),
            Arc::new(LocalSessionManager::default()),
            mcp_config,
        );
    let mcp_router = Router::new().nest_service("/mcp", mcp_service).layer(
        axum::middleware::from_fn_with_state(state.clone(), auth::require_token),
    );

    let public = Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics_text))
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route(
            "/api/v1/openapi.json",
            get(move || {
                let openapi = openapi.clone();
                async move { Json(openapi.as_ref().clone()) }
            }),
        )
        .with_state(state.clone());

    let router = Router::new()
        .merge(public)
        .merge(authenticated_rest)
        .merge(mcp_router)
        .merge(web::router(state.clone()))
        .fallback(|| async { ApiError::not_found("no such route") })
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(error::json_errors))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::guard_host_and_origin,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            metrics::trace_requests,
        ));
    App {
        router,
        sessions: state.sessions.clone(),
        shutdown: Box::new(move || cancel.cancel()),
    }
}

async fn healthz(State(state): State<AppState>) -> Response {
    let engine = state.engine.clone();
    let healthy = tokio::task::spawn_blocking(move || engine.store().owners().is_ok())
        .await
        .unwrap_or(false);
    if healthy {
        Json(json!({"status": "ok"})).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "unavailable"})),
        )
            .into_response()
    }
}

async fn metrics_text(State(state): State<AppState>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}

/// OAuth 2.0 protected-resource metadata (RFC 9728): tells MCP clients to send a bearer token.
async fn protected_resource(State(state): State<AppState>) -> Response {
    let base = state.config.public_url.trim_end_matches('/');
    Json(json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": [],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["read", "write"],
        "resource_name": "Lore",
        "resource_documentation": format!("{base}/api/v1/openapi.json"),
    }))
    .into_response()
}

/// Serves until `shutdown` resolves, then finishes in-flight requests and stops.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: App,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let App {
        router,
        shutdown: stop_sessions,
        ..
    } = app;
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            stop_sessions();
        })
        .await
}
