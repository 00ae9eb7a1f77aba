//! The format's words for a [`Problem`]: built from the data the error holds (what the adapter
//! was asked for, what the text held, the accepted names), never from serde's sentences. The one
//! text taken from elsewhere is the parser's own description of malformed JSON, which carries
//! its line and column ([`syntax_message`]).

use std::fmt;

use super::error::{format_word, Expected, Got, Problem, Want};

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Mismatch { got, expected, .. } => {
                let integer = matches!(expected, Expected::Stated(Want::Int { .. }));
                write!(f, "expected {expected}, got {}", got_words(got, integer))
            }
            Problem::Length { len, expected } => {
                let s = if *len == 1 { "" } else { "s" };
                write!(f, "expected {expected}, got {len} element{s}")
            }
            Problem::UnknownName {
                name,
                accepted,
                noun,
            } => {
                let noun = noun.unwrap_or("name");
                if accepted.is_empty() {
                    write!(f, "unknown {noun} `{name}`: none is accepted here")
                } else {
                    write!(f, "unknown {noun} `{name}`, expected {}", one_of(accepted))
                }
            }
            Problem::UnknownMember { name, accepted } => {
                if accepted.is_empty() {
                    write!(f, "unknown member `{name}`: no member is accepted here")
                } else {
                    write!(f, "unknown member `{name}`, expected {}", one_of(accepted))
                }
            }
            Problem::MissingMember(name) => write!(f, "missing member `{name}`"),
            Problem::DuplicateKey(key) => write!(
                f,
                "duplicate key {}: an object may name each member once",
                serde_json::Value::from(key.as_str())
            ),
            Problem::Message(text) => f.write_str(text),
            Problem::Parser => f.write_str("malformed JSON"),
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Stated(want) => fmt::Display::fmt(want, f),
            Expected::Said(words) => f.write_str(words),
        }
    }
}

/// What a request reads, in JSON's words.
impl fmt::Display for Want {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Want::Int { bits, signed: true } => {
                let max = (1i128 << (bits - 1)) - 1;
                write!(f, "a signed {bits}-bit integer ({} to {max})", -max - 1)
            }
            Want::Int {
                bits,
                signed: false,
            } => {
                let max = if bits >= 128 {
                    u128::MAX
                } else {
                    (1u128 << bits) - 1
                };
                write!(f, "an unsigned {bits}-bit integer (0 to {max})")
            }
            Want::Bool => f.write_str("true or false"),
            Want::Float => f.write_str("a number"),
            Want::Char => f.write_str("a string of one character"),
            Want::Str => f.write_str("a string"),
            Want::Bytes => f.write_str("a string or an array of bytes"),
            Want::Unit => f.write_str("null"),
            Want::Seq => f.write_str("an array"),
            Want::Tuple(1) => f.write_str("an array of 1 element"),
            Want::Tuple(n) => write!(f, "an array of {n} elements"),
            Want::Map | Want::Struct => f.write_str("an object"),
            Want::Enum { name, variants } => {
                let names = or_list(variants);
                match format_word(name) {
                    Some(noun) => write!(
                        f,
                        "{} {noun}: {names}, as a name or as the one key of an object",
                        article(noun)
                    ),
                    None => write!(f, "{names}, as a name or as the one key of an object"),
                }
            }
            Want::Any | Want::Option | Want::NewtypeStruct | Want::Ignored => {
                f.write_str("a value")
            }
        }
    }
}

fn article(noun: &str) -> &'static str {
    if noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``.
fn one_of(names: &[&str]) -> String {
    match names {
        [one] => format!("`{one}`"),
        [a, b] => format!("`{a}` or `{b}`"),
        _ => {
            let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("one of {}", quoted.join(", "))
        }
    }
}

/// `` `a`, `b` or `c` ``.
fn or_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => "no name (none is accepted here)".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// What the text held, in JSON's words.
fn got_words(got: &Got, integer_expected: bool) -> String {
    match got {
        Got::Null => "null".to_owned(),
        Got::Bool(b) => b.to_string(),
        Got::Unsigned(n) => format!("the number {n}"),
        Got::Signed(n) => format!("the number {n}"),
        Got::Float(x) if *x == 0.0 && x.is_sign_negative() && integer_expected => {
            "-0 (a negative zero is not an integer: write 0)".to_owned()
        }
        // A number read as a float: past 2^53 it is an approximation, written as one.
        Got::Float(x) if x.abs() >= 1e16 => format!("the number {x:e}"),
        Got::Float(x) => {
            let mut text = x.to_string();
            if x.is_finite() && !text.contains(['.', 'e', 'E']) {
                text.push_str(".0");
            }
            format!("the number {text}")
        }
        Got::Str(s) => format!("the string {}", serde_json::Value::from(s.as_str())),
        Got::Array => "an array".to_owned(),
        Got::Object => "an object".to_owned(),
        Got::Other(words) => words.clone(),
    }
}

/// serde_json appends " at line L column C" to its messages; the reader reports positions
/// separately. Used only on the parser's own (syntax) errors.
pub fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

/// The parser's description of malformed JSON, with two corrections: the nesting limit in the
/// format's words, and an unpaired `\uDC00`..`\uDFFF` escape (which serde_json calls a
/// "leading" surrogate) named right.
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
