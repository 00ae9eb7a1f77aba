//! `o200k_base`'s pre-tokenizer for pure-ASCII text, without a regex (SPEC EST-6).
//!
//! tiktoken splits text into pieces with one pattern (a leftmost-first alternation; `bpe-openai`
//! runs it as a multi-pattern regex, one anchored search per piece). Restricted to ASCII its
//! classes are plain byte sets (`\p{Lu}` = `A-Z`, `\p{Ll}` = `a-z`, `\p{L}` = both, `\p{N}` =
//! `0-9`, `\p{Lt}`/`\p{Lm}`/`\p{Lo}`/`\p{M}` empty, `\s` = tab, LF, VT, FF, CR, space), and the
//! alternation collapses to a decision on the first one or two bytes of the rest:
//!
//! ```text
//! [^\r\n\p{L}\p{N}]? [upper]* [lower]+ contraction?   |  ... [upper]+ [lower]* contraction?
//!                                     letters, with an optional one-byte prefix
//! \p{N}{1,3}                          one to three digits
//!  ?[^\s\p{L}\p{N}]+[\r\n/]*          punctuation, with an optional leading space
//! \s*[\r\n]+ | \s+$ | \s+(?!\S) | \s+ whitespace: to its last line break; to the end; all but
//!                                     its last byte; one byte
//! ```
//!
//! (the contraction `'s 't 're 've 'm 'll 'd`, any case). The two letter alternatives end at the
//! same byte (upper run, then lower run), so one scan serves both. The counter takes this path
//! only for a text that is ASCII throughout (a non-ASCII byte anywhere may change a class
//! decision next to it) and the regex otherwise; the differential test against `tiktoken-rs`
//! (`tests/properties/token_differential.rs`, which enumerates every short ASCII string over the
//! bytes that steer the pattern) holds both paths to tiktoken's pieces' counts.

/// tiktoken's `\s` restricted to ASCII.
fn space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// `[^\s\p{L}\p{N}]` restricted to ASCII.
fn other(b: u8) -> bool {
    !space(b) && !b.is_ascii_alphanumeric()
}

fn line_break(b: u8) -> bool {
    b == b'\r' || b == b'\n'
}

/// The pieces of an ASCII text, in order (module docs).
pub(super) fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at;
        let c = *bytes.get(start)?;
        let next = bytes.get(start + 1).copied();
        at = if c.is_ascii_alphabetic() {
            letters(bytes, start)
        } else if c.is_ascii_digit() {
            run(bytes, start, |b| b.is_ascii_digit()).min(start + 3)
        } else if !line_break(c) && next.is_some_and(|b| b.is_ascii_alphabetic()) {
            letters(bytes, start + 1)
        } else if other(c) || (c == b' ' && next.is_some_and(other)) {
            let end = run(bytes, start + usize::from(c == b' '), other);
            run(bytes, end, |b| line_break(b) || b == b'/')
        } else {
            whitespace(bytes, start)
        };
        text.get(start..at)
    })
}

/// The first index at or after `from` whose byte is not `class` (or the length).
fn run(bytes: &[u8], from: usize, class: impl Fn(u8) -> bool) -> usize {
    from + bytes[from..].iter().take_while(|&&b| class(b)).count()
}

/// The end of an upper run, then a lower run (at least one letter at `from`), then an optional
/// contraction.
fn letters(bytes: &[u8], from: usize) -> usize {
    let end = run(bytes, run(bytes, from, |b| b.is_ascii_uppercase()), |b| {
        b.is_ascii_lowercase()
    });
    if bytes.get(end) != Some(&b'\'') {
        return end;
    }
    let lower = |i: usize| bytes.get(end + i).map(u8::to_ascii_lowercase);
    match (lower(1), lower(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => end + 2,
        (Some(b'r' | b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => end + 3,
        _ => end,
    }
}

/// `\s*[\r\n]+ | \s+$ | \s+(?!\S) | \s+` at `from` (a whitespace byte).
fn whitespace(bytes: &[u8], from: usize) -> usize {
    let end = run(bytes, from, space);
    if let Some(last) = bytes[from..end].iter().rposition(|&b| line_break(b)) {
        from + last + 1
    } else if end == bytes.len() || end - from == 1 {
        end
    } else {
        end - 1
    }
}
