//! Reading what Lore ingests: meeting bundle JSON parsed and validated into typed values, transcripts
//! (WebVTT, SRT, plain text, QMSum/AMI JSON) read into segments, and URL normalization.
//!
//! Nothing here touches storage or reads a clock: every function takes its input as values and returns either
//! typed values or every problem found, each named by its JSON path. Nothing panics on user data.

mod ami;
mod bundle;
mod canonical;
mod error;
mod links;
mod parse;
mod plain;
mod reader;
mod srt;
mod transcript;
mod vtt;

pub use ami::{detokenize, is_ami_json, parse_ami, AmiMeeting, AMI_BASE_DATE};
pub use bundle::{
    AttachmentInput, Bundle, ClaimCandidate, EntityRef, EvidenceInput, LinkInput, MeetingInput,
    NoteInput, ParticipantInput, SegmentInput, SeriesInput, TagInput, TaskInput,
};
pub use canonical::canonical_json_hash;
pub use error::{BundleErrors, FieldError};
pub use links::{find_urls, normalize_url, NormalizedLink};
pub use parse::{parse_bundle, parse_bundle_value, validate_candidates, ValidatedCandidates};
pub use transcript::{
    parse_transcript, transcript_bundle, Diagnostic, Transcript, TranscriptError, TranscriptFormat,
    TranscriptMeta, TranscriptSegment,
};
