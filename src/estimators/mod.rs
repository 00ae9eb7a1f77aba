//! Estimators beyond the SPEC's UTF-8 ones: provider tokens and memoization (SPEC EST-6, EST-7).
//!
//! Like the vocabulary's constant and table estimators, these are *inputs* to assembly: a host
//! puts one in its [`Policy`](hybrid_compaction_model::policy::Policy), and both the executable
//! specification and the engine measure with it, so the equivalence of the two is unaffected.
//!
//! - [`TokenEstimator`] counts provider tokens with a bundled BPE encoding (`o200k_base` or
//!   `cl100k_base`, the ranks ship inside the `tiktoken-rs` crate, so it works offline), the way
//!   OpenAI's chat format is counted (SPEC EST-6): a per-message overhead, the role, the text,
//!   the author name, and each tool call / tool result through its text rendering ([`text`]).
//!   It declares `EstimatedTokens`.
//! - [`MemoEstimator`] wraps any estimator and remembers per-entry sizes by a SHA-256 digest of
//!   everything an estimator can read from an entry (SPEC EST-7), so a host that calls again with
//!   history + 1 entry estimates only the new entry. It is bounded (two generations, see
//!   [`memo`]) and declares its inner estimator's unit.
//!
//! ```
//! use std::sync::Arc;
//! use hybrid_compaction::estimators::{MemoEstimator, TokenEncoding, TokenEstimator};
//! use hybrid_compaction::model::entry::{Entry, EntryKind};
//! use hybrid_compaction::model::estimator::{Estimator, MeasurementUnit};
//! use hybrid_compaction::model::message::Message;
//!
//! let tokens = MemoEstimator::new(Arc::new(TokenEstimator::new(TokenEncoding::O200kBase)));
//! let entry = Entry::new("m1", EntryKind::ConversationalMessage, Message::text("user", "Hello!"))
//!     .unwrap();
//! // 3 (message overhead) + 1 ("user") + 2 ("Hello", "!") under o200k_base.
//! assert_eq!(tokens.estimate(&entry), 6);
//! assert_eq!(tokens.unit(), MeasurementUnit::EstimatedTokens);
//! ```

pub mod memo;
pub mod text;
pub mod tokens;

pub use memo::{MemoEstimator, MemoStats};
pub use tokens::{TokenEncoding, TokenEstimator};
