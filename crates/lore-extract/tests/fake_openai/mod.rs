//! A tiny OpenAI-compatible chat-completions server for tests: real HTTP over a loopback socket, one
//! canned reply per request, every request body recorded.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// What the server does with one request.
pub enum Canned {
    /// Answers with this status, extra headers and body.
    Reply {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Reads the request, then says nothing for this long and hangs up (the client times out first).
    Hang(Duration),
}

impl Canned {
    /// A successful chat completion whose message content is `content`.
    pub fn completion(content: &str) -> Canned {
        Canned::Reply {
            status: 200,
            headers: Vec::new(),
            body: json!({"id": "chatcmpl-test", "object": "chat.completion",
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}})
            .to_string(),
        }
    }

    /// A completion whose content is this JSON value.
    pub fn candidates(value: Value) -> Canned {
        Canned::completion(&value.to_string())
    }

    pub fn status(status: u16, body: &str) -> Canned {
        Canned::Reply {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    pub fn too_many_requests() -> Canned {
        Canned::Reply {
            status: 429,
            headers: vec![("Retry-After".into(), "0".into())],
            body: json!({"error": {"message": "rate limited"}}).to_string(),
        }
    }
}

pub struct FakeServer {
    /// `http://127.0.0.1:PORT/v1`
    pub base_url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl FakeServer {
    /// Starts serving `replies` in order, one per connection.
    pub fn start(replies: Vec<Canned>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("local addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        std::thread::spawn(move || {
            for canned in replies {
                let Ok((mut stream, _)) = listener.accept() else {
                    return;
                };
                let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
                let mut content_length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(value) = lower.strip_prefix("content-length:") {
                        content_length = value.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" || line == "\n" {
                        break;
                    }
                }
                let mut body = vec![0u8; content_length];
                let _ = reader.read_exact(&mut body);
                let parsed = serde_json::from_slice(&body).unwrap_or(Value::Null);
                recorded.lock().unwrap().push(parsed);
                match canned {
                    Canned::Hang(duration) => {
                        std::thread::sleep(duration);
                    }
                    Canned::Reply {
                        status,
                        headers,
                        body,
                    } => {
                        let mut response = format!(
                            "HTTP/1.1 {status} Canned\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                            body.len()
                        );
                        for (name, value) in headers {
                            response.push_str(&format!("{name}: {value}\r\n"));
                        }
                        response.push_str("\r\n");
                        response.push_str(&body);
                        let _ = stream.write_all(response.as_bytes());
                        let _ = stream.flush();
                    }
                }
            }
        });
        FakeServer {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests,
        }
    }

    /// Every request body received so far, parsed as JSON.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}
