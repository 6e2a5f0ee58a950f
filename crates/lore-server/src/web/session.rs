//! Sign-in secrets, browser sessions and form tokens. Sessions live in the database
//! (`Engine::start_web_session`, `web_session_owner`, `end_web_session`), so a restart keeps everyone
//! signed in and removing a user ends their sessions; only the SHA-256 of a cookie is stored. What
//! is kept here, in memory, is short-lived: one-time sign-in links (`lore serve` prints a new one at
//! every start), the next page's flash message, and failed password counts.

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
/// Most user names whose failures, and most sessions whose flash messages, are remembered.
const MAX_TRACKED: usize = 10_000;

#[derive(Default)]
struct Inner {
    /// hash(secret) → owner, for one-time sign-in links.
    signin: HashMap<String, String>,
    /// hash(cookie) → the message for that session's next page, with whether it reports an error.
    flash: HashMap<String, (String, bool)>,
    /// user name → failed password sign-ins and the time of the last one.
    failures: HashMap<String, (u32, Instant)>,
}

/// A session unused this long ends (the next request is sent to sign in).
pub const SESSION_IDLE: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// Sign-in links, flash messages and the idle limit of one server's sessions.
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

/// The form token (CSRF) of the session behind `cookie`: derived from the cookie, which only the
/// browser holds, so it needs no storage and a page that shows it does not reveal the cookie or the
/// stored hash (a different input).
pub fn csrf_token(cookie: &str) -> String {
    sha256_hex(format!("lore-csrf\0{cookie}").as_bytes())
}

impl Sessions {
    /// Sessions that end after `idle` without a request.
    pub fn with_idle_limit(idle: Duration) -> Sessions {
        Sessions {
            inner: Mutex::default(),
            idle,
        }
    }

    /// How long a session may go unused.
    pub fn idle_limit(&self) -> Duration {
        self.idle
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

    /// Leaves a message for the next page of the session behind `cookie`.
    pub fn flash(&self, cookie: &str, message: String, error: bool) {
        let mut inner = self.lock();
        if inner.flash.len() >= MAX_TRACKED {
            // Messages of sessions that never came back; a lost message is harmless.
            inner.flash.clear();
        }
        inner
            .flash
            .insert(sha256_hex(cookie.as_bytes()), (message, error));
    }

    /// Takes the message left for the session behind `cookie` (it shows once).
    pub fn take_flash(&self, cookie: &str) -> Option<(String, bool)> {
        self.lock().flash.remove(&sha256_hex(cookie.as_bytes()))
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
    fn a_link_is_redeemed_once_and_a_flash_shows_once() {
        let sessions = Sessions::default();
        let secret = sessions.create_signin_secret("alice");
        assert_eq!(
            sessions.redeem_signin_secret(&secret).as_deref(),
            Some("alice")
        );
        assert_eq!(sessions.redeem_signin_secret(&secret), None);
        sessions.flash("cookie", "saved".into(), false);
        assert_eq!(sessions.take_flash("other"), None);
        assert_eq!(sessions.take_flash("cookie"), Some(("saved".into(), false)));
        assert_eq!(sessions.take_flash("cookie"), None, "a flash shows once");
    }

    #[test]
    fn the_form_token_is_the_cookies_own_and_reveals_neither_it_nor_its_hash() {
        let token = csrf_token("cookie-a");
        assert_eq!(token, csrf_token("cookie-a"));
        assert_ne!(token, csrf_token("cookie-b"));
        assert_ne!(token, sha256_hex(b"cookie-a"));
        assert!(!token.contains("cookie-a"));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "ab"));
        assert!(!same_secret("", "a"));
    }
}
