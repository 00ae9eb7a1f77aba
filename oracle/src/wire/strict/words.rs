//! Failure messages in the wire format's words: serde's descriptions of Rust types (`invalid
//! type: map, expected struct EntryInput`, `unknown variant`, `i32`) become the format's
//! (`expected an object`, `unknown message part`, `a signed 32-bit integer`), and syntax errors
//! name their line and column.

#[allow(
    clippy::wildcard_imports,
    reason = "one module split in four files; the parent holds the shared imports and paths"
)]
use super::*;

pub(super) fn read_error(e: &serde_json::Error, text: &str) -> ReadError {
    let mut segments = take_path();
    segments.reverse();
    let syntax = matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    );
    let position = (e.line() > 0).then(|| (e.line(), e.column()));
    let raw = strip_position(&e.to_string());
    let message = if syntax {
        syntax_message(&raw, position, text)
    } else {
        humanize(&raw)
    };
    ReadError {
        position,
        path: render_path(&segments),
        message,
        syntax,
    }
}

/// serde_json appends " at line L column C"; positions are reported separately.
pub fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

/// serde_json calls any unpaired `\uDC00`..`\uDFFF` a "leading" surrogate; name it right.
pub(super) fn syntax_message(raw: &str, position: Option<(usize, usize)>, text: &str) -> String {
    if raw == "recursion limit exceeded" {
        return "nested deeper than 128 levels".to_owned();
    }
    if raw != "lone leading surrogate in hex escape" {
        return raw.to_owned();
    }
    let escape = position.and_then(|(line, column)| {
        let line_text = text.lines().nth(line - 1)?;
        let upto = line_text.get(..column.min(line_text.len()))?;
        let at = upto.rfind("\\u")?;
        let hex = upto.get(at + 2..at + 6)?;
        u16::from_str_radix(hex, 16)
            .ok()
            .map(|n| (n, upto[at..at + 6].to_owned()))
    });
    match escape {
        Some((n, esc)) if (0xDC00..=0xDFFF).contains(&n) => format!(
            "lone trailing surrogate {esc} in a string: a \\uDC00-\\uDFFF escape must follow a \\uD800-\\uDBFF escape"
        ),
        Some((_, esc)) => format!(
            "lone leading surrogate before {esc} in a string: a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF escape"
        ),
        None => "unpaired surrogate escape in a string".to_owned(),
    }
}

/// Puts a serde failure message in the wire format's words (no Rust type names).
pub fn humanize(msg: &str) -> String {
    if let Some(rest) = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "))
    {
        if let Some((got, expected)) = rest.split_once(", expected ") {
            return format!(
                "expected {}, got {}",
                expected_words(expected),
                got_words(got)
            );
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        if let Some((n, expected)) = rest.split_once(", expected ") {
            return format!("expected {}, got {n} elements", expected_words(expected));
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        return format!("unknown name {}", names_words(rest));
    }
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        return format!("unknown member {}", names_words(rest));
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        return format!("missing member {rest}");
    }
    if let Some(rest) = msg.strip_prefix("duplicate field ") {
        return format!("duplicate key {rest}");
    }
    if msg.starts_with("data did not match any variant") {
        return "the value matches none of the accepted forms".to_owned();
    }
    msg.to_owned()
}

pub(super) fn names_words(rest: &str) -> String {
    rest.replace("there are no variants", "none is accepted here")
        .replace("there are no fields", "no member is accepted here")
}

/// serde's `Unexpected` rendering, in JSON's words.
pub(super) fn got_words(got: &str) -> String {
    if got == "unit value" {
        return "null".to_owned();
    }
    if got == "sequence" {
        return "an array".to_owned();
    }
    if got == "map" {
        return "an object".to_owned();
    }
    let inner = |prefix: &str| {
        got.strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('`'))
            .and_then(|r| r.strip_suffix('`'))
            .map(str::to_owned)
    };
    if let Some(x) = inner("floating point ") {
        if x == "-0.0" || x == "-0" {
            return "-0 (a negative zero is not an integer: write 0)".to_owned();
        }
        return format!("the number {x}");
    }
    if let Some(x) = inner("integer ") {
        return format!("the number {x}");
    }
    if let Some(x) = inner("boolean ") {
        return x;
    }
    if let Some(x) = got.strip_prefix("string ") {
        return format!("the string {x}");
    }
    got.to_owned()
}

/// A visitor's `expecting` text, in JSON's words.
pub(super) fn expected_words(expected: &str) -> String {
    let int = |bits: u32, signed: bool| {
        if signed {
            let max = (1i128 << (bits - 1)) - 1;
            format!("a signed {bits}-bit integer ({} to {max})", -max - 1)
        } else {
            format!(
                "an unsigned {bits}-bit integer (0 to {})",
                (1u128 << bits) - 1
            )
        }
    };
    match expected {
        "i8" => int(8, true),
        "i16" => int(16, true),
        "i32" => int(32, true),
        "i64" => int(64, true),
        "u8" => int(8, false),
        "u16" => int(16, false),
        "u32" => int(32, false),
        "u64" | "usize" => int(64, false),
        "a sequence" => "an array".to_owned(),
        "a map" => "an object".to_owned(),
        "a boolean" => "true or false".to_owned(),
        "a borrowed string" => "a string".to_owned(),
        "option" => "a value or null".to_owned(),
        "unit" => "null".to_owned(),
        e if e.starts_with("struct ")
            || e.starts_with("internally tagged enum ")
            || e.starts_with("tuple struct ") =>
        {
            "an object".to_owned()
        }
        e if e.starts_with("enum ") || e.starts_with("untagged enum ") => {
            "one of the documented forms".to_owned()
        }
        e => e.to_owned(),
    }
}

/// The text a visitor gives as its `expecting`.
pub(super) struct Expecting<'a, V>(pub(super) &'a V);

impl<'de, V: Visitor<'de>> fmt::Display for Expecting<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }
}
