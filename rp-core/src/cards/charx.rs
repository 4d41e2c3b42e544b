//! CHARX, a character card in a zip (Character Card V3): `card.json` at the archive's root,
//! beside the card's assets. Read with bounds — a card of at most 16 MiB, a compression ratio
//! of at most 200 to 1 (a zip bomb is refused before it is inflated), no entry whose path
//! climbs out of the archive — and written with the V3 card alone. Assets are not kept yet
//! (docs/cards.md, "Not yet").

use crate::error::{Error, Result};
use crate::model::card::MAX_CARD_BYTES;
use std::io::{Cursor, Read, Write};

/// The most entries a CHARX read may hold.
const MAX_ENTRIES: usize = 10_000;
/// The highest compression ratio of `card.json`.
const MAX_RATIO: u64 = 200;

/// Whether `bytes` start like a zip.
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

fn bad<T>(reason: impl Into<String>) -> Result<T> {
    Err(Error::invalid("card", reason.into()))
}

/// The `card.json` of the CHARX in `bytes`.
pub fn read(bytes: &[u8]) -> Result<String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| Error::invalid("card", format!("not a readable zip: {e}")))?;
    if archive.len() > MAX_ENTRIES {
        return bad(format!("the CHARX holds more than {MAX_ENTRIES} files"));
    }
    for name in archive.file_names() {
        let climbs = name.starts_with('/')
            || name.starts_with('\\')
            || name.split(['/', '\\']).any(|part| part == "..")
            || name.contains(':');
        if climbs {
            return bad(format!("the path {name:?} in the CHARX climbs out of it"));
        }
    }
    let mut file = archive
        .by_name("card.json")
        .map_err(|_| Error::invalid("card", "the CHARX holds no card.json at its root"))?;
    let (size, packed) = (file.size(), file.compressed_size());
    if size > MAX_CARD_BYTES as u64 {
        return bad(format!(
            "its card.json is larger than {MAX_CARD_BYTES} bytes"
        ));
    }
    if size > 1024 && size > packed.saturating_mul(MAX_RATIO) {
        return bad(format!(
            "its card.json inflates {size} bytes from {packed}: more than {MAX_RATIO} to 1"
        ));
    }
    let mut text = String::new();
    file.by_ref()
        .take(MAX_CARD_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::invalid("card", format!("its card.json cannot be read: {e}")))?;
    if text.len() > MAX_CARD_BYTES {
        return bad(format!(
            "its card.json is larger than {MAX_CARD_BYTES} bytes"
        ));
    }
    Ok(text)
}

/// A CHARX holding `card_v3` as its `card.json`.
pub fn write(card_v3: &str) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let wrote = zip
        .start_file("card.json", options)
        .and_then(|()| zip.write_all(card_v3.as_bytes()).map_err(Into::into))
        .and_then(|()| zip.finish().map(|_| ()));
    wrote.map_err(|e| Error::invalid("card", format!("the CHARX could not be written: {e}")))?;
    Ok(out.into_inner())
}
