//! Message adaptation and the default content-hash classifier (SPEC CLS-1, CLS-2).
//!
//! [`adapt`] applies the kind precedence of SPEC CLS-1 exactly as the model does. The
//! [`ContentHashClassifier`] differs in cost: the model renders every earlier message again for
//! each id (O(n²) renderings); the engine streams each message's canonical rendering straight
//! into SHA-256 (no rendering string is built) once per message list, counts identical
//! renderings by digest in one hash map, and answers `entry_id(messages, i)` from that table.
//! The table answers one walk over one list: it is rebuilt at index 0 (every adaptation starts
//! there), whenever the classifier sees a different list (address or length), when `i` does not
//! follow the previous answer's index (a host asking out of order, possibly about a list changed
//! in place or a new list at a freed one's address), and when the message at `i` no longer hashes
//! to the recorded digest. A walk in order costs one rebuild; any other question costs at most
//! one rebuild and is never answered from a stale table.

use sha2::{Digest as _, Sha256};

use hybrid_compaction_model::artifact::{to_lower_hex, ArtifactReference};
pub use hybrid_compaction_model::classifier::AdaptError;
use hybrid_compaction_model::classifier::{Classifier, ClassifierError};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::{Message, Part, ROLE_SYSTEM};
use hybrid_compaction_model::value::Value;

use super::hash::{map_with_capacity, FxHashMap};

fn text_of(message: &Message) -> String {
    let mut out = String::new();
    for p in &message.parts {
        if let Part::Text(t) = p {
            out.push_str(t);
        }
    }
    out
}

/// Adapts messages to entries, in order (SPEC CLS-1).
pub fn adapt(
    messages: &[Message],
    classifier: &mut dyn Classifier,
) -> Result<Vec<Entry>, AdaptError> {
    let mut entries = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        // The classifier first yields the id; its failure propagates unchanged (SPEC CLS-3).
        let id = classifier
            .entry_id(messages, index)
            .map_err(|error| AdaptError::Classifier { index, error })?;
        let tool = message
            .parts
            .iter()
            .any(|p| matches!(p, Part::Call(_) | Part::Result(_)));
        let kind = if tool {
            EntryKind::ToolExchange
        } else if message.role == ROLE_SYSTEM {
            EntryKind::SystemInstruction
        } else if let Some(kind) = classifier.override_kind(messages, index) {
            match kind {
                EntryKind::ToolExchange
                | EntryKind::RecoverableContextSegment
                | EntryKind::SystemInstruction => {
                    return Err(AdaptError::ForbiddenOverride { index, kind })
                }
                other => other,
            }
        } else if ArtifactReference::parse(&text_of(message)).is_ok() {
            EntryKind::ArtifactReference
        } else {
            EntryKind::ConversationalMessage
        };
        let entry = Entry::new(id, kind, message.clone())
            .map_err(|source| AdaptError::Entry { index, source })?;
        entries.push(entry);
    }
    Ok(entries)
}

/// The default content-hash classifier (SPEC CLS-2): id `"{hex}:{n}"`, never an override.
#[derive(Debug, Clone, Default)]
pub struct ContentHashClassifier {
    /// `(list address, list length)` the table was built for.
    key: Option<(usize, usize)>,
    /// Per message: its rendering digest and the id.
    table: Vec<([u8; 32], String)>,
    /// The index the previous answer was for: the table answers only its successor.
    last: usize,
}

impl ContentHashClassifier {
    /// A classifier with an empty table.
    pub fn new() -> ContentHashClassifier {
        ContentHashClassifier::default()
    }

    fn rebuild(&mut self, messages: &[Message]) {
        self.table.clear();
        let mut counts: FxHashMap<[u8; 32], u32> = map_with_capacity(messages.len());
        for m in messages {
            let d = rendering_digest(m);
            let n = counts.entry(d).or_insert(0);
            let id = format!("{}:{}", to_lower_hex(&d), *n);
            *n += 1;
            self.table.push((d, id));
        }
        self.key = Some((messages.as_ptr() as usize, messages.len()));
    }
}

impl Classifier for ContentHashClassifier {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        let key = (messages.as_ptr() as usize, messages.len());
        // Adaptation asks for index 0 first (every new adaptation rebuilds the table), then for
        // each next index; a question out of that order rebuilds it too.
        let fresh = index > 0
            && index == self.last + 1
            && self.key == Some(key)
            && self
                .table
                .get(index)
                .is_some_and(|(d, _)| *d == rendering_digest(&messages[index]));
        if !fresh {
            self.rebuild(messages);
        }
        self.last = index;
        Ok(self
            .table
            .get(index)
            .map(|(_, id)| id.clone())
            .unwrap_or_default())
    }

    fn override_kind(&mut self, _messages: &[Message], _index: usize) -> Option<EntryKind> {
        None
    }
}

/// SHA-256 of the canonical rendering (SPEC CLS-2), streamed: role, U+001F, then per part
/// `text:`+text | `call:`+id+`:`+name | `result:`+id+`:`+value text | `block:`+type+`:`+JSON,
/// each followed by U+001E.
fn rendering_digest(message: &Message) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(message.role.as_bytes());
    h.update("\u{1F}".as_bytes());
    for part in &message.parts {
        match part {
            Part::Text(t) => {
                h.update(b"text:");
                h.update(t.as_bytes());
            }
            Part::Call(c) => {
                h.update(b"call:");
                h.update(c.call_id.as_bytes());
                h.update(b":");
                h.update(c.name.as_bytes());
            }
            Part::Result(r) => {
                h.update(b"result:");
                h.update(r.call_id.as_bytes());
                h.update(b":");
                value_text(&r.value, &mut h);
            }
            Part::Block(b) => {
                h.update(b"block:");
                h.update(b.block_type.as_bytes());
                h.update(b":");
                h.update(b.json.as_bytes());
            }
        }
        h.update("\u{1E}".as_bytes());
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(&h.finalize());
    out
}

/// The value text of SPEC CLS-2 (model rendering for the opaque shapes: `True`/`False`, .NET
/// numbers, maps `{k=v,...}` in key order, lists `[v,...]`, no escaping), streamed into `h`.
fn value_text(value: &Value, h: &mut Sha256) {
    match value {
        Value::Null => {}
        Value::String(s) => h.update(s.as_bytes()),
        Value::RawJson(raw) => match raw.as_str() {
            "true" => h.update(b"True"),
            "false" => h.update(b"False"),
            "null" => {}
            text => match raw.as_json_string() {
                Some(s) => h.update(s.as_bytes()),
                None => h.update(text.as_bytes()),
            },
        },
        Value::Bool(true) => h.update(b"True"),
        Value::Bool(false) => h.update(b"False"),
        Value::I16(n) => h.update(n.to_string().as_bytes()),
        Value::I32(n) => h.update(n.to_string().as_bytes()),
        Value::I64(n) => h.update(n.to_string().as_bytes()),
        Value::U8(n) => h.update(n.to_string().as_bytes()),
        Value::U32(n) => h.update(n.to_string().as_bytes()),
        Value::U64(n) => h.update(n.to_string().as_bytes()),
        Value::F32(x) => h.update(dotnet_float(
            x.is_nan(),
            x.is_infinite(),
            x.is_sign_negative(),
            *x == 0.0,
            &format!("{:e}", x.abs()),
            9,
        )),
        Value::F64(x) => h.update(dotnet_float(
            x.is_nan(),
            x.is_infinite(),
            x.is_sign_negative(),
            *x == 0.0,
            &format!("{:e}", x.abs()),
            17,
        )),
        Value::Decimal(d) => h.update(d.to_string().as_bytes()),
        Value::Map(map) => {
            h.update(b"{");
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    h.update(b",");
                }
                h.update(k.as_bytes());
                h.update(b"=");
                value_text(v, h);
            }
            h.update(b"}");
        }
        Value::List(items) => {
            h.update(b"[");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    h.update(b",");
                }
                value_text(v, h);
            }
            h.update(b"]");
        }
    }
}

/// The .NET invariant rendering of a float from Rust's shortest `{:e}` text (SPEC EST-2).
#[allow(
    clippy::cast_possible_truncation,
    reason = "the scale is a float's decimal exponent: |scale| < 400"
)]
pub(crate) fn dotnet_float(
    nan: bool,
    infinite: bool,
    negative: bool,
    zero: bool,
    sci: &str,
    precision: i64,
) -> String {
    if nan {
        return "NaN".to_owned();
    }
    if infinite {
        return if negative { "-Infinity" } else { "Infinity" }.to_owned();
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if zero {
        out.push('0');
        return out;
    }
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    let k = digits.len() as i64;
    let scale = exp.parse::<i64>().unwrap_or(0) + 1;
    let digits = String::from_utf8(digits).unwrap_or_default();
    if scale > k.max(precision) || scale < -3 {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = scale - 1;
        out.push_str(&format!("E{}{:02}", if e < 0 { '-' } else { '+' }, e.abs()));
    } else if scale <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-scale) as usize));
        out.push_str(&digits);
    } else if scale >= k {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (scale - k) as usize));
    } else {
        out.push_str(&digits[..scale as usize]);
        out.push('.');
        out.push_str(&digits[scale as usize..]);
    }
    out
}
