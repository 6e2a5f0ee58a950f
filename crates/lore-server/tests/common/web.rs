//! A browser stand-in for the web workspace tests: keeps the session cookie, reads CSRF tokens from
//! pages, and posts forms (application/x-www-form-urlencoded) through the router.

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use tower::ServiceExt;

use super::Fixture;

pub struct Page {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Page {
    pub fn location(&self) -> &str {
        self.headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The CSRF token the page's forms carry.
    pub fn csrf(&self) -> String {
        let marker = "name=\"csrf\" value=\"";
        let start = self
            .body
            .find(marker)
            .unwrap_or_else(|| panic!("no csrf field in:\n{}", self.body))
            + marker.len();
        self.body[start..].split('"').next().unwrap().to_string()
    }

    /// The flash message (`role="status"`) of the page, if any.
    pub fn flash(&self) -> Option<String> {
        let start = self.body.find("role=\"status\">")? + "role=\"status\">".len();
        Some(self.body[start..].split('<').next()?.to_string())
    }
}

/// Percent-encodes a form value.
pub fn encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// A browser with (or without) a session cookie.
pub struct Browser {
    pub router: Router,
    pub cookie: Option<String>,
}

impl Browser {
    pub fn anonymous(fixture: &Fixture) -> Browser {
        Browser {
            router: fixture.router.clone(),
            cookie: None,
        }
    }

    /// Signs in as `owner` through a one-time link.
    pub async fn signed_in(fixture: &Fixture, owner: &str) -> Browser {
        let mut browser = Browser::anonymous(fixture);
        let secret = fixture.sessions.create_signin_secret(owner);
        let page = browser.get(&format!("/signin?token={secret}")).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        browser.take_cookie(&page);
        assert!(browser.cookie.is_some(), "a session cookie is set");
        browser
    }

    pub fn take_cookie(&mut self, page: &Page) {
        if let Some(value) = page.headers.get("set-cookie").and_then(|v| v.to_str().ok()) {
            let pair = value.split(';').next().unwrap().to_string();
            self.cookie = Some(pair);
        }
    }

    async fn send(&self, request: axum::http::request::Builder, body: Body) -> Page {
        let mut request = request.header("host", "127.0.0.1:7700");
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        let response = self
            .router
            .clone()
            .oneshot(request.body(body).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), 64 * 1024 * 1024)
            .await
            .unwrap();
        Page {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn get(&self, uri: &str) -> Page {
        self.send(Request::builder().method("GET").uri(uri), Body::empty())
            .await
    }

    /// Posts a form with these fields.
    pub async fn post(&self, uri: &str, fields: &[(&str, &str)]) -> Page {
        let body = fields
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.send(
            Request::builder()
                .method("POST")
                .uri(uri)
                // As a browser sends it on a same-origin form post.
                .header("origin", "http://127.0.0.1:7700")
                .header("content-type", "application/x-www-form-urlencoded"),
            Body::from(body),
        )
        .await
    }

    /// Follows a 303 with a GET.
    pub async fn follow(&self, page: &Page) -> Page {
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        self.get(page.location()).await
    }
}
