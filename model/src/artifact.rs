//! Artifact identity: SHA-256 digests and `artifact://sha256/<hex>` references (SPEC ART-1, ART-2).
//!
//! A digest is the lowercase hex SHA-256 of UTF-8 content. A reference id is the fixed prefix
//! [`REFERENCE_PREFIX`] followed by a well-formed digest, 82 ASCII bytes in all. Parsing is exact:
//! no trimming, no uppercase, nothing before or after.

use std::fmt;

use sha2::{Digest as _, Sha256};

/// The prefix of every canonical artifact reference id (SPEC ART-2).
pub const REFERENCE_PREFIX: &str = "artifact://sha256/";

/// Length in bytes of a canonical reference id: prefix (18) + 64 hex digits (SPEC ART-2).
pub const REFERENCE_LEN: usize = 82;

/// Why a digest or reference string was refused (SPEC ART-1, ART-2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// The digest is not exactly 64 characters of `[0-9a-f]`.
    #[error("malformed digest: expected 64 lowercase hex characters")]
    MalformedDigest,
    /// The reference does not start with `artifact://sha256/` or its remainder is not a digest.
    #[error(
        "malformed artifact reference: expected `artifact://sha256/` + 64 lowercase hex characters"
    )]
    MalformedReference,
}

/// A SHA-256 digest, stored as raw bytes and rendered as 64 lowercase hex characters (SPEC ART-1).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The digest of `content`'s UTF-8 bytes (SPEC ART-1).
    pub fn of(content: &str) -> Digest {
        Digest::of_bytes(content.as_bytes())
    }

    /// The digest of raw bytes.
    pub fn of_bytes(bytes: &[u8]) -> Digest {
        let out = Sha256::digest(bytes);
        let mut raw = [0u8; 32];
        raw.copy_from_slice(&out);
        Digest(raw)
    }

    /// Parses a well-formed digest: exactly 64 characters, each in `[0-9a-f]` (SPEC ART-1).
    ///
    /// Each byte's value is looked up in a table, where a byte that is not a lowercase
    /// hex digit has its high bits set; those bits are gathered over all 64 bytes and tested
    /// once at the end (a branch per byte cost three times as much: every digest of a trace is
    /// parsed).
    pub fn parse(hex: &str) -> Result<Digest, ArtifactError> {
        let bytes: &[u8; 64] = hex
            .as_bytes()
            .try_into()
            .map_err(|_| ArtifactError::MalformedDigest)?;
        let mut raw = [0u8; 32];
        let mut bad = 0u8;
        for (out, pair) in raw.iter_mut().zip(bytes.chunks_exact(2)) {
            let (hi, lo) = (HEX_VALUE[pair[0] as usize], HEX_VALUE[pair[1] as usize]);
            bad |= hi | lo;
            *out = (hi << 4) | lo;
        }
        if bad > 0x0f {
            return Err(ArtifactError::MalformedDigest);
        }
        Ok(Digest(raw))
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64-character lowercase hex rendering.
    pub fn to_hex(&self) -> String {
        to_lower_hex(&self.0)
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex of arbitrary bytes (used for digests and minted ids).
pub fn to_lower_hex(bytes: &[u8]) -> String {
    let mut hex = Vec::with_capacity(bytes.len() * 2);
    for b in bytes {
        hex.extend_from_slice(&[HEX[(b >> 4) as usize], HEX[(b & 0x0f) as usize]]);
    }
    // Hex digits are ASCII: always UTF-8.
    String::from_utf8(hex).unwrap_or_default()
}

/// The 64 lowercase hex digits of a digest, without allocating.
fn hex_digits(raw: &[u8; 32]) -> [u8; 64] {
    let mut hex = [0u8; 64];
    for (pair, b) in hex.chunks_exact_mut(2).zip(raw) {
        pair[0] = HEX[(b >> 4) as usize];
        pair[1] = HEX[(b & 0x0f) as usize];
    }
    hex
}

/// Lowercase hex SHA-256 of a string's UTF-8 bytes.
pub fn sha256_hex(content: &str) -> String {
    Digest::of(content).to_hex()
}

/// The value of each byte as a lowercase hex digit (`0-9`, `a-f`); `0xff` for every other
/// byte, so the OR of a text's values is above `0x0f` exactly when one of its bytes is not a digit.
const HEX_VALUE: [u8; 256] = {
    let mut table = [0xff_u8; 256];
    let mut d: u8 = 0;
    while d < 16 {
        table[HEX[d as usize] as usize] = d;
        d += 1;
    }
    table
};

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = hex_digits(&self.0);
        // Hex digits are ASCII: always UTF-8.
        f.write_str(std::str::from_utf8(&hex).unwrap_or_default())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

/// A canonical artifact reference `artifact://sha256/<digest>` (SPEC ART-2).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct ArtifactReference {
    digest: Digest,
}

impl ArtifactReference {
    /// The reference naming `digest`.
    pub fn new(digest: Digest) -> ArtifactReference {
        ArtifactReference { digest }
    }

    /// The reference to `content` (its SHA-256 digest).
    pub fn to_content(content: &str) -> ArtifactReference {
        ArtifactReference::new(Digest::of(content))
    }

    /// Parses a canonical reference id: exact prefix, then a well-formed digest, nothing else
    /// (SPEC ART-2). No trimming, no case folding.
    pub fn parse(s: &str) -> Result<ArtifactReference, ArtifactError> {
        let rest = s
            .strip_prefix(REFERENCE_PREFIX)
            .ok_or(ArtifactError::MalformedReference)?;
        let digest = Digest::parse(rest).map_err(|_| ArtifactError::MalformedReference)?;
        Ok(ArtifactReference { digest })
    }

    /// The reference's text, as [`Display`](fmt::Display) writes it, built in one allocation
    /// (`to_string` grows its string once per piece written).
    pub fn text(&self) -> String {
        let mut text = String::with_capacity(REFERENCE_PREFIX.len() + 64);
        text.push_str(REFERENCE_PREFIX);
        // Hex digits are ASCII: always UTF-8.
        text.push_str(std::str::from_utf8(&hex_digits(&self.digest.0)).unwrap_or_default());
        text
    }

    /// The digest this reference names.
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// The workspace-relative path `.foundry/artifacts/{d[0..2]}/{d[2..4]}/{d}` (SPEC ART-2).
    pub fn path(&self) -> String {
        let d = self.digest.to_hex();
        format!(".foundry/artifacts/{}/{}/{}", &d[0..2], &d[2..4], d)
    }
}

impl fmt::Display for ArtifactReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{REFERENCE_PREFIX}{}", self.digest)
    }
}
