//! Canonical JSON (keys sorted recursively, compact) and its hash, so that formatting never changes a content hash.

use std::fmt::Write as _;

use lore_core::ids::sha256_hex;
use serde_json::Value;

/// SHA-256 hex of the canonical form of `value`: object keys sorted at every level, no insignificant white space.
pub fn canonical_json_hash(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    sha256_hex(out.as_bytes())
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|left, right| left.0.cmp(right.0));
            out.push('{');
            for (position, (key, item)) in entries.into_iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::String(text) => write_string(text, out),
        Value::Number(number) => {
            let _ = write!(out, "{number}");
        }
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
    }
}

fn write_string(text: &str, out: &mut String) {
    // Serializing a plain string cannot fail; the fallback keeps this total anyway.
    match serde_json::to_string(text) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash_of(text: &str) -> String {
        let value: Value = serde_json::from_str(text).expect("test json is valid");
        canonical_json_hash(&value)
    }

    #[test]
    fn key_order_and_white_space_do_not_matter() {
        assert_eq!(
            hash_of(r#"{"b": 1, "a": {"y": [1, 2], "x": "é"}}"#),
            hash_of(r#"{"a":{"x":"é","y":[1,2]},"b":1}"#)
        );
    }

    #[test]
    fn values_and_array_order_do() {
        assert_ne!(hash_of(r#"{"a": [1, 2]}"#), hash_of(r#"{"a": [2, 1]}"#));
        assert_ne!(hash_of(r#"{"a": "1"}"#), hash_of(r#"{"a": 1}"#));
    }

    #[test]
    fn canonical_form_is_compact_and_sorted() {
        let value: Value =
            serde_json::from_str(r#"{"b": [true, null], "a": "q\""}"#).expect("test json is valid");
        let mut out = String::new();
        write_canonical(&value, &mut out);
        assert_eq!(out, r#"{"a":"q\"","b":[true,null]}"#);
    }
}
