//! Typed reads from untyped JSON that record a `FieldError` for every problem instead of stopping at the first.

use lore_core::Ts;
use serde_json::{Map, Value};

use crate::error::FieldError;

pub(crate) type Object = Map<String, Value>;

/// The path of `key` inside the object at `path`.
pub(crate) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The path of element `index` of the array at `path`.
pub(crate) fn item(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// A present, non-null field. JSON `null` reads as absent so that exporters that write nulls are accepted.
pub(crate) fn field<'v>(map: &'v Object, key: &str) -> Option<&'v Value> {
    map.get(key).filter(|value| !value.is_null())
}

/// Collects problems while a bundle is read.
#[derive(Default)]
pub(crate) struct Reader {
    pub(crate) errors: Vec<FieldError>,
}

impl Reader {
    pub(crate) fn fail(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(FieldError::new(path, message));
    }

    /// The object at `path`, after reporting each key that is not in `allowed`.
    pub(crate) fn object<'v>(
        &mut self,
        value: &'v Value,
        path: &str,
        allowed: &[&str],
    ) -> Option<&'v Object> {
        let Some(map) = value.as_object() else {
            self.fail(path, "expected an object");
            return None;
        };
        self.unknown_fields(map, path, allowed);
        Some(map)
    }

    pub(crate) fn unknown_fields(&mut self, map: &Object, path: &str, allowed: &[&str]) {
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                self.unknown_field(path, key, allowed);
            }
        }
    }

    pub(crate) fn unknown_field(&mut self, path: &str, key: &str, allowed: &[&str]) {
        let message = match closest(key, allowed) {
            Some(suggestion) => format!("unknown field '{key}' (did you mean '{suggestion}'?)"),
            None => format!("unknown field '{key}'"),
        };
        self.fail(path, message);
    }

    fn string_value<'v>(&mut self, map: &'v Object, path: &str, key: &str) -> Option<&'v str> {
        let value = field(map, key)?;
        match value.as_str() {
            Some(text) => Some(text),
            None => {
                self.fail(child(path, key), "expected a string");
                None
            }
        }
    }

    /// A trimmed string; blank reads as absent.
    pub(crate) fn optional_string(
        &mut self,
        map: &Object,
        path: &str,
        key: &str,
    ) -> Option<String> {
        let text = self.string_value(map, path, key)?.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    /// A trimmed, non-empty string.
    pub(crate) fn required_string(
        &mut self,
        map: &Object,
        path: &str,
        key: &str,
    ) -> Option<String> {
        if field(map, key).is_none() {
            self.fail(child(path, key), "missing required field");
            return None;
        }
        let text = self.string_value(map, path, key)?.trim();
        if text.is_empty() {
            self.fail(child(path, key), "must not be empty");
            return None;
        }
        Some(text.to_string())
    }

    /// A string kept exactly as written (may be empty).
    pub(crate) fn required_raw_string(
        &mut self,
        map: &Object,
        path: &str,
        key: &str,
    ) -> Option<String> {
        if field(map, key).is_none() {
            self.fail(child(path, key), "missing required field");
            return None;
        }
        self.string_value(map, path, key).map(str::to_string)
    }

    pub(crate) fn optional_time(&mut self, map: &Object, path: &str, key: &str) -> Option<Ts> {
        let text = self.string_value(map, path, key)?;
        match Ts::parse(text) {
            Ok(ts) => Some(ts),
            Err(error) => {
                self.fail(child(path, key), error.to_string());
                None
            }
        }
    }

    pub(crate) fn required_time(&mut self, map: &Object, path: &str, key: &str) -> Option<Ts> {
        if field(map, key).is_none() {
            self.fail(child(path, key), "missing required field");
            return None;
        }
        self.optional_time(map, path, key)
    }

    /// An integer; whole numbers written with a fraction (`4200.0`) are accepted.
    pub(crate) fn optional_integer(&mut self, map: &Object, path: &str, key: &str) -> Option<i64> {
        let value = field(map, key)?;
        if let Some(integer) = value.as_i64() {
            return Some(integer);
        }
        match value.as_f64() {
            Some(float) if float.fract() == 0.0 && float.abs() < 9.0e15 => Some(float as i64),
            _ => {
                self.fail(child(path, key), "expected an integer");
                None
            }
        }
    }

    pub(crate) fn optional_number(&mut self, map: &Object, path: &str, key: &str) -> Option<f64> {
        let value = field(map, key)?;
        match value.as_f64() {
            Some(number) => Some(number),
            None => {
                self.fail(child(path, key), "expected a number");
                None
            }
        }
    }

    pub(crate) fn optional_bool(&mut self, map: &Object, path: &str, key: &str) -> Option<bool> {
        let value = field(map, key)?;
        match value.as_bool() {
            Some(flag) => Some(flag),
            None => {
                self.fail(child(path, key), "expected true or false");
                None
            }
        }
    }

    /// The elements of an optional array; empty when absent or not an array (the latter reported).
    pub(crate) fn optional_array<'v>(
        &mut self,
        map: &'v Object,
        path: &str,
        key: &str,
    ) -> &'v [Value] {
        match field(map, key) {
            None => &[],
            Some(Value::Array(items)) => items,
            Some(_) => {
                self.fail(child(path, key), "expected an array");
                &[]
            }
        }
    }

    /// One of a closed set of names (`what` names the set in the message, e.g. "attribution").
    pub(crate) fn optional_enum<T>(
        &mut self,
        map: &Object,
        path: &str,
        key: &str,
        what: &str,
        parse: fn(&str) -> Option<T>,
        names: fn() -> String,
    ) -> Option<T> {
        let text = self.optional_string(map, path, key)?;
        let parsed = parse(&text);
        if parsed.is_none() {
            self.fail(
                child(path, key),
                format!("unknown {what} '{text}'; expected one of: {}", names()),
            );
        }
        parsed
    }
}

/// The allowed name closest to a misspelt one, if it is close enough to be a likely typo.
fn closest<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let key = key.to_lowercase();
    allowed
        .iter()
        .map(|candidate| (edit_distance(&key, candidate), *candidate))
        .filter(|(distance, candidate)| *distance > 0 && *distance <= 2 && candidate.len() > 3)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
        .or_else(|| allowed.iter().copied().find(|candidate| *candidate == key))
}

fn edit_distance(left: &str, right: &str) -> usize {
    let right: Vec<char> = right.chars().collect();
    let mut previous: Vec<usize> = (0..=right.len()).collect();
    for (row, left_char) in left.chars().enumerate() {
        let mut current = vec![row + 1; right.len() + 1];
        for (column, right_char) in right.iter().enumerate() {
            let substitution = previous[column] + usize::from(left_char != *right_char);
            current[column + 1] = substitution
                .min(previous[column + 1] + 1)
                .min(current[column] + 1);
        }
        previous = current;
    }
    previous[right.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_a_suggestion() {
        assert_eq!(closest("titel", &["title", "external_id"]), Some("title"));
        assert_eq!(closest("Title", &["title"]), Some("title"));
        assert_eq!(closest("foo", &["title", "external_id"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
