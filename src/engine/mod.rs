//! # The optimized assembly engine
//!
//! The same public functions as the executable specification's modules (crate
//! `hybrid-compaction-spec`: same paths, signatures, results and errors), with the engine's own
//! algorithms and data layout. Property tests (`tests/properties/engine_*.rs`) prove the two
//! equal on generated histories, and the clause suite (`tests/clauses/`) runs every SPEC clause
//! test on both. The engine cannot call the specification: this crate does not depend on it
//! (only on the shared vocabulary, `hybrid-compaction-model`).
//!
//! Positions inside one list are `u32` (half the memory of `usize` in the per-position arrays),
//! with `u32::MAX` reserved as "no position": the engine handles lists of fewer than `u32::MAX`
//! entries, far beyond what any context limit admits (a list that long cannot fit a 32-bit size,
//! POL-3, unless nearly every entry measures 0). The narrowing casts of positions rely on this.
//!
//! | module | SPEC | what is different from the model |
//! |---|---|---|
//! | [`estimate`] | EST, POL-3/4 | allocation-free UTF-8 / .NET-number measurement; per-call size cache (ASM-15) |
//! | [`exchange`] | EXC | one hashing pass interning call ids; positional analysis |
//! | [`preserve`] | PRE | flags by position; recency units in one forward pass |
//! | [`verify`] | VER | proposal mapped to original positions once; same-allocation equality shortcut |
//! | [`assemble`] | ASM | the model's state machine over a lazily indexed snapshot; reusable [`assemble::Assembler`] |
//! | [`bridge`] | BRG | returned messages matched through a hash of their bridge-relevant fields |
//! | [`classify`] | CLS | content-hash ids computed in one pass per message list |
//! | [`diagnostics`] | DIA | contributions in one pass |
//!
//! ```text
//! snapshot --index (sizes, tool analysis, required flags, id map: each at most once)--+
//!    |                                                                               |
//! trigger? --no--> verify(cur,cur) [reuses analysis] --> recapture --> WithinLimit   |
//!    | yes                                                                           |
//! evict (positions) --> margin restored? --> verify [positions] --> Reduced          |
//!    | no                                                                            |
//! reducer attempts: proposal --map to positions--> verify + size [cached] --> ...    |
//!    v                                                                               |
//! fallback: required (+ optional) positions --> PreservationFallback | Irreducible <-+
//! ```

pub mod assemble;
pub mod bridge;
pub mod classify;
pub mod diagnostics;
pub mod estimate;
pub mod exchange;
mod hash;
pub mod preserve;
pub mod verify;

/// "No position": a sentinel in the engine's `u32` position arrays.
pub(crate) const NONE: u32 = u32::MAX;
