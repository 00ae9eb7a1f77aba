//! # hybrid-compaction
//!
//! Hybrid context compaction for LLM agents (ADR-0007): at **every provider call**, decide
//! deterministically what part of a long-lived agent's history is sent, so that the context never
//! exceeds a hard limit, required content and tool exchanges survive intact, and a body recovered
//! from an artifact reaches the provider at most once per outer run.
//!
//! This crate is the optimized implementation a host embeds. Its vocabulary (entries, policy,
//! snapshots, outcomes, ...) is the crate `hybrid-compaction-model`, re-exported as [`model`].
//! The executable specification it is proven equal to is the crate `hybrid-compaction-spec`,
//! which this crate does **not** depend on: engine, lease and node code cannot call the
//! specification, by construction of the build. `docs/SPEC.md` is the normative text both cite.
//! The conformance oracle (wire format, JSON Schema, vector corpus, the `hybrid-compaction`
//! command) is the crate `hybrid-compaction-oracle`; nothing here depends on it.
//!
//! ## Contents
//! - [`engine`]: the assembly engine (estimation, tool-exchange analysis, required preservation,
//!   verifier, the assembler state machine, reducer bridge, classifier, diagnostics). Same inputs
//!   and outputs as the specification's functions, its own algorithms; no I/O, no clock, no
//!   randomness.
//! - [`estimators`]: estimators a host passes in its policy besides the SPEC's UTF-8 ones:
//!   provider tokens with a bundled BPE encoding (SPEC EST-6; feature `tokens`) and a memo that
//!   estimates each distinct entry once across calls (SPEC EST-7).
//! - [`lease`]: non-retransmission leases: run scopes, the per-run coordinator, the one-call gate,
//!   the lease-filtering snapshot provider; written against [`sync`] so loom checks this code.
//! - [`transcript`]: OpenAI chat, Anthropic messages and LangChain transcripts to entries (ids,
//!   kinds by CLS-1 with overrides) and the bounded list back into the same format (SPEC TRN;
//!   feature `transcripts`).
//! - [`compose`]: selected-provider composition through capability resolution, and trust
//!   revalidation (SPEC CMP, CAP, TRU): the fail-closed way a node comes to exist.
//! - [`node`]: the per-provider-call seam: wraps a provider client, assembles, dispatches, settles
//!   the lease, and reports privacy-safe events sharing one `AssemblyId`.
//!
//! ## Design overview: one provider call
//! ```text
//!  node::CompactionNode::call(messages)
//!   | ensure run scope, enter the run's gate, take a lease          (lease; SPEC LSE-6, LSE-7)
//!   | adapt messages -> entries (classifier)                         (engine::classify; CLS-1)
//!   | snapshot integration -> provider, wrapped by the lease filter  (lease; LSE-8)
//!   | AssemblyId, emit Started                                       (node; EVT-2, EVT-5)
//!   v
//!  engine::assemble (pure: provider, reducer, estimator, cancellation injected)
//!   snapshot --> size < threshold? --yes--> verify(cur, cur) --> recapture --> WithinLimit
//!      | no                                                                     (ASM-7)
//!   evict durable bodies --> margin restored? --> verify --> recapture --> Reduced (ASM-8)
//!      | no
//!   reducer attempts (bounded; each proposal verified and sized) --> Reduced      (VER-1)
//!      | none fits
//!   deterministic fallback --> PreservationFallback | Irreducible               (ASM-9)
//!   version changed at a recapture --> restart | ConcurrentMutationLimit    (ASM-5, ASM-6)
//!   v
//!  diagnostics (same estimator) --> Terminated + error | Completed, Composed    (DIA, EVT-2)
//!   | dispatch the bounded messages to the provider client
//!   | commit the lease with the forwarded bodies, or release it on any failure   (LSE-3, LSE-4)
//!   v leave the gate, then the scope
//! ```
//!
//! The snapshot provider, reducer, estimator, classifier, clock, id source and progress sink are
//! small traits passed in, so the same assembler runs under proptest, loom, the fuzzer, the CLI
//! and a real agent.
//!
//! ## Features
//! A host pays only for what it uses. Without default features the crate is the engine, the
//! memo estimator, leases, node and composition over the vocabulary crate.
//!
//! | Feature | Default | Gates | Dependency |
//! |---|---|---|---|
//! | `tokens` | yes | `estimators::tokens` (`TokenEstimator`, `TokenEncoding`; SPEC EST-6) | `bpe-openai` (count-only BPE, its ranks bundled) |
//! | `transcripts` | yes | the `transcript` module (SPEC TRN) | `serde_json` |

// No unsafe code anywhere (forbid: cannot be re-allowed below); every public item documented,
// because the docs carry the SPEC citations a reviewer follows.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// The contents above link the feature-gated modules; without the feature those links dangle,
// which is what the feature table says, not a broken document.
#![cfg_attr(
    not(all(feature = "tokens", feature = "transcripts")),
    allow(rustdoc::broken_intra_doc_links)
)]

pub mod compose;
pub mod engine;
pub mod estimators;
pub mod lease;
pub mod node;
#[cfg(feature = "testing")]
pub mod seam;
pub mod sync;
#[cfg(feature = "transcripts")]
pub mod transcript;

pub use hybrid_compaction_model as model;
