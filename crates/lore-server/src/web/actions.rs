//! The workspace's forms (POST). Each checks the session's CSRF token, calls one engine method, leaves
//! a flash message and redirects (303) to the page the form was on. An id in the path that is not
//! this owner's is a 404 page, and nothing changes (L20).

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::Response;
use lore_core::Ts;
use lore_engine::{Engine, EngineResult, ManualClaim, SourceRef, SplitSelection};
use serde::Deserialize;

use super::pages::{predicate_label, signin_form};
use super::{clear_cookie, is_id, run, see_other, set_cookie, WebError, WebForm, WebUser};
use crate::AppState;

/// Every form's fields; each form uses some of them.
#[derive(Deserialize, Default)]
pub struct FormFields {
    #[serde(default)]
    csrf: String,
    predicate: Option<String>,
    value: Option<String>,
    object: Option<String>,
    context: Option<String>,
    due_at: Option<String>,
    claim: Option<String>,
    other: Option<String>,
    meeting: Option<String>,
    evidence: Option<String>,
    pinned: Option<String>,
    name: Option<String>,
    clear: Option<String>,
    back: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

fn field(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// Runs an edit and redirects to `back` with its message; a refused edit (bad input, conflict, a
/// named entity that does not exist) is a flash error on the same page. With `strict`, "not found"
/// is a 404 page instead (the path named something that is not this owner's).
async fn act<T: Send + 'static>(
    state: &AppState,
    user: &WebUser,
    back: &str,
    strict: bool,
    work: impl FnOnce(&Engine) -> EngineResult<T> + Send + 'static,
    message: impl FnOnce(&T) -> String,
) -> Result<Response, WebError> {
    match run(state, work).await {
        Ok(value) => {
            user.flash(state, message(&value), false);
            Ok(see_other(back))
        }
        Err(error) if strict && error.status == StatusCode::NOT_FOUND => Err(error),
        Err(error) if error.status.is_client_error() => {
            user.flash(state, format!("Not done: {}", error.message), true);
            Ok(see_other(back))
        }
        Err(error) => Err(error),
    }
}

/// 404 unless `id` is an entity id of this owner.
async fn ensure_entity(state: &AppState, user: &WebUser, id: &str) -> Result<(), WebError> {
    if !is_id(id, "e_") {
        return Err(WebError::not_found("entity with this id"));
    }
    let owner = user.owner.clone();
    let id = id.to_string();
    run(state, move |engine| engine.projection(&owner, &id)).await?;
    Ok(())
}

/// A predicate as typed or chosen: a registry name, or its label (`title` for `has_title`).
fn predicate_name(engine: &Engine, text: &str) -> String {
    let text = text.trim();
    if engine.registry().get(text).is_some() {
        return text.to_string();
    }
    let prefixed = format!("has_{text}");
    if engine.registry().get(&prefixed).is_some() {
        return prefixed;
    }
    text.to_string()
}

fn manual_claim(engine: &Engine, entity: &str, form: &FormFields) -> EngineResult<ManualClaim> {
    let due_at = field(&form.due_at)
        .map(|due| {
            Ts::parse(&due).map_err(|error| {
                lore_engine::EngineError::Invalid(format!("due date '{due}': {error}"))
            })
        })
        .transpose()?;
    Ok(ManualClaim {
        entity: entity.to_string(),
        predicate: predicate_name(engine, &field(&form.predicate).unwrap_or_default()),
        value: field(&form.value),
        object: field(&form.object),
        context: field(&form.context),
        due_at,
    })
}

// ---------------------------------------------------------------------------------------------
// Sign-in and out.

/// `POST /signin`: user name and password (hosted mode).
pub async fn signin_password(
    State(state): State<AppState>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    let username = field(&form.username).unwrap_or_default();
    let password = form.password.clone().unwrap_or_default();
    if state.sessions.signin_locked(&username) {
        return Ok(signin_form(
            StatusCode::TOO_MANY_REQUESTS,
            Some("Too many failed sign-ins for this user. Wait 15 minutes and try again."),
        ));
    }
    let name = username.clone();
    let owner = run(&state, move |engine| {
        engine.verify_user_password(&name, &password)
    })
    .await?;
    match owner {
        Some(owner) => {
            state.sessions.signin_succeeded(&username);
            let cookie = super::start_session(&state, owner).await?;
            let mut response = see_other("/");
            response
                .headers_mut()
                .insert(header::SET_COOKIE, set_cookie(&cookie));
            Ok(response)
        }
        None => {
            state.sessions.signin_failed(&username);
            Ok(signin_form(
                StatusCode::UNAUTHORIZED,
                Some("Wrong user name or password."),
            ))
        }
    }
}

pub async fn signout(
    State(state): State<AppState>,
    user: WebUser,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    state.sessions.take_flash(&user.cookie);
    let cookie = user.cookie.clone();
    run(&state, move |engine| engine.end_web_session(&cookie)).await?;
    let mut response = see_other("/signin");
    response
        .headers_mut()
        .insert(header::SET_COOKIE, clear_cookie());
    Ok(response)
}

// ---------------------------------------------------------------------------------------------
// Entity edits.

pub async fn add_claim(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    ensure_entity(&state, &user, &id).await?;
    let owner = user.owner.clone();
    let entity = id.clone();
    act(
        &state,
        &user,
        &format!("/entities/{id}"),
        false,
        move |engine| {
            let claim = manual_claim(engine, &entity, &form)?;
            engine.add_manual_claim(&owner, &claim)
        },
        |_| "Claim added.".to_string(),
    )
    .await
}

pub async fn override_value(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    ensure_entity(&state, &user, &id).await?;
    let owner = user.owner.clone();
    let entity = id.clone();
    let label = predicate_label(&field(&form.predicate).unwrap_or_default());
    act(
        &state,
        &user,
        &format!("/entities/{id}"),
        false,
        move |engine| {
            let claim = manual_claim(engine, &entity, &form)?;
            engine.override_claim(&owner, &claim)
        },
        move |_| format!("Saved: {label} is now set by hand."),
    )
    .await
}

pub async fn retract(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    ensure_entity(&state, &user, &id).await?;
    let claim = field(&form.claim)
        .ok_or_else(|| WebError::new(StatusCode::BAD_REQUEST, "Choose the claim to retract."))?;
    let owner = user.owner.clone();
    let entity = id.clone();
    let checked = claim.clone();
    let inspection = run(&state, move |engine| engine.inspect_claim(&owner, &checked)).await?;
    if inspection.subject.id != entity {
        return Err(WebError::not_found("claim of this entity"));
    }
    let owner = user.owner.clone();
    act(
        &state,
        &user,
        &format!("/entities/{id}"),
        true,
        move |engine| engine.retract_claim(&owner, &claim),
        |_| "Claim retracted: it stays out even if a meeting says it again.".to_string(),
    )
    .await
}

pub async fn merge(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    ensure_entity(&state, &user, &id).await?;
    let other = field(&form.other)
        .ok_or_else(|| WebError::new(StatusCode::BAD_REQUEST, "Name the entity to merge."))?;
    let owner = user.owner.clone();
    let survivor = id.clone();
    act(
        &state,
        &user,
        &format!("/entities/{id}"),
        false,
        move |engine| engine.merge_entities(&owner, &survivor, &other),
        |report| {
            format!(
                "Merged: {} claims moved here. Undo it under Recent changes.",
                report.claims_moved
            )
        },
    )
    .await
}

pub async fn split(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    ensure_entity(&state, &user, &id).await?;
    let selection = match (field(&form.meeting), field(&form.evidence)) {
        (Some(meeting), _) => SplitSelection::Meetings(vec![meeting]),
        (None, Some(evidence)) => SplitSelection::Evidence(vec![evidence]),
        (None, None) => {
            return Err(WebError::new(
                StatusCode::BAD_REQUEST,
                "Choose a meeting or evidence to split off.",
            ))
        }
    };
    let owner = user.owner.clone();
    let entity = id.clone();
    act(
        &state,
        &user,
        &format!("/entities/{id}"),
        false,
        move |engine| engine.split_entity(&owner, &entity, &selection),
        |report| {
            format!(
                "Split: {} claims moved to a new entity ({}).",
                report.claims_moved,
                report.other.clone().unwrap_or_default()
            )
        },
    )
    .await
}

pub async fn pin(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    ensure_entity(&state, &user, &id).await?;
    let pinned = form.pinned.as_deref() != Some("false");
    let owner = user.owner.clone();
    let entity = id.clone();
    act(
        &state,
        &user,
        &format!("/entities/{id}"),
        true,
        move |engine| engine.set_pinned(&owner, &entity, pinned),
        move |_| {
            if pinned {
                "Pinned to the home page.".to_string()
            } else {
                "Unpinned.".to_string()
            }
        },
    )
    .await
}

/// Names the entity by hand, or (`clear`) goes back to the name its sources give it.
pub async fn rename(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    ensure_entity(&state, &user, &id).await?;
    let name = match form.clear.as_deref() == Some("true") {
        true => None,
        false => Some(form.name.clone().unwrap_or_default()),
    };
    let owner = user.owner.clone();
    let entity = id.clone();
    let cleared = name.is_none();
    act(
        &state,
        &user,
        &format!("/entities/{id}"),
        true,
        move |engine| engine.set_manual_name(&owner, &entity, name.as_deref()),
        move |_| match cleared {
            true => "The name from the sources is shown again.".to_string(),
            false => "Renamed.".to_string(),
        },
    )
    .await
}

pub async fn undo(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    if !is_id(&id, "r_") {
        return Err(WebError::not_found("revision with this id"));
    }
    let back = match field(&form.back) {
        Some(entity) if is_id(&entity, "e_") => format!("/entities/{entity}"),
        _ => "/".to_string(),
    };
    let owner = user.owner.clone();
    act(
        &state,
        &user,
        &back,
        true,
        move |engine| engine.undo(&owner, &id),
        |_| "Undone.".to_string(),
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// Meetings and the review queue.

pub async fn delete_meeting(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    if !is_id(&id, "m_") {
        return Err(WebError::not_found("meeting with this id"));
    }
    let owner = user.owner.clone();
    let meeting = id.clone();
    let title = {
        let owner = owner.clone();
        let meeting = meeting.clone();
        run(&state, move |engine| engine.get_meeting(&owner, &meeting))
            .await?
            .title
    };
    act(
        &state,
        &user,
        "/",
        true,
        move |engine| engine.delete_source(&owner, SourceRef::Meeting(&meeting)),
        move |report| {
            format!(
                "Deleted “{title}”: {} claims removed or re-evaluated.",
                report.deleted.len()
            )
        },
    )
    .await
}

pub async fn accept(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    let owner = user.owner.clone();
    act(
        &state,
        &user,
        "/review",
        true,
        move |engine| engine.accept_suggestion(&owner, &id),
        |_| "Accepted.".to_string(),
    )
    .await
}

pub async fn reject(
    State(state): State<AppState>,
    user: WebUser,
    Path(id): Path<String>,
    WebForm(form): WebForm<FormFields>,
) -> Result<Response, WebError> {
    user.check_csrf(&form.csrf)?;
    let owner = user.owner.clone();
    act(
        &state,
        &user,
        "/review",
        true,
        move |engine| engine.reject_suggestion(&owner, &id),
        |_| "Rejected.".to_string(),
    )
    .await
}
