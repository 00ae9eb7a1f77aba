//! cargo-fuzz target `transcript`: a format byte and transcript JSON, adapted and rendered back
//! by [`hybrid_compaction_fuzz::oracle::transcript_bytes`] (see docs/FUZZING.md). Any panic is a
//! finding.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hybrid_compaction_fuzz::oracle::transcript_bytes(data);
});
