//! Moved to [`crate::corpus`] (vector files in [`crate::corpus::file`], the runner in
//! [`crate::corpus::run`]).
//!
//! This alias keeps `wire/mod.rs` and `wire/schema.rs` unchanged while the wire format is
//! restructured: delete it together with the `pub mod vectors;` and `pub use vectors::...` lines
//! of `wire/mod.rs`, importing `crate::corpus::VectorFile` in `wire/schema.rs`.

pub use crate::corpus::file::*;
pub use crate::corpus::run::*;
