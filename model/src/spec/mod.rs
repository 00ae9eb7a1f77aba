//! The executable specification: one module per concept of `docs/SPEC.md`.
//!
//! Every function here is written to be held against the SPEC text: straightforward loops, no
//! caching, each rule citing its clause. The engine never calls these functions at run time.

pub mod assemble;
pub mod bridge;
pub mod classify;
pub mod diagnostics;
pub mod estimate;
pub mod exchange;
pub mod integration;
pub mod lease;
pub mod preserve;
pub mod verify;
