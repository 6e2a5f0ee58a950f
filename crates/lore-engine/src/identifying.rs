//! A typed row cut to its identifying fields (what an erased row of a revision keeps, SPEC 4) without
//! serializing the rest: a serializer that takes a struct's fields one by one and keeps those
//! `IDENTIFYING_FIELDS` names whose value is plain (not a list or an object), skipping the others
//! unserialized. It gives what `identifying_fields(serde_json::to_value(row))` gives (a test holds
//! the two equal), at a fraction of the cost: a deletion erases every row it removed, and turning
//! each whole row into JSON first was a fifth of a delete's instructions (BENCHMARKS.md,
//! twenty-first round). It can also write the cut row straight as JSON text
//! (`identifying_text`), the form a revision stores, without building a JSON value first.

use serde::ser::{self, Impossible, Serialize, SerializeStruct};
use serde_json::{Map, Value};

/// The row's identifying fields with `"erased": true`, or `None` when the row does not serialize as
/// a struct (the caller then cuts its JSON).
pub fn identifying<T: Serialize + ?Sized>(row: &T, fields: &[&str], erased: &str) -> Option<Value> {
    let Ok(Out::Map(mut kept)) = row.serialize(Fields::map(fields)) else {
        return None;
    };
    kept.insert(erased.to_string(), Value::Bool(true));
    Some(Value::Object(kept))
}

/// `identifying` as the JSON text `serde_json` writes for that value (the same fields in the same
/// order, then `"erased": true`), with the row's `meeting` field when it is a string; `None` when
/// the row does not serialize as a struct.
pub fn identifying_text<T: Serialize + ?Sized>(
    row: &T,
    fields: &[&str],
    erased: &str,
) -> Option<(String, Option<String>)> {
    let mut out = Vec::with_capacity(160);
    let Ok(Out::Text { meeting }) = row.serialize(Fields {
        fields,
        text: Some((&mut out, erased)),
    }) else {
        return None;
    };
    // serde_json writes UTF-8 only.
    Some((String::from_utf8(out).ok()?, meeting))
}

/// A typed row's `field` as `serde_json::to_value(row)` has it when plain (`Some(None)`: absent, or
/// a list or an object), serializing no other field; `None` when the row does not serialize as a
/// struct (the caller reads its JSON instead).
pub fn plain_field<T: Serialize + ?Sized>(row: &T, field: &str) -> Option<Option<Value>> {
    let fields = [field];
    let Ok(Out::Map(mut kept)) = row.serialize(Fields::map(&fields)) else {
        return None;
    };
    Some(kept.remove(field))
}

/// The serializer: the fields to keep, and where to write them as text (with the name of the
/// field that marks the row erased), or `None` to collect them as JSON values.
struct Fields<'a> {
    fields: &'a [&'a str],
    text: Option<(&'a mut Vec<u8>, &'a str)>,
}

impl<'a> Fields<'a> {
    fn map(fields: &'a [&'a str]) -> Self {
        Fields { fields, text: None }
    }
}

/// A struct being serialized: the fields it keeps, and where they go.
struct Kept<'a> {
    fields: &'a [&'a str],
    into: Sink<'a>,
}

/// Where kept fields go: a map of JSON values, or JSON text.
enum Sink<'a> {
    Map(Map<String, Value>),
    Text {
        out: &'a mut Vec<u8>,
        erased: &'a str,
        /// Whether a field was written after the opening brace.
        any: bool,
        meeting: Option<String>,
    },
}

/// What a struct gave: its kept fields, or (written as text) its `meeting`.
enum Out {
    Map(Map<String, Value>),
    Text { meeting: Option<String> },
}

/// Anything but a struct: not handled here.
#[derive(Debug)]
struct NotAStruct;

impl std::fmt::Display for NotAStruct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a struct")
    }
}

impl std::error::Error for NotAStruct {}

impl ser::Error for NotAStruct {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        NotAStruct
    }
}

impl SerializeStruct for Kept<'_> {
    type Ok = Out;
    type Error = NotAStruct;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), NotAStruct> {
        if !self.fields.contains(&key) {
            return Ok(());
        }
        match &mut self.into {
            Sink::Map(map) => {
                let value = serde_json::to_value(value).map_err(|_| NotAStruct)?;
                if !value.is_array() && !value.is_object() {
                    map.insert(key.to_string(), value);
                }
            }
            Sink::Text {
                out, any, meeting, ..
            } => {
                let mark = out.len();
                if *any {
                    out.push(b',');
                }
                serde_json::to_writer(&mut **out, key).map_err(|_| NotAStruct)?;
                out.push(b':');
                let start = out.len();
                serde_json::to_writer(&mut **out, value).map_err(|_| NotAStruct)?;
                match out.get(start) {
                    // A list or an object: not kept.
                    Some(b'[' | b'{') => out.truncate(mark),
                    first => {
                        if key == "meeting" && first == Some(&b'"') {
                            *meeting = serde_json::from_slice(&out[start..]).ok();
                        }
                        *any = true;
                    }
                }
            }
        }
        Ok(())
    }

    fn end(self) -> Result<Out, NotAStruct> {
        match self.into {
            Sink::Map(map) => Ok(Out::Map(map)),
            Sink::Text {
                out,
                erased,
                any,
                meeting,
            } => {
                if any {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, erased).map_err(|_| NotAStruct)?;
                out.extend_from_slice(b":true}");
                Ok(Out::Text { meeting })
            }
        }
    }
}

macro_rules! not_a_struct {
    ($($method:ident($($arg:ty),*)),+ $(,)?) => {$(
        fn $method(self, $(_: $arg),*) -> Result<Self::Ok, NotAStruct> {
            Err(NotAStruct)
        }
    )+};
}

impl<'a> ser::Serializer for Fields<'a> {
    type Ok = Out;
    type Error = NotAStruct;
    type SerializeSeq = Impossible<Self::Ok, NotAStruct>;
    type SerializeTuple = Impossible<Self::Ok, NotAStruct>;
    type SerializeTupleStruct = Impossible<Self::Ok, NotAStruct>;
    type SerializeTupleVariant = Impossible<Self::Ok, NotAStruct>;
    type SerializeMap = Impossible<Self::Ok, NotAStruct>;
    type SerializeStruct = Kept<'a>;
    type SerializeStructVariant = Impossible<Self::Ok, NotAStruct>;

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Kept<'a>, NotAStruct> {
        let into = match self.text {
            None => Sink::Map(Map::with_capacity(len.min(self.fields.len()) + 1)),
            Some((out, erased)) => {
                out.push(b'{');
                Sink::Text {
                    out,
                    erased,
                    any: false,
                    meeting: None,
                }
            }
        };
        Ok(Kept {
            fields: self.fields,
            into,
        })
    }

    not_a_struct!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<V: Serialize + ?Sized>(self, _: &V) -> Result<Self::Ok, NotAStruct> {
        Err(NotAStruct)
    }

    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &V,
    ) -> Result<Self::Ok, NotAStruct> {
        Err(NotAStruct)
    }

    fn serialize_newtype_variant<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<Self::Ok, NotAStruct> {
        Err(NotAStruct)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotAStruct> {
        Err(NotAStruct)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotAStruct> {
        Err(NotAStruct)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotAStruct> {
        Err(NotAStruct)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotAStruct> {
        Err(NotAStruct)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotAStruct> {
        Err(NotAStruct)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotAStruct> {
        Err(NotAStruct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::{identifying_fields, ERASED_FIELD, IDENTIFYING_FIELDS};
    use lore_core::model::*;
    use lore_core::Ts;
    use serde_json::json;

    fn same<T: Serialize>(row: &T) {
        let fast = identifying(row, IDENTIFYING_FIELDS, ERASED_FIELD).expect("a struct");
        let slow = identifying_fields(serde_json::to_value(row).unwrap());
        assert_eq!(fast, slow);
        // Field order too: revisions are compared as text elsewhere.
        assert_eq!(fast.to_string(), slow.to_string());
        // Written as text, byte for byte what the value's text is, with its meeting.
        let (text, meeting) =
            identifying_text(row, IDENTIFYING_FIELDS, ERASED_FIELD).expect("a struct");
        assert_eq!(text, slow.to_string());
        let slow_meeting = slow.get("meeting").and_then(Value::as_str);
        assert_eq!(meeting.as_deref(), slow_meeting);
    }

    #[test]
    fn cuts_every_recorded_row_as_its_json_would_be_cut() {
        let evidence = Evidence {
            id: "v1".into(),
            claim: "c1".into(),
            source_kind: SourceKind::Meeting,
            source_id: "m1".into(),
            meeting: Some("m1".into()),
            observed_at: Ts(5),
            segment_ids: vec!["s1".into()],
            start_ms: Some(1),
            end_ms: None,
            speaker: Some("Ann".into()),
            speaker_label: None,
            attribution: Some(Attribution::OneMappedSource),
            quote: "a quote".into(),
            source_url: None,
            confidence: 0.9,
            extraction_run_id: Some("r".into()),
            kind: EvidenceKind::Support,
            authority: Authority::FirstParty,
            outcome: None,
            recorded_at: Ts(6),
        };
        same(&evidence);
        let mut entity = lore_store::conformance::sample_entity("e1");
        entity
            .current_attributes
            .insert("has_title".into(), json!("Chief"));
        same(&entity);
        same(&Alias {
            entity: "e1".into(),
            alias: "Ann".into(),
            meeting: "m1".into(),
            observed_at: Ts(1),
        });
        same(&IdentifierSource {
            scheme: "email".into(),
            value: "a@x".into(),
            meeting: "m1".into(),
            group: "g".into(),
            primary: true,
        });
        same(&LinkAttachment {
            link: "l".into(),
            entity: "e1".into(),
            meeting: "m1".into(),
            reason: "claim".into(),
            evidence: None,
        });
        same(&Task {
            id: "t".into(),
            meeting: Some("m1".into()),
            title: "Do it".into(),
            status: TaskStatus::Open,
            assignee: None,
            project: Some("p".into()),
            due_at: None,
            evidence: json!([{"quote": "q"}]),
            created_at: Ts(2),
        });
        same(&lore_store::conformance::sample_claim("c1", "e1"));
        // A row of no kept field is only marked.
        #[derive(serde::Serialize)]
        struct Words {
            quote: String,
            segments: Vec<String>,
        }
        same(&Words {
            quote: "q".into(),
            segments: vec!["s1".into()],
        });
        // A JSON value is no struct: the caller cuts its JSON instead.
        assert!(identifying(&json!({"id": "x"}), IDENTIFYING_FIELDS, ERASED_FIELD).is_none());
        assert!(identifying_text(&json!({"id": "x"}), IDENTIFYING_FIELDS, ERASED_FIELD).is_none());
    }
}
