//! Message adaptation and the default content-hash classifier (SPEC CLS-1, CLS-2).
//!
//! Mirrors `hybrid_compaction_model::spec::classify` once the model defines it.
