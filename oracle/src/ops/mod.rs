//! # Operations: the unit of the oracle
//!
//! One module per operation (or per family of operations that share inputs), each holding its
//! case type, its answer type and its run function together, and implementing [`Operation`].
//! The `operations!` list below is the one place that names them all: the case enum
//! ([`Case`], read as a tagged union on `op`), the typed output enum ([`Output`]), the dispatch
//! ([`run_case`]) and both JSON Schemas come from it. Adding an operation is its own module plus
//! one line here, and one row in the table below, which lists them in the same order
//! (`oracle/tests/docs.rs` holds the table, `docs/PYTHON.md` and `README.md` to that list).
//!
//! | op | SPEC | module |
//! |---|---|---|
//! | `assemble` | ASM-7, DIA-5, TRN-6 | [`assemble`] |
//! | `verify` | VER-1 .. VER-5 | [`verify`] |
//! | `select` | PRE-4 | [`select`] |
//! | `evaluate` | POL-3, POL-4, EST | [`evaluate`] |
//! | `analyze` | EXC-1 .. EXC-3 | [`analyze`] |
//! | `policy` | POL-1, POL-2 | [`policy`] |
//! | `entry` | ENT, CLS-1, CLS-2, TRN, SNAP-4 | [`entry`] |
//! | `resolve` | CAP-1 .. CAP-4 | [`resolve`] |
//! | `compose` | CMP-1 .. CMP-4 | [`compose`] |
//! | `trust` | TRU-1 .. TRU-3 | [`trust`] |
//! | `record` | ARF-1 .. ARF-3 | [`artifacts::record`] |
//! | `rehydrate` | RHY-1 .. RHY-4, ATR | [`artifacts::rehydrate`] |
//! | `offload` | OFF-1 .. OFF-3, ATR | [`artifacts::offload`] |
//! | `artifactDiagnostics` | ATR-2, ATR-5 | [`artifacts::given`] |
//! | `decisions` | ATR-6, EVT-7 | [`artifacts::decisions`] |
//! | `configure` | CFG-1 .. CFG-4 | [`configure`] |
//! | `bundle` | CFG-6 | [`bundle`] |
//! | `diagnostics` | DIA-1 .. DIA-4 | [`diagnostics`] |
//! | `bridge` | BRG-1 .. BRG-3 | [`bridge`] |
//! | `leases` | LSE-1 .. LSE-10 | [`leases`] |
//! | `node` | NODE-1 .. NODE-6, EVT-1 .. EVT-6 | [`node`] |
//!
//! Every run function receives the implementation under test as `&dyn Implementation` (the
//! vocabulary's seam, answered by `hybrid_compaction_spec::Model` and
//! `hybrid_compaction::seam::Engine`) and reads inputs only through the wire base
//! ([`crate::wire`]): imports point one way, operations -> wire base -> vocabulary, and no
//! operation imports another (`tests/repository/oracle_modules.rs` checks both): what several
//! operations share is in the wire base (`wire::dispatch`, `wire::options`) or in a module no
//! operation owns (the artifact decisions `decisions` runs beside `offload` and `rehydrate`).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value as Json;

use crate::wire::error::{CaseError, ErrorOutput, WireError};
use crate::wire::input::PolicyInput;
use crate::wire::strict::unlisted;
use crate::wire::strict::{self, TaggedUnion};

pub(crate) mod analyze;
pub(crate) mod artifacts;
pub(crate) mod assemble;
pub(crate) mod bridge;
pub(crate) mod bundle;
pub(crate) mod compose;
pub(crate) mod configure;
pub(crate) mod diagnostics;
pub(crate) mod entry;
pub(crate) mod evaluate;
pub(crate) mod leases;
pub(crate) mod node;
pub(crate) mod policy;
pub(crate) mod resolve;
pub(crate) mod select;
pub(crate) mod trust;
pub(crate) mod verify;

/// One operation of the wire format: its case (the implementing type), its answer, and how to
/// run it.
pub trait Operation: Sized {
    /// The one member of the answer object that names the operation (`assembly`,
    /// `verification`, ...): how an output read back from JSON is told apart.
    const ANSWER: &'static str;
    /// The answer.
    type Answer: Serialize + DeserializeOwned + JsonSchema + Clone + PartialEq + fmt::Debug;
    /// Runs the case on `imp`: the answer, a typed error the SPEC gives for these inputs, or a
    /// wire error (the case cannot be expressed).
    fn run(&self, imp: &dyn Implementation) -> Result<Self::Answer, CaseError>;
    /// The case's policy, for operations that take one (a vector group's policy fills it when
    /// the case has none).
    fn policy_slot(&mut self) -> Option<&mut Option<PolicyInput>> {
        None
    }
}

/// A typed error answer (SPEC ERR-1): `{"error": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorAnswer {
    /// The error.
    pub error: ErrorOutput,
}

/// Declares the operations: `"op" => Variant(CaseType)`, in documentation order.
macro_rules! operations {
    ($( $(#[$doc:meta])* $name:literal => $variant:ident($case:ty), )+) => {
        /// One conformance case: an operation (`op`) and its inputs, read as a
        /// [`TaggedUnion`] on `op`.
        #[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
        #[serde(tag = "op")]
        pub enum Case {
            $( $(#[$doc])* #[serde(rename = $name)] $variant($case), )+
        }

        /// The answer to one case: a typed error, or the answer of the case's operation.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum Output {
            /// A typed error (SPEC ERR-1): the SPEC rejects these inputs.
            Error(ErrorAnswer),
            $( $(#[$doc])* $variant(<$case as Operation>::Answer), )+
        }

        /// Every operation name, in documentation order.
        pub const OPERATIONS: &[&str] = &[$($name),+];

        impl Case {
            /// The operation name as written in `op`.
            pub fn op(&self) -> &'static str {
                match self {
                    $(Case::$variant(_) => $name,)+
                }
            }

            /// The case's policy slot, if its operation takes a policy.
            pub fn policy_slot(&mut self) -> Option<&mut Option<PolicyInput>> {
                match self {
                    $(Case::$variant(c) => c.policy_slot(),)+
                }
            }

            /// The case's policy, if its operation takes one and it is present.
            pub fn policy_mut(&mut self) -> Option<&mut PolicyInput> {
                self.policy_slot().and_then(Option::as_mut)
            }

            fn answer(&self, imp: &dyn Implementation) -> Result<Output, CaseError> {
                match self {
                    $(Case::$variant(c) => c.run(imp).map(Output::$variant),)+
                }
            }
        }

        impl TaggedUnion for Case {
            const TAG: &'static str = "op";
            const NAMES: &'static [&'static str] = OPERATIONS;
            const WHAT: &'static str = "operation";

            fn read_as<'de, D: Deserializer<'de>>(name: &str, rest: D) -> Result<Case, D::Error> {
                Ok(match name {
                    $($name => Case::$variant(<$case>::deserialize(rest)?),)+
                    _ => return Err(unlisted(name)),
                })
            }
        }

        impl Output {
            /// The operation this output answers; `None` for a typed error.
            pub fn op(&self) -> Option<&'static str> {
                match self {
                    Output::Error(_) => None,
                    $(Output::$variant(_) => Some($name),)+
                }
            }

            /// Reads an output from a JSON object: the answer member it carries names its
            /// operation.
            fn from_object(
                object: serde_json::Map<String, Json>,
            ) -> Result<Output, serde_json::Error> {
                if object.contains_key("error") {
                    return serde_json::from_value(Json::Object(object)).map(Output::Error);
                }
                $(
                    if object.contains_key(<$case as Operation>::ANSWER) {
                        return serde_json::from_value(Json::Object(object)).map(Output::$variant);
                    }
                )+
                Err(serde::de::Error::custom(format!(
                    "an output carries one answer member: error, {}",
                    [$(<$case as Operation>::ANSWER),+].join(", ")
                )))
            }
        }

        impl JsonSchema for Output {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                "Output".into()
            }

            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let alternatives = vec![
                    generator.subschema_for::<ErrorAnswer>(),
                    $(generator.subschema_for::<<$case as Operation>::Answer>(),)+
                ];
                schemars::json_schema!({
                    "description": "The answer to one case: a typed error, or the answer of the case's operation (one member names it).",
                    "oneOf": alternatives,
                })
            }
        }
    };
}

operations! {
    /// A full assembly (SPEC ASM-7) followed by diagnostics (SPEC DIA-5).
    "assemble" => Assemble(assemble::AssembleCase),
    /// `Verify(original, proposed)` (SPEC VER-1).
    "verify" => Verify(verify::VerifyCase),
    /// Required-preservation selection (SPEC PRE-4).
    "select" => Select(select::SelectCase),
    /// Trigger evaluation (SPEC POL-3) plus the per-entry estimates.
    "evaluate" => Evaluate(evaluate::EvaluateCase),
    /// Tool-exchange analysis (SPEC EXC-1 .. EXC-3).
    "analyze" => Analyze(analyze::AnalyzeCase),
    /// Policy construction and validation (SPEC POL-1, POL-2).
    "policy" => Policy(policy::PolicyCase),
    /// Entry construction and validation (SPEC ENT-2 .. ENT-6).
    "entry" => Entry(entry::EntryCase),
    /// Capability resolution (SPEC CAP-1 .. CAP-4).
    "resolve" => Resolve(resolve::ResolveCase),
    /// One composition call (SPEC CMP-1 .. CMP-4).
    "compose" => Compose(compose::ComposeCase),
    /// Trust configuration and a guarded provider call (SPEC TRU-1 .. TRU-3).
    "trust" => Trust(trust::TrustCase),
    /// Reference-record creation or reconstruction (SPEC ARF-1 .. ARF-3).
    "record" => Record(artifacts::record::RecordCase),
    /// Rehydration with its attribution (SPEC RHY-1 .. RHY-4, ATR-1 .. ATR-4).
    "rehydrate" => Rehydrate(artifacts::rehydration_decision::RehydrateCase),
    /// The offload decision with its attribution (SPEC OFF-1 .. OFF-3, ATR-1 .. ATR-4).
    "offload" => Offload(artifacts::offload_decision::OffloadCase),
    /// An artifact diagnostics value from given fields (SPEC ATR-2, ATR-5).
    "artifactDiagnostics" => ArtifactDiagnostics(artifacts::given::ArtifactDiagnosticsCase),
    /// Artifact decisions reported through a progress accessor to scoped and child reporters
    /// (SPEC ATR-6, EVT-7).
    "decisions" => Decisions(artifacts::decisions::DecisionsCase),
    /// The public switch of ADR-0011 (SPEC CFG-1 .. CFG-4).
    "configure" => Configure(configure::ConfigureCase),
    /// The complete-bundle agent's tool loop through the public configuration's node, beside the
    /// upstream framework's per-turn strategy (SPEC CFG-6).
    "bundle" => Bundle(bundle::BundleCase),
    /// A diagnostics record from its fields (SPEC DIA-1 .. DIA-4).
    "diagnostics" => Diagnostics(diagnostics::DiagnosticsCase),
    /// The upstream-reducer bridge on its own (SPEC BRG-1 .. BRG-3).
    "bridge" => Bridge(bridge::BridgeCase),
    /// A lease scenario (SPEC LSE-1 .. LSE-10).
    "leases" => Leases(leases::LeasesCase),
    /// A node scenario (SPEC NODE-1 .. NODE-6, EVT-1 .. EVT-6).
    "node" => Node(node::NodeCase),
}

impl<'de> Deserialize<'de> for Case {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Case, D::Error> {
        strict::tagged(d)
    }
}

impl<'de> Deserialize<'de> for Output {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Output, D::Error> {
        let object = serde_json::Map::<String, Json>::deserialize(d)?;
        Output::from_object(object).map_err(serde::de::Error::custom)
    }
}

impl Output {
    /// An error answer.
    pub fn error(e: ErrorOutput) -> Output {
        Output::Error(ErrorAnswer { error: e })
    }

    /// The typed error, if this output is one.
    pub fn as_error(&self) -> Option<&ErrorOutput> {
        match self {
            Output::Error(e) => Some(&e.error),
            _ => None,
        }
    }
}

/// Why [`run_case_caught`] produced no output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The case is not valid wire input.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The implementation panicked (a bug in it, or an unimplemented stub).
    #[error("internal failure of the {implementation}: {message}")]
    Panic {
        /// `model` or `engine`.
        implementation: &'static str,
        /// The panic payload, if it was a string.
        message: String,
    },
}

/// Runs `case` on `imp`. A wire error means the case itself is invalid.
pub fn run_case(case: &Case, imp: &dyn Implementation) -> Result<Output, WireError> {
    match case.answer(imp) {
        Ok(out) => Ok(out),
        Err(CaseError::Answer(e)) => Ok(Output::error(e)),
        Err(CaseError::Wire(e)) => Err(e),
    }
}

/// Runs `case` on `imp`, catching panics of the implementation.
pub fn run_case_caught(case: &Case, imp: &dyn Implementation) -> Result<Output, RunError> {
    match catch_unwind(AssertUnwindSafe(|| run_case(case, imp))) {
        Ok(r) => r.map_err(RunError::Wire),
        Err(payload) => {
            let message = if let Some(s) = payload.downcast_ref::<&str>() {
                (*s).to_owned()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else {
                "non-string panic payload".to_owned()
            };
            Err(RunError::Panic {
                implementation: imp.name(),
                message,
            })
        }
    }
}
