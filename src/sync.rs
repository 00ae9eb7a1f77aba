//! Synchronization shim: `std` normally, `loom` under `--cfg loom`.
