//! Criterion benchmarks of estimation (SPEC EST-2, EST-6, EST-7) at n = 10k entries.
//!
//! * `Memo/cold_uncached`: the token estimator (`o200k_base`) sums history + 1 entry without a
//!   memo (every entry tokenized).
//! * `Memo/cold_memo`: the same through a fresh memo (every entry hashed, tokenized, inserted).
//! * `Memo/repeat_memo`: the call a host makes next: a memo warmed on the history sums
//!   history + 1 *new* entry (10k digests looked up, one entry tokenized). The target is
//!   `repeat_memo <= 0.05 x cold_uncached` (the repeat call on history + 1 entry at 10k entries).
//! * `Throughput/utf8` and `Throughput/tokens_o200k` / `tokens_cl100k`: one uncached sum of the
//!   history, `Throughput::Elements(n)`; the history's UTF-8 byte total is printed once at setup so
//!   bytes/s follow from the same medians.
//! * `Counter/<encoding>/{tiktoken_rs,bpe_openai,ours}`: the raw counters on the texts the token
//!   estimator counts in the history (SPEC EST-6, `TokenEstimator::texts`), one call per text,
//!   `Throughput::Bytes`: `tiktoken-rs`'s `encode_ordinary(t).len()` (the dev-dependency oracle),
//!   `bpe-openai`'s `Tokenizer::count`, and ours (`TokenEncoding::count`: the same BPE with
//!   tiktoken's single-token shortcut in front). All three give the same total (asserted).
//!
//! * `Image/header_10kB` and `Image/header_10MB`: the tokens of an inline PNG image block (SPEC
//!   TRN-19), 1920 x 1080 by its header, its data 10 kB or 10 MB: the header is read, the image
//!   is not decoded, so the two cost the same.
//!
//! The history is a realistic chat mix: user / assistant turns of 40-600 bytes (English prose,
//! code, some CJK and emoji), and every fifth step a tool call with a JSON argument map and its
//! result. Measurement is short (10 samples, 1 s warm-up, 3 s measurement).

#![allow(clippy::cast_possible_truncation, reason = "bench sizes are small")]

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hybrid_compaction::engine;
use hybrid_compaction::estimators::{MemoEstimator, TokenEncoding, TokenEstimator};
use hybrid_compaction::transcript::image::ImageRule;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::message::{FunctionCall, Message, Part};
use hybrid_compaction_model::value::{Value, ValueMap};

const N: usize = 10_000;

const PROSE: &[&str] = &[
    "Let me look at the failing test first and then check the configuration of the runner. ",
    "The function returns early when the cache is empty, which hides the real error. ",
    "fn main() {\n    let x = compute(42);\n    println!(\"{x}\");\n}\n",
    "上下文压缩需要在每次调用前决定发送哪些消息。",
    "Deploy finished 🚀 — all 12 checks passed ✅. ",
    "SELECT id, name FROM users WHERE created_at > '2026-01-01' ORDER BY id; ",
];

fn text(i: usize) -> String {
    let mut s = format!("[{i}] ");
    let target = 40 + (i * 7919) % 560;
    let mut k = i;
    while s.len() < target {
        s.push_str(PROSE[k % PROSE.len()]);
        k = k.wrapping_mul(31).wrapping_add(7);
    }
    s
}

fn entry(i: usize) -> Vec<Entry> {
    if i % 5 == 4 {
        let mut args = ValueMap::new();
        args.insert("path".into(), Value::String(format!("src/module_{i}.rs")));
        args.insert("line".into(), Value::I32((i % 400) as i32));
        args.insert(
            "query".into(),
            Value::String(text(i).chars().take(30).collect()),
        );
        let call = Message::new(
            "assistant",
            vec![Part::Call(FunctionCall {
                call_id: format!("call_{i}"),
                name: "read_file".into(),
                arguments: Some(args),
                informational_only: false,
            })],
        );
        let result = Message::new(
            "tool",
            vec![Part::result(
                format!("call_{i}"),
                Value::String(text(i + 1)),
            )],
        );
        vec![
            Entry::new(format!("c{i}"), EntryKind::ToolExchange, call).expect("entry"),
            Entry::new(format!("r{i}"), EntryKind::ToolExchange, result).expect("entry"),
        ]
    } else {
        let role = if i.is_multiple_of(2) {
            "user"
        } else {
            "assistant"
        };
        vec![Entry::new(
            format!("m{i}"),
            EntryKind::ConversationalMessage,
            Message::text(role, text(i)),
        )
        .expect("entry")]
    }
}

fn history(n: usize) -> Vec<Entry> {
    let mut out = Vec::with_capacity(n + 2);
    let mut i = 0;
    while out.len() < n {
        out.extend(entry(i));
        i += 1;
    }
    out.truncate(n);
    out
}

fn utf8_bytes(entries: &[Entry]) -> i64 {
    let utf8 = engine::estimate::Utf8ContextEstimator;
    entries.iter().map(|e| i64::from(utf8.estimate(e))).sum()
}

fn sum(entries: &[Entry], estimator: &dyn Estimator) -> i32 {
    engine::estimate::size(entries, estimator).expect("size")
}

fn memo(c: &mut Criterion) {
    let history = history(N);
    let tokens: Arc<dyn Estimator> = Arc::new(TokenEstimator::new(TokenEncoding::O200kBase));
    let fresh = AtomicUsize::new(1_000_000);
    // History + one entry never seen before (setup, not measured).
    let next = || {
        let mut longer = history.clone();
        let i = fresh.fetch_add(1, Ordering::Relaxed);
        longer.push(entry(i * 5).remove(0));
        longer
    };
    let mut g = c.benchmark_group("Memo");
    g.throughput(Throughput::Elements(N as u64 + 1));
    g.bench_function("cold_uncached", |b| {
        b.iter_batched(
            next,
            |l| black_box(sum(&l, tokens.as_ref())),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("cold_memo", |b| {
        b.iter_batched(
            || (next(), MemoEstimator::new(tokens.clone())),
            |(l, m)| black_box(sum(&l, &m)),
            BatchSize::LargeInput,
        )
    });
    let warm = MemoEstimator::new(tokens.clone());
    sum(&history, &warm);
    g.bench_function("repeat_memo", |b| {
        b.iter_batched(next, |l| black_box(sum(&l, &warm)), BatchSize::LargeInput)
    });
    g.finish();
    let stats = warm.stats();
    eprintln!(
        "repeat_memo: {} hits, {} misses (history {N} + 1 new entry per call)",
        stats.hits, stats.misses
    );
}

fn throughput(c: &mut Criterion) {
    let history = history(N);
    eprintln!(
        "history: {N} entries, {} UTF-8 bytes (EST-2)",
        utf8_bytes(&history)
    );
    let mut g = c.benchmark_group("Throughput");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("utf8", |b| {
        b.iter(|| black_box(sum(&history, &engine::estimate::Utf8ContextEstimator)))
    });
    for encoding in TokenEncoding::ALL {
        let est = TokenEstimator::new(encoding);
        est.estimate(&history[0]); // load the encoding outside the measurement
        g.bench_function(format!("tokens_{encoding}"), |b| {
            b.iter(|| black_box(sum(&history, &est)))
        });
    }
    g.finish();
}

fn counter(c: &mut Criterion) {
    let history = history(N);
    let mut texts = Vec::new();
    for e in &history {
        TokenEstimator::texts(e.message(), |t| texts.push(t.to_owned()));
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    eprintln!("counter: {} texts, {bytes} UTF-8 bytes", texts.len());
    for encoding in TokenEncoding::ALL {
        let (tiktoken, bpe) = match encoding {
            TokenEncoding::O200kBase => (
                tiktoken_rs::o200k_base_singleton(),
                bpe_openai::o200k_base(),
            ),
            TokenEncoding::Cl100kBase => (
                tiktoken_rs::cl100k_base_singleton(),
                bpe_openai::cl100k_base(),
            ),
        };
        let sum = |f: &dyn Fn(&str) -> usize| texts.iter().map(|t| f(t)).sum::<usize>();
        let reference = sum(&|t| tiktoken.encode_ordinary(t).len());
        assert_eq!(sum(&|t| bpe.count(t)), reference, "{encoding}: bpe-openai");
        assert_eq!(sum(&|t| encoding.count(t)), reference, "{encoding}: ours");
        let mut g = c.benchmark_group(format!("Counter/{encoding}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function("tiktoken_rs", |b| {
            b.iter(|| black_box(sum(&|t| tiktoken.encode_ordinary(t).len())))
        });
        g.bench_function("bpe_openai", |b| {
            b.iter(|| black_box(sum(&|t| bpe.count(t))))
        });
        g.bench_function("ours", |b| {
            b.iter(|| black_box(sum(&|t| encoding.count(t))))
        });
        g.finish();
    }
}

/// An inline PNG image block of `bytes` bytes (a real header for 1920 x 1080, then data), as an
/// OpenAI chat `image_url` part holding a `data:` URL.
fn png_block(bytes: usize) -> serde_json::Value {
    use base64::Engine;
    let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
    png.extend_from_slice(b"IHDR");
    png.extend_from_slice(&1920u32.to_be_bytes());
    png.extend_from_slice(&1080u32.to_be_bytes());
    png.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    png.resize(bytes, 0x5a);
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    serde_json::json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}})
}

/// SPEC TRN-19: an inline image is sized from its header; a 10 MB image costs what a 10 kB one
/// does (the ratio of the two medians is the claim, not either time).
fn image(c: &mut Criterion) {
    let mut g = c.benchmark_group("Image");
    for (name, bytes) in [("header_10kB", 10_000), ("header_10MB", 10_000_000)] {
        let block = png_block(bytes);
        assert_eq!(ImageRule::OpenAi.tokens(&block, None), 85 + 6 * 170);
        g.bench_function(name, |b| {
            b.iter(|| black_box(ImageRule::OpenAi.tokens(black_box(&block), None)))
        });
    }
    g.finish();
}

/// The criterion group (in a private module: `criterion_group!` declares a public function).
mod group {
    use super::*;
    criterion_group! {
        name = benches;
        config = Criterion::default()
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        targets = memo, throughput, counter, image
    }
}
criterion_main!(group::benches);
