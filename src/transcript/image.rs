//! Image blocks sized as their provider charges them (SPEC TRN-19).
//!
//! An image given inline (base64, or a `data:` URL) is measured by its own pixel dimensions,
//! read from the file header by the `imagesize` crate: only a prefix of the base64 text is
//! decoded (the first KiB, growing only while the header is not complete), so a 10 MB image costs
//! what a small one does. The dimensions go through the provider's documented rule:
//!
//! | rule | tokens |
//! |---|---|
//! | OpenAI (tile rule) | `detail: "low"`: 85; else scaled to fit 2048 x 2048, then its shortest side to 768, 85 + 170 per 512 px tile |
//! | Anthropic (pixel rule) | its long edge scaled to 1568 at most, then width x height / 750, at most 1640 |
//!
//! OpenAI's two fits are computed with their sides rounded down and up (the most tiles of the four
//! ways), Anthropic's sides rounded up, so a count is never below the provider's. Where the dimensions
//! cannot be known (a URL, a file id, data that is not a PNG, JPEG, GIF or WebP header), each rule
//! has its stated bound: the most one image can cost (OpenAI 85 + 8 x 170 = 1445, Anthropic 1640).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value as Json;

/// The most OpenAI's tile rule charges for one image (TRN-15): 2 x 4 tiles of 512 px after the
/// image is fitted into 2048 x 2048 and its shortest side into 768.
pub const OPENAI_MAX: u32 = 85 + 8 * 170;

/// An OpenAI image at `detail: "low"`: 85 tokens, whatever its size.
pub const OPENAI_LOW: u32 = 85;

/// The most Anthropic's pixel rule charges for one image (TRN-19): an image over about 1,600
/// tokens is scaled down before it is charged, and the largest sizes its guide lists as sent
/// unscaled cost up to 784 x 1568 / 750 = 1639.1 tokens, so 1640.
pub const ANTHROPIC_MAX: u32 = 1640;

/// The provider whose rule sizes an image (TRN-19): the transcript's format names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageRule {
    /// OpenAI's tile rule (OpenAI chat and Responses transcripts).
    OpenAi,
    /// Anthropic's pixel rule (Anthropic transcripts).
    Anthropic,
    /// The larger of the two (LangChain transcripts: the model is not named).
    Either,
}

impl ImageRule {
    /// The tokens this rule charges for the image block `block` at most: by its pixel dimensions
    /// when its data is inline, else the rule's bound (`detail` is OpenAI's `"low"` / `"high"` /
    /// `"auto"`, if the block gives one).
    pub fn tokens(self, block: &Json, detail: Option<&str>) -> u32 {
        self.tokens_of(inline_data(block).and_then(dimensions), detail)
    }

    /// The tokens this rule charges for an image of `size` (its bound when `None`).
    pub fn tokens_of(self, size: Option<(u64, u64)>, detail: Option<&str>) -> u32 {
        match self {
            ImageRule::OpenAi => openai(size, detail),
            ImageRule::Anthropic => anthropic(size),
            ImageRule::Either => openai(size, detail).max(anthropic(size)),
        }
    }
}

/// OpenAI's tile rule for an image of `size` (or its bound when `None`).
pub fn openai(size: Option<(u64, u64)>, detail: Option<&str>) -> u32 {
    if detail == Some("low") {
        return OPENAI_LOW;
    }
    let Some((w, h)) = size else {
        return OPENAI_MAX;
    };
    // Each fit's sides rounded down or up (how the provider rounds is not documented): the most
    // tiles of the four ways is charged, never fewer than the provider's.
    let tiles = [(false, false), (false, true), (true, false), (true, true)]
        .into_iter()
        .map(|(first, second)| {
            let (w, h) = fit(w, h, 2048, w.max(h), first);
            let (w, h) = fit(w, h, 768, w.min(h), second);
            w.div_ceil(512) * h.div_ceil(512)
        })
        .max()
        .unwrap_or(8);
    // At most 2 x 4 tiles after the two fits (OPENAI_MAX), so this fits.
    u32::try_from(85 + 170 * tiles).unwrap_or(u32::MAX)
}

/// Anthropic's pixel rule for an image of `size` (or its bound when `None`).
pub fn anthropic(size: Option<(u64, u64)>) -> u32 {
    let Some((w, h)) = size else {
        return ANTHROPIC_MAX;
    };
    let (w, h) = fit(w, h, 1568, w.max(h), true);
    let tokens = (w * h).div_ceil(750).max(1);
    u32::try_from(tokens.min(u64::from(ANTHROPIC_MAX))).unwrap_or(ANTHROPIC_MAX)
}

/// `(w, h)` scaled so that `side` (one of them) is at most `limit`, each side rounded up (`up`)
/// or down (at least 1).
fn fit(w: u64, h: u64, limit: u64, side: u64, up: bool) -> (u64, u64) {
    if side <= limit || side == 0 {
        return (w, h);
    }
    let scale = |n: u64| {
        if up {
            (n * limit).div_ceil(side)
        } else {
            (n * limit / side).max(1)
        }
    };
    (scale(w), scale(h))
}

/// The base64 text of an image block's inline data, wherever the formats put it: OpenAI chat
/// `image_url.url` and Responses `image_url` (a `data:` URL), Anthropic `source.data` (`type`
/// `base64`), LangChain's `base64`, `data` (with `source_type` `base64`) or `url`.
fn inline_data(block: &Json) -> Option<&str> {
    let url = block
        .get("image_url")
        .or_else(|| block.get("url"))
        .and_then(|v| v.as_str().or_else(|| v.get("url")?.as_str()));
    if let Some(d) = url.and_then(data_url) {
        return Some(d);
    }
    let source = block.get("source");
    if source.and_then(|s| s.get("type")).and_then(Json::as_str) == Some("base64") {
        return source?.get("data")?.as_str();
    }
    if let Some(d) = block.get("base64").and_then(Json::as_str) {
        return Some(d);
    }
    if block.get("source_type").and_then(Json::as_str) == Some("base64") {
        return block.get("data")?.as_str();
    }
    None
}

/// The base64 payload of a `data:<type>;base64,<payload>` URL.
pub(crate) fn data_url(url: &str) -> Option<&str> {
    let (head, payload) = url.strip_prefix("data:")?.split_once(',')?;
    head.ends_with(";base64").then_some(payload)
}

/// The pixel dimensions in the header of the base64-encoded image `data` (PNG, JPEG, GIF or
/// WebP), decoding only as much of it as the header needs.
pub fn dimensions(data: &str) -> Option<(u64, u64)> {
    let data = data.trim_start();
    let mut take = 1024;
    loop {
        let whole = take >= data.len();
        let prefix = if whole {
            data.trim_end()
        } else {
            data.get(..take)?
        };
        let bytes = STANDARD.decode(prefix).ok()?;
        match header(&bytes) {
            Some(size) => return Some(size),
            None if whole => return None,
            None => take *= 8,
        }
    }
}

/// The dimensions in an image header, if `bytes` hold a complete one of a format providers take.
fn header(bytes: &[u8]) -> Option<(u64, u64)> {
    use imagesize::ImageType::{Gif, Jpeg, Png, Webp};
    if !matches!(imagesize::image_type(bytes).ok()?, Png | Jpeg | Gif | Webp) {
        return None;
    }
    let size = imagesize::blob_size(bytes).ok()?;
    let side = |n: usize| u64::try_from(n).ok().filter(|n| *n > 0);
    Some((side(size.width)?, side(size.height)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG header (signature and IHDR) claiming `w` x `h`, as base64.
    fn png(w: u32, h: u32) -> String {
        let mut b = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
        b.extend_from_slice(b"IHDR");
        b.extend_from_slice(&w.to_be_bytes());
        b.extend_from_slice(&h.to_be_bytes());
        b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        STANDARD.encode(b)
    }

    #[test]
    fn openai_tile_rule_matches_its_documented_examples() {
        // OpenAI's own examples: 1024 x 1024 costs 765, 2048 x 4096 costs 1105.
        assert_eq!(openai(Some((1024, 1024)), None), 765);
        assert_eq!(openai(Some((2048, 4096)), Some("high")), 1105);
        assert_eq!(openai(Some((4096, 8192)), None), 1105);
        assert_eq!(openai(Some((100, 100)), None), 255);
        // A short side just under 1024 after the first fit: rounded down, the second fit makes
        // the long side 1538 (4 tiles); the provider may round so, so it is charged.
        assert_eq!(openai(Some((7356, 14713)), None), 85 + 8 * 170);
        assert_eq!(openai(Some((4096, 8192)), Some("low")), 85);
        assert_eq!(openai(None, None), OPENAI_MAX);
    }

    #[test]
    fn anthropic_pixel_rule_matches_its_documented_examples() {
        // Anthropic's tables: 200 x 200 about 54 tokens, 1092 x 1092 about 1590; 784 x 1568 is
        // sent unscaled (1639.1 tokens).
        assert_eq!(anthropic(Some((200, 200))), 54);
        assert_eq!(anthropic(Some((1092, 1092))), 1590);
        assert_eq!(anthropic(Some((784, 1568))), 1640);
        assert_eq!(anthropic(Some((8000, 8000))), ANTHROPIC_MAX);
        assert_eq!(anthropic(None), ANTHROPIC_MAX);
    }

    #[test]
    fn dimensions_come_from_the_header_of_inline_data() {
        assert_eq!(dimensions(&png(4000, 3000)), Some((4000, 3000)));
        assert_eq!(dimensions("not base64!"), None);
        assert_eq!(dimensions(&STANDARD.encode(b"plain text, no image")), None);
        let block = serde_json::json!({"type": "image_url",
            "image_url": {"url": format!("data:image/png;base64,{}", png(512, 512))}});
        assert_eq!(ImageRule::OpenAi.tokens(&block, None), 85 + 170);
        let anthropic = serde_json::json!({"type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": png(750, 10)}});
        assert_eq!(ImageRule::Anthropic.tokens(&anthropic, None), 10);
        assert_eq!(ImageRule::Either.tokens(&anthropic, None), 85 + 2 * 170);
    }
}
