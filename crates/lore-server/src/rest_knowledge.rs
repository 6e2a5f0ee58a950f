//! REST routes over search, the graph neighborhood, identity curation (merge, split, undo, the
//! review queue) and transcript ingest: thin handlers over the engine calls the CLI makes
//! (`lore search`, `lore graph`, `lore merge|split|undo`, `lore suggestions accept|reject`,
//! `lore ingest FILE.vtt`). Registered by `rest::router`, so they are documented and enumerated with
//! the rest.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use lore_core::Ts;
use lore_engine::{GraphOptions, Principal, SearchRequest, SplitSelection};
use lore_ingest::{TranscriptFormat, TranscriptMeta};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiError, ErrorBody};
use crate::rest::{blocking, ApiJson, ApiPath, ApiQuery, EditReportDoc, IngestReportDoc};
use crate::AppState;

/// Most hits a search returns.
pub const MAX_SEARCH_LIMIT: usize = 200;
const DEFAULT_SEARCH_LIMIT: usize = 20;

/// The routes of this module, added to the REST router.
pub fn add_routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router
        .routes(routes!(search))
        .routes(routes!(neighborhood))
        .routes(routes!(merge_entity))
        .routes(routes!(set_entity_name))
        .routes(routes!(split_entity))
        .routes(routes!(undo_revision))
        .routes(routes!(accept_suggestion))
        .routes(routes!(reject_suggestion))
        .routes(routes!(ingest_transcript))
        .routes(routes!(ingest_transcript_file))
}

/// Parses an optional instant named `name` (RFC 3339 or YYYY-MM-DD).
pub fn parse_instant(name: &str, text: Option<&str>) -> Result<Option<Ts>, ApiError> {
    text.map(Ts::parse)
        .transpose()
        .map_err(|error| ApiError::bad_request(format!("{name}: {error}")))
}

// ---------------------------------------------------------------------------------------------
// Search and neighborhood.

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct SearchQuery {
    /// The query: words, "a phrase", prefix*, OR, -excluded.
    #[param(min_length = 1)]
    q: String,
    /// Only hits of this kind.
    #[param(inline)]
    kind: Option<SearchKind>,
    /// How many hits to return (1 to 200, default 20).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<usize>,
    /// Newest first instead of best match first.
    newest: Option<bool>,
}

#[derive(Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    Entity,
    Claim,
    Segment,
    Note,
}

impl SearchKind {
    fn as_str(self) -> &'static str {
        match self {
            SearchKind::Entity => "entity",
            SearchKind::Claim => "claim",
            SearchKind::Segment => "segment",
            SearchKind::Note => "note",
        }
    }
}

/// One search hit (`lore search --json`).
#[derive(Serialize, ToSchema)]
pub struct SearchHitDoc {
    /// entity, claim, segment or note
    kind: String,
    /// The entity, claim or note id; for a segment, its id within the meeting.
    id: String,
    title: String,
    /// The matched text, matches wrapped in `[` and `]`.
    snippet: String,
    score: f64,
    at: Option<String>,
    /// The meeting (id, external_id, title), for segments, notes and claims.
    #[schema(value_type = Option<Object>)]
    meeting: Option<Value>,
    /// `mm:ss` into the meeting.
    offset: Option<String>,
    /// The entity the hit is about (id, kind, name).
    #[schema(value_type = Option<Object>)]
    entity: Option<Value>,
    /// A claim's status.
    status: Option<String>,
}

/// The hits of a search.
#[derive(Serialize, ToSchema)]
pub struct SearchResultDoc {
    items: Vec<SearchHitDoc>,
}

/// Searches entity names and aliases, claim values, transcript segments and notes: best match
/// first (bm25, boosted for active claims and by topic weight), or newest first.
#[utoipa::path(get, path = "/api/v1/search", tag = "search",
    params(SearchQuery),
    responses((status = 200, body = SearchResultDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody)))]
pub async fn search(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<Response, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if limit == 0 || limit > MAX_SEARCH_LIMIT {
        return Err(ApiError::bad_request(format!(
            "limit must be between 1 and {MAX_SEARCH_LIMIT}"
        )));
    }
    let request = SearchRequest {
        query: query.q,
        kind: query.kind.map(|kind| kind.as_str().to_string()),
        limit,
        newest_first: query.newest.unwrap_or(false),
    };
    let hits = blocking(&state, move |engine| {
        engine.search(&principal.owner, &request)
    })
    .await?;
    Ok(Json(json!({ "items": hits })).into_response())
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct NeighborhoodQuery {
    /// 1 or 2 (default 1).
    #[param(minimum = 1, maximum = 2)]
    hops: Option<u8>,
    /// Most nodes, the center included (1 to 500, default 50).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<usize>,
    /// Only edges whose claims were valid at this instant (RFC 3339 or YYYY-MM-DD).
    valid_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct GraphNodeDoc {
    id: String,
    /// An entity kind, or `meeting`.
    kind: String,
    name: String,
    hop: u8,
    weight: f64,
}

#[derive(Serialize, ToSchema)]
pub struct GraphEdgeDoc {
    /// The claim behind the edge (null for task and meeting edges).
    claim: Option<String>,
    from: String,
    to: String,
    /// A claim's predicate, `task`, `attended` or `mentioned_in`.
    predicate: String,
    status: Option<String>,
    /// A text value carried by the edge (a role, a task title).
    label: Option<String>,
}

/// The bounded neighborhood of an entity (`lore graph --json`).
#[derive(Serialize, ToSchema)]
pub struct GraphViewDoc {
    center: String,
    nodes: Vec<GraphNodeDoc>,
    edges: Vec<GraphEdgeDoc>,
    /// Whether something was cut to stay within the limits.
    truncated: bool,
}

/// The entities and meetings within one or two hops of an entity, from stored facts only.
#[utoipa::path(get, path = "/api/v1/entities/{entity}/neighborhood", tag = "entities",
    params(("entity" = String, Path, description = "An id, an email, kind:key or an unambiguous name"), NeighborhoodQuery),
    responses((status = 200, body = GraphViewDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn neighborhood(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(entity): ApiPath<String>,
    ApiQuery(query): ApiQuery<NeighborhoodQuery>,
) -> Result<Response, ApiError> {
    let options = graph_options(
        query.hops,
        query.limit,
        parse_instant("valid_at", query.valid_at.as_deref())?,
    )
    .map_err(ApiError::bad_request)?;
    let graph = blocking(&state, move |engine| {
        engine.graph(&principal.owner, &entity, &options)
    })
    .await?;
    Ok(Json(graph).into_response())
}

/// The engine's graph options from a request's `hops` and `limit`, checked under those names (the
/// engine's own messages name the command-line flags).
pub fn graph_options(
    hops: Option<u8>,
    limit: Option<usize>,
    valid_at: Option<Ts>,
) -> Result<GraphOptions, String> {
    let defaults = GraphOptions::default();
    let hops = hops.unwrap_or(defaults.hops);
    if !(1..=2).contains(&hops) {
        return Err(format!("hops must be 1 or 2, not {hops}"));
    }
    let limit = limit.unwrap_or(defaults.limit);
    if !(1..=lore_engine::MAX_GRAPH_NODES).contains(&limit) {
        return Err(format!(
            "limit must be between 1 and {}, not {limit}",
            lore_engine::MAX_GRAPH_NODES
        ));
    }
    Ok(GraphOptions {
        hops,
        limit,
        valid_at,
    })
}

// ---------------------------------------------------------------------------------------------
// Identity: merge, split, undo, the review queue.

/// What merge, split, undo and review decisions report.
#[derive(Serialize, ToSchema)]
pub struct IdentityReportDoc {
    /// The revision written.
    revision: String,
    /// The surviving (merge) or original (split) entity.
    entity: String,
    /// The absorbed (merge) or new (split) entity.
    other: Option<String>,
    claims_moved: usize,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeBody {
    /// The entity to merge into the one in the path (it becomes `merged`).
    entity: String,
}

/// Merges the body's entity into the path's (L18): everything naming it is repointed.
#[utoipa::path(post, path = "/api/v1/entities/{entity}/merge", tag = "entities",
    params(("entity" = String, Path, description = "The surviving entity: an id, an email, kind:key or an unambiguous name")),
    request_body = MergeBody,
    responses((status = 200, body = IdentityReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
               (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
               (status = 422, description = "The body does not match the schema", body = ErrorBody)))]
pub async fn merge_entity(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(survivor): ApiPath<String>,
    ApiJson(body): ApiJson<MergeBody>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.merge_entities(&principal.owner, &survivor, &body.entity)
    })
    .await?;
    Ok(Json(report).into_response())
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NameBody {
    /// The name every view shows (one line, at most 200 characters), or null to show the name the
    /// entity's sources give it again.
    name: Option<String>,
}

/// Names an entity by hand (`lore rename`): every view shows the name and later evidence does not
/// replace it (L6); the entity keeps its identity and its sources' names. `"name": null` clears it.
#[utoipa::path(put, path = "/api/v1/entities/{entity}/name", tag = "entities",
    params(("entity" = String, Path, description = "An id, an email, kind:key or an unambiguous name")),
    request_body = NameBody,
    responses((status = 200, body = EditReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
               (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
               (status = 422, description = "The body does not match the schema", body = ErrorBody)))]
pub async fn set_entity_name(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(entity): ApiPath<String>,
    ApiJson(body): ApiJson<NameBody>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.set_manual_name(&principal.owner, &entity, body.name.as_deref())
    })
    .await?;
    Ok(Json(report).into_response())
}

/// What a split moves: evidence ids (from the entity view) or meetings. Exactly one of the two.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitBody {
    /// Evidence ids (each claim's `evidence[].id` in the entity view).
    evidence: Option<Vec<String>>,
    /// Meeting ids or external ids: every evidence row of these meetings moves.
    meetings: Option<Vec<String>>,
}

/// Moves the chosen evidence and the claims it supports to a new entity, and records that the
/// two are different (L18).
#[utoipa::path(post, path = "/api/v1/entities/{entity}/split", tag = "entities",
    params(("entity" = String, Path, description = "An id, an email, kind:key or an unambiguous name")),
    request_body = SplitBody,
    responses((status = 200, body = IdentityReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
               (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
               (status = 422, description = "The body does not match the schema", body = ErrorBody)))]
pub async fn split_entity(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(entity): ApiPath<String>,
    ApiJson(body): ApiJson<SplitBody>,
) -> Result<Response, ApiError> {
    let selection = match (body.evidence, body.meetings) {
        (Some(evidence), None) if !evidence.is_empty() => SplitSelection::Evidence(evidence),
        (None, Some(meetings)) if !meetings.is_empty() => SplitSelection::Meetings(meetings),
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of evidence or meetings, with at least one id",
            ))
        }
    };
    let report = blocking(&state, move |engine| {
        engine.split_entity(&principal.owner, &entity, &selection)
    })
    .await?;
    Ok(Json(report).into_response())
}

/// Restores what a revision changed to its state before it (`lore undo`); the undo is itself a
/// revision.
#[utoipa::path(post, path = "/api/v1/revisions/{revision}/undo", tag = "review",
    params(("revision" = String, Path, description = "Revision id (every mutation reports its revision)")),
    responses((status = 200, body = IdentityReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn undo_revision(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(revision): ApiPath<String>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.undo(&principal.owner, &revision)
    })
    .await?;
    Ok(Json(report).into_response())
}

/// Accepts a review-queue entry: a proposed merge is performed; a provisional claim becomes a
/// manual decision that holds its slot (L6).
#[utoipa::path(post, path = "/api/v1/suggestions/{suggestion}/accept", tag = "review",
    params(("suggestion" = String, Path, description = "Suggestion id (from /api/v1/suggestions)")),
    responses((status = 200, body = IdentityReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn accept_suggestion(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(suggestion): ApiPath<String>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.accept_suggestion(&principal.owner, &suggestion)
    })
    .await?;
    Ok(Json(report).into_response())
}

/// Rejects a review-queue entry: a proposed merge becomes a "these are different" record on both
/// entities; a provisional claim is retracted (L12).
#[utoipa::path(post, path = "/api/v1/suggestions/{suggestion}/reject", tag = "review",
    params(("suggestion" = String, Path, description = "Suggestion id (from /api/v1/suggestions)")),
    responses((status = 200, body = IdentityReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn reject_suggestion(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(suggestion): ApiPath<String>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.reject_suggestion(&principal.owner, &suggestion)
    })
    .await?;
    Ok(Json(report).into_response())
}

// ---------------------------------------------------------------------------------------------
// Transcript ingest.

#[derive(Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptFormatName {
    Vtt,
    Srt,
    Txt,
}

/// The meeting a transcript records (the `meeting` object of a bundle; see SPEC 5.1).
#[derive(Serialize, ToSchema)]
pub struct TranscriptMeetingDoc {
    /// When the meeting started (RFC 3339 or YYYY-MM-DD).
    started_at: String,
    /// Stable id in the source system; re-sending the same id replaces the meeting. Default: derived
    /// from the transcript text.
    external_id: Option<String>,
    title: Option<String>,
    ended_at: Option<String>,
}

/// A transcript file's text with its meeting metadata: the same metadata a `FILE.meeting.json`
/// sidecar holds for `lore ingest FILE.vtt`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptUpload {
    #[schema(inline)]
    format: TranscriptFormatName,
    /// The transcript: WebVTT, SRT, or plain `Speaker: text` lines.
    text: String,
    #[schema(value_type = TranscriptMeetingDoc)]
    meeting: Map<String, Value>,
    /// The participants, as in a bundle: `{"display_name", "email", "speaker_label"}`.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    participants: Vec<Value>,
    /// Maps a transcript speaker label to a participant's email.
    #[serde(default)]
    speakers: std::collections::BTreeMap<String, String>,
}

/// Ingests a transcript (`.vtt`, `.srt` or `.txt` text) as a meeting, sent as JSON with its
/// metadata. Speakers whose name matches a participant are attributed to them.
#[utoipa::path(post, path = "/api/v1/transcripts", tag = "meetings",
    request_body = TranscriptUpload,
    responses((status = 201, description = "Ingested (or unchanged when sent again)", body = IngestReportDoc),
               (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
               (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
               (status = 415, body = ErrorBody),
               (status = 422, description = "The body does not match the schema", body = ErrorBody)))]
pub async fn ingest_transcript(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiJson(upload): ApiJson<TranscriptUpload>,
) -> Result<Response, ApiError> {
    ingest_upload(state, principal, upload).await
}

/// A transcript file sent as `multipart/form-data`: the file itself, and its metadata.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct TranscriptFileForm {
    /// The transcript file (`.vtt`, `.srt` or `.txt`); its name's extension gives the format unless
    /// a `format` part is sent.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// `vtt`, `srt` or `txt`; default: from the file name.
    format: Option<String>,
    /// JSON: `{"meeting": {...}, "participants": [...], "speakers": {...}}`, as in the JSON upload.
    #[schema(value_type = Object)]
    metadata: Value,
}

/// Ingests a transcript file sent as `multipart/form-data` (parts `file`, `metadata`, optional
/// `format`), exactly as the JSON upload does.
#[utoipa::path(post, path = "/api/v1/transcripts/file", tag = "meetings",
    request_body(content = TranscriptFileForm, content_type = "multipart/form-data"),
    responses((status = 201, description = "Ingested (or unchanged when sent again)", body = IngestReportDoc),
               (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
               (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
               (status = 415, body = ErrorBody)))]
pub async fn ingest_transcript_file(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    request: axum::extract::Request,
) -> Result<Response, ApiError> {
    use axum::extract::FromRequest;
    let mut multipart = axum::extract::Multipart::from_request(request, &state)
        .await
        .map_err(|rejection| {
            ApiError::new(
                rejection.status(),
                crate::error::code_for(rejection.status()),
                rejection.body_text(),
            )
        })?;
    let bad = |message: String| ApiError::bad_request(message);
    let (mut text, mut file_name, mut format, mut metadata) = (None, None, None, None);
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| bad(format!("invalid multipart body: {e}")))?
    {
        match field.name().unwrap_or_default() {
            "file" => {
                file_name = field.file_name().map(str::to_string);
                let bytes = field.bytes().await.map_err(|e| bad(format!("file: {e}")))?;
                text = Some(
                    String::from_utf8(bytes.to_vec())
                        .map_err(|_| bad("file: not UTF-8 text".into()))?,
                );
            }
            "format" => {
                format = Some(
                    field
                        .text()
                        .await
                        .map_err(|e| bad(format!("format: {e}")))?,
                )
            }
            "metadata" => {
                let raw = field
                    .text()
                    .await
                    .map_err(|e| bad(format!("metadata: {e}")))?;
                metadata = Some(
                    serde_json::from_str::<Map<String, Value>>(&raw)
                        .map_err(|e| bad(format!("metadata: not a JSON object: {e}")))?,
                );
            }
            other => {
                return Err(bad(format!(
                    "unknown part '{other}'; send file, metadata and optionally format"
                )))
            }
        }
    }
    let text = text.ok_or_else(|| bad("the 'file' part is required".into()))?;
    let mut metadata = metadata.ok_or_else(|| bad("the 'metadata' part is required".into()))?;
    let format = format
        .or_else(|| {
            file_name
                .as_deref()
                .and_then(|n| n.rsplit_once('.'))
                .map(|(_, ext)| ext.to_lowercase())
        })
        .ok_or_else(|| {
            bad(
                "say the format: a 'format' part, or a file name ending in .vtt, .srt or .txt"
                    .into(),
            )
        })?;
    metadata.insert("format".into(), Value::String(format));
    metadata.insert("text".into(), Value::String(text));
    let upload: TranscriptUpload = serde_json::from_value(Value::Object(metadata))
        .map_err(|e| bad(format!("metadata: {e}")))?;
    ingest_upload(state, principal, upload).await
}

async fn ingest_upload(
    state: AppState,
    principal: Principal,
    upload: TranscriptUpload,
) -> Result<Response, ApiError> {
    let format = match upload.format {
        TranscriptFormatName::Vtt => TranscriptFormat::Vtt,
        TranscriptFormatName::Srt => TranscriptFormat::Srt,
        TranscriptFormatName::Txt => TranscriptFormat::Plain,
    };
    if !upload.meeting.contains_key("started_at") {
        return Err(ApiError::bad_request("meeting.started_at is required"));
    }
    let digest = Sha256::digest(upload.text.as_bytes());
    let default_external_id = format!(
        "transcript-{}",
        digest[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let meta = TranscriptMeta {
        sidecar: Some(json!({"meeting": upload.meeting, "participants": upload.participants})),
        default_external_id,
        external_id: None,
        title: None,
        started_at: None,
        participants: Vec::new(),
        speakers: upload
            .speakers
            .iter()
            .map(|(label, email)| format!("{label}={email}"))
            .collect(),
    };
    let text = upload.text;
    let metrics = state.metrics.clone();
    let result = blocking(&state, move |engine| {
        engine.ingest_transcript(&principal.owner, format, &text, &meta)
    })
    .await;
    match &result {
        Ok(report) => metrics.count_ingest(&format!("{:?}", report.outcome).to_lowercase()),
        Err(_) => metrics.count_ingest("failed"),
    }
    Ok((StatusCode::CREATED, Json(result?)).into_response())
}
