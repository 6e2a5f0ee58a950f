//! REST routes over the reads the web workspace added to the engine: an entity's recent revisions
//! (what `undo` can take back) and the dry run of deleting a meeting (L13). Registered by
//! `rest::router`, so they are documented and enumerated by the isolation suite with the rest.

use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use lore_engine::Principal;
use serde::Deserialize;
use serde_json::json;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiError, ErrorBody};
use crate::rest::{blocking, ApiPath, ApiQuery};
use crate::AppState;

/// Most revisions one request lists.
const MAX_REVISIONS: usize = 200;

/// The routes of this module, added to the REST router.
pub fn add_routes(router: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    router
        .routes(routes!(entity_revisions))
        .routes(routes!(meeting_delete_preview))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RevisionsQuery {
    /// How many revisions, newest first (1 to 200, default 20).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<usize>,
}

/// The newest revisions that changed this entity, each with whether `undo` can take it back.
#[utoipa::path(get, path = "/api/v1/entities/{entity}/revisions", tag = "review",
    params(("entity" = String, Path, description = "An id, an email, kind:key or an unambiguous name"), RevisionsQuery),
    responses((status = 200, description = "`{\"items\": [{id, action, target, secondary, created_at, undoable, summary}]}`"),
               (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
               (status = 404, body = ErrorBody)))]
pub async fn entity_revisions(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(entity): ApiPath<String>,
    ApiQuery(query): ApiQuery<RevisionsQuery>,
) -> Result<Response, ApiError> {
    let limit = query.limit.unwrap_or(20);
    if !(1..=MAX_REVISIONS).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit must be between 1 and {MAX_REVISIONS}"
        )));
    }
    let items = blocking(&state, move |engine| {
        engine.entity_revisions(&principal.owner, &entity, limit)
    })
    .await?;
    Ok(Json(json!({ "items": items })).into_response())
}

/// What deleting this meeting would remove or change (a dry run of the L13 cascade; nothing is written).
#[utoipa::path(get, path = "/api/v1/meetings/{meeting}/delete-preview", tag = "meetings",
    params(("meeting" = String, Path, description = "Meeting id or external id")),
    responses((status = 200, description = "`{\"items\": [{table, id, change, label}]}`"),
               (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn meeting_delete_preview(
    axum::extract::State(state): axum::extract::State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiPath(meeting): ApiPath<String>,
) -> Result<Response, ApiError> {
    let items = blocking(&state, move |engine| {
        engine.preview_delete_meeting(&principal.owner, &meeting)
    })
    .await?;
    Ok(Json(json!({ "items": items })).into_response())
}
