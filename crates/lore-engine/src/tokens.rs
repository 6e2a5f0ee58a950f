//! API tokens for `lore serve`: a token names its owner and scope; only its SHA-256 is stored, and the
//! secret is shown once, when it is created.

use lore_core::ids::sha256_hex;
use lore_store::ApiToken;

use crate::{Engine, EngineError, EngineResult};

/// What a token may do. `Write` includes `Read`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenScope {
    Read,
    Write,
}

impl TokenScope {
    pub fn parse(text: &str) -> Option<TokenScope> {
        match text {
            "read" => Some(TokenScope::Read),
            "write" => Some(TokenScope::Write),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TokenScope::Read => "read",
            TokenScope::Write => "write",
        }
    }
}

/// Who is calling: the owner and scope a valid token grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    pub owner: String,
    pub scope: TokenScope,
}

impl Principal {
    pub fn can_write(&self) -> bool {
        self.scope == TokenScope::Write
    }
}

/// A token just created: its stored metadata and the secret, which is never stored.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CreatedToken {
    #[serde(flatten)]
    pub token: ApiToken,
    pub secret: String,
}

/// `N` bytes from the operating system's random source, for `what` (named in the error).
pub(crate) fn random_bytes<const N: usize>(what: &str) -> EngineResult<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)
        .map_err(|error| EngineError::Internal(format!("no randomness for {what}: {error}")))?;
    Ok(bytes)
}

/// Longest lifetime a token may be given.
pub const MAX_TOKEN_DAYS: u32 = 3650;
const SECRET_PREFIX: &str = "lore_";

impl Engine {
    /// Creates a token for `owner`; the returned secret is the only copy.
    pub fn create_token(
        &self,
        owner: &str,
        scope: TokenScope,
        expires_in_days: Option<u32>,
        label: Option<String>,
    ) -> EngineResult<CreatedToken> {
        let owner = owner.trim();
        if owner.is_empty() {
            return Err(EngineError::Invalid("token owner must not be empty".into()));
        }
        if let Some(days) = expires_in_days {
            if days == 0 || days > MAX_TOKEN_DAYS {
                return Err(EngineError::Invalid(format!(
                    "--expires must be between 1 and {MAX_TOKEN_DAYS} days, not {days}"
                )));
            }
        }
        let bytes: [u8; 32] = random_bytes("a token")?;
        let secret = format!("{SECRET_PREFIX}{}", lore_core::ids::hex(&bytes));
        let now = self.now();
        let token_hash = sha256_hex(secret.as_bytes());
        let token = ApiToken {
            // Public, unique (the secret is random) and useless for authenticating.
            id: format!("t_{}", &sha256_hex(token_hash.as_bytes())[..20]),
            token_hash,
            owner: owner.to_string(),
            scope: scope.as_str().to_string(),
            label,
            created_at: now,
            expires_at: expires_in_days.map(|days| now.plus_millis(i64::from(days) * 86_400_000)),
        };
        self.store.insert_api_token(&token)?;
        Ok(CreatedToken { token, secret })
    }

    /// The principal a presented secret grants, or `None` when it is unknown, revoked or expired.
    pub fn authenticate_token(&self, secret: &str) -> EngineResult<Option<Principal>> {
        if !secret.starts_with(SECRET_PREFIX) || secret.len() > 200 {
            return Ok(None);
        }
        let Some(token) = self
            .store
            .find_api_token_by_hash(&sha256_hex(secret.as_bytes()))?
        else {
            return Ok(None);
        };
        if token.expires_at.is_some_and(|expiry| expiry <= self.now()) {
            return Ok(None);
        }
        Ok(TokenScope::parse(&token.scope).map(|scope| Principal {
            owner: token.owner,
            scope,
        }))
    }

    /// Token metadata (never secrets), for one owner or for all.
    pub fn list_tokens(&self, owner: Option<&str>) -> EngineResult<Vec<ApiToken>> {
        let mut tokens = self.store.list_api_tokens()?;
        if let Some(owner) = owner {
            tokens.retain(|token| token.owner == owner);
        }
        Ok(tokens)
    }

    /// Revokes a token by its public id; it stops working at once.
    pub fn revoke_token(&self, id: &str) -> EngineResult<()> {
        if self.store.delete_api_token(id)? {
            Ok(())
        } else {
            Err(EngineError::NotFound(format!("no token with id '{id}'")))
        }
    }
}
