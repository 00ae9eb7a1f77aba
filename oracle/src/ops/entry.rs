//! `entry`: entry construction and validation (SPEC ENT-2 .. ENT-6), message adaptation with
//! the default content-hash classifier plus kind overrides (SPEC CLS-1, CLS-2), transcripts
//! (SPEC TRN-1 .. TRN-6) and the augmentation helper (SPEC SNAP-4).

use std::collections::BTreeMap;

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::classifier::{Classifier, ClassifierError};
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::error::{ErrorKind, TypedError};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::Operation;
use crate::wire::convert;
use crate::wire::error::{answer, wire, CaseError, WireError};
use crate::wire::input::{
    index_keyed, EntryInput, IndexKey, KindInput, MessageInput, SegmentInput, TranscriptInput,
};
use crate::wire::output::{entry_outputs, EntryOutput};

/// Inputs of the `entry` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("allOf" = [
    {"if": {"required": ["transcript"]},
     "then": {"properties": {"entries": {"maxItems": 0}},
              "not": {"anyOf": [{"required": ["messages"]}, {"required": ["overrides"]}]}}},
    {"if": {"required": ["messages"]}, "then": {"properties": {"entries": {"maxItems": 0}}}},
    {"dependentRequired": {"overrides": ["messages"]}}
]))]
pub struct EntryCase {
    /// The entries to construct, in order (the first failure is the answer).
    #[serde(default)]
    pub entries: Vec<EntryInput>,
    /// Messages to adapt into entries with the default content-hash classifier (SPEC CLS-1,
    /// CLS-2); exclusive with a non-empty `entries`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<MessageInput>>,
    /// Classifier kind overrides by message index (decimal string keys), consulted per SPEC
    /// CLS-1 step 3.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "index_keyed"
    )]
    #[schemars(with = "Option<BTreeMap<IndexKey, KindInput>>")]
    pub overrides: Option<BTreeMap<String, KindInput>>,
    /// A provider / framework transcript to adapt (SPEC TRN-1 .. TRN-5); exclusive with
    /// `entries` and `messages`. The output also carries the transcript rendered back from the
    /// adapted entries as `finalTranscript` (SPEC TRN-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
    /// Append a recovered segment with the augmentation helper (SPEC SNAP-4) to the list built
    /// from `entries` / `messages`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub augment: Option<AugmentInput>,
}

/// A recovered segment to append with the augmentation helper (SPEC SNAP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AugmentInput {
    /// The new entry id.
    pub id: String,
    /// The segment (reference defaults to the body's SHA-256 reference).
    pub segment: SegmentInput,
}

/// Appends a recovered segment with the augmentation helper (SPEC SNAP-4). The helper is a
/// host-side vocabulary service, the same for both implementations.
pub(crate) fn augment(baseline: &[Entry], a: &AugmentInput) -> Result<Vec<Entry>, CaseError> {
    let reference = match &a.segment.reference {
        None => ArtifactReference::to_content(&a.segment.body),
        Some(r) => ArtifactReference::parse(r).map_err(|e| {
            CaseError::Answer(answer(
                ErrorKind::InvalidArgument,
                Some("Reference"),
                Some(&a.id),
                e.to_string(),
            ))
        })?,
    };
    hybrid_compaction_model::integration::augment(
        baseline,
        &a.id,
        RecoverableSegment {
            reference,
            body: a.segment.body.clone(),
        },
    )
    .map_err(|e| {
        let id = match &e {
            hybrid_compaction_model::integration::AugmentError::DuplicateId(i) => Some(i.as_str()),
            _ => Some(a.id.as_str()),
        };
        CaseError::Answer(answer(e.kind(), None, id, e.to_string()))
    })
}

/// A classifier yielding a base classifier's ids plus scripted kind overrides.
struct Overriding<'a, C> {
    base: C,
    overrides: &'a BTreeMap<usize, EntryKind>,
}

impl<C: Classifier> Classifier for Overriding<'_, C> {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        self.base.entry_id(messages, index)
    }
    fn override_kind(&mut self, _messages: &[Message], index: usize) -> Option<EntryKind> {
        self.overrides.get(&index).copied()
    }
}

/// The answer of `entry`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntryAnswer {
    /// The constructed (or adapted) entries.
    pub entries: Vec<EntryOutput>,
    /// With a `transcript`: the entries rendered back in its format (SPEC TRN-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_transcript: Option<Json>,
}

impl EntryCase {
    /// The entries of a transcript case (SPEC TRN-1 .. TRN-6).
    fn transcript_entries(&self, t: &TranscriptInput) -> Result<EntryAnswer, CaseError> {
        if !self.entries.is_empty() || self.messages.is_some() || self.overrides.is_some() {
            return wire(
                "$",
                "`transcript` excludes `entries`, `messages` and `overrides` (overrides go inside the transcript)",
            );
        }
        let t = convert::transcript(t)?;
        let mut es = t.entries().to_vec();
        if let Some(a) = &self.augment {
            es = augment(&es, a)?;
        }
        Ok(EntryAnswer {
            entries: entry_outputs(&es),
            final_transcript: Some(t.render(&es)),
        })
    }

    /// The entries adapted from `messages` with kind overrides (SPEC CLS-1, CLS-2).
    fn adapted(
        &self,
        ms: &[MessageInput],
        imp: &dyn Implementation,
    ) -> Result<Vec<Entry>, CaseError> {
        if !self.entries.is_empty() {
            return wire("$", "`entries` and `messages` are mutually exclusive");
        }
        let mut messages = Vec::with_capacity(ms.len());
        for (i, m) in ms.iter().enumerate() {
            messages.push(convert::message(m, &format!("$.messages[{i}]"))?);
        }
        let mut overrides = BTreeMap::new();
        for (k, v) in self.overrides.iter().flatten() {
            let i = k
                .parse::<usize>()
                .ok()
                .filter(|i| *i < messages.len())
                .ok_or_else(|| {
                    WireError::new(
                        format!("$.overrides[{}]", Json::from(k.as_str())),
                        "expected the decimal index of a message",
                    )
                })?;
            overrides.insert(i, convert::kind(*v));
        }
        let mut classifier = Overriding {
            base: imp.content_hash_classifier(),
            overrides: &overrides,
        };
        imp.adapt(&messages, &mut classifier)
            .map_err(|e| CaseError::from(TypedError::from(&e)))
    }
}

impl Operation for EntryCase {
    const ANSWER: &'static str = "entries";
    type Answer = EntryAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<EntryAnswer, CaseError> {
        if let Some(t) = &self.transcript {
            return self.transcript_entries(t);
        }
        let mut es = match &self.messages {
            Some(ms) => self.adapted(ms, imp)?,
            None if self.overrides.is_some() => {
                return wire("$.overrides", "`overrides` needs `messages`")
            }
            None => convert::entries(&self.entries, "$.entries")?,
        };
        if let Some(a) = &self.augment {
            es = augment(&es, a)?;
        }
        Ok(EntryAnswer {
            entries: entry_outputs(&es),
            final_transcript: None,
        })
    }
}
