//! Request tracing and Prometheus metrics: request counts and latency per route and status, and
//! ingest counts, rendered in the Prometheus text format at `/metrics`.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::AppState;

/// Upper bounds (seconds) of the latency histogram buckets.
const BUCKETS: [f64; 8] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0];

#[derive(Default)]
struct Series {
    count: u64,
    sum_seconds: f64,
    buckets: [u64; BUCKETS.len()],
}

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), Series>>,
    ingests: Mutex<BTreeMap<String, u64>>,
}

impl Metrics {
    fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        let series = requests
            .entry((method.to_string(), route.to_string(), status))
            .or_default();
        series.count += 1;
        series.sum_seconds += seconds;
        for (index, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                series.buckets[index] += 1;
            }
        }
    }

    /// Counts one ingest by outcome (`created`, `replaced`, `unchanged`, `failed`).
    pub fn count_ingest(&self, outcome: &str) {
        *self
            .ingests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(outcome.to_string())
            .or_default() += 1;
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP lore_http_requests_total HTTP requests by method, route and status.\n",
        );
        out.push_str("# TYPE lore_http_requests_total counter\n");
        let requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        for ((method, route, status), series) in requests.iter() {
            out.push_str(&format!(
                "lore_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {}\n",
                series.count
            ));
        }
        out.push_str("# HELP lore_http_request_duration_seconds HTTP request latency.\n");
        out.push_str("# TYPE lore_http_request_duration_seconds histogram\n");
        let mut by_route: BTreeMap<(&str, &str), Series> = BTreeMap::new();
        for ((method, route, _), series) in requests.iter() {
            let total = by_route.entry((method, route)).or_default();
            total.count += series.count;
            total.sum_seconds += series.sum_seconds;
            for (index, value) in series.buckets.iter().enumerate() {
                total.buckets[index] += value;
            }
        }
        for ((method, route), series) in by_route {
            let labels = format!("method=\"{method}\",route=\"{route}\"");
            for (index, bound) in BUCKETS.iter().enumerate() {
                out.push_str(&format!(
                    "lore_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {}\n",
                    series.buckets[index]
                ));
            }
            out.push_str(&format!(
                "lore_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}\n",
                series.count
            ));
            out.push_str(&format!(
                "lore_http_request_duration_seconds_sum{{{labels}}} {}\n",
                series.sum_seconds
            ));
            out.push_str(&format!(
                "lore_http_request_duration_seconds_count{{{labels}}} {}\n",
                series.count
            ));
        }
        out.push_str("# HELP lore_ingests_total Meeting bundles ingested, by outcome.\n");
        out.push_str("# TYPE lore_ingests_total counter\n");
        for (outcome, count) in self
            .ingests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            out.push_str(&format!(
                "lore_ingests_total{{outcome=\"{outcome}\"}} {count}\n"
            ));
        }
        out
    }
}

/// Logs one line per request (method, route template, status, latency) and records its metrics. The
/// route template, not the raw path, is logged and counted: ids and query strings stay out of logs
/// and metric labels.
pub async fn trace_requests(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_string())
        .unwrap_or_else(|| {
            if request.uri().path().starts_with("/mcp") {
                "/mcp".to_string()
            } else {
                "unmatched".to_string()
            }
        });
    let response = next.run(request).await;
    let elapsed = started.elapsed().as_secs_f64();
    let status = response.status().as_u16();
    tracing::info!(%method, %route, status, elapsed_ms = (elapsed * 1000.0).round() as u64, "request");
    state.metrics.observe(&method, &route, status, elapsed);
    response
}
