//! The optimized assembly engine: the same public functions as the model's `spec` modules, with
//! the same inputs, outputs and errors, but its own algorithms and data layout.
//!
//! Filled in by the engine work (issue 3); see the module docs of each submodule.

pub mod assemble;
pub mod bridge;
pub mod classify;
pub mod diagnostics;
pub mod estimate;
pub mod exchange;
pub mod preserve;
pub mod verify;
