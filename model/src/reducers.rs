//! Reducers usable by the model, the engine and the vectors (SPEC ASM-4, BRG-1).
//!
//! - [`ScriptedReducer`]: entry-level, plays one [`ScriptStep`] per attempt; for tests/vectors.
//! - [`UpstreamReducer`]: the message-level seam of an untrusted upstream chat reducer, bridged to
//!   entries by `spec::bridge` (model) or the engine's bridge.
//! - [`MessageCountingReducer`]: a real upstream reducer in the spirit of
//!   Microsoft.Extensions.AI's `MessageCountingChatReducer`: keep system messages and the last N
//!   others.
//! - [`ScriptedUpstreamReducer`]: message-level script, for bridge tests and vectors.
//!
//! The scripted doubles ([`ScriptedReducer`], [`ScriptStep`], [`ProposalItem`], [`CancelAtCall`],
//! [`ScriptedUpstreamReducer`], [`UpstreamStep`]) exist with the crate feature `testing` (see the
//! crate docs); the seam and [`MessageCountingReducer`] are always there.

#[cfg(feature = "testing")]
use rustc_hash::FxHashMap;
use std::error::Error;
use std::fmt;
use std::sync::Arc;

#[cfg(feature = "testing")]
use crate::assembly::{ContractViolation, Reducer, ReducerError, ReductionRequest};
#[cfg(feature = "testing")]
use crate::cancel::CancellationToken;
#[cfg(feature = "testing")]
use crate::entry::{Entry, EntryId};
use crate::message::{Message, ROLE_SYSTEM};

#[cfg(feature = "testing")]
/// One item of a scripted proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum ProposalItem {
    /// Keep the request entry with this id (unknown id: the reducer fails).
    Keep(String),
    /// Keep the request entry with this entry's id: [`ProposalItem::Keep`] of its id, written
    /// without a copy of the id (a replay that holds the entry it names).
    KeepIdOf(Entry),
    /// Add this entry (any kind, any id: the verifier judges it).
    New(Entry),
}

#[cfg(feature = "testing")]
/// What a scripted reducer does at one attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptStep {
    /// Return these items, in this order.
    Propose(Vec<ProposalItem>),
    /// Return the request entries unchanged (non-progressing).
    Echo,
    /// Fail with this opaque message.
    Fail(String),
    /// Return nothing (an invalid-operation error, SPEC ASM-4).
    Nothing,
    /// Break the reducer contract this way (a `ReducerContract` error, SPEC BRG-1).
    Contract(ContractViolation),
}

#[cfg(feature = "testing")]
/// An entry-level reducer playing one step per invocation; past the end it echoes.
#[derive(Debug, Clone, Default)]
pub struct ScriptedReducer {
    steps: Arc<[ScriptStep]>,
    calls: usize,
}

#[cfg(feature = "testing")]
impl ScriptedReducer {
    /// A reducer playing `steps` in order.
    pub fn new(steps: Vec<ScriptStep>) -> ScriptedReducer {
        ScriptedReducer::shared(steps.into())
    }

    /// A reducer playing shared `steps` in order: a script replayed many times (a trace
    /// checker's replay, a shrinker's candidates) is built once and never copied.
    pub fn shared(steps: Arc<[ScriptStep]>) -> ScriptedReducer {
        ScriptedReducer { steps, calls: 0 }
    }

    /// This reducer, setting `token` during its `call`-th invocation (0-based), before answering.
    pub fn cancel_at_call(self, call: usize, token: CancellationToken) -> CancelAtCall<Self> {
        CancelAtCall::at(self, call, token)
    }

    /// How many times the reducer was invoked.
    pub fn calls(&self) -> usize {
        self.calls
    }
}

#[cfg(feature = "testing")]
impl Reducer for ScriptedReducer {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        let k = self.calls;
        self.calls += 1;
        match self.steps.get(k).unwrap_or(&ScriptStep::Echo) {
            ScriptStep::Echo => Ok(Some(request.entries.to_vec())),
            ScriptStep::Nothing => Ok(None),
            ScriptStep::Fail(message) => {
                Err(ReducerError::Failed(UpstreamError::msg(message.clone())))
            }
            ScriptStep::Contract(v) => Err(ReducerError::Contract(v.clone())),
            ScriptStep::Propose(items) => {
                let find = KeptLookup::new(items, request.entries);
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        ProposalItem::New(entry) => out.push(entry.clone()),
                        ProposalItem::KeepIdOf(e) => match find.get_id(e.id()) {
                            Some(entry) => out.push(entry.clone()),
                            None => {
                                return Err(ReducerError::Failed(UpstreamError::msg(format!(
                                    "scripted reducer: no request entry `{}`",
                                    e.id().as_str()
                                ))))
                            }
                        },
                        ProposalItem::Keep(id) => match find.get(id) {
                            Some(entry) => out.push(entry.clone()),
                            None => {
                                return Err(ReducerError::Failed(UpstreamError::msg(format!(
                                    "scripted reducer: no request entry `{id}`"
                                ))))
                            }
                        },
                    }
                }
                Ok(Some(out))
            }
        }
    }
}

#[cfg(feature = "testing")]
/// Finds the request entry a kept id names: the first entry with that id, as a positional
/// search would find it. A proposal keeping a few ids scans the request once per id (no
/// allocation); one keeping more builds an id index once, so n kept ids cost O(n), not O(n^2).
enum KeptLookup<'r> {
    Scan(&'r [Entry]),
    Index(FxHashMap<&'r str, &'r Entry>),
}

#[cfg(feature = "testing")]
impl<'r> KeptLookup<'r> {
    /// Kept ids up to which a scan per id is cheaper than an index of the request.
    const SCAN: usize = 8;

    fn new(items: &[ProposalItem], request: &'r [Entry]) -> KeptLookup<'r> {
        let kept = items
            .iter()
            .filter(|i| matches!(i, ProposalItem::Keep(_) | ProposalItem::KeepIdOf(_)))
            .count();
        if kept <= Self::SCAN {
            return KeptLookup::Scan(request);
        }
        let mut by_id = FxHashMap::with_capacity_and_hasher(request.len(), Default::default());
        for entry in request {
            by_id.entry(entry.id().as_str()).or_insert(entry);
        }
        KeptLookup::Index(by_id)
    }

    fn get(&self, id: &str) -> Option<&'r Entry> {
        match self {
            KeptLookup::Scan(request) => request.iter().find(|e| e.id().as_str() == id),
            KeptLookup::Index(by_id) => by_id.get(id).copied(),
        }
    }

    /// [`KeptLookup::get`] for the id of an entry: a scan compares ids as ids (another handle
    /// of the same id is equal without reading its text, [`EntryId`]'s equality).
    fn get_id(&self, id: &EntryId) -> Option<&'r Entry> {
        match self {
            KeptLookup::Scan(request) => request.iter().find(|e| e.id() == id),
            KeptLookup::Index(by_id) => by_id.get(id.as_str()).copied(),
        }
    }
}

#[cfg(feature = "testing")]
/// Wraps any reducer and sets a cancellation token during its k-th invocation (0-based), before
/// delegating: how tests and vectors name the cancellation point "reducer:k" (SPEC ASM-16).
#[derive(Debug)]
pub struct CancelAtCall<R> {
    inner: R,
    calls: usize,
    at: Option<(usize, CancellationToken)>,
}

#[cfg(feature = "testing")]
impl<R> CancelAtCall<R> {
    /// Sets `token` during the `call`-th invocation of `inner`.
    pub fn at(inner: R, call: usize, token: CancellationToken) -> CancelAtCall<R> {
        CancelAtCall {
            inner,
            calls: 0,
            at: Some((call, token)),
        }
    }

    /// Never cancels: `inner` unchanged.
    pub fn never(inner: R) -> CancelAtCall<R> {
        CancelAtCall {
            inner,
            calls: 0,
            at: None,
        }
    }

    /// The wrapped reducer.
    pub fn inner(&self) -> &R {
        &self.inner
    }
}

#[cfg(feature = "testing")]
impl<R: Reducer> Reducer for CancelAtCall<R> {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        let k = self.calls;
        self.calls += 1;
        if let Some((at, token)) = &self.at {
            if *at == k {
                token.cancel();
            }
        }
        self.inner.reduce(request)
    }
}

/// An upstream reducer's own failure (SPEC BRG-1): the host's error, kept whole as this error's
/// [`source`](Error::source), or a plain message. The assembly fails with it as a
/// `ReducerFailed` error ([`crate::assembly::ReducerError::Failed`]), which keeps it, so a host
/// finds its own error again by walking the chain from the node's error and downcasting. Its
/// text never reaches an event or diagnostics (SPEC EVT-6).
///
/// Cloning shares the host's error (an [`Arc`]). Equality compares what the SPEC observes, the
/// rendered text (SPEC ERR-1: a failure's message is informative), not the host's values, which
/// need not be comparable. The text is rendered after `upstream reducer failed: ` (and after
/// `reducer failed: ` by the assembly's error, as before), so a reporter that prints the chain
/// shows the host's text twice: the first line keeps the messages hosts already see.
#[derive(Clone)]
pub struct UpstreamError {
    cause: Cause,
}

/// What an [`UpstreamError`] holds.
#[derive(Clone)]
enum Cause {
    /// A plain message ([`UpstreamError::msg`]): there is no source.
    Message(Arc<str>),
    /// The host's own error ([`UpstreamError::new`], [`UpstreamError::from_boxed`]).
    Host(Arc<dyn Error + Send + Sync + 'static>),
}

impl UpstreamError {
    /// The upstream reducer failed with the host's own `error`, kept as the
    /// [`source`](Error::source) (downcast it to `E` to get it back).
    pub fn new<E: Error + Send + Sync + 'static>(error: E) -> UpstreamError {
        UpstreamError {
            cause: Cause::Host(Arc::new(error)),
        }
    }

    /// The upstream reducer failed with an already boxed error (a `Box<dyn Error>` is not itself
    /// an [`Error`]), kept as the [`source`](Error::source) without boxing it again.
    pub fn from_boxed(error: Box<dyn Error + Send + Sync + 'static>) -> UpstreamError {
        UpstreamError {
            cause: Cause::Host(Arc::from(error)),
        }
    }

    /// The upstream reducer failed with a plain `message` and no error of its own
    /// ([`source`](Error::source) is `None`).
    pub fn msg(message: impl Into<String>) -> UpstreamError {
        UpstreamError {
            cause: Cause::Message(Arc::from(message.into())),
        }
    }

    /// The failure's own text (the host's error rendered, or the message), without the prefix:
    /// what `reducer failed: ` is followed by (SPEC BRG-1, ASM-4).
    pub(crate) fn detail(&self) -> &dyn fmt::Display {
        match &self.cause {
            Cause::Message(m) => m,
            Cause::Host(e) => e,
        }
    }
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "upstream reducer failed: {}", self.detail())
    }
}

impl fmt::Debug for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            Cause::Message(m) => f.debug_tuple("UpstreamError").field(m).finish(),
            Cause::Host(e) => f.debug_tuple("UpstreamError").field(e).finish(),
        }
    }
}

impl Error for UpstreamError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.cause {
            Cause::Message(_) => None,
            Cause::Host(e) => Some(&**e),
        }
    }
}

/// By the rendered text (see the type's docs).
impl PartialEq for UpstreamError {
    fn eq(&self, other: &UpstreamError) -> bool {
        self.detail().to_string() == other.detail().to_string()
    }
}

impl Eq for UpstreamError {}

/// The message-level seam of an untrusted upstream chat reducer (SPEC BRG-1).
pub trait UpstreamReducer {
    /// Reduces messages; `Ok(None)` models a null result (a contract error, SPEC BRG-1).
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError>;
}

impl<U: UpstreamReducer + ?Sized> UpstreamReducer for &mut U {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        (**self).reduce(messages)
    }
}

impl<U: UpstreamReducer + ?Sized> UpstreamReducer for Box<U> {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        (**self).reduce(messages)
    }
}

/// Keep every `system` message and the last `target_count` other messages, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageCountingReducer {
    /// How many non-system messages to keep.
    pub target_count: usize,
}

impl UpstreamReducer for MessageCountingReducer {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        let others = messages.iter().filter(|m| m.role != ROLE_SYSTEM).count();
        let mut skip = others.saturating_sub(self.target_count);
        let mut out = Vec::new();
        for m in messages {
            if m.role == ROLE_SYSTEM {
                out.push(m.clone());
            } else if skip > 0 {
                skip -= 1;
            } else {
                out.push(m.clone());
            }
        }
        Ok(Some(out))
    }
}

#[cfg(feature = "testing")]
/// One step of a [`ScriptedUpstreamReducer`].
#[derive(Debug, Clone, PartialEq)]
pub enum UpstreamStep {
    /// Return these messages.
    Return(Vec<Message>),
    /// Return the input unchanged.
    Echo,
    /// Return null.
    Null,
    /// Fail with this message.
    Fail(String),
}

#[cfg(feature = "testing")]
/// A message-level reducer playing one step per invocation; past the end it echoes.
#[derive(Debug, Clone, Default)]
pub struct ScriptedUpstreamReducer {
    steps: Vec<UpstreamStep>,
    calls: usize,
}

#[cfg(feature = "testing")]
impl ScriptedUpstreamReducer {
    /// A reducer playing `steps` in order.
    pub fn new(steps: Vec<UpstreamStep>) -> ScriptedUpstreamReducer {
        ScriptedUpstreamReducer { steps, calls: 0 }
    }
}

#[cfg(feature = "testing")]
impl UpstreamReducer for ScriptedUpstreamReducer {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        let k = self.calls;
        self.calls += 1;
        match self.steps.get(k).unwrap_or(&UpstreamStep::Echo) {
            UpstreamStep::Return(out) => Ok(Some(out.clone())),
            UpstreamStep::Echo => Ok(Some(messages.to_vec())),
            UpstreamStep::Null => Ok(None),
            UpstreamStep::Fail(msg) => Err(UpstreamError::msg(msg.clone())),
        }
    }
}
