//! Composition, capability resolution and trust configuration (SPEC CMP-1 .. CMP-4, CAP-3,
//! CAP-4, TRU-1 .. TRU-3; C# S73-S77; ADR-0007 "a single, explicit, experimental opt-in"), and
//! the public configuration path of ADR-0011 ([`configuration`], SPEC CFG-1 .. CFG-5).
//!
//! The library's own implementation of the selection the executable specification writes as
//! `hybrid_compaction_spec::{composition, capability, trust}` (this crate cannot call it; the
//! clause suite, `tests/clauses/composition.rs`, runs the same clause tests on both). The
//! vocabulary (capability profiles, statuses, trust bindings, guards) is the model's.
//!
//! ```text
//! compose(Composition { client, chain, capabilities, binding, accessor, session, profile })
//!   missing input -> NullArgument; blank session -> InvalidArgument           (CMP-3 1-2)
//!   capability::effective_state(Compaction) + profile?  -> a failure status  (CMP-3 3-5, CAP-3)
//!   neither -> Disabled (the client handed back, no node)                    (CMP-3 6)
//!   capability::is_executable? chain has a compaction component?             (CMP-3 7-8, CAP-4)
//!   Success -> trust::configure(binding, accessor, session) -> CompactionNode::with_trust
//!                                                           (exactly one node, CMP-4, TRU-1)
//! node call: trust::revalidate at NODE-3 step 1 and step 12                (TRU-2, TRU-3)
//! ```
//!
//! Design: every decision is made on borrowed inputs before the node is built, so a failure
//! status leaves nothing behind but the caller's own client (CMP-4: "before any node exists");
//! the node is built in exactly one place ([`composition::compose`] on `Success`).
//!
//! Imports point one way, composition -> node: trust configuration and revalidation run per
//! provider call, so they live in the node ([`crate::node::trust`]); they are re-exported here
//! ([`trust`], [`configure`], [`revalidate`]) because composition is where a host configures
//! them.

pub mod capability;
pub mod composition;
pub mod configuration;

pub use crate::node::trust;
pub use capability::{effective_state, is_executable, is_requested};
pub use composition::{compose, compose_provider, Composed, Composition, ProviderComposed};
pub use trust::{configure, revalidate};
