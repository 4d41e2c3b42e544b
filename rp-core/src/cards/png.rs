//! The text chunks of a PNG file: read (with every chunk's length and CRC checked), written
//! (the image's own chunks copied byte for byte, the card's `tEXt` chunks replaced), and taken
//! out (a card's image kept without its card, docs/cards.md "Assets and images").
//!
//! Hand-written rather than through an image crate: a card only needs the chunk layout (eight
//! signature bytes, then length, type, data, CRC-32 per chunk), and a decoder would decode and
//! re-encode the image, which an export must give back unchanged.

use std::fmt;

/// The PNG signature.
const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
/// The largest PNG read, in bytes.
pub const MAX_PNG_BYTES: usize = 64 << 20;

/// What is wrong with a PNG.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PngError(pub String);

impl fmt::Display for PngError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `bytes` start like a PNG.
pub fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(&SIGNATURE)
}

/// One chunk: its type and its data.
struct Chunk<'a> {
    kind: [u8; 4],
    data: &'a [u8],
    /// The whole chunk, length to CRC.
    raw: &'a [u8],
}

/// The chunks of `bytes`, each checked: lengths within the file, CRC-32 right, the last one
/// `IEND`.
fn chunks(bytes: &[u8]) -> Result<Vec<Chunk<'_>>, PngError> {
    let bad = |m: String| Err(PngError(m));
    if bytes.len() > MAX_PNG_BYTES {
        return bad(format!("the PNG is larger than {MAX_PNG_BYTES} bytes"));
    }
    if !is_png(bytes) {
        return bad("not a PNG (no PNG signature)".into());
    }
    let mut out = Vec::new();
    let mut at = SIGNATURE.len();
    loop {
        if bytes.len() - at < 12 {
            return bad(format!("a chunk is cut short at byte {at}"));
        }
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        if len > bytes.len() - at - 12 {
            return bad(format!(
                "the chunk at byte {at} claims {len} bytes past the file's end"
            ));
        }
        let kind: [u8; 4] = bytes[at + 4..at + 8].try_into().expect("4 bytes");
        if !kind.iter().all(u8::is_ascii_alphabetic) {
            return bad(format!("the chunk at byte {at} has no valid type"));
        }
        let data = &bytes[at + 8..at + 8 + len];
        let crc = u32::from_be_bytes(
            bytes[at + 8 + len..at + 12 + len]
                .try_into()
                .expect("4 bytes"),
        );
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&kind);
        hasher.update(data);
        if hasher.finalize() != crc {
            return bad(format!(
                "the {} chunk at byte {at} fails its CRC check",
                String::from_utf8_lossy(&kind)
            ));
        }
        out.push(Chunk {
            kind,
            data,
            raw: &bytes[at..at + 12 + len],
        });
        at += 12 + len;
        if &kind == b"IEND" {
            return Ok(out);
        }
        if at == bytes.len() {
            return bad("the PNG ends without an IEND chunk".into());
        }
    }
}

/// The text of the `tEXt` chunk named `keyword`, if the PNG has one (the last, if several).
pub fn text_chunk(bytes: &[u8], keyword: &str) -> Result<Option<String>, PngError> {
    let mut found = None;
    for c in chunks(bytes)? {
        if &c.kind != b"tEXt" {
            continue;
        }
        let Some(nul) = c.data.iter().position(|b| *b == 0) else {
            return Err(PngError("a tEXt chunk has no keyword separator".into()));
        };
        if &c.data[..nul] == keyword.as_bytes() {
            // tEXt is Latin-1; a card's is base64, so ASCII.
            found = Some(c.data[nul + 1..].iter().map(|b| char::from(*b)).collect());
        }
    }
    Ok(found)
}

/// `png` with its `tEXt` chunks named in `texts` replaced by those texts (written before
/// `IEND`); every other chunk copied as it was.
pub fn with_text_chunks(png: &[u8], texts: &[(&str, &str)]) -> Result<Vec<u8>, PngError> {
    let chunks = chunks(png)?;
    let mut out =
        Vec::with_capacity(png.len() + texts.iter().map(|(_, t)| t.len() + 20).sum::<usize>());
    out.extend_from_slice(&SIGNATURE);
    for c in &chunks {
        let replaced = &c.kind == b"tEXt"
            && texts
                .iter()
                .any(|(k, _)| c.data.starts_with(k.as_bytes()) && c.data.get(k.len()) == Some(&0));
        if &c.kind == b"IEND" {
            for (keyword, text) in texts {
                let mut data = Vec::with_capacity(keyword.len() + 1 + text.len());
                data.extend_from_slice(keyword.as_bytes());
                data.push(0);
                data.extend_from_slice(text.as_bytes());
                write_chunk(&mut out, b"tEXt", &data);
            }
        }
        if !replaced {
            out.extend_from_slice(c.raw);
        }
    }
    Ok(out)
}

/// Checks `png` chunk by chunk (signature, lengths, CRC-32s, `IEND`), as a card's image must
/// pass before it is kept.
pub fn check(png: &[u8]) -> Result<(), PngError> {
    chunks(png).map(|_| ())
}

/// `png` without its `tEXt` chunks named in `keywords` (a card's image, its card taken out);
/// every other chunk copied as it was.
pub fn without_text_chunks(png: &[u8], keywords: &[&str]) -> Result<Vec<u8>, PngError> {
    let chunks = chunks(png)?;
    let mut out = Vec::with_capacity(png.len());
    out.extend_from_slice(&SIGNATURE);
    for c in &chunks {
        let named = &c.kind == b"tEXt"
            && keywords
                .iter()
                .any(|k| c.data.starts_with(k.as_bytes()) && c.data.get(k.len()) == Some(&0));
        if !named {
            out.extend_from_slice(c.raw);
        }
    }
    Ok(out)
}

/// The data of each chunk of type `kind`, in order (`b"IDAT"`: the image's pixels).
pub fn chunk_data<'a>(png: &'a [u8], kind: &[u8; 4]) -> Result<Vec<&'a [u8]>, PngError> {
    Ok(chunks(png)?
        .into_iter()
        .filter(|c| &c.kind == kind)
        .map(|c| c.data)
        .collect())
}

fn write_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(kind);
    hasher.update(data);
    out.extend_from_slice(&hasher.finalize().to_be_bytes());
}

/// A 1×1 grey PNG, the image of a card exported for an entity without one.
pub fn placeholder() -> Vec<u8> {
    let mut out = SIGNATURE.to_vec();
    // Width 1, height 1, bit depth 8, greyscale, no interlace.
    write_chunk(&mut out, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
    // The one row (filter byte 0, one grey byte), zlib-wrapped as a stored deflate block.
    let row = [0u8, 0x80];
    let mut zlib = vec![0x78, 0x01, 0x01, 0x02, 0x00, 0xfd, 0xff];
    zlib.extend_from_slice(&row);
    let (mut a, mut b) = (1u32, 0u32);
    for byte in row {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    write_chunk(&mut out, b"IDAT", &zlib);
    write_chunk(&mut out, b"IEND", &[]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_chunks_are_written_read_and_replaced() {
        let png = with_text_chunks(&placeholder(), &[("chara", "djI="), ("ccv3", "djM=")]).unwrap();
        assert_eq!(text_chunk(&png, "chara").unwrap().as_deref(), Some("djI="));
        assert_eq!(text_chunk(&png, "ccv3").unwrap().as_deref(), Some("djM="));
        let again = with_text_chunks(&png, &[("chara", "eA==")]).unwrap();
        assert_eq!(
            text_chunk(&again, "chara").unwrap().as_deref(),
            Some("eA==")
        );
        assert_eq!(text_chunk(&again, "ccv3").unwrap().as_deref(), Some("djM="));
        assert_eq!(text_chunk(&placeholder(), "chara").unwrap(), None);
    }

    #[test]
    fn broken_pngs_are_named() {
        let png = with_text_chunks(&placeholder(), &[("chara", "djI=")]).unwrap();
        let mut flipped = png.clone();
        let at = flipped.len() - 20;
        flipped[at] ^= 1;
        assert!(text_chunk(&flipped, "chara").unwrap_err().0.contains("CRC"));
        assert!(text_chunk(&png[..png.len() - 5], "chara").is_err());
        assert!(
            text_chunk(b"GIF89a", "chara")
                .unwrap_err()
                .0
                .contains("not a PNG")
        );
        let mut huge = png.clone();
        huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(
            text_chunk(&huge, "chara")
                .unwrap_err()
                .0
                .contains("past the file's end")
        );
    }
}
