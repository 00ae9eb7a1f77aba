//! # ADR-0007 operations: composition, capability, trust, artifacts, public switch
//!
//! The wire image of SPEC sections 16-18 (docs/WIRE.md, "ADR-0007 operations"):
//!
//! | op | SPEC | answered by |
//! |---|---|---|
//! | `resolve` | CAP-1 .. CAP-4 | model: spec; engine: `hybrid_compaction::compose` |
//! | `compose` | CMP-1 .. CMP-4 | model: spec + counting factory; engine: library `compose` |
//! | `trust` | TRU-1 .. TRU-3 | model: spec; engine: a real library node call |
//! | `record` | ARF-1 .. ARF-3 | spec (no separate library implementation) |
//! | `rehydrate` | RHY-1 .. RHY-4, ATR-1 .. ATR-4 | spec |
//! | `offload` | OFF-1 .. OFF-3, ATR-1 .. ATR-4 | spec |
//! | `configure` | CFG-1 .. CFG-4 | spec |
//!
//! Kept apart from the original operations so the shared `Case`, `Output` and dispatcher gain
//! only one line per operation.

pub mod case;
pub mod convert;
pub mod exec;
pub mod output;
