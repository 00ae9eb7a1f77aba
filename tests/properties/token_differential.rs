//! SPEC EST-6: the token counter (`bpe-openai`) gives tiktoken's count for every text.
//!
//! The estimator counts with GitHub's count-only BPE; the oracle is `tiktoken-rs` (tiktoken's
//! own Rust core, its own bundled ranks, dev-dependency only): `T(s)` must equal
//! `encode_ordinary(s).len()` exactly, for both encodings, on
//!
//! * 100,000 generated strings built from fragments that stress BPE implementations and their
//!   pre-tokenizers ([`Class`]): words with every letter class and contractions (`'s`, `'LL`,
//!   `’re`), whitespace runs of every Unicode space (with `\r\n`, before letters, digits and the
//!   end of the text: the `\s+(?!\S)` look-ahead that `bpe-openai` emulates), digit runs of every
//!   length, punctuation and symbols, code, CJK / Arabic / Hebrew / Thai / Devanagari / Cyrillic /
//!   Greek / Hangul, emoji with skin tones, ZWJ sequences, flags and keycaps, combining marks
//!   (stacked, leading, after a space), invalid-looking escapes (`\ud800`, `%F0%9F`, `&#x1F600;`,
//!   U+FFFD, BOM, controls), special-token text, random code points from many blocks, and long
//!   repeats (up to 3,000 units of one fragment);
//! * every prefix and suffix, at each character boundary, of the first short generated strings:
//!   texts that end exactly at, just before and just after each pre-tokenizer boundary;
//! * every text the estimator counts in the golden sample (`tests/golden/token_sample.json`,
//!   whose counts Python tiktoken produced: `token_golden.rs`);
//! * and a proptest over the same fragments, which shrinks a divergence to a minimal text.
//!
//! Any divergence fails (no tolerance); the failure lists the first texts, escaped.

use hybrid_compaction::estimators::{TokenEncoding, TokenEstimator};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::Value as Json;
use tiktoken_rs::CoreBPE;

use crate::gen::cases;
use crate::token_golden::message;

/// Generated strings (the issue's floor: at least 100,000).
const GENERATED: usize = 100_000;
/// Generated strings whose every prefix and suffix is checked too (when at most 48 chars).
const SLICED: usize = 2_000;

/// The fragment classes a generated string mixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Words,
    Whitespace,
    Digits,
    Punctuation,
    Code,
    Scripts,
    Emoji,
    Combining,
    Escapes,
    RandomCodePoints,
    LongRepeat,
}

const CLASSES: [Class; 11] = [
    Class::Words,
    Class::Whitespace,
    Class::Digits,
    Class::Punctuation,
    Class::Code,
    Class::Scripts,
    Class::Emoji,
    Class::Combining,
    Class::Escapes,
    Class::RandomCodePoints,
    Class::LongRepeat,
];

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "hello", "Hello", "HELLO", "hElLo", "world", "camelCase", "snake_case", "XMLHttpRequest",
    "it's", "IT'S", "we're", "WE'RE", "I've", "I'm", "you'll", "YOU'LL", "he'd", "HE'D", "don't",
    "DON'T", "it’s", "we’re", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'x",
    "ǅemal", "ǈ", "ʰʲ", "ª", "ºC", "Straße", "ﬁne", "Ω", "ΣΑΣ", "İstanbul", "ŉ", "a", "I", "e",
    "tokenization", "antidisestablishmentarianism", "naïve", "café", "résumé", "coöperate",
];

#[rustfmt::skip]
const SPACES: &[&str] = &[
    " ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r", "\r\n", "\r\n\r\n", " \n", "\n ", " \t\n",
    "\u{a0}", "\u{3000}", "\u{2028}", "\u{2029}", "\u{85}", "\u{b}", "\u{c}", "\u{2003}",
    "\u{2009}", "\u{200a}", "\u{1680}", "\u{205f}", " \u{a0} ", "\n\u{3000}",
];

#[rustfmt::skip]
const PUNCTUATION: &[&str] = &[
    "!", "?", ".", ",", ";", ":", "-", "_", "=", "+", "*", "/", "\\", "|", "@", "#", "$", "%", "^",
    "&", "(", ")", "[", "]", "{", "}", "<", ">", "~", "`", "\"", "'", "...", "!!", "?!", "--", "—",
    "–", "…", "«", "»", "“", "”", "‘", "’", "¿", "¡", "§", "©", "®", "™", "°", "±", "×", "÷", "€",
    "£", "¥", "₹", "→", "⇒", "∀", "∑", "√", "≠", "≤", "■", "★", "♪", ".\n", "/\n", "//\r\n",
    "!\r\n",
];

#[rustfmt::skip]
const CODE: &[&str] = &[
    "fn main() {", "}\n", "    let x = compute(42);\n", "\t\treturn x;", "if (a && b || !c)",
    "#include <stdio.h>", "SELECT * FROM t WHERE id = 1;", "<div class=\"a\">", "</div>",
    "{\"key\": [1, 2.5, null]}", "x => x * 2", "foo::bar::<T>()", "/* comment */", "// note",
    "#!/bin/sh", "$HOME/.config", "C:\\Users\\me", "https://example.com/a?b=c&d=e#f",
    "user@example.com", "0x1F600", "a[i][j] += 1", "def f(*args, **kwargs):", "```rust\n",
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|fim_prefix|>", "<|endofprompt|>",
    "<|endoftext", "|>", "<|", "    ", "\t\t\t", "\n\n\n",
];

#[rustfmt::skip]
const SCRIPTS: &[&str] = &[
    "上下文压缩", "需要在每次调用前决定", "カタカナ", "ひらがな", "漢字かな交じり", "한국어 텍스트", "مرحبا بالعالم", "שלום עולם",
    "ภาษาไทย", "हिन्दी", "தமிழ்", "Привет, мир", "Ελληνικά", "Հայերեն", "ქართული", "አማርኛ", "ᚠᛇᚻ",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𝐀𝐁𝐂", "ｆｕｌｌｗｉｄｔｈ", "١٢٣", "۴۵۶", "३४५", "Ⅻ", "½", "²³",
];

#[rustfmt::skip]
const EMOJI: &[&str] = &[
    "😀", "👍", "👍🏽", "👨‍👩‍👧‍👦", "👩🏾‍💻", "🏳️‍🌈", "🇺🇸", "🇯🇵🇫🇷", "1️⃣", "#️⃣", "❤️", "❤", "☕", "🚀", "✅",
    "🧑‍🤝‍🧑", "🫠", "\u{fe0f}", "\u{200d}", "\u{1f3fb}", "😀😀😀",
];

#[rustfmt::skip]
const COMBINING: &[&str] = &[
    "e\u{301}", "a\u{308}\u{304}", "n\u{303}", "\u{301}", "\u{301}abc", " \u{301}",
    "Z\u{36b}\u{35f}\u{346}\u{33e}", "o\u{302}\u{323}", "\u{93f}", "क\u{94d}\u{937}",
    "\u{5b0}\u{5b8}", "\u{64b}", "A\u{20dd}", "1\u{20e3}", "\u{300}\u{301}\u{302}\u{303}",
];

#[rustfmt::skip]
const ESCAPES: &[&str] = &[
    "\\n", "\\t", "\\r\\n", "\\u00e9", "\\ud800", "\\udc00\\ud800", "\\x41", "\\xff", "\\0", "\\\\",
    "\\\"", "&#x1F600;", "&amp;", "&lt;", "%F0%9F%98%80", "%20", "\u{fffd}", "\u{feff}", "\u{200b}",
    "\u{0}", "\u{1}", "\u{7}", "\u{1b}[31m", "\u{7f}", "\u{80}", "\u{9f}", "\u{e000}", "\u{fdd0}",
    "\u{ffff}", "\u{10ffff}", "\u{2066}", "\u{202e}", "%s", "{0}", "${x}", "{{", "}}",
];

/// Code point ranges for random characters (controls, Latin, combining, Greek, Cyrillic, Hebrew,
/// Arabic, Devanagari, Thai, Hangul Jamo, general punctuation, symbols, CJK, Hangul, private use,
/// specials, emoji, math alphanumerics, CJK extension B).
const RANGES: &[(u32, u32)] = &[
    (0x00, 0x7f),
    (0x80, 0x24f),
    (0x300, 0x36f),
    (0x370, 0x4ff),
    (0x590, 0x6ff),
    (0x900, 0x97f),
    (0xe00, 0xe7f),
    (0x1100, 0x11ff),
    (0x2000, 0x206f),
    (0x2100, 0x27bf),
    (0x3000, 0x30ff),
    (0x4e00, 0x9fff),
    (0xac00, 0xd7a3),
    (0xe000, 0xe0ff),
    (0xfe00, 0xffff),
    (0x1f300, 0x1faff),
    (0x1d400, 0x1d7ff),
    (0x20000, 0x2a6df),
];

/// SplitMix64: a fixed, dependency-free stream, so the corpus is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("below n")
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn digits(rng: &mut Rng, out: &mut String) {
    let len = 1 + rng.below(12);
    for _ in 0..len {
        out.push(char::from(
            b'0' + u8::try_from(rng.below(10)).expect("digit"),
        ));
    }
    match rng.below(6) {
        0 => out.push_str(".5"),
        1 => out.push_str(",000"),
        2 => out.push_str("e-10"),
        _ => {}
    }
}

fn random_code_points(rng: &mut Rng, out: &mut String) {
    for _ in 0..1 + rng.below(8) {
        let (lo, hi) = RANGES[rng.below(RANGES.len())];
        let span = usize::try_from(hi - lo + 1).expect("small range");
        let c = lo + u32::try_from(rng.below(span)).expect("small range");
        // Surrogates are not chars; the ranges avoid them, the fallback is U+FFFD.
        out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
    }
}

/// A fragment of `class` appended to `out`.
fn fragment(class: Class, rng: &mut Rng, out: &mut String) {
    match class {
        Class::Words => out.push_str(rng.pick(WORDS)),
        Class::Whitespace => {
            let unit = rng.pick(SPACES);
            for _ in 0..1 + rng.below(4) {
                out.push_str(unit);
            }
        }
        Class::Digits => digits(rng, out),
        Class::Punctuation => out.push_str(rng.pick(PUNCTUATION)),
        Class::Code => out.push_str(rng.pick(CODE)),
        Class::Scripts => out.push_str(rng.pick(SCRIPTS)),
        Class::Emoji => out.push_str(rng.pick(EMOJI)),
        Class::Combining => out.push_str(rng.pick(COMBINING)),
        Class::Escapes => out.push_str(rng.pick(ESCAPES)),
        Class::RandomCodePoints => random_code_points(rng, out),
        Class::LongRepeat => {
            let pool: [&[&str]; 5] = [WORDS, SPACES, PUNCTUATION, EMOJI, COMBINING];
            let unit = match rng.below(4) {
                0 => "a",
                1 => "0",
                _ => {
                    let items = pool[rng.below(pool.len())];
                    rng.pick(items)
                }
            };
            let times = [2, 3, 7, 16, 64, 300, 1_000, 3_000][rng.below(8)];
            for _ in 0..times {
                out.push_str(unit);
            }
        }
    }
}

/// One generated string: 1-12 fragments; long repeats are rarer (they are long).
fn generated(rng: &mut Rng, seen: &mut [usize; CLASSES.len()]) -> String {
    let mut s = String::new();
    for _ in 0..1 + rng.below(12) {
        let mut i = rng.below(CLASSES.len());
        if CLASSES[i] == Class::LongRepeat && rng.below(8) != 0 {
            i = rng.below(CLASSES.len() - 1);
        }
        seen[i] += 1;
        fragment(CLASSES[i], rng, &mut s);
    }
    s
}

/// Every proper prefix and suffix of `s` at a character boundary.
fn slices(s: &str, out: &mut Vec<String>) {
    for (i, _) in s.char_indices().skip(1) {
        out.push(s[..i].to_owned());
        out.push(s[i..].to_owned());
    }
}

/// The generated corpus, its prefixes and suffixes; asserts that every class was drawn.
fn corpus() -> Vec<String> {
    let mut rng = Rng(0x0e57_6d1f_f000_0021);
    let mut seen = [0usize; CLASSES.len()];
    let mut out: Vec<String> = (0..GENERATED)
        .map(|_| generated(&mut rng, &mut seen))
        .collect();
    let mut extra = Vec::new();
    for s in out.iter().take(SLICED).filter(|s| s.chars().count() <= 48) {
        slices(s, &mut extra);
    }
    out.extend(extra);
    for (class, n) in CLASSES.iter().zip(seen) {
        assert!(n >= 1_000, "class {class:?} drawn only {n} times");
    }
    out
}

/// The golden sample's counted texts (role, author, text, names, argument JSON, results).
fn golden_texts() -> Vec<String> {
    let sample: Vec<Json> =
        serde_json::from_str(include_str!("../golden/token_sample.json")).expect("sample json");
    let mut out = Vec::new();
    for m in &sample {
        TokenEstimator::texts(&message(m), |t| out.push(t.to_owned()));
    }
    out
}

fn oracle(encoding: TokenEncoding) -> &'static CoreBPE {
    match encoding {
        TokenEncoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        TokenEncoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    }
}

/// The texts of `texts` whose count differs from tiktoken's, as `encoding: text: ours != theirs`.
fn divergences(encoding: TokenEncoding, texts: &[String]) -> Vec<String> {
    let tiktoken = oracle(encoding);
    texts
        .iter()
        .filter_map(|t| {
            let (ours, theirs) = (encoding.count(t), tiktoken.encode_ordinary(t).len());
            (ours != theirs).then(|| {
                let shown: String = t.chars().take(200).collect();
                format!("{encoding}: {shown:?}: {ours} != {theirs}")
            })
        })
        .collect()
}

fn assert_no_divergence(texts: &[String]) {
    let found: Vec<String> = TokenEncoding::ALL
        .into_iter()
        .flat_map(|e| divergences(e, texts))
        .collect();
    assert!(
        found.is_empty(),
        "{} divergences from tiktoken, first ones:\n{}",
        found.len(),
        found
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn est_6_the_counter_equals_tiktoken_on_100k_stressing_strings_and_their_slices() {
    let corpus = corpus();
    assert!(corpus.len() >= GENERATED + 20_000, "{} texts", corpus.len());
    let long = corpus.iter().filter(|s| s.len() >= 1_000).count();
    assert!(long >= 1_000, "only {long} texts of 1 KB or more");
    assert_no_divergence(&corpus);
}

/// Every string of `1..=max` bytes over `alphabet`.
fn every_string(alphabet: &[u8], max: usize) -> Vec<String> {
    let mut all = vec![String::new()];
    let mut last = vec![String::new()];
    for _ in 0..max {
        last = last
            .iter()
            .flat_map(|s| alphabet.iter().map(move |&b| format!("{s}{}", b as char)))
            .collect();
        all.extend(last.iter().cloned());
    }
    all
}

/// `o200k_base` counts ASCII text with a regex-free pre-tokenizer (`src/estimators/o200k_ascii.rs`):
/// every short string over the bytes that steer its decisions (upper and lower letters, the
/// contraction letters, a digit, the apostrophe, space, tab, VT, CR, LF, punctuation, the slash)
/// must count as tiktoken counts it, for both encodings.
#[test]
fn est_6_the_counter_equals_tiktoken_on_every_short_ascii_string() {
    let mut texts = every_string(b"aZ1' \t\r\n./sRlev\x0b", 4);
    texts.extend(every_string(b"a' \n.sE1", 5));
    texts.extend(every_string(b"A1 \n'd", 6));
    // A contraction followed by more letters ("a'rex": "a're" + "x", not "a" + "'rex").
    texts.extend(every_string(b"a'rEvlLdx", 5));
    assert!(texts.len() >= 100_000, "{} texts", texts.len());
    assert_no_divergence(&texts);
}

#[test]
fn est_6_the_counter_equals_tiktoken_on_the_golden_sample_texts() {
    let texts = golden_texts();
    assert!(texts.len() >= 800, "{} texts", texts.len());
    assert_no_divergence(&texts);
}

/// One generated string as a proptest value (shrinks to fewer fragments).
fn text_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec((0..CLASSES.len(), any::<u64>()), 1..10).prop_map(|parts| {
        let mut s = String::new();
        for (class, seed) in parts {
            fragment(CLASSES[class], &mut Rng(seed), &mut s);
        }
        s
    })
}

proptest! {
    #![proptest_config(Config::with_cases(cases(512)))]

    /// SPEC EST-6: the same property on shrinking inputs (a divergence shrinks to few fragments).
    #[test]
    fn est_6_the_counter_equals_tiktoken_on_generated_text(text in text_strategy()) {
        for encoding in TokenEncoding::ALL {
            prop_assert_eq!(encoding.count(&text), oracle(encoding).encode_ordinary(&text).len());
        }
    }
}
