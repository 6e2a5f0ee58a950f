//! The engine's error type: callers branch on `NotFound`, `Invalid` and `Conflict`.

use lore_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The thing does not exist for this owner (an id of another owner behaves the same, L20).
    #[error("{0}")]
    NotFound(String),
    /// Bad input: nothing was written.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Conflict(String),
    #[error("storage: {0}")]
    Store(StoreError),
    #[error("internal error: {0}")]
    Internal(String),
    /// Used to roll back a transaction on purpose (previews); never reaches a caller.
    #[error("transaction rolled back")]
    RolledBack,
    /// Something outside Lore failed (an extractor's endpoint): nothing was written; retrying may help.
    #[error("{0}")]
    Unavailable(String),
}

impl EngineError {
    /// Unwraps an engine error that travelled through a store transaction.
    pub fn from_store(error: StoreError) -> EngineError {
        match error {
            StoreError::Aborted(inner) => match inner.downcast::<EngineError>() {
                Ok(engine_error) => *engine_error,
                Err(other) => EngineError::Internal(other.to_string()),
            },
            StoreError::NotFound(what) => EngineError::NotFound(what),
            other => EngineError::Store(other),
        }
    }

    /// Whether the caller sent something wrong (exit code 2, HTTP 4xx) rather than the system failing.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            EngineError::Invalid(_) | EngineError::NotFound(_) | EngineError::Conflict(_)
        )
    }
}

impl From<StoreError> for EngineError {
    fn from(error: StoreError) -> EngineError {
        EngineError::from_store(error)
    }
}
