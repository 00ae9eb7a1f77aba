//! # The clause suite: one set of SPEC clause tests, run on every implementation
//!
//! Each test here checks one clause of `docs/SPEC.md` (its name starts with the clause id in
//! snake form, `asm_7_...`; `tests/repository/spec_coverage.rs` counts those names) with expectations worked
//! out by hand from the SPEC text, never by running the code under test. The tests are written
//! against the vocabulary's seam, `hybrid_compaction_model::seam::Implementation`, not against
//! a crate: the suite is compiled once per implementation (the pattern of rustls' provider
//! tests), by two thin test crates that each include this directory and name the
//! implementation under test as `crate::imp()`:
//!
//! ```text
//! tests/clauses_spec.rs    #[path = "clauses/mod.rs"] mod clauses;  imp() = &Model   (model/spec)
//! tests/clauses_engine.rs  #[path = "clauses/mod.rs"] mod clauses;  imp() = &Engine  (src/seam)
//!                                   |
//!   clauses::{data, structure, assembly, composition, node}: the same test names in both binaries
//! ```
//!
//! So a clause the engine breaks fails a named clause test, not only an equivalence property
//! that proptest may or may not reach. The seam is the same one the oracle, the fuzz targets and
//! the equivalence properties use.
//!
//! ## What the seam leaves optional
//! Where the engine keeps a helper internal that the executable spec exposes, the seam method
//! returns `None` for the engine (the canonical rendering string, recency units, the minted-id
//! helper) and the test checks what the engine does expose: the rendering through the
//! content-hash ids it yields, the recency units through the required ids they imply, the minted
//! id through the bridge's output. `size(value)` the engine answers through its context
//! estimator.
//!
//! ## What is not here
//! Tests of pure vocabulary behaviour (entry construction ENT-1 .. ENT-7 except ENT-4's
//! structural equality, snapshots and providers SNAP-1 / SNAP-3 .. SNAP-5, policy validation
//! POL-2, the host-defined estimators EST-5, digests and references ART-1 / ART-2, the
//! declaration orders ASM-1 / ASM-2 / VER-3 / CAP-2 / CMP-2) call no implementation function: both
//! implementations share those types, so running them twice would test the same code twice.
//! They live once, in the vocabulary crate (`model/tests/vocabulary.rs`). A test that touches an
//! implementation at all (an estimator, an error type, a function) stays here. The artifact and
//! public-configuration clauses (ARF, RHY, OFF, ATR, CFG-1 .. CFG-3) exist only in the
//! executable specification: `tests/artifacts.rs` runs them there. What the library offers
//! beyond the seam's plain values (its selection, error and stream types, its builders) is
//! tested on the library alone, in `tests/node.rs` and `tests/compose.rs`.
#![allow(dead_code)]

pub mod assembly;
pub mod common;
pub mod composition;
pub mod data;
pub mod node;
pub mod structure;
