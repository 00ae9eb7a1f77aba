//! # The wire base: inputs, their conversion, what operations share, errors
//!
//! Everything the operations ([`crate::ops`]) read and write that is not specific to one of
//! them. The wire base knows no operation: imports point one way, operations -> wire base ->
//! vocabulary.
//!
//! ```text
//!  JSON text --strict--> input (policy, entries, messages, values, schedules, reducers, host)
//!                          |
//!                       convert --> vocabulary (Policy, Entry, providers, reducers, ...)
//!                                           |  an operation runs it on &dyn Implementation
//!  JSON text <--serde-- output (entries, verification, assembly, diagnostics, runs) + error
//! ```
//!
//! | module | holds |
//! |---|---|
//! | [`input`] | the serde images of shared inputs (`docs/WIRE.md`, "Inputs") |
//! | [`convert`] | inputs to vocabulary values; SPEC rejections become typed answers |
//! | [`host`] | what a host supplies: capability profiles, client chains, owners, bindings, accessors |
//! | [`dispatch`] | around a provider call: a streaming provider's script, the messages sent, field-less steps |
//! | [`options`] | the public switch's options (ADR-0011) and a refused configuration's answer |
//! | [`runs`] | run views and opaque ids rendered with placeholders (`R1`, `A1`, ...) |
//! | [`error`] | wire errors (exit 2) and typed error answers (SPEC ERR-1) |
//! | [`output`], [`names`], [`strict`] | from the trace crate (`hybrid_compaction_trace`), which writes them too: shared outputs and their renderings, categorical values by name, the strict reader |
//!
//! This module is the only place that knows JSON field names besides the operations' own case
//! and answer types. The JSON Schemas ([`crate::schema`]) are derived from the same serde types.

pub(crate) mod convert;
pub(crate) mod dispatch;
pub(crate) mod error;
pub(crate) mod host;
pub(crate) mod input;
pub(crate) mod options;
pub(crate) mod runs;

pub(crate) use hybrid_compaction_trace::shapes::names;
pub(crate) use hybrid_compaction_trace::shapes::result as output;
pub(crate) use hybrid_compaction_trace::strict;
