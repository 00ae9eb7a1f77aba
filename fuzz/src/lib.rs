//! Fuzzing support for hybrid-compaction: the byte -> input decoders ([`decode`]) and the
//! model-vs-engine oracles ([`oracle`]) used by the cargo-fuzz targets in `fuzz_targets/`.
//!
//! Both modules are plain Rust with no libFuzzer dependency; `tests/fuzz_replay.rs` in the root
//! crate includes them by path and replays the committed seeds under `cargo test`.
//! See `docs/FUZZING.md`.

#![forbid(unsafe_code)]

pub mod decode;
pub mod oracle;
