//! Summarises what a directory of fuzz inputs exercises: for `verify_differential` inputs the
//! verifier outcome / rejection reasons (model side) and list sizes, for `assemble_differential`
//! inputs the assembly outcome or error kind (with the input's cancellation points). Used to pick a small, diverse set of committed
//! seeds from a fuzz corpus.
//!
//! `cargo run --release --example seed_stats -- verify_differential fuzz/corpus/verify_differential`
//! (with `SEED_STATS_ALL=1` it also prints one `file<TAB>bytes<TAB>label` line per input).

use std::collections::BTreeMap;

use hybrid_compaction_fuzz::{decode, oracle};
use hybrid_compaction_spec as spec;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (target, dir) = match args.as_slice() {
        [_, t, d] => (t.clone(), d.clone()),
        _ => {
            eprintln!("usage: seed_stats <verify_differential|assemble_differential> <dir>");
            std::process::exit(2);
        }
    };
    let mut hist: BTreeMap<String, (usize, String, usize)> = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("readable dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for f in files {
        let data = std::fs::read(&f).expect("readable file");
        let label = match target.as_str() {
            "verify_differential" => {
                let input = decode::verify_input(&data);
                match spec::verify::verify(&input.original, &input.proposed, &input.policy()) {
                    Ok(r) => format!("{:?} {:?}", r.outcome, r.rejection_reasons),
                    Err(e) => format!("error {:?}", e.kind()),
                }
            }
            "assemble_differential" => {
                let input = decode::assemble_input(&data);
                match oracle::model_assemble(&input) {
                    None => continue,
                    Some(Ok(r)) => format!("{:?} {:?}", r.outcome, r.stages),
                    Some(Err(e)) => format!("error {:?}", e.kind()),
                }
            }
            _ => panic!("unknown target {target}"),
        };
        if std::env::var_os("SEED_STATS_ALL").is_some() {
            println!("{}\t{}\t{label}", f.display(), data.len());
        }
        let slot = hist
            .entry(label)
            .or_insert((0, f.display().to_string(), usize::MAX));
        slot.0 += 1;
        if data.len() < slot.2 {
            slot.1 = f.display().to_string();
            slot.2 = data.len();
        }
    }
    for (label, (n, smallest, len)) in hist {
        println!("{n:6}  {label}\n        smallest: {smallest} ({len} bytes)");
    }
}
