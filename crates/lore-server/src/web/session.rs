//! Sign-in secrets and browser sessions, kept in memory: a restart signs everyone out. Only the
//! SHA-256 of a secret or a session cookie is kept, so a memory dump cannot be replayed as a cookie.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use lore_core::ids::{hex, sha256_hex};

/// The session cookie's name.
pub const COOKIE: &str = "lore_session";
/// Failed password sign-ins for one user name before it is locked for `LOCKOUT`.
pub const MAX_FAILURES: u32 = 10;
/// How long a user name stays locked after `MAX_FAILURES` failed sign-ins.
pub const LOCKOUT: Duration = Duration::from_secs(15 * 60);
/// Most user names whose failures are remembered (the names are the caller's input).
const MAX_TRACKED: usize = 10_000;

/// One signed-in browser.
#[derive(Clone, Debug)]
pub struct Session {
    pub owner: String,
    /// The per-session token every form carries (`csrf` field).
    pub csrf: String,
    /// A message for the next page (after a form's redirect), with whether it reports an error.
    pub flash: Option<(String, bool)>,
    /// The last request made with it.
    last_seen: Instant,
}

#[derive(Default)]
struct Inner {
    /// hash(secret) → owner, for one-time sign-in links.
    signin: HashMap<String, String>,
    /// hash(cookie) → session.
    sessions: HashMap<String, Session>,
    /// user name → failed password sign-ins and the time of the last one.
    failures: HashMap<String, (u32, Instant)>,
}

/// A session unused this long ends (the next request is sent to sign in).
pub const SESSION_IDLE: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// Sign-in links and sessions of one server.
pub struct Sessions {
    inner: Mutex<Inner>,
    idle: Duration,
}

impl Default for Sessions {
    fn default() -> Sessions {
        Sessions::with_idle_limit(SESSION_IDLE)
    }
}

/// 32 random bytes as hex.
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source works");
    hex(&bytes)
}

impl Sessions {
    /// Sessions that end after `idle` without a request.
    pub fn with_idle_limit(idle: Duration) -> Sessions {
        Sessions {
            inner: Mutex::default(),
            idle,
        }
    }

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
            last_seen: Instant::now(),
        };
        self.lock()
            .sessions
            .insert(sha256_hex(cookie.as_bytes()), session);
        cookie
    }

    /// The session behind a cookie value, taking its pending flash message.
    pub fn take(&self, cookie: &str) -> Option<Session> {
        let mut inner = self.lock();
        let key = sha256_hex(cookie.as_bytes());
        let session = inner.sessions.get_mut(&key)?;
        if session.last_seen.elapsed() >= self.idle {
            inner.sessions.remove(&key);
            return None;
        }
        session.last_seen = Instant::now();
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

    /// Whether password sign-in for `name` is locked after too many failures.
    pub fn signin_locked(&self, name: &str) -> bool {
        self.lock()
            .failures
            .get(name)
            .is_some_and(|(count, last)| *count >= MAX_FAILURES && last.elapsed() < LOCKOUT)
    }

    /// Records a failed password sign-in for `name`.
    pub fn signin_failed(&self, name: &str) {
        let mut inner = self.lock();
        if inner.failures.len() >= MAX_TRACKED {
            inner
                .failures
                .retain(|_, (_, last)| last.elapsed() < LOCKOUT);
        }
        if inner.failures.len() >= MAX_TRACKED {
            return;
        }
        let entry = inner
            .failures
            .entry(name.to_string())
            .or_insert((0, Instant::now()));
        if entry.1.elapsed() >= LOCKOUT {
            entry.0 = 0;
        }
        entry.0 += 1;
        entry.1 = Instant::now();
    }

    /// Forgets the failures of `name` after a successful sign-in.
    pub fn signin_succeeded(&self, name: &str) {
        self.lock().failures.remove(name);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_redeemed_once_and_a_session_ends_when_idle() {
        let sessions = Sessions::default();
        let secret = sessions.create_signin_secret("alice");
        assert_eq!(
            sessions.redeem_signin_secret(&secret).as_deref(),
            Some("alice")
        );
        assert_eq!(sessions.redeem_signin_secret(&secret), None);
        let cookie = sessions.start("alice");
        let session = sessions.take(&cookie).expect("a fresh session");
        assert_eq!(session.owner, "alice");
        sessions.flash(&cookie, "saved".into(), false);
        assert_eq!(
            sessions.take(&cookie).unwrap().flash,
            Some(("saved".into(), false))
        );
        assert_eq!(
            sessions.take(&cookie).unwrap().flash,
            None,
            "a flash shows once"
        );
        sessions.end(&cookie);
        assert!(sessions.take(&cookie).is_none());

        let idle = Sessions::with_idle_limit(Duration::ZERO);
        let cookie = idle.start("alice");
        assert!(idle.take(&cookie).is_none(), "an idle session has ended");
        assert!(idle.take(&cookie).is_none());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "ab"));
        assert!(!same_secret("", "a"));
    }
}
