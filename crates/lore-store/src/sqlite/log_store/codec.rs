//! The knowledge log's binary encoding: every row kind written field by field (integers as
//! variable-length numbers, text with its length first, enumerations by name), so that a row read
//! back is the row written, bit for bit (times and weights included, which JSON would round through
//! text), and a log entry costs a few bytes per field.

use std::collections::BTreeMap;

use lore_core::model::*;
use lore_core::Ts;

/// Why a log entry could not be read back: the file was written by a newer build, or is damaged.
#[derive(Debug)]
pub(crate) struct DecodeError(pub String);

pub(crate) type Decoded<T> = Result<T, DecodeError>;

/// Appends values to a byte buffer.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) bytes: Vec<u8>,
}

/// Reads values back in the order they were written.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Writer {
    pub(crate) fn unsigned(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
    }

    pub(crate) fn signed(&mut self, value: i64) {
        // Zig-zag: small magnitudes of either sign stay short.
        self.unsigned(((value << 1) ^ (value >> 63)) as u64);
    }

    pub(crate) fn byte(&mut self, value: u8) {
        self.bytes.push(value);
    }

    pub(crate) fn text(&mut self, value: &str) {
        self.unsigned(value.len() as u64);
        self.bytes.extend_from_slice(value.as_bytes());
    }

    pub(crate) fn put<T: Codec>(&mut self, value: &T) {
        value.encode(self);
    }
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    pub(crate) fn byte(&mut self) -> Decoded<u8> {
        let value = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| DecodeError("the entry ends early".into()))?;
        self.at += 1;
        Ok(value)
    }

    pub(crate) fn unsigned(&mut self) -> Decoded<u64> {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let byte = self.byte()?;
            if shift > 63 {
                return Err(DecodeError("a number is too long".into()));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
            shift += 7;
        }
    }

    pub(crate) fn signed(&mut self) -> Decoded<i64> {
        let raw = self.unsigned()?;
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    pub(crate) fn text(&mut self) -> Decoded<String> {
        let length = self.unsigned()? as usize;
        let end = self
            .at
            .checked_add(length)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| DecodeError("a text runs past the entry".into()))?;
        let text = std::str::from_utf8(&self.bytes[self.at..end])
            .map_err(|_| DecodeError("a text is not UTF-8".into()))?
            .to_string();
        self.at = end;
        Ok(text)
    }

    pub(crate) fn get<T: Codec>(&mut self) -> Decoded<T> {
        T::decode(self)
    }
}

/// A value the log can hold.
pub(crate) trait Codec: Sized {
    fn encode(&self, w: &mut Writer);
    fn decode(r: &mut Reader) -> Decoded<Self>;
}

impl Codec for String {
    fn encode(&self, w: &mut Writer) {
        w.text(self);
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        r.text()
    }
}

impl Codec for i64 {
    fn encode(&self, w: &mut Writer) {
        w.signed(*self);
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        r.signed()
    }
}

impl Codec for bool {
    fn encode(&self, w: &mut Writer) {
        w.byte(u8::from(*self));
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        Ok(r.byte()? != 0)
    }
}

impl Codec for f64 {
    fn encode(&self, w: &mut Writer) {
        w.bytes.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        let mut bits = [0u8; 8];
        for byte in &mut bits {
            *byte = r.byte()?;
        }
        Ok(f64::from_bits(u64::from_le_bytes(bits)))
    }
}

impl Codec for Ts {
    fn encode(&self, w: &mut Writer) {
        w.signed(self.0);
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        Ok(Ts(r.signed()?))
    }
}

impl<T: Codec> Codec for Option<T> {
    fn encode(&self, w: &mut Writer) {
        match self {
            None => w.byte(0),
            Some(value) => {
                w.byte(1);
                value.encode(w);
            }
        }
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        match r.byte()? {
            0 => Ok(None),
            1 => Ok(Some(T::decode(r)?)),
            other => Err(DecodeError(format!("unknown option tag {other}"))),
        }
    }
}

impl<T: Codec> Codec for Vec<T> {
    fn encode(&self, w: &mut Writer) {
        w.unsigned(self.len() as u64);
        for value in self {
            value.encode(w);
        }
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        let length = r.unsigned()? as usize;
        // Never trust a length for an allocation larger than the entry could hold.
        let mut values = Vec::with_capacity(length.min(r.bytes.len()));
        for _ in 0..length {
            values.push(T::decode(r)?);
        }
        Ok(values)
    }
}

impl<V: Codec> Codec for BTreeMap<String, V> {
    fn encode(&self, w: &mut Writer) {
        w.unsigned(self.len() as u64);
        for (key, value) in self {
            w.text(key);
            value.encode(w);
        }
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        let length = r.unsigned()? as usize;
        let mut map = BTreeMap::new();
        for _ in 0..length {
            let key = r.text()?;
            map.insert(key, V::decode(r)?);
        }
        Ok(map)
    }
}

/// JSON values (claim values, task evidence, suggestion payloads) travel as their JSON text.
impl Codec for serde_json::Value {
    fn encode(&self, w: &mut Writer) {
        w.text(&self.to_string());
    }
    fn decode(r: &mut Reader) -> Decoded<Self> {
        let text = r.text()?;
        serde_json::from_str(&text).map_err(|error| DecodeError(format!("a JSON value: {error}")))
    }
}

/// The model's closed enumerations, by name (a build that renamed one fails to read, loudly).
macro_rules! enum_codec {
    ($($name:ident),+ $(,)?) => {$(
        impl Codec for $name {
            fn encode(&self, w: &mut Writer) {
                w.text(self.as_str());
            }
            fn decode(r: &mut Reader) -> Decoded<Self> {
                let text = r.text()?;
                $name::parse(&text).ok_or_else(|| {
                    DecodeError(format!("unknown {} '{text}'", stringify!($name)))
                })
            }
        }
    )+};
}

enum_codec!(
    EntityKind,
    EntityStatus,
    ClaimStatus,
    Authority,
    Attribution,
    EvidenceKind,
    Outcome,
    SourceKind,
    Cardinality,
    ResourceType,
    LinkProvenance,
    TaskStatus,
    SuggestionStatus,
    ConflictReason,
    MappingSource,
);

/// A struct written field by field in declaration order; every field is named, so adding one to
/// the model without adding it here fails to compile.
macro_rules! struct_codec {
    ($name:ident { $($field:ident),+ $(,)? }) => {
        impl Codec for $name {
            fn encode(&self, w: &mut Writer) {
                let $name { $($field),+ } = self;
                $( $field.encode(w); )+
            }
            fn decode(r: &mut Reader) -> Decoded<Self> {
                Ok($name { $($field: r.get()?),+ })
            }
        }
    };
}

struct_codec!(Meeting {
    id,
    external_id,
    title,
    started_at,
    ended_at,
    platform,
    series,
    content_hash,
});
struct_codec!(Participant {
    meeting,
    idx,
    display_name,
    email,
    platform_stable_id,
    device_id,
    speaker_label,
    person_entity,
    excluded,
});
struct_codec!(Entity {
    id,
    kind,
    canonical_name,
    manual_name,
    normalized_key,
    emails,
    domains,
    external_keys,
    status,
    merged_into,
    do_not_merge_with,
    manual_attributes,
    manual_brief,
    pinned,
    scope_meeting,
    first_observed_at,
    last_observed_at,
    current_attributes,
    current_brief,
    weight_basis,
    weight_latest,
});
struct_codec!(Observed {
    first_observed_at,
    last_observed_at,
    weight_basis,
    weight_latest,
});
struct_codec!(Alias {
    entity,
    alias,
    meeting,
    observed_at,
});
struct_codec!(Period { from, to });
struct_codec!(ClaimDerived {
    status,
    authority,
    valid_from,
    valid_to,
    first_observed_at,
    last_observed_at,
    superseded_at,
    superseded_by,
    conflict,
    end_outcome,
    periods,
});
struct_codec!(Claim {
    id,
    subject,
    predicate,
    object_entity,
    value_text,
    value_json,
    value_key,
    context_entity,
    cardinality,
    group_key,
    explicit_valid_from,
    explicit_valid_to,
    retracted_at,
    recorded_at,
    derived,
});
struct_codec!(Evidence {
    id,
    claim,
    source_kind,
    source_id,
    meeting,
    observed_at,
    segment_ids,
    start_ms,
    end_ms,
    speaker,
    speaker_label,
    attribution,
    quote,
    source_url,
    confidence,
    extraction_run_id,
    kind,
    authority,
    outcome,
    recorded_at,
});
struct_codec!(SupersedesLink {
    claim,
    target,
    evidence,
});
struct_codec!(ResourceLink {
    id,
    entity,
    meeting,
    source_kind,
    source_id,
    resource_type,
    url,
    external_key,
    title,
    provenance,
    ingested_status,
    first_seen_at,
    last_seen_at,
});
struct_codec!(Task {
    id,
    meeting,
    title,
    status,
    assignee,
    project,
    due_at,
    evidence,
    created_at,
});
struct_codec!(Suggestion {
    id,
    kind,
    status,
    target,
    secondary,
    payload,
    created_at,
});
struct_codec!(StatusChange {
    claim,
    recorded_at,
    derived,
});
struct_codec!(ParticipantMapping {
    meeting,
    key,
    source,
    display_name,
    email,
    person_entity,
});
struct_codec!(LinkAttachment {
    link,
    entity,
    meeting,
    reason,
    evidence,
});
struct_codec!(IdentifierSource {
    scheme,
    value,
    meeting,
    group,
    primary,
});

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Codec + PartialEq + std::fmt::Debug>(value: T) {
        let mut writer = Writer::default();
        writer.put(&value);
        let mut reader = Reader::new(&writer.bytes);
        assert_eq!(reader.get::<T>().unwrap(), value);
        assert!(reader.is_done());
    }

    #[test]
    fn numbers_times_and_weights_come_back_exactly() {
        for value in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            i64::MAX,
            i64::MIN,
            1_767_225_600_000,
        ] {
            round_trip(value);
            round_trip(Ts(value));
        }
        for value in [0.0f64, -0.0, 1.5e-300, f64::MAX, 0.1 + 0.2, f64::INFINITY] {
            let mut writer = Writer::default();
            writer.put(&value);
            let back: f64 = Reader::new(&writer.bytes).get().unwrap();
            assert_eq!(back.to_bits(), value.to_bits());
        }
    }

    #[test]
    fn rows_come_back_as_written() {
        let mut entity = crate::conformance::sample_entity("e1");
        entity.weight_basis = 12.345_678_9;
        entity.weight_latest = Some(Ts(-5));
        entity
            .current_attributes
            .insert("has_title".into(), serde_json::json!({"a": [1, 2]}));
        round_trip(entity);
        round_trip(Some("naïve — text".to_string()));
        round_trip(vec![Period {
            from: Ts(1),
            to: None,
        }]);
    }

    #[test]
    fn damaged_entries_are_errors_not_panics() {
        let mut writer = Writer::default();
        writer.put(&crate::conformance::sample_entity("e1"));
        for cut in 0..writer.bytes.len() {
            let _ = Reader::new(&writer.bytes[..cut]).get::<Entity>();
        }
        let mut reader = Reader::new(&[0xff; 12]);
        assert!(reader.unsigned().is_err());
        let mut reader = Reader::new(&[5, b'a']);
        assert!(reader.text().is_err());
    }
}
