//! Sign-in secrets and browser sessions, kept in memory: a restart signs everyone out. Only the
//! SHA-256 of a secret or a session cookie is kept, so a memory dump cannot be replayed as a cookie.

use std::collections::HashMap;
use std::sync::Mutex;

use lore_core::ids::{hex, sha256_hex};

/// The session cookie's name.
pub const COOKIE: &str = "lore_session";

/// One signed-in browser.
#[derive(Clone, Debug)]
pub struct Session {
    pub owner: String,
    /// The per-session token every form carries (`csrf` field).
    pub csrf: String,
    /// A message for the next page (after a form's redirect), with whether it reports an error.
    pub flash: Option<(String, bool)>,
}

#[derive(Default)]
struct Inner {
    /// hash(secret) → owner, for one-time sign-in links.
    signin: HashMap<String, String>,
    /// hash(cookie) → session.
    sessions: HashMap<String, Session>,
}

/// Sign-in links and sessions of one server.
#[derive(Default)]
pub struct Sessions {
    inner: Mutex<Inner>,
}

/// 32 random bytes as hex.
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    hex(&bytes)
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A one-time sign-in secret for `owner` (the `token` of `/signin?token=...`).
    pub fn create_signin_secret(&self, owner: &str) -> String {
        let secret = random_secret();
        self.lock()
            .signin
            .insert(sha256_hex(secret.as_bytes()), owner.to_string());
        secret
    }

    /// Uses up a sign-in secret: the owner it was for, once.
    pub fn redeem_signin_secret(&self, secret: &str) -> Option<String> {
        self.lock().signin.remove(&sha256_hex(secret.as_bytes()))
    }

    /// Starts a session for `owner`; returns the cookie value.
    pub fn start(&self, owner: &str) -> String {
        let cookie = random_secret();
        let session = Session {
            owner: owner.to_string(),
            csrf: random_secret(),
            flash: None,
        };
        self.lock()
            .sessions
            .insert(sha256_hex(cookie.as_bytes()), session);
        cookie
    }

    /// The session behind a cookie value, taking its pending flash message.
    pub fn take(&self, cookie: &str) -> Option<Session> {
        let mut inner = self.lock();
        let session = inner.sessions.get_mut(&sha256_hex(cookie.as_bytes()))?;
        let found = session.clone();
        session.flash = None;
        Some(found)
    }

    /// Leaves a message for the session's next page.
    pub fn flash(&self, cookie: &str, message: String, error: bool) {
        if let Some(session) = self.lock().sessions.get_mut(&sha256_hex(cookie.as_bytes())) {
            session.flash = Some((message, error));
        }
    }

    /// Ends a session.
    pub fn end(&self, cookie: &str) {
        self.lock().sessions.remove(&sha256_hex(cookie.as_bytes()));
    }
}

/// Compares two secrets in time independent of where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
