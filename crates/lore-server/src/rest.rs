//! The REST API under `/api/v1`: thin handlers over the engine, each documented for the OpenAPI
//! document by its `#[utoipa::path]`. The router and the document are built from the same list
//! (`routes!`), so every served route is documented and the isolation test can enumerate them.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use lore_core::Ts;
use lore_engine::{
    Engine, EngineResult, ManualClaim, Principal, ShowOptions, SourceRef, TimeTravel,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiError, ErrorBody};
use crate::rest_knowledge::parse_instant;
use crate::AppState;

/// Largest page a list endpoint returns.
pub const MAX_PAGE: usize = 500;
const DEFAULT_PAGE: usize = 100;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Lore",
        description = "Meetings in, living knowledge out: an owner-scoped, evidence-backed, bi-temporal knowledge graph. Every request needs `Authorization: Bearer <token>`; the token decides the owner.",
        license(name = "Apache-2.0")
    ),
    modifiers(&BearerSecurity),
    security(("bearer" = [])),
    components(schemas(ErrorBody))
)]
struct ApiDoc;

struct BearerSecurity;

impl Modify for BearerSecurity {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Every REST route with its documentation.
pub fn router() -> OpenApiRouter<AppState> {
    let router = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(list_meetings, ingest_bundle))
        .routes(routes!(get_meeting, delete_meeting))
        .routes(routes!(meeting_transcript))
        .routes(routes!(meeting_excerpt))
        .routes(routes!(list_notes, add_note))
        .routes(routes!(add_link))
        .routes(routes!(upload_attachment))
        .routes(routes!(delete_note))
        .routes(routes!(delete_attachment))
        .routes(routes!(list_entities))
        .routes(routes!(get_entity))
        .routes(routes!(entity_history))
        .routes(routes!(add_claim))
        .routes(routes!(override_claim))
        .routes(routes!(retract_claim))
        .routes(routes!(list_suggestions))
        .routes(routes!(list_deadlines))
        .routes(routes!(list_tasks));
    crate::rest_workspace::add_routes(crate::rest_knowledge::add_routes(router))
}

// ---------------------------------------------------------------------------------------------
// Extractors whose rejections are JSON errors like every other.

/// `Json<T>` with JSON errors.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(ApiError::new(
                rejection.status(),
                crate::error::code_for(rejection.status()),
                rejection.body_text(),
            )),
        }
    }
}

/// The raw body, with JSON errors (413 past the body limit).
pub struct ApiBytes(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for ApiBytes {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match Bytes::from_request(request, state).await {
            Ok(bytes) => Ok(ApiBytes(bytes)),
            Err(rejection) => Err(ApiError::new(
                rejection.status(),
                crate::error::code_for(rejection.status()),
                rejection.body_text(),
            )),
        }
    }
}

/// `Query<T>` with JSON errors.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(ApiQuery(value)),
            Err(rejection) => Err(ApiError::bad_request(rejection.body_text())),
        }
    }
}

/// `Path<T>` with JSON errors.
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(ApiPath(value)),
            Err(rejection) => Err(ApiError::bad_request(rejection.body_text())),
        }
    }
}

/// Runs a synchronous engine call off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce(&Engine) -> EngineResult<T> + Send + 'static,
) -> Result<T, ApiError> {
    let engine = state.engine.clone();
    tokio::task::spawn_blocking(move || work(&engine))
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::from)
}

// ---------------------------------------------------------------------------------------------
// Pagination.

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// How many items to return (1 to 500, default 100).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<usize>,
    /// How many items to skip.
    #[param(minimum = 0)]
    offset: Option<usize>,
}

/// One page of a list.
#[derive(Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: usize,
    pub limit: usize,
    pub offset: usize,
}

/// One page of a list (documentation of [`Page`]).
#[derive(Serialize, ToSchema)]
pub struct PageDoc<T: ToSchema> {
    items: Vec<T>,
    /// How many items there are in all.
    total: usize,
    limit: usize,
    offset: usize,
}

fn paginate<T>(items: Vec<T>, query: &PageQuery) -> Result<Page<T>, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::bad_request(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    let offset = query.offset.unwrap_or(0);
    let total = items.len();
    let items = items.into_iter().skip(offset).take(limit).collect();
    Ok(Page {
        items,
        total,
        limit,
        offset,
    })
}

// ---------------------------------------------------------------------------------------------
// Documentation schemas. The engine's views serialize themselves; these describe them for clients.

/// A meeting in a list.
#[derive(Serialize, ToSchema)]
pub struct MeetingRowDoc {
    id: String,
    external_id: String,
    title: String,
    started_at: String,
    participants: usize,
    segments: usize,
    notes: usize,
    evidence: usize,
}

/// One meeting with its participants, notes, attachments and links.
#[derive(Serialize, ToSchema)]
pub struct MeetingDetailDoc {
    id: String,
    external_id: String,
    title: String,
    started_at: String,
    ended_at: Option<String>,
    platform: Option<String>,
    segments: usize,
    #[schema(value_type = Vec<Object>)]
    participants: Vec<serde_json::Value>,
    notes: Vec<NoteDoc>,
    #[schema(value_type = Vec<Object>)]
    attachments: Vec<serde_json::Value>,
    #[schema(value_type = Vec<Object>)]
    links: Vec<serde_json::Value>,
}

#[derive(Serialize, ToSchema)]
pub struct NoteDoc {
    id: String,
    created_at: String,
    author: Option<String>,
    text: String,
}

#[derive(Serialize, ToSchema)]
pub struct SegmentDoc {
    id: String,
    /// `mm:ss` from the start of the meeting.
    offset: String,
    start_ms: i64,
    end_ms: i64,
    speaker: Option<String>,
    attribution: String,
    text: String,
}

/// A transcript, whole or an excerpt around a cited segment.
#[derive(Serialize, ToSchema)]
pub struct TranscriptDoc {
    meeting: String,
    external_id: String,
    title: String,
    started_at: String,
    cited: Option<String>,
    segments: Vec<SegmentDoc>,
}

/// An entity in a list.
#[derive(Serialize, ToSchema)]
pub struct EntityRowDoc {
    id: String,
    /// person, company, project or concept
    kind: String,
    name: String,
    status: String,
}

/// The `lore show --json` contract (SPEC 5.3): the entity with its claims, each with evidence.
#[derive(Serialize, ToSchema)]
pub struct EntityViewDoc {
    #[schema(value_type = Object)]
    entity: serde_json::Value,
    #[schema(value_type = Vec<Object>)]
    claims: Vec<serde_json::Value>,
    #[schema(value_type = Vec<Object>)]
    links: Vec<serde_json::Value>,
    #[schema(value_type = Vec<Object>)]
    tasks: Vec<serde_json::Value>,
}

/// What a state-changing call reports.
#[derive(Serialize, ToSchema)]
pub struct EditReportDoc {
    /// The revision written.
    revision: String,
    claim: Option<String>,
    /// Claims created, changed or removed.
    deleted: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct SourceReportDoc {
    revision: String,
    /// The new note, link or attachment.
    id: String,
}

#[derive(Serialize, ToSchema)]
pub struct IngestReportDoc {
    revision: String,
    meeting: String,
    external_id: String,
    /// created, replaced or unchanged
    outcome: String,
    claims: usize,
    rejected: usize,
    diagnostics: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct SuggestionDoc {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    status: String,
    target: String,
    secondary: Option<String>,
    #[schema(value_type = Object)]
    payload: serde_json::Value,
    created_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct DeadlineDoc {
    claim: String,
    #[schema(value_type = Object)]
    subject: serde_json::Value,
    commitment: Option<String>,
    due_at: String,
    /// upcoming, past_due, completed, rescheduled or canceled
    state: String,
    status: String,
    valid_from: Option<String>,
    /// The meeting (external id) and `mm:ss` offset of the first evidence.
    meeting: Option<String>,
    offset: Option<String>,
    quote: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct TaskDoc {
    id: String,
    title: String,
    status: String,
    due_at: Option<String>,
    #[schema(value_type = Option<Object>)]
    assignee: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    project: Option<serde_json::Value>,
    meeting: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Meetings.

#[utoipa::path(get, path = "/api/v1/meetings", tag = "meetings",
    params(PageQuery),
    responses((status = 200, description = "Meetings, oldest first", body = PageDoc<MeetingRowDoc>),
               (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
async fn list_meetings(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    let rows = blocking(&state, move |engine| engine.list_meetings(&principal.owner)).await?;
    Ok(Json(paginate(rows, &page)?).into_response())
}

/// Ingests one meeting bundle (SPEC 5.1) sent as the JSON body. Attachment bytes are uploaded
/// separately; a bundle attachment may not name a `path`.
#[utoipa::path(post, path = "/api/v1/meetings", tag = "meetings",
    request_body(content = Object, description = "A meeting bundle (SPEC 5.1)", content_type = "application/json"),
    responses((status = 201, description = "Ingested", body = IngestReportDoc),
               (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
               (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
               (status = 415, body = ErrorBody)))]
async fn ingest_bundle(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    ApiBytes(body): ApiBytes,
) -> Result<Response, ApiError> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    if !is_json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the bundle with Content-Type: application/json",
        ));
    }
    let text = String::from_utf8(body.to_vec())
        .map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
    let metrics = state.metrics.clone();
    let result = blocking(&state, move |engine| {
        engine.ingest_bundle_json(&principal.owner, &text)
    })
    .await;
    match &result {
        Ok(report) => metrics.count_ingest(&format!("{:?}", report.outcome).to_lowercase()),
        Err(_) => metrics.count_ingest("failed"),
    }
    Ok((StatusCode::CREATED, Json(result?)).into_response())
}

#[utoipa::path(get, path = "/api/v1/meetings/{meeting}", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id")),
    responses((status = 200, body = MeetingDetailDoc), (status = 401, body = ErrorBody),
               (status = 404, body = ErrorBody)))]
async fn get_meeting(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
) -> Result<Response, ApiError> {
    let detail = blocking(&state, move |engine| {
        engine.get_meeting(&principal.owner, &meeting)
    })
    .await?;
    Ok(Json(detail).into_response())
}

/// Deletes a meeting and everything only it supported (L13), in one transaction.
#[utoipa::path(delete, path = "/api/v1/meetings/{meeting}", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id")),
    responses((status = 200, body = EditReportDoc), (status = 401, body = ErrorBody),
               (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn delete_meeting(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.delete_source(&principal.owner, SourceRef::Meeting(&meeting))
    })
    .await?;
    Ok(Json(report).into_response())
}

#[utoipa::path(get, path = "/api/v1/meetings/{meeting}/transcript", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id")),
    responses((status = 200, body = TranscriptDoc), (status = 401, body = ErrorBody),
               (status = 404, body = ErrorBody)))]
async fn meeting_transcript(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
) -> Result<Response, ApiError> {
    let transcript = blocking(&state, move |engine| {
        engine.meeting_transcript(&principal.owner, &meeting)
    })
    .await?;
    Ok(Json(transcript).into_response())
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ExcerptQuery {
    /// The cited segment's id.
    segment: String,
    /// Segments before and after it (0 to 20, default 3).
    #[param(minimum = 0, maximum = 20)]
    around: Option<usize>,
}

#[utoipa::path(get, path = "/api/v1/meetings/{meeting}/excerpt", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id"), ExcerptQuery),
    responses((status = 200, body = TranscriptDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn meeting_excerpt(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
    ApiQuery(query): ApiQuery<ExcerptQuery>,
) -> Result<Response, ApiError> {
    let around = query.around.unwrap_or(3);
    if around > lore_engine::MAX_EXCERPT_AROUND {
        return Err(ApiError::bad_request(format!(
            "around must be at most {}",
            lore_engine::MAX_EXCERPT_AROUND
        )));
    }
    let excerpt = blocking(&state, move |engine| {
        engine.meeting_excerpt(&principal.owner, &meeting, &query.segment, around)
    })
    .await?;
    Ok(Json(excerpt).into_response())
}

#[utoipa::path(get, path = "/api/v1/meetings/{meeting}/notes", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id")),
    responses((status = 200, body = Vec<NoteDoc>), (status = 401, body = ErrorBody),
               (status = 404, body = ErrorBody)))]
async fn list_notes(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
) -> Result<Response, ApiError> {
    let notes = blocking(&state, move |engine| {
        engine.list_notes(&principal.owner, &meeting)
    })
    .await?;
    Ok(Json(notes).into_response())
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewNote {
    /// The note's text (at most 20000 characters).
    #[schema(min_length = 1, max_length = 20000)]
    text: String,
    author: Option<String>,
}

#[utoipa::path(post, path = "/api/v1/meetings/{meeting}/notes", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id")),
    request_body = NewNote,
    responses((status = 201, body = SourceReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody),
               (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
               (status = 422, description = "The body does not match the schema", body = ErrorBody)))]
async fn add_note(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
    ApiJson(note): ApiJson<NewNote>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.add_note(
            &principal.owner,
            &meeting,
            &note.text,
            note.author.as_deref(),
        )
    })
    .await?;
    Ok((StatusCode::CREATED, Json(report)).into_response())
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLink {
    /// An http(s) URL; it is recorded as seen, never as read (`url_only`).
    url: String,
    title: Option<String>,
}

#[utoipa::path(post, path = "/api/v1/meetings/{meeting}/links", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id")),
    request_body = NewLink,
    responses((status = 201, body = SourceReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody),
               (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
               (status = 422, description = "The body does not match the schema", body = ErrorBody)))]
async fn add_link(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
    ApiJson(link): ApiJson<NewLink>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.add_meeting_link(&principal.owner, &meeting, &link.url, link.title.as_deref())
    })
    .await?;
    Ok((StatusCode::CREATED, Json(report)).into_response())
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct UploadQuery {
    /// The file's name (no folders).
    filename: String,
}

/// Uploads an attachment's bytes as the raw body (at most 10 MiB); they are stored
/// content-addressed by SHA-256.
#[utoipa::path(post, path = "/api/v1/meetings/{meeting}/attachments", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id"), UploadQuery),
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses((status = 201, body = SourceReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody), (status = 413, body = ErrorBody)))]
async fn upload_attachment(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
    ApiQuery(query): ApiQuery<UploadQuery>,
    headers: HeaderMap,
    ApiBytes(body): ApiBytes,
) -> Result<Response, ApiError> {
    let media_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim().to_string())
        .filter(|v| !v.is_empty() && v.len() <= 200)
        .unwrap_or_else(|| "application/octet-stream".to_string());
    let report = blocking(&state, move |engine| {
        engine.add_attachment(
            &principal.owner,
            &meeting,
            &query.filename,
            &media_type,
            &body,
        )
    })
    .await?;
    Ok((StatusCode::CREATED, Json(report)).into_response())
}

#[utoipa::path(delete, path = "/api/v1/notes/{note}", tag = "meetings",
    params(("note" = String, Path, description = "Note id")),
    responses((status = 200, body = EditReportDoc), (status = 401, body = ErrorBody),
               (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn delete_note(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(note): ApiPath<String>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.delete_source(&principal.owner, SourceRef::Note(&note))
    })
    .await?;
    Ok(Json(report).into_response())
}

#[utoipa::path(delete, path = "/api/v1/attachments/{attachment}", tag = "meetings",
    params(("attachment" = String, Path, description = "Attachment id")),
    responses((status = 200, body = EditReportDoc), (status = 401, body = ErrorBody),
               (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn delete_attachment(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(attachment): ApiPath<String>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.delete_source(&principal.owner, SourceRef::Attachment(&attachment))
    })
    .await?;
    Ok(Json(report).into_response())
}

// ---------------------------------------------------------------------------------------------
// Entities and claims.

#[utoipa::path(get, path = "/api/v1/entities", tag = "entities",
    params(PageQuery),
    responses((status = 200, description = "Entities not merged away", body = PageDoc<EntityRowDoc>),
               (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
async fn list_entities(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    let rows = blocking(&state, move |engine| engine.list_entities(&principal.owner)).await?;
    Ok(Json(paginate(rows, &page)?).into_response())
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ShowQuery {
    /// Also list provisional claims (not with valid_at or known_at).
    include_provisional: Option<bool>,
    /// What was true at this instant, by what Lore knows now (RFC 3339 or YYYY-MM-DD).
    valid_at: Option<String>,
    /// What Lore believed at this instant (RFC 3339 or YYYY-MM-DD).
    known_at: Option<String>,
}

/// The current view of an entity: the same JSON as `lore show --json`; with `valid_at` and/or
/// `known_at`, the view at those instants (`lore show --valid-at/--known-at --json`).
#[utoipa::path(get, path = "/api/v1/entities/{entity}", tag = "entities",
    params(("entity" = String, Path, description = "An id, an email, kind:key (project:atlas) or an unambiguous name"), ShowQuery),
    responses((status = 200, body = EntityViewDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn get_entity(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(entity): ApiPath<String>,
    ApiQuery(query): ApiQuery<ShowQuery>,
) -> Result<Response, ApiError> {
    if query.valid_at.is_some() || query.known_at.is_some() {
        if query.include_provisional.is_some() {
            return Err(ApiError::bad_request(
                "include_provisional does not combine with valid_at or known_at",
            ));
        }
        let at = TimeTravel {
            valid_at: parse_instant("valid_at", query.valid_at.as_deref())?,
            known_at: parse_instant("known_at", query.known_at.as_deref())?,
        };
        let view = blocking(&state, move |engine| {
            engine.show_at(&principal.owner, &entity, &at)
        })
        .await?;
        return Ok(Json(view).into_response());
    }
    let options = ShowOptions {
        history: false,
        include_provisional: query.include_provisional.unwrap_or(false),
    };
    let view = blocking(&state, move |engine| {
        engine.show(&principal.owner, &entity, &options)
    })
    .await?;
    Ok(Json(view).into_response())
}

/// Every claim of an entity, superseded and expired included, in evidence order (`lore show --history --json`).
#[utoipa::path(get, path = "/api/v1/entities/{entity}/history", tag = "entities",
    params(("entity" = String, Path, description = "An id, an email, kind:key or an unambiguous name")),
    responses((status = 200, body = EntityViewDoc), (status = 401, body = ErrorBody),
               (status = 404, body = ErrorBody)))]
async fn entity_history(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(entity): ApiPath<String>,
) -> Result<Response, ApiError> {
    let options = ShowOptions {
        history: true,
        include_provisional: true,
    };
    let view = blocking(&state, move |engine| {
        engine.show(&principal.owner, &entity, &options)
    })
    .await?;
    Ok(Json(view).into_response())
}

/// A manual claim. Entities are named as `lore show` accepts them.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewClaim {
    /// The subject entity.
    entity: String,
    /// A predicate from the registry (works_at, has_title, has_deadline, ...).
    predicate: String,
    /// The value, for text predicates.
    value: Option<String>,
    /// The object entity, for predicates that point at one.
    object: Option<String>,
    /// The context entity (a project, for has_role).
    context: Option<String>,
    /// The due date, for deadlines (RFC 3339 or YYYY-MM-DD).
    due_at: Option<String>,
}

impl NewClaim {
    fn into_manual(self) -> Result<ManualClaim, ApiError> {
        let due_at = self
            .due_at
            .as_deref()
            .map(Ts::parse)
            .transpose()
            .map_err(|error| ApiError::bad_request(format!("due_at: {error}")))?;
        Ok(ManualClaim {
            entity: self.entity,
            predicate: self.predicate,
            value: self.value,
            object: self.object,
            context: self.context,
            due_at,
        })
    }
}

/// Adds a manual claim; it holds its slot against extraction (L6).
#[utoipa::path(post, path = "/api/v1/claims", tag = "claims",
    request_body = NewClaim,
    responses((status = 201, body = EditReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody),
               (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
               (status = 422, description = "The body does not match the schema", body = ErrorBody)))]
async fn add_claim(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiJson(claim): ApiJson<NewClaim>,
) -> Result<Response, ApiError> {
    let claim = claim.into_manual()?;
    let report = blocking(&state, move |engine| {
        engine.add_manual_claim(&principal.owner, &claim)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(report)).into_response())
}

/// Sets a single-valued attribute by hand, replacing the current value.
#[utoipa::path(post, path = "/api/v1/claims/override", tag = "claims",
    request_body = NewClaim,
    responses((status = 201, body = EditReportDoc), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
               (status = 404, body = ErrorBody),
               (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
               (status = 422, description = "The body does not match the schema", body = ErrorBody)))]
async fn override_claim(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiJson(claim): ApiJson<NewClaim>,
) -> Result<Response, ApiError> {
    let claim = claim.into_manual()?;
    let report = blocking(&state, move |engine| {
        engine.override_claim(&principal.owner, &claim)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(report)).into_response())
}

/// Retracts a claim; it stays retracted when extraction finds it again (L12).
#[utoipa::path(post, path = "/api/v1/claims/{claim}/retract", tag = "claims",
    params(("claim" = String, Path, description = "Claim id")),
    responses((status = 200, body = EditReportDoc), (status = 401, body = ErrorBody),
               (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
               (status = 409, body = ErrorBody)))]
async fn retract_claim(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(claim): ApiPath<String>,
) -> Result<Response, ApiError> {
    let report = blocking(&state, move |engine| {
        engine.retract_claim(&principal.owner, &claim)
    })
    .await?;
    Ok(Json(report).into_response())
}

// ---------------------------------------------------------------------------------------------
// Review queue and owner-wide lists.

#[utoipa::path(get, path = "/api/v1/suggestions", tag = "review",
    params(PageQuery),
    responses((status = 200, body = PageDoc<SuggestionDoc>), (status = 400, body = ErrorBody),
               (status = 401, body = ErrorBody)))]
async fn list_suggestions(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    let suggestions = blocking(&state, move |engine| {
        engine.list_suggestions(&principal.owner)
    })
    .await?;
    let rows: Vec<SuggestionRow> = suggestions
        .into_iter()
        .map(|s| SuggestionRow {
            id: s.id,
            kind: serde_json::to_value(s.kind).unwrap_or_default(),
            status: serde_json::to_value(s.status).unwrap_or_default(),
            target: s.target,
            secondary: s.secondary,
            payload: s.payload,
            created_at: s.created_at,
        })
        .collect();
    Ok(Json(paginate(rows, &page)?).into_response())
}

/// The `suggestions --json` row shape.
#[derive(Serialize)]
struct SuggestionRow {
    id: String,
    #[serde(rename = "type")]
    kind: serde_json::Value,
    status: serde_json::Value,
    target: String,
    secondary: Option<String>,
    payload: serde_json::Value,
    created_at: Ts,
}

#[utoipa::path(get, path = "/api/v1/deadlines", tag = "review",
    params(PageQuery),
    responses((status = 200, description = "Commitments in force, soonest first (L10)", body = PageDoc<DeadlineDoc>),
               (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
async fn list_deadlines(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    let rows = blocking(&state, move |engine| {
        engine.deadlines(&principal.owner, &lore_engine::DEADLINES_IN_FORCE)
    })
    .await?;
    Ok(Json(paginate(rows, &page)?).into_response())
}

#[utoipa::path(get, path = "/api/v1/tasks", tag = "review",
    params(PageQuery),
    responses((status = 200, description = "Tasks, open ones first", body = PageDoc<TaskDoc>),
               (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
async fn list_tasks(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    let rows = blocking(&state, move |engine| {
        engine.tasks(&principal.owner, None, None)
    })
    .await?;
    Ok(Json(paginate(rows, &page)?).into_response())
}
