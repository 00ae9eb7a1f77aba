//! The SPEC's answer for a recorded call (SPEC TRC-1), and the answers a run keeps so that a
//! call whose replay inputs equal an earlier call's is not replayed again.
//!
//! A replay is a pure function of its inputs: the policy, the snapshot schedule (versions and
//! entries with their recorded sizes), the reducer's answers and the cancellation point. A
//! retried call (the same inputs recorded again, as a host that retries a failed provider call
//! records it) gets the same answer, so the checker keeps the last few answers of each open run
//! ([`Answers`], at most [`Answers::CAPACITY`]) under a SHA-256 digest of those inputs ([`Key`])
//! and reuses one whose digest matches. Only the answer is reused: every clause is still judged
//! against the call's own record, so a retried call reports its own violations. The digest
//! covers the inputs as the checker resolved them (for a compact record: table indices, each
//! naming one entry of its run with one recorded size), so it is only kept within a run, and
//! dropped with the run at its `runEnd`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use sha2::{Digest as _, Sha256};

use hybrid_compaction_model::error::ErrorKind;

use crate::trace::format::Phase;
use crate::wire::error::ErrorOutput;
use crate::wire::output::{AssemblyOutput, DiagnosticsOutput};

/// What the SPEC answers for a recorded call: the assembly result and its diagnostics, or the
/// error (SPEC ERR-1); when the diagnostics fail after a successful assembly, both the result
/// and that error. Also the facts the answer rests on: how many captures the SPEC's assembler
/// made and the attempt number of each reducer invocation (SPEC TRC-1).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Answer {
    /// The assembly result.
    pub assembly: Option<AssemblyOutput>,
    /// Its diagnostics.
    pub diagnostics: Option<DiagnosticsOutput>,
    /// The error.
    pub error: Option<ErrorOutput>,
    /// Captures the assembler made.
    pub captures: usize,
    /// The 1-based attempt number of each reducer invocation, in order.
    pub attempts: Vec<i32>,
    /// The token was cancelled when the assembler returned a result: the node observes it next
    /// (SPEC NODE-3 step 8) and fails with `Cancelled`.
    pub cancelled_after: bool,
}

impl Answer {
    /// The error the node raises for this answer and where (SPEC NODE-3, NODE-4): the
    /// assembler's error; else `Cancelled` when the token was cancelled by then (step 8); else a
    /// diagnostics error (step 9); else a termination's `InvalidOperation` (step 10); else none.
    pub(crate) fn expected_error(&self) -> Option<(ErrorKind, Phase)> {
        let failed = |e: &ErrorOutput| Some((e.kind.0, Phase::Assembly));
        match (&self.assembly, &self.error) {
            (None, Some(e)) => failed(e),
            (Some(_), _) if self.cancelled_after => Some((ErrorKind::Cancelled, Phase::Assembly)),
            (Some(_), Some(e)) => failed(e),
            (Some(a), None) if !a.outcome.0.is_success() => {
                Some((ErrorKind::InvalidOperation, Phase::Terminated))
            }
            _ => None,
        }
    }

    /// The diagnostics the node records (built only when it reaches step 9).
    pub(crate) fn recorded_diagnostics(&self) -> Option<&DiagnosticsOutput> {
        self.diagnostics.as_ref().filter(|_| !self.cancelled_after)
    }
}

/// A digest of a replay's inputs, fed field by field: every field is written with a tag and
/// every variable-length field with its length, so two different input sequences never write
/// the same bytes. Numbers are written as LEB128 varints (self-delimiting: a table index takes
/// one or two bytes, not eight), and the fields are gathered into one buffer hashed once, at
/// [`Key::finish`] (a call's key has a few hundred fields).
#[derive(Debug, Clone, Default)]
pub(crate) struct Key(Vec<u8>);

impl Key {
    /// A fresh digest.
    pub(crate) fn new() -> Key {
        Key(Vec::with_capacity(512))
    }

    /// A field tag.
    pub(crate) fn tag(&mut self, tag: u8) -> &mut Key {
        self.0.push(tag);
        self
    }

    /// A number.
    pub(crate) fn number(&mut self, mut n: u64) -> &mut Key {
        while n >= 0x80 {
            self.0.push(((n & 0x7f) as u8) | 0x80);
            n >>= 7;
        }
        self.0.push((n & 0x7f) as u8);
        self
    }

    /// A byte string, length first.
    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut Key {
        self.number(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }

    /// The digest.
    pub(crate) fn finish(self) -> [u8; 32] {
        Sha256::digest(&self.0).into()
    }
}

/// The last few answers of one run, by the digest of their inputs (most recently used first).
#[derive(Debug, Default)]
pub(crate) struct Answers {
    slots: Mutex<VecDeque<([u8; 32], Arc<Answer>)>>,
}

impl Answers {
    /// Answers kept per run: a retried call comes soon after the call it retries.
    pub(crate) const CAPACITY: usize = 8;

    /// The answer kept under `key`, if any.
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Arc<Answer>> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let at = slots.iter().position(|(k, _)| k == key)?;
        let hit = slots.remove(at)?;
        let answer = Arc::clone(&hit.1);
        slots.push_front(hit);
        Some(answer)
    }

    /// Keeps `answer` under `key`, forgetting the least recently used answer beyond
    /// [`Answers::CAPACITY`].
    pub(crate) fn put(&self, key: [u8; 32], answer: Arc<Answer>) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if slots.iter().any(|(k, _)| *k == key) {
            return;
        }
        slots.push_front((key, answer));
        slots.truncate(Self::CAPACITY);
    }
}

#[cfg(test)]
mod tests {
    use super::Key;

    fn key(f: impl Fn(&mut Key)) -> [u8; 32] {
        let mut k = Key::new();
        f(&mut k);
        k.finish()
    }

    /// Numbers are LEB128 (300 is `AC 02`), and input sequences that a truncating or
    /// fixed-width encoding would confuse get different keys.
    #[test]
    fn numbers_are_self_delimiting_varints() {
        let mut k = Key::new();
        k.number(300).number(0).number(u64::MAX);
        assert_eq!(&k.0[..3], &[0xAC, 0x02, 0x00]);
        assert_eq!(k.0.len(), 3 + 10);
        let seqs: [&[u64]; 6] = [&[300], &[44], &[44, 2], &[128], &[0, 1], &[1 << 35]];
        let keys: Vec<[u8; 32]> = seqs
            .iter()
            .map(|s| {
                key(|k| {
                    for &n in *s {
                        k.number(n);
                    }
                })
            })
            .collect();
        for i in 0..keys.len() {
            for j in 0..i {
                assert_ne!(keys[i], keys[j], "{:?} and {:?}", seqs[i], seqs[j]);
            }
        }
        let ab = key(|k| {
            k.bytes(b"ab");
        });
        let a_then_b = key(|k| {
            k.bytes(b"a").tag(b'b');
        });
        assert_ne!(ab, a_then_b);
    }
}
