//! `lore token`, `lore serve` and `lore mcp`: the command-line edge of lore-server.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};
use lore_engine::{Engine, TokenScope};
use lore_server::ServerConfig;

use crate::commands::BadInput;
use crate::output;

#[derive(Subcommand, Debug)]
pub enum TokenAction {
    /// Create a token for --owner; its secret is printed once and only its hash is stored
    Create {
        /// read (look up) or write (also add notes, claims, delete, ingest)
        #[arg(long, default_value = "read")]
        scope: String,
        /// Days until the token stops working (default: never)
        #[arg(long)]
        expires: Option<u32>,
        /// A reminder of where the token is used
        #[arg(long)]
        label: Option<String>,
    },
    /// List every token (ids, owners, scopes, expiry; never secrets)
    List,
    /// Revoke a token by its id; it stops working at once
    Revoke { id: String },
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; loopback by default
    #[arg(long, default_value = "127.0.0.1:7700")]
    pub addr: String,
    /// A Host header to accept besides localhost (repeatable; needed when clients reach the server by
    /// another name, e.g. behind a proxy). An entry without a port matches any port
    #[arg(long = "allowed-host")]
    pub allowed_hosts: Vec<String>,
    /// A browser Origin allowed to call the API besides the server's own (repeatable)
    #[arg(long = "allowed-origin")]
    pub allowed_origins: Vec<String>,
    /// The URL clients use to reach the server (default http://ADDR)
    #[arg(long)]
    pub public_url: Option<String>,
    /// Also print the web workspace's sign-in link on stdout (`lore demo`)
    #[arg(skip)]
    pub signin_on_stdout: bool,
}

impl ServeArgs {
    /// Loopback serving at `addr`, as `lore demo` does.
    pub fn local(addr: String, signin_on_stdout: bool) -> ServeArgs {
        ServeArgs {
            addr,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            public_url: None,
            signin_on_stdout,
        }
    }
}

pub fn token(engine: &Engine, owner: &str, action: TokenAction, json: bool) -> anyhow::Result<()> {
    match action {
        TokenAction::Create {
            scope,
            expires,
            label,
        } => {
            let scope = TokenScope::parse(&scope)
                .ok_or_else(|| BadInput(format!("--scope must be read or write, not '{scope}'")))?;
            let created = engine.create_token(owner, scope, expires, label)?;
            output::print_value(json, &created, |c| {
                format!(
                    "{}\n\ntoken {} for owner {} ({}{}). Copy it now: it is not shown again.",
                    c.secret,
                    c.token.id,
                    c.token.owner,
                    c.token.scope,
                    c.token
                        .expires_at
                        .map(|e| format!(", expires {}", e.to_rfc3339()))
                        .unwrap_or_default()
                )
            });
        }
        TokenAction::List => {
            let tokens = engine.list_tokens(None)?;
            output::print_value(json, &tokens, |tokens| {
                if tokens.is_empty() {
                    return "no tokens; create one with `lore token create --owner NAME`".into();
                }
                tokens
                    .iter()
                    .map(|t| {
                        format!(
                            "{}  owner {}  {}  created {}{}{}",
                            t.id,
                            t.owner,
                            t.scope,
                            &t.created_at.to_rfc3339()[..10],
                            t.expires_at
                                .map(|e| format!("  expires {}", &e.to_rfc3339()[..10]))
                                .unwrap_or_default(),
                            t.label
                                .as_ref()
                                .map(|l| format!("  ({l})"))
                                .unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        TokenAction::Revoke { id } => {
            engine.revoke_token(&id)?;
            output::print_value(json, &serde_json::json!({"revoked": id}), |_| {
                format!("token {id} revoked")
            });
        }
    }
    Ok(())
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Resolves on Ctrl-C or SIGTERM, and logs that the server is shutting down.
async fn shutdown_signal() {
    interrupted().await;
    tracing::info!("shutting down: finishing requests in flight");
}

/// Resolves on Ctrl-C or SIGTERM.
pub(crate) async fn interrupted() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

/// Maps the per-entity reads' pages on a thread of its own and asks the store's build threads for
/// every owner's entity pages and graph index (`Store::prewarm`), so that a long-lived server's first
/// read of each entity costs what later ones do; requests are served meanwhile (from queries until
/// the builds are done).
fn prewarm_in_background(engine: &Arc<Engine>) {
    let engine = Arc::clone(engine);
    let spawned = std::thread::Builder::new()
        .name("lore-prewarm".into())
        .spawn(move || {
            let started = std::time::Instant::now();
            match engine.store().prewarm() {
                Ok(statements) => tracing::info!(
                    "prewarmed the per-entity reads ({statements} statements) in {} ms; the \
                     entity pages and graph indexes are being built",
                    started.elapsed().as_millis()
                ),
                Err(error) => tracing::warn!("prewarm stopped: {error}"),
            }
        });
    if let Err(error) = spawned {
        tracing::warn!("prewarm not started: {error}");
    }
}

pub fn serve(engine: Engine, args: ServeArgs, owner: &str) -> anyhow::Result<()> {
    let addr: SocketAddr = args
        .addr
        .parse()
        .map_err(|_| BadInput(format!("--addr: '{}' is not HOST:PORT", args.addr)))?;
    if !addr.ip().is_loopback() && args.allowed_hosts.is_empty() {
        eprintln!(
            "lore: warning: listening on {addr}, but only localhost Host headers are accepted; \
             add --allowed-host NAME for the name clients use"
        );
    }
    let runtime = runtime()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let bound = listener.local_addr()?;
        let mut config = ServerConfig::local(bound);
        config.allowed_hosts.extend(args.allowed_hosts);
        config.allowed_origins = args.allowed_origins;
        if let Some(url) = args.public_url {
            config.public_url = url;
        }
        // The bound address goes to stderr so that scripts (and tests) using port 0 can find it.
        let public_url = config.public_url.trim_end_matches('/').to_string();
        eprintln!("lore: listening on http://{bound} (REST /api/v1, MCP /mcp)");
        let engine = Arc::new(engine);
        prewarm_in_background(&engine);
        let app = lore_server::app(engine, config);
        // The web workspace's one-time sign-in link for --owner (used once, then a session cookie).
        let secret = app.sessions.create_signin_secret(owner);
        let link = format!("{public_url}/signin?token={secret}");
        eprintln!("lore: sign in at {link}");
        if args.signin_on_stdout {
            crate::output::emit_line!("\nOpen the workspace: {link}\n(Ctrl-C stops the server.)");
        }
        lore_server::serve(listener, app, shutdown_signal())
            .await
            .context("server failed")
    })
}

pub fn mcp_stdio(engine: Engine, owner: &str) -> anyhow::Result<()> {
    let runtime = runtime()?;
    let engine = Arc::new(engine);
    prewarm_in_background(&engine);
    runtime
        .block_on(lore_server::serve_stdio(engine, owner.to_string()))
        .map_err(|error| anyhow::anyhow!(error))
}
