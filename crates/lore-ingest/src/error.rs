//! Validation problems, each tied to the JSON path of the value that caused it.

use std::fmt;

use serde::Serialize;

/// One problem with one value of a bundle, e.g. `claims[3].evidence.segment_ids[0]: unknown segment 's9'`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// JSON path such as `segments[4].id`; empty for the document as a whole.
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for FieldError {}

/// Every problem found in one bundle, in document order. A bundle with any problem is rejected whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BundleErrors(pub Vec<FieldError>);

/// How many problems `Display` lists before summarising the rest.
const MAX_SHOWN: usize = 20;

impl fmt::Display for BundleErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, error) in self.0.iter().take(MAX_SHOWN).enumerate() {
            if position > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        if self.0.len() > MAX_SHOWN {
            write!(f, "\n... and {} more", self.0.len() - MAX_SHOWN)?;
        }
        Ok(())
    }
}

impl std::error::Error for BundleErrors {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_path_unless_it_is_the_whole_document() {
        assert_eq!(
            FieldError::new("segments[4].id", "must not be empty").to_string(),
            "segments[4].id: must not be empty"
        );
        assert_eq!(
            FieldError::new("", "expected value at line 1 column 1").to_string(),
            "expected value at line 1 column 1"
        );
    }

    #[test]
    fn display_caps_the_list_at_twenty() {
        let errors = BundleErrors(
            (0..23)
                .map(|index| FieldError::new(format!("segments[{index}]"), "bad"))
                .collect(),
        );
        let text = errors.to_string();
        assert_eq!(text.lines().count(), 21);
        assert!(text.ends_with("segments[19]: bad\n... and 3 more"));
    }
}
