//! Web workspace users (hosted mode): `lore user add NAME` stores an argon2id hash of a password;
//! signing in with it opens a session for the owner named NAME. Like API tokens these rows live
//! outside every owner (a sign-in names no owner but its user) and are reached through `Store`
//! methods, never a `Tx`.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use lore_store::User;

use crate::tokens::random_bytes;
use crate::{Engine, EngineError, EngineResult};

/// Shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 8;

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c))
}

impl Engine {
    /// Creates a user whose owner is `name`; the password is stored as an argon2id PHC string.
    pub fn create_user(&self, name: &str, password: &str) -> EngineResult<User> {
        let name = name.trim();
        if !valid_name(name) {
            return Err(EngineError::Invalid(format!(
                "user name '{name}' must be 1 to 64 letters, digits or . _ @ -"
            )));
        }
        if password.chars().count() < MIN_PASSWORD_CHARS {
            return Err(EngineError::Invalid(format!(
                "the password must have at least {MIN_PASSWORD_CHARS} characters"
            )));
        }
        if self
            .store()
            .find_user(name)
            .map_err(EngineError::from_store)?
            .is_some()
        {
            return Err(EngineError::Conflict(format!(
                "user '{name}' already exists"
            )));
        }
        let salt: [u8; 16] = random_bytes("a password salt")?;
        let salt = SaltString::encode_b64(&salt)
            .map_err(|error| EngineError::Internal(format!("salt: {error}")))?;
        let hash = Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map_err(|error| EngineError::Internal(format!("hashing the password: {error}")))?
            .to_string();
        let user = User {
            name: name.to_string(),
            password_hash: hash,
            created_at: self.now(),
        };
        self.store()
            .insert_user(&user)
            .map_err(EngineError::from_store)?;
        Ok(user)
    }

    /// The owner a name and password sign in as, or `None` when either is wrong.
    pub fn verify_user_password(&self, name: &str, password: &str) -> EngineResult<Option<String>> {
        let Some(user) = self
            .store()
            .find_user(name.trim())
            .map_err(EngineError::from_store)?
        else {
            // Spend the same work as a real check, so timing does not tell which names exist.
            let _ = Argon2::default().hash_password(
                password.as_bytes(),
                &SaltString::encode_b64(b"lore-no-such-user").expect("a valid salt"),
            );
            return Ok(None);
        };
        let Ok(parsed) = PasswordHash::new(&user.password_hash) else {
            return Ok(None);
        };
        Ok(Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
            .then_some(user.name))
    }

    pub fn list_users(&self) -> EngineResult<Vec<User>> {
        self.store().list_users().map_err(EngineError::from_store)
    }

    /// Removes a user; their data stays (it belongs to the owner, not the sign-in).
    pub fn remove_user(&self, name: &str) -> EngineResult<()> {
        if self
            .store()
            .delete_user(name.trim())
            .map_err(EngineError::from_store)?
        {
            Ok(())
        } else {
            Err(EngineError::NotFound(format!("no user named '{name}'")))
        }
    }
}

/// A session's last use is written at most this often: every page view would otherwise be a write.
/// The idle limit is days, so its precision does not suffer.
pub const SESSION_TOUCH_EVERY: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Longest cookie value looked up (a real one is 64 hex characters).
const MAX_COOKIE_LEN: usize = 128;

fn millis(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Engine {
    /// Starts a web workspace session for `owner` and returns its cookie value (32 random bytes as
    /// hex), the only copy: the database keeps its SHA-256. Sessions idle for longer than `idle` are
    /// ended on the way, so that the table holds only live ones.
    pub fn start_web_session(
        &self,
        owner: &str,
        idle: std::time::Duration,
    ) -> EngineResult<String> {
        let bytes: [u8; 32] = random_bytes("a session")?;
        let cookie = lore_core::ids::hex(&bytes);
        let now = self.now();
        let store = self.store();
        store
            .delete_web_sessions_idle_since(now.plus_millis(-millis(idle)))
            .map_err(EngineError::from_store)?;
        store
            .insert_web_session(&lore_store::WebSession {
                cookie_hash: lore_core::ids::sha256_hex(cookie.as_bytes()),
                owner: owner.to_string(),
                created_at: now,
                last_seen_at: now,
            })
            .map_err(EngineError::from_store)?;
        Ok(cookie)
    }

    /// The owner a session cookie is signed in as, or `None` when the cookie is unknown, ended or
    /// idle for `idle` or longer (then it is ended). A use is recorded at most every
    /// `SESSION_TOUCH_EVERY`.
    pub fn web_session_owner(
        &self,
        cookie: &str,
        idle: std::time::Duration,
    ) -> EngineResult<Option<String>> {
        if cookie.is_empty() || cookie.len() > MAX_COOKIE_LEN {
            return Ok(None);
        }
        let hash = lore_core::ids::sha256_hex(cookie.as_bytes());
        let store = self.store();
        let Some(session) = store
            .find_web_session(&hash)
            .map_err(EngineError::from_store)?
        else {
            return Ok(None);
        };
        let now = self.now();
        let unused = now.0.saturating_sub(session.last_seen_at.0);
        if unused >= millis(idle) {
            store
                .delete_web_session(&hash)
                .map_err(EngineError::from_store)?;
            return Ok(None);
        }
        if unused >= millis(SESSION_TOUCH_EVERY) {
            store
                .touch_web_session(&hash, now)
                .map_err(EngineError::from_store)?;
        }
        Ok(Some(session.owner))
    }

    /// Ends the session of a cookie (signing out); an unknown cookie is not an error.
    pub fn end_web_session(&self, cookie: &str) -> EngineResult<()> {
        self.store()
            .delete_web_session(&lore_core::ids::sha256_hex(cookie.as_bytes()))
            .map_err(EngineError::from_store)?;
        Ok(())
    }
}
