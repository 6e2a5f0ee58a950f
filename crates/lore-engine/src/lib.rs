//! Lore's use cases: ingest a meeting, delete a source, edit claims, and read entities. The one API that
//! the command line, the REST and MCP servers and the web workspace all call.
//!
//! The engine owns no lifecycle rule: it loads a slot's claims from storage, asks `lore_core::slot` for
//! their state, and writes back what changed, all inside one owner-scoped transaction.

mod agenda;
mod apply;
mod curate;
mod edit;
mod error;
mod extract;
mod graph;
mod graph_expand;
mod identifying;
mod identity;
mod ingest;
mod inspect;
mod links;
pub mod markdown;
mod participants;
mod people;
mod resolve;
mod search;
mod sources;
mod tags;
mod temporal;
mod tokens;
mod transcripts;
mod transfer;
mod undo;
mod users;
mod views;
mod workspace;

use std::sync::Arc;

use lore_core::{Registry, Ts};
use lore_store::{Store, StoreError, Tx};

pub use agenda::{DeadlineRow, TaskRow, DEADLINES_IN_FORCE};
pub use curate::{EntitySort, ReviewItem};
pub use edit::{EditReport, ManualClaim, SourceRef};
pub use error::EngineError;
pub use extract::{ExtractOutcome, ExtractReport};
pub use graph::{GraphEdge, GraphNode, GraphOptions, GraphView, MAX_NODES as MAX_GRAPH_NODES};
pub use identity::{IdentityReport, SplitSelection};
pub use ingest::{IngestOutcome, IngestReport};
pub use inspect::{check_invariants, check_status_histories, state_dump};
pub use markdown::{ExportReport, ImportReport, PageDrop};
pub use participants::ParticipantView;
pub use search::{MeetingRef, SearchHit, SearchRequest, SEARCH_KINDS};
pub use sources::{
    AttachmentView, MeetingDetail, MeetingLinkView, MeetingParticipant, NoteView, SegmentView,
    SourceReport, Transcript, MAX_ATTACHMENT_BYTES, MAX_EXCERPT_AROUND, MAX_NOTE_CHARS,
};
pub use temporal::TimeTravel;
pub use tokens::{CreatedToken, Principal, TokenScope, MAX_TOKEN_DAYS};
pub use transfer::CopyReport;
pub use users::MIN_PASSWORD_CHARS;
pub use views::{
    ClaimView, EntityRow, EntityView, EvidenceView, MeetingRow, NamedRef, Projection, ShowOptions,
};
pub use workspace::{CascadeItem, ClaimInspection, MeetingClaimRow, RevisionRow};

pub type EngineResult<T> = Result<T, EngineError>;

/// Where the engine reads the time from. Rules never read it; the engine passes `now` in.
pub type Clock = Arc<dyn Fn() -> Ts + Send + Sync>;

pub struct Engine {
    store: Box<dyn Store>,
    registry: Registry,
    clock: Clock,
    /// Runs on bundles and transcripts that supply no claims.
    extractor: Arc<dyn lore_extract::Extractor>,
}

impl Engine {
    pub fn new(store: Box<dyn Store>) -> Engine {
        Engine {
            store,
            registry: Registry::builtin(),
            clock: Arc::new(Ts::now_wall_clock),
            extractor: Arc::new(lore_extract::RulesExtractor),
        }
    }

    /// Replaces the extractor used at ingest for bundles without claims (default: `rules`).
    pub fn with_extractor(mut self, extractor: Arc<dyn lore_extract::Extractor>) -> Engine {
        self.extractor = extractor;
        self
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

    /// Runs `work` in a write transaction that is always rolled back, and returns what it computed:
    /// how previews (dry runs) see exactly what a write would do without doing it.
    pub fn dry_run<T>(
        &self,
        owner: &str,
        mut work: impl FnMut(&mut dyn Tx) -> EngineResult<T>,
    ) -> EngineResult<T> {
        let mut result = None;
        let outcome = self.write(owner, |tx| {
            result = Some(work(tx)?);
            Err::<(), _>(EngineError::RolledBack)
        });
        match (outcome, result) {
            (Err(EngineError::RolledBack), Some(value)) => Ok(value),
            (Err(error), _) => Err(error),
            (Ok(()), _) => Err(EngineError::Internal(
                "a dry-run transaction committed".into(),
            )),
        }
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
