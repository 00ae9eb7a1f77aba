//! Moved to [`crate::corpus`].
//!
//! This alias keeps `wire/mod.rs` unchanged while the wire format is restructured: delete it
//! together with the `pub mod corpus;` line of `wire/mod.rs`.

pub use crate::corpus::*;
