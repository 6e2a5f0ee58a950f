//! The Markdown wiki of SPEC 5.7: export an owner's knowledge as pages OpenKB and Obsidian read, and
//! import such pages (Lore's or OpenKB's) under OpenKB's claim rules.
//!
//! A page's frontmatter holds `type`, `description`, `sources` (summary pages), `aliases` and `claims`
//! in that order, each value one line of JSON (valid YAML flow), then a `lore` key with the Lore-only
//! facts of the page (entity identifiers and aliases, or a meeting's sources, links and tasks). Each
//! claim carries its full Lore record in its own `lore` object, so an import rebuilds the same facts and
//! the rules derive the same state.

mod export;
mod import;
pub mod openkb;

use std::collections::BTreeMap;

use lore_core::model::*;
use lore_core::Ts;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

pub use export::ExportReport;
pub use import::{ImportReport, PageDrop};

/// The key under which an imported OpenKB claim keeps its original fields in `value_json`.
pub(crate) const OPENKB_KEY: &str = "openkb";

/// SPEC 5.7 slug: NFKC, lowercase, every character outside `[\w-]` replaced by `-`, and leading and
/// trailing `-` trimmed. Empty names get `page`.
pub fn slug(name: &str) -> String {
    let normalized: String = name.nfkc().collect::<String>().to_lowercase();
    let replaced: String = normalized
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = replaced.trim_matches('-');
    if trimmed.is_empty() {
        "page".to_string()
    } else {
        trimmed.to_string()
    }
}

/// One line of JSON that also reads as YAML: characters YAML treats as line breaks or forbids
/// (NEL, LS, PS, DEL, C1 controls, BOM) are escaped; everything else stays as written.
pub(crate) fn yaml_safe_json(value: &Value) -> String {
    let text = serde_json::to_string(value).expect("JSON values serialize");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let code = c as u32;
        if code == 0x7f
            || (0x80..=0x9f).contains(&code)
            || code == 0x2028
            || code == 0x2029
            || code == 0xfeff
            || code == 0xfffe
            || code == 0xffff
        {
            out.push_str(&format!("\\u{code:04x}"));
        } else {
            out.push(c);
        }
    }
    out
}

/// A page split into its frontmatter values and its body.
pub(crate) struct ParsedPage {
    pub fields: BTreeMap<String, Value>,
    pub body: String,
}

/// Reads `---` frontmatter: `key: value` lines, each value JSON or else a plain YAML scalar.
pub(crate) fn parse_page(text: &str) -> Result<ParsedPage, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err("no frontmatter (the page must start with ---)".into());
    }
    let mut fields = BTreeMap::new();
    let mut consumed = first.len();
    let mut closed = false;
    for line in lines.by_ref() {
        consumed += line.len();
        let trimmed = line.trim_end_matches(['\n', '\r']);
        if trimmed == "---" {
            closed = true;
            break;
        }
        if trimmed.trim().is_empty()
            || trimmed.starts_with('#')
            || trimmed.starts_with([' ', '\t', '-'])
        {
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match serde_json::from_str::<Value>(value) {
            Ok(json) => {
                fields.insert(key.trim().to_string(), json);
            }
            Err(_) => {
                let unquoted = value
                    .strip_prefix('\'')
                    .and_then(|v| v.strip_suffix('\''))
                    .unwrap_or(value);
                fields.insert(key.trim().to_string(), Value::String(unquoted.to_string()));
            }
        }
    }
    if !closed {
        return Err("frontmatter is not closed by ---".into());
    }
    Ok(ParsedPage {
        fields,
        body: text[consumed..].to_string(),
    })
}

/// A claim's full Lore record as it rides in the exported claim's `lore` object.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct LoreClaim {
    /// Lore's own status, authority and validity, first for readers; import re-derives them.
    #[serde(default)]
    pub status: Option<ClaimStatus>,
    #[serde(default)]
    pub authority: Option<Authority>,
    #[serde(default)]
    pub valid_from: Option<Ts>,
    #[serde(default)]
    pub valid_to: Option<Ts>,
    #[serde(flatten)]
    pub claim: Claim,
    pub evidence: Vec<Evidence>,
    #[serde(default)]
    pub supersedes_links: Vec<SupersedesLink>,
}

/// The Lore-only facts of an entity page.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct LoreEntityPage {
    pub entity: Entity,
    pub identifiers: Vec<(String, String)>,
    pub aliases: Vec<Alias>,
}

/// The Lore-only facts of a meeting's summary page.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct LoreSummaryPage {
    pub meeting: Meeting,
    pub series: Option<MeetingSeries>,
    pub participants: Vec<Participant>,
    pub segments: Vec<Segment>,
    pub notes: Vec<Note>,
    pub attachments: Vec<Attachment>,
    pub links: Vec<ResourceLink>,
    pub tasks: Vec<Task>,
}

/// The OpenKB fields an imported OpenKB claim keeps, so that its id survives a re-export.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct OpenKbOrigin {
    pub text: String,
    pub as_of: String,
    pub source_anchor: String,
    /// The status the claim arrived with (after OpenKB's assistant rule); links applied later make it
    /// superseded.
    pub status: String,
    pub authority: Option<String>,
}

pub(crate) fn openkb_origin(claim: &Claim) -> Option<OpenKbOrigin> {
    claim
        .value_json
        .as_ref()
        .and_then(|json| json.get(OPENKB_KEY))
        .and_then(|origin| serde_json::from_value(origin.clone()).ok())
}

/// SPEC 5.7 status mapping.
pub(crate) fn wiki_status(status: ClaimStatus) -> &'static str {
    match status {
        ClaimStatus::Active => "validated",
        ClaimStatus::Provisional => "proposed",
        ClaimStatus::Superseded | ClaimStatus::Expired => "superseded",
        ClaimStatus::Retracted => "abandoned",
    }
}

/// SPEC 5.7 authority mapping.
pub(crate) fn wiki_authority(authority: Authority) -> &'static str {
    match authority {
        Authority::Manual | Authority::FirstParty => "first_party",
        Authority::Document => "document",
        Authority::Assistant => "assistant",
    }
}

/// The page type of an entity kind.
pub(crate) fn page_type(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Person => "Person",
        EntityKind::Company => "Organization",
        EntityKind::Project => "Project",
        EntityKind::Concept => "Concept",
    }
}

pub(crate) fn kind_of_page_type(page_type: &str) -> Option<EntityKind> {
    match page_type.trim().to_lowercase().as_str() {
        "person" => Some(EntityKind::Person),
        "organization" | "company" => Some(EntityKind::Company),
        "project" => Some(EntityKind::Project),
        "concept" => Some(EntityKind::Concept),
        _ => None,
    }
}

pub(crate) fn folder_of(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Concept => "concepts",
        _ => "entities",
    }
}

/// The short date of an instant, for readable text.
pub(crate) fn day(ts: Ts) -> String {
    ts.to_rfc3339()[..10].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_spec_5_7() {
        assert_eq!(slug("Alice Chen"), "alice-chen");
        assert_eq!(slug("  Redis migration! "), "redis-migration");
        assert_eq!(slug("ﬁnance_ops"), "finance_ops");
        assert_eq!(slug("Zoë Ünal"), "zoë-ünal");
        assert_eq!(slug("a  b"), "a--b");
        assert_eq!(slug("!!!"), "page");
    }

    #[test]
    fn yaml_safe_json_escapes_line_breaking_characters() {
        let value = serde_json::json!(["a\u{2028}b\u{85}", "é"]);
        let line = yaml_safe_json(&value);
        assert!(!line.contains('\u{2028}') && line.contains("\\u2028") && line.contains('é'));
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), value);
    }

    #[test]
    fn frontmatter_reads_json_and_plain_values() {
        let page = parse_page("---\ntype: Concept\nclaims: [{\"a\":1}]\n---\n# T\n").unwrap();
        assert_eq!(page.fields["type"], Value::String("Concept".into()));
        assert_eq!(page.fields["claims"][0]["a"], 1);
        assert_eq!(page.body, "# T\n");
    }
}
