//! Criterion benchmarks of the model and the engine (filled in by the engine work).
fn main() {}
