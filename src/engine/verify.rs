//! The verifier (SPEC VER-1 .. VER-4).
use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::verification::VerificationResult;

/// Structural equality of messages (SPEC VER-2).
pub fn structurally_equal(_a: &Message, _b: &Message) -> bool {
    todo!("SPEC VER-2")
}

/// `Verify(original, proposed)` (SPEC VER-1, VER-3).
pub fn verify(
    _original: &[Entry],
    _proposed: &[Entry],
    _policy: &Policy,
) -> Result<VerificationResult, AssemblyError> {
    todo!("SPEC VER-1")
}
