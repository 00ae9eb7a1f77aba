//! cargo-fuzz target `assemble_differential`: decode the bytes and run the differential oracle
//! [`hybrid_compaction_fuzz::oracle::assemble_bytes`] (see docs/FUZZING.md). Any panic is a finding.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hybrid_compaction_fuzz::oracle::assemble_bytes(data);
});
