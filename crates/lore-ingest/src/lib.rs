//! Reading what Lore ingests: meeting bundle JSON parsed and validated into typed values, and URL normalization.
//!
//! Nothing here touches storage or reads a clock: every function takes its input as values and returns either
//! typed values or every problem found, each named by its JSON path. Nothing panics on user data.

mod bundle;
mod canonical;
mod error;
mod links;
mod parse;
mod reader;

pub use bundle::{
    AttachmentInput, Bundle, ClaimCandidate, EntityRef, EvidenceInput, LinkInput, MeetingInput,
    NoteInput, ParticipantInput, SegmentInput, SeriesInput, TaskInput,
};
pub use canonical::canonical_json_hash;
pub use error::{BundleErrors, FieldError};
pub use links::{find_urls, normalize_url, NormalizedLink};
pub use parse::parse_bundle;
