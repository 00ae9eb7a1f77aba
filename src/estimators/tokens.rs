//! The provider-token estimator (SPEC EST-6), unit `EstimatedTokens`.
//!
//! Counting follows OpenAI's cookbook for chat messages ("How to count tokens with tiktoken":
//! `tokens_per_message = 3`, `tokens_per_name = 1`) and, for tool calls, the rule of the
//! `tiktoken-rs` crate's `num_tokens_from_messages` (name + arguments + 1). Per entry:
//!
//! ```text
//! 3 + T(role) + T(message text) + [T(author) + 1 if an author is present]
//!   + Σ over call parts   (T(name) + T(compact JSON of the arguments, "" if absent) + 1)
//!   + Σ over result parts T(result text)
//! ```
//!
//! `T(s)` is the number of tokens of `encode_ordinary(s)` (special-token text such as
//! `<|endoftext|>` counts as ordinary text, as a provider treats user content); `T("") = 0`. The
//! message text is the concatenation of the text parts (SPEC ENT-3); renderings are in
//! [`super::text`]. Call ids are not counted (a provider's model-facing rendering carries none),
//! and neither is the `+3` reply priming of a request, which belongs to the request, not to an
//! entry: a host reserves it (and its tool definitions) in the hard limit.
//!
//! **The counter.** `T` is GitHub's linear-time byte-pair encoder (`bpe-openai`, the `bpe`
//! crate's backtracking encoder behind the encodings' pre-tokenizer regexes): it counts the tokens
//! of each pre-tokenized piece without building the token vector tiktoken returns, and gives the
//! same count as tiktoken's `encode_ordinary` for every text (a differential test checks it
//! against `tiktoken-rs` on more than 100,000 stressing strings per encoding, and the golden
//! counts against Python tiktoken). Each encoding is loaded once per process (the crate's lazily
//! initialised singletons) from tables its build script derives from the rank files shipped in
//! the package, so neither building nor counting touches the network. In front of the encoder
//! sits tiktoken's own shortcut: a piece that is itself a token counts 1 (a set of the
//! vocabulary's byte strings, built with the encoding), so the common whole-word pieces skip the
//! backtracking encoder and its per-piece allocations (`benches/estimate.rs`, `Counter`); and
//! `o200k_base` splits a pure-ASCII text without the regex (the private `o200k_ascii` module,
//! tiktoken's pattern restricted to ASCII). The module and that dependency exist with the crate
//! feature `tokens` (on by default).
//!
//! **One walk, no copies.** [`TokenEstimator::texts`] walks the message once and hands each
//! counted text to the counter as a borrowed `&str`: the role, the author, the message text
//! (borrowed when at most one text part is non-empty, the common case; concatenated otherwise,
//! because BPE pieces may span a part boundary), each call's name and argument JSON (rendered
//! into one buffer reused for every part of the message) and each result's text (a string
//! result borrowed). The count and the texts exported for a side-by-side run
//! (`hybrid-compaction bench --texts`) are therefore the same walk.
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

use std::borrow::Cow;
use std::sync::LazyLock;

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::value::Value;
use rustc_hash::FxHashSet;

use super::text::{write_json, write_map_json};

/// Overhead tokens per message (SPEC EST-6; the cookbook's `tokens_per_message`).
pub const TOKENS_PER_MESSAGE: usize = 3;
/// Extra tokens when the message has an author name (the cookbook's `tokens_per_name`).
pub const TOKENS_PER_NAME: usize = 1;
/// Extra tokens per tool call part (`tiktoken-rs`'s function-call overhead).
pub const TOKENS_PER_CALL: usize = 1;

/// A bundled BPE encoding (SPEC EST-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TokenEncoding {
    /// `o200k_base` (GPT-4o, GPT-4.1, o-series, GPT-5).
    O200kBase,
    /// `cl100k_base` (GPT-4, GPT-3.5-turbo, text-embedding-3).
    Cl100kBase,
}

impl TokenEncoding {
    /// Every encoding, in declaration order.
    pub const ALL: [TokenEncoding; 2] = [TokenEncoding::O200kBase, TokenEncoding::Cl100kBase];

    /// The encoding's name as tiktoken spells it.
    pub fn name(self) -> &'static str {
        match self {
            TokenEncoding::O200kBase => "o200k_base",
            TokenEncoding::Cl100kBase => "cl100k_base",
        }
    }

    /// Parses a name (`o200k_base`, `cl100k_base`).
    pub fn from_name(name: &str) -> Option<TokenEncoding> {
        TokenEncoding::ALL.into_iter().find(|e| e.name() == name)
    }

    /// `T(text)`: the number of ordinary tokens of `text` (SPEC EST-6), counted without
    /// materialising them.
    pub fn count(self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        self.counter().count(text)
    }

    fn counter(self) -> &'static Counter {
        static O200K: LazyLock<Counter> =
            LazyLock::new(|| Counter::new(bpe_openai::o200k_base(), true));
        static CL100K: LazyLock<Counter> =
            LazyLock::new(|| Counter::new(bpe_openai::cl100k_base(), false));
        match self {
            TokenEncoding::O200kBase => &O200K,
            TokenEncoding::Cl100kBase => &CL100K,
        }
    }
}

/// One encoding's counter: the pre-tokenizer and BPE of `bpe-openai`, with tiktoken's own
/// shortcut in front: a piece that is itself a token counts 1 (tiktoken's `encode_ordinary`
/// returns that token without merging; `bpe` asserts when it builds a dictionary that every
/// token encodes to itself, so the shortcut gives the very count the encoder would), and only
/// pieces that are not tokens run the backtracking encoder. No NFC step: neither encoding
/// normalizes (`bpe-openai` builds both without it).
struct Counter {
    tokenizer: &'static bpe_openai::Tokenizer,
    tokens: FxHashSet<&'static [u8]>,
    /// Whether an ASCII text is split by [`super::o200k_ascii`] rather than the regex
    /// (`o200k_base` only).
    o200k_ascii: bool,
}

impl Counter {
    fn new(tokenizer: &'static bpe_openai::Tokenizer, o200k_ascii: bool) -> Counter {
        let bpe = &tokenizer.bpe;
        let ids = 0..u32::try_from(bpe.num_tokens()).expect("a vocabulary below 2^32 tokens");
        Counter {
            tokenizer,
            tokens: ids.map(|id| bpe.token_bytes(id)).collect(),
            o200k_ascii,
        }
    }

    fn count(&self, text: &str) -> usize {
        if self.o200k_ascii && text.is_ascii() {
            super::o200k_ascii::pieces(text)
                .map(|p| self.piece(p))
                .sum()
        } else {
            self.tokenizer.split(text).map(|p| self.piece(p)).sum()
        }
    }

    fn piece(&self, piece: &str) -> usize {
        let piece = piece.as_bytes();
        if self.tokens.contains(piece) {
            1
        } else {
            self.tokenizer.bpe.count(piece)
        }
    }
}

impl std::fmt::Display for TokenEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Estimates an entry's size in provider tokens (SPEC EST-6), unit `EstimatedTokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenEstimator {
    encoding: TokenEncoding,
}

impl TokenEstimator {
    /// An estimator counting with `encoding`.
    pub fn new(encoding: TokenEncoding) -> TokenEstimator {
        TokenEstimator { encoding }
    }

    /// The encoding.
    pub fn encoding(&self) -> TokenEncoding {
        self.encoding
    }

    /// The EST-6 chat count of one message (unbounded).
    pub fn message_tokens(&self, message: &Message) -> usize {
        let mut total = 0;
        let overhead = TokenEstimator::texts(message, |text| total += self.encoding.count(text));
        overhead + total
    }

    /// Calls `counted` with every text SPEC EST-6 counts in `message`, in order (role, author,
    /// message text, then per call part its name and argument JSON, per result part its text and
    /// per block without a token count its JSON; empty texts included), and returns the fixed
    /// overhead tokens (the blocks' given counts, and 3, +1 with an author,
    /// +1 per call part): the chat count is the overhead plus `T` of each text.
    pub fn texts(message: &Message, mut counted: impl FnMut(&str)) -> usize {
        let mut overhead = TOKENS_PER_MESSAGE;
        counted(&message.role);
        if let Some(author) = &message.author {
            counted(author);
            overhead += TOKENS_PER_NAME;
        }
        counted(&message_text(message));
        let mut json = String::new();
        for part in &message.parts {
            match part {
                Part::Text(_) => {}
                Part::Call(call) => {
                    counted(&call.name);
                    json.clear();
                    if let Some(arguments) = &call.arguments {
                        write_map_json(arguments, &mut json);
                    }
                    counted(&json);
                    overhead += TOKENS_PER_CALL;
                }
                Part::Result(result) => match &result.value {
                    Value::String(text) => counted(text),
                    other => {
                        json.clear();
                        write_json(other, &mut json);
                        counted(&json);
                    }
                },
                // SPEC EST-6: the tokens its provider charges, where the adapter gave them; else
                // the tokens of its JSON.
                Part::Block(block) => match block.tokens {
                    Some(t) => overhead += t as usize,
                    None => counted(&block.json),
                },
            }
        }
        overhead
    }
}

/// The message text (SPEC ENT-3): borrowed when at most one text part is non-empty, else the
/// concatenation (BPE pieces may span a part boundary, so the parts cannot be counted apart).
fn message_text(message: &Message) -> Cow<'_, str> {
    let mut texts = message.parts.iter().filter_map(|p| match p {
        Part::Text(t) if !t.is_empty() => Some(t.as_str()),
        _ => None,
    });
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut joined = String::from(first);
            joined.push_str(second);
            texts.for_each(|t| joined.push_str(t));
            Cow::Owned(joined)
        }
    }
}

impl Estimator for TokenEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::EstimatedTokens
    }

    /// The EST-6 count, saturated at `i32::MAX` (then POL-3's checked sum reports the overflow).
    fn estimate(&self, entry: &Entry) -> i32 {
        i32::try_from(self.message_tokens(entry.message())).unwrap_or(i32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hybrid_compaction_model::message::FunctionCall;
    use hybrid_compaction_model::value::{Value, ValueMap};

    #[test]
    fn names_round_trip() {
        for e in TokenEncoding::ALL {
            assert_eq!(TokenEncoding::from_name(e.name()), Some(e));
        }
        assert_eq!(TokenEncoding::from_name("p50k_base"), None);
    }

    #[test]
    fn chat_count_adds_overheads() {
        let est = TokenEstimator::new(TokenEncoding::Cl100kBase);
        let enc = est.encoding();
        let mut m = Message::text("user", "hello world");
        assert_eq!(est.message_tokens(&m), 3 + 1 + 2);
        m.author = Some("alice".into());
        assert_eq!(est.message_tokens(&m), 3 + 1 + 2 + enc.count("alice") + 1);
        let mut args = ValueMap::new();
        args.insert("q".into(), Value::String("x".into()));
        let call = Message::new(
            "assistant",
            vec![Part::Call(FunctionCall {
                call_id: "call_1".into(),
                name: "search".into(),
                arguments: Some(args),
                informational_only: false,
            })],
        );
        let expected =
            3 + enc.count("assistant") + enc.count("search") + enc.count("{\"q\":\"x\"}") + 1;
        assert_eq!(est.message_tokens(&call), expected);
    }
}
