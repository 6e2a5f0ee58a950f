//! Lore's use cases: ingest a meeting, delete a source, edit claims, and read entities. The one API that
//! the command line, the REST and MCP servers and the web workspace all call.
//!
//! The engine owns no lifecycle rule: it loads a slot's claims from storage, asks `lore_core::slot` for
//! their state, and writes back what changed, all inside one owner-scoped transaction.

mod apply;
mod edit;
mod error;
mod ingest;
mod inspect;
mod resolve;
mod sources;
mod tokens;
mod views;

use std::sync::Arc;

use lore_core::{Registry, Ts};
use lore_store::{Store, StoreError, Tx};

pub use edit::{EditReport, ManualClaim, SourceRef};
pub use error::EngineError;
pub use ingest::{IngestOutcome, IngestReport};
pub use inspect::{check_invariants, state_dump};
pub use sources::{
    AttachmentView, DeadlineRow, MeetingDetail, MeetingLinkView, NoteView, ParticipantView,
    SegmentView, SourceReport, TaskRow, Transcript, MAX_ATTACHMENT_BYTES, MAX_EXCERPT_AROUND,
    MAX_NOTE_CHARS,
};
pub use tokens::{CreatedToken, Principal, TokenScope, MAX_TOKEN_DAYS};
pub use views::{
    ClaimView, EntityRow, EntityView, EvidenceView, MeetingRow, NamedRef, ShowOptions,
};

pub type EngineResult<T> = Result<T, EngineError>;

/// Where the engine reads the time from. Rules never read it; the engine passes `now` in.
pub type Clock = Arc<dyn Fn() -> Ts + Send + Sync>;

pub struct Engine {
    store: Box<dyn Store>,
    registry: Registry,
    clock: Clock,
}

impl Engine {
    pub fn new(store: Box<dyn Store>) -> Engine {
        Engine {
            store,
            registry: Registry::builtin(),
            clock: Arc::new(Ts::now_wall_clock),
        }
    }

    /// Replaces the clock (tests, `LORE_NOW`).
    pub fn with_clock(mut self, clock: Clock) -> Engine {
        self.clock = clock;
        self
    }

    pub fn now(&self) -> Ts {
        (self.clock)()
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// Runs `work` in one write transaction for `owner`; an error rolls everything back.
    pub fn write<T>(
        &self,
        owner: &str,
        mut work: impl FnMut(&mut dyn Tx) -> EngineResult<T>,
    ) -> EngineResult<T> {
        let mut result = None;
        self.store
            .write(owner, &mut |tx| match work(tx) {
                Ok(value) => {
                    result = Some(value);
                    Ok(())
                }
                Err(error) => Err(StoreError::Aborted(Box::new(error))),
            })
            .map_err(EngineError::from_store)?;
        result.ok_or_else(|| EngineError::Internal("transaction finished without a result".into()))
    }

    /// Runs `work` against one consistent snapshot of `owner`'s data.
    pub fn read<T>(
        &self,
        owner: &str,
        mut work: impl FnMut(&mut dyn Tx) -> EngineResult<T>,
    ) -> EngineResult<T> {
        let mut result = None;
        self.store
            .read(owner, &mut |tx| match work(tx) {
                Ok(value) => {
                    result = Some(value);
                    Ok(())
                }
                Err(error) => Err(StoreError::Aborted(Box::new(error))),
            })
            .map_err(EngineError::from_store)?;
        result.ok_or_else(|| EngineError::Internal("transaction finished without a result".into()))
    }
}
