//! The one HTTP error type: `{"error": {"code", "message"}}` with the right status. Client errors
//! carry their message; server errors are logged and answered with a generic body, so no internal
//! detail (paths, SQL, another owner's data) reaches a client.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use lore_engine::EngineError;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Sent as `WWW-Authenticate` (401 and scope 403s).
    pub challenge: Option<String>,
}

/// The body of every error response.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable machine-readable code: `bad_request`, `unauthorized`, `forbidden`, `not_found`, ...
    pub code: String,
    /// A readable explanation.
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            challenge: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn forbidden(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, code, message)
    }

    /// A failure of the system: logged here with its detail, answered generically.
    pub fn internal(detail: impl std::fmt::Display) -> ApiError {
        tracing::error!(error = %detail, "request failed");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the server log has the details",
        )
    }

    pub fn with_challenge(mut self, challenge: String) -> ApiError {
        self.challenge = Some(challenge);
        self
    }
}

/// The error code for a status axum chose (body limits, content types, malformed input).
pub fn code_for(status: StatusCode) -> &'static str {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::UNAUTHORIZED => "unauthorized",
        StatusCode::FORBIDDEN => "forbidden",
        status if status.is_server_error() => "internal",
        _ => "bad_request",
    }
}

/// Turns error responses that carry no JSON body (a 405 from the router, say) into the JSON error
/// shape, so that every error of the API reads the same. MCP answers keep their own protocol.
pub async fn json_errors(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let is_mcp = request.uri().path().starts_with("/mcp");
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/html"));
    if is_mcp || is_json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => "this route does not accept that method".to_string(),
        status if status.is_server_error() => "internal error".to_string(),
        status => status
            .canonical_reason()
            .unwrap_or("request refused")
            .to_lowercase(),
    };
    let mut replaced = ApiError::new(status, code_for(status), message).into_response();
    for name in [header::ALLOW, header::WWW_AUTHENTICATE] {
        if let Some(value) = response.headers().get(&name) {
            replaced.headers_mut().insert(name, value.clone());
        }
    }
    replaced
}

impl From<EngineError> for ApiError {
    fn from(error: EngineError) -> ApiError {
        match error {
            EngineError::NotFound(message) => ApiError::not_found(message),
            EngineError::Invalid(message) => ApiError::bad_request(message),
            EngineError::Conflict(message) => {
                ApiError::new(StatusCode::CONFLICT, "conflict", message)
            }
            other => ApiError::internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
            },
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(challenge) = self.challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(error: ApiError) -> (StatusCode, String) {
        let response = error.into_response();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn server_errors_never_carry_their_detail() {
        for error in [
            EngineError::Internal("cannot store blob /srv/secret/path".into()),
            EngineError::Store(lore_store::StoreError::Backend(
                "near \"SELECT owner\": syntax error".into(),
            )),
        ] {
            let (status, body) = body_of(ApiError::from(error)).await;
            assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
            assert_eq!(
                body,
                r#"{"error":{"code":"internal","message":"internal error; the server log has the details"}}"#
            );
        }
    }

    #[tokio::test]
    async fn client_errors_keep_their_message_and_status() {
        let cases = [
            (
                EngineError::NotFound("no claim with id 'c_1'".into()),
                404,
                "not_found",
            ),
            (
                EngineError::Invalid("unknown predicate 'x'".into()),
                400,
                "bad_request",
            ),
            (
                EngineError::Conflict("claim c_1 is already retracted".into()),
                409,
                "conflict",
            ),
        ];
        for (error, status, code) in cases {
            let message = error.to_string();
            let (got, body) = body_of(ApiError::from(error)).await;
            assert_eq!(got.as_u16(), status);
            let body: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(body["error"]["code"], code);
            assert_eq!(body["error"]["message"], message);
        }
    }
}
