//! Estimators beyond the SPEC's UTF-8 ones: provider tokens and memoization (SPEC EST-6, EST-7).
//!
//! Like the vocabulary's constant and table estimators, these are *inputs* to assembly: a host
//! puts one in its [`Policy`](hybrid_compaction_model::policy::Policy), and both the executable
//! specification and the engine measure with it, so the equivalence of the two is unaffected.
//!
//! - [`TokenEstimator`] (feature `tokens`, on by default) counts provider tokens with a bundled
//!   BPE encoding (`o200k_base` or `cl100k_base`; GitHub's count-only `bpe-openai`, whose ranks
//!   ship inside the crate, so it works offline), the way OpenAI's chat format is counted (SPEC EST-6): a per-message
//!   overhead, the role, the text, the author name, and each tool call / tool result through its
//!   text rendering ([`text`]). It declares `EstimatedTokens`. Without the feature neither the
//!   [`tokens`] module nor the `bpe-openai` dependency is built.
//! - [`MemoEstimator`] wraps any estimator and remembers per-entry sizes by a SHA-256 digest of
//!   everything an estimator can read from an entry (SPEC EST-7), computed once per entry and
//!   kept with it, so a host that calls again with history + 1 entry estimates only the new entry
//!   and looks the others up without reading their content. It is bounded (two generations, see
//!   [`memo`]) and declares its inner estimator's unit.
//!
//! The [`text`] renderings are not gated: the transcripts' rendering of new entries uses them too.
//!
//! An example of the two together is in the [`tokens`] module.

pub mod memo;
#[cfg(feature = "tokens")]
mod o200k_ascii;
pub mod text;
#[cfg(feature = "tokens")]
pub mod tokens;

pub use memo::{MemoEstimator, MemoStats};
#[cfg(feature = "tokens")]
pub use tokens::{TokenEncoding, TokenEstimator};
