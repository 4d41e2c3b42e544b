//! CHARX, a character card in a zip (Character Card V3): `card.json` at the archive's root,
//! beside the card's assets (`assets/icon/image/main.png`, …), which the card's `data.assets`
//! names by `embeded://path` URIs. Read with bounds — `card.json` at most 16 MiB, each other file
//! at most 16 MiB and all of them at most 64 MiB inflated, a compression ratio of at most 200 to
//! 1 checked before a file is inflated (a zip bomb is refused unread), at most 10,000 files, no
//! path that climbs out of the archive — and written with the card and every file it came with
//! (docs/cards.md, "Assets").

use crate::error::{Error, Result};
use crate::model::card::MAX_CARD_BYTES;
use std::io::{Cursor, Read, Write};

pub use crate::model::card::{
    MAX_ASSET_BYTES, MAX_ASSETS_BYTES, MAX_ENTRIES, MAX_PATH_BYTES, check_asset_path as check_path,
};

/// The highest compression ratio of a file in a CHARX.
pub const MAX_RATIO: u64 = 200;

/// A CHARX read: its `card.json` and its other files, by path (in the archive's order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Charx {
    /// The text of `card.json`.
    pub card: String,
    /// Every other file: its path and its bytes.
    pub assets: Vec<(String, Vec<u8>)>,
}

/// Whether `bytes` start like a zip.
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

fn bad<T>(reason: impl Into<String>) -> Result<T> {
    Err(Error::invalid("card", reason.into()))
}

/// Reads the zip entry `file`, refusing it when it claims more than `limit` bytes, inflates
/// more than [`MAX_RATIO`] to 1 (checked before inflating), or inflates past its claim.
fn inflate(file: &mut zip::read::ZipFile<'_, Cursor<&[u8]>>, limit: usize) -> Result<Vec<u8>> {
    let name = file.name().to_owned();
    let (size, packed) = (file.size(), file.compressed_size());
    if size > limit as u64 {
        return bad(format!("{name} in the CHARX is larger than {limit} bytes"));
    }
    if size > 1024 && size > packed.saturating_mul(MAX_RATIO) {
        return bad(format!(
            "{name} in the CHARX inflates {size} bytes from {packed}: more than {MAX_RATIO} to 1"
        ));
    }
    let mut out = Vec::with_capacity(size as usize);
    file.by_ref()
        .take(size + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::invalid("card", format!("{name} in the CHARX cannot be read: {e}")))?;
    if out.len() as u64 > size {
        return bad(format!(
            "{name} in the CHARX inflates past the {size} bytes it declares"
        ));
    }
    Ok(out)
}

/// The `card.json` of the CHARX in `bytes` and its other files, read within the bounds of
/// the [module docs](self); a violation names the file.
pub fn read(bytes: &[u8]) -> Result<Charx> {
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
    let card = {
        let mut file = archive
            .by_name("card.json")
            .map_err(|_| Error::invalid("card", "the CHARX holds no card.json at its root"))?;
        let raw = inflate(&mut file, MAX_CARD_BYTES)?;
        String::from_utf8(raw).map_err(|_| {
            Error::invalid("card", "card.json in the CHARX cannot be read: not UTF-8")
        })?
    };
    let mut assets = Vec::new();
    let mut total = 0usize;
    for i in 0..archive.len() {
        let mut file = archive
            .by_index(i)
            .map_err(|e| Error::invalid("card", format!("file {i} of the CHARX: {e}")))?;
        let name = file.name().to_owned();
        if file.is_dir() || name == "card.json" {
            continue;
        }
        check_path(&name).map_err(|reason| Error::invalid("card", reason))?;
        if total.saturating_add(file.size() as usize) > MAX_ASSETS_BYTES {
            return bad(format!(
                "{name}: the CHARX's files come to more than {MAX_ASSETS_BYTES} bytes"
            ));
        }
        let data = inflate(&mut file, MAX_ASSET_BYTES)?;
        total += data.len();
        if total > MAX_ASSETS_BYTES {
            return bad(format!(
                "{name}: the CHARX's files come to more than {MAX_ASSETS_BYTES} bytes"
            ));
        }
        assets.push((name, data));
    }
    Ok(Charx { card, assets })
}

/// A CHARX holding `card_v3` as its `card.json` (deflated) and each of `assets` at its path
/// (stored as they are: an image does not deflate, and a stored file is never refused as a
/// bomb when read back).
pub fn write<'a>(
    card_v3: &str,
    assets: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let stored = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(false);
    let mut wrote = zip
        .start_file("card.json", deflated)
        .and_then(|()| zip.write_all(card_v3.as_bytes()).map_err(Into::into));
    for (path, bytes) in assets {
        wrote = wrote
            .and_then(|()| zip.start_file(path, stored))
            .and_then(|()| zip.write_all(bytes).map_err(Into::into));
    }
    wrote
        .and_then(|()| zip.finish().map(|_| ()))
        .map_err(|e| Error::invalid("card", format!("the CHARX could not be written: {e}")))?;
    Ok(out.into_inner())
}
