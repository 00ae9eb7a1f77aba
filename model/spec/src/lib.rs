//! # hybrid-compaction-spec: the executable specification of hybrid context compaction
//!
//! One module per concept of `docs/SPEC.md`: estimation, tool-exchange analysis, required
//! preservation, verification, assembly, the reducer bridge, classification, diagnostics and the
//! sequential lease rules; and the rest of ADR-0007 (SPEC sections 16-18): capability resolution,
//! composition, trust revalidation, reference records, rehydration, offload, attribution and the
//! public configuration of ADR-0011. Hosts inject the workspace, the trust accessor, the event
//! sink and the node factory as small traits, so tests script every failure. Every function is written to be held against the SPEC text:
//! straightforward loops, no caching, no indexes, each rule citing its clause (`// SPEC ASM-7`).
//!
//! The vocabulary these functions read and return (entries, policy, snapshots, outcomes, ...)
//! is the crate `hybrid-compaction-model`, shared with the optimized engine. This crate is
//! separate so that the engine's independence is a fact of the build: the library crate
//! `hybrid-compaction` does not depend on it, so engine, lease and node code cannot name a
//! function here. Only the oracle, the tests, the benches and the fuzz crate do.
//!
//! ```text
//! snapshot --> size < threshold? --yes--> verify(cur,cur) --> recapture --> WithinLimit
//!    | no
//! evict durable bodies --> margin restored? --> verify --> recapture --> Reduced
//!    | no
//! reducer attempts (bounded) --> verify each proposal --> fits? --> recapture --> Reduced
//!    | none accepted / fits
//! deterministic fallback --> PreservationFallback | Irreducible
//! version changed at a recapture --> restart (maybe consuming an attempt) | ConcurrentMutationLimit
//! ```

// The spec must be reviewable line by line: no unsafe code anywhere (forbid: cannot be
// re-allowed) and every public item documented (the docs cite the SPEC).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod assemble;
pub mod attribution;
pub mod bridge;
pub mod capability;
pub mod classify;
pub mod composition;
pub mod configuration;
pub mod diagnostics;
pub mod estimate;
pub mod exchange;
pub mod flows;
pub mod lease;
pub mod node;
pub mod offload;
pub mod preserve;
pub mod progress;
pub mod record;
pub mod rehydrate;
pub mod seam;
pub mod trust;
pub mod verify;

pub use seam::Model;

/// The sanctioned augmentation helper (SPEC SNAP-4) is vocabulary shared by every side.
pub use hybrid_compaction_model::integration;
