//! The published vector files (`vectors/*.json`, `docs/WIRE.md` "Vector files"): found, read,
//! run on implementations and tabled, as `hybrid-compaction vectors` does.
//!
//! A vector file holds test groups that may share a policy; [`effective_case`] is the one rule by
//! which a group's policy fills a case (every binding applies it through here). [`comparable`] is
//! what an expected output is compared with.

pub use crate::corpus::file::{
    corpus_files, effective_case, load_file, parse_file, LoadError, TestGroup, TestVector,
    VectorFile,
};
pub use crate::corpus::run::{comparable, first_difference, render_table, run_file, TopicReport};
