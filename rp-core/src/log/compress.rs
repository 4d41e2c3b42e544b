//! The compressed bodies of format 2 (`docs/format.md`): an event is one zstd frame made with
//! the built-in dictionary, a snapshot a run of independent zstd frames that decompress on
//! several threads. zstd is the library the memory index already links (through tantivy), so
//! this adds no dependency.
//!
//! ```text
//! event     1 byte  EVENT_DICT_1, u32 LE raw length, one zstd frame (dictionary 1)
//! frames    1 byte  FRAMES, u32 LE frame count n, n × (u32 LE raw length, u32 LE stored
//!           length), then the n frames one after another
//! ```
//!
//! Every length is checked against the caller's limit before anything is allocated, and each
//! frame must give exactly the bytes it declares: a damaged body is an error, never a large
//! allocation or a short read.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use zstd::bulk::{Compressor, Decompressor};
use zstd::dict::{DecoderDictionary, EncoderDictionary};

/// Codec byte: the MessagePack body as is.
pub(super) const PLAIN: u8 = 0;
/// Codec byte: one zstd frame compressed with [`DICTIONARY_1`].
pub(super) const EVENT_DICT_1: u8 = 1;
/// Codec byte: independent zstd frames without a dictionary.
pub(super) const FRAMES: u8 = 2;

/// Dictionary 1, trained on event bodies (`cargo run --release -p rp-benches --example
/// train_dictionary`). Frozen: every record written with it must decode with it forever, so a
/// better dictionary is added under a new codec byte, never swapped in for this one.
static DICTIONARY_1: &[u8] = include_bytes!("dictionary-1.zstd");

/// The level events are compressed at: a few microseconds per record at most, for about 2.5×.
const EVENT_LEVEL: i32 = 3;
/// The level snapshots are compressed at: zstd's default, about 4× on a campaign's world
/// (level 1 gives 3.9× in 70 % of the time; snapshots are written in the background).
const SNAPSHOT_LEVEL: i32 = 3;
/// The raw bytes per snapshot frame: small enough that frames spread over every core, large
/// enough that zstd's window finds the repetition.
const FRAME_BYTES: usize = 4 << 20;
/// A body shorter than this is kept plain: below it zstd's frame header outweighs the gain.
const MIN_PACKED_BYTES: usize = 48;

fn encoder_dictionary() -> &'static EncoderDictionary<'static> {
    static D: OnceLock<EncoderDictionary<'static>> = OnceLock::new();
    D.get_or_init(|| EncoderDictionary::copy(DICTIONARY_1, EVENT_LEVEL))
}

fn decoder_dictionary() -> &'static DecoderDictionary<'static> {
    static D: OnceLock<DecoderDictionary<'static>> = OnceLock::new();
    D.get_or_init(|| DecoderDictionary::copy(DICTIONARY_1))
}

thread_local! {
    // A zstd context per thread, made once: preparing one costs more than a record.
    static EVENT_COMPRESSOR: RefCell<Option<Compressor<'static>>> = const { RefCell::new(None) };
    static EVENT_DECOMPRESSOR: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
}

/// A compressor for events: dictionary 1, and a frame without the dictionary's id or the
/// content's size (the record says both: 5 bytes saved on a record of about 150).
fn event_compressor() -> std::io::Result<Compressor<'static>> {
    use zstd::zstd_safe::CParameter;
    let mut c = Compressor::with_prepared_dictionary(encoder_dictionary())?;
    c.set_parameter(CParameter::DictIdFlag(false))?;
    c.set_parameter(CParameter::ContentSizeFlag(false))?;
    Ok(c)
}

/// Appends an event's body to `out`: compressed with dictionary 1 when that is smaller,
/// plain otherwise (the codec byte says which).
pub(super) fn pack_event(body: &[u8], out: &mut Vec<u8>) {
    if body.len() >= MIN_PACKED_BYTES {
        let packed = EVENT_COMPRESSOR.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_none() {
                *c = event_compressor().ok();
            }
            c.as_mut()?.compress(body).ok()
        });
        if let Some(packed) = packed
            && packed.len() + 5 < body.len()
            && let Ok(raw) = u32::try_from(body.len())
        {
            out.push(EVENT_DICT_1);
            out.extend_from_slice(&raw.to_le_bytes());
            out.extend_from_slice(&packed);
            return;
        }
    }
    out.push(PLAIN);
    out.extend_from_slice(body);
}

/// Appends a large body (a snapshot) to `out` as independent frames, compressed on several
/// threads; plain when it is small or compression does not pay.
pub(super) fn pack_frames(body: &[u8], out: &mut Vec<u8>) {
    let chunks: Vec<&[u8]> = body.chunks(FRAME_BYTES).collect();
    let packed = if body.len() < MIN_PACKED_BYTES {
        None
    } else {
        in_parallel(chunks.clone(), |chunk| {
            zstd::bulk::compress(chunk, SNAPSHOT_LEVEL).ok()
        })
        .into_iter()
        .collect::<Option<Vec<Vec<u8>>>>()
    };
    let stored: usize = packed.iter().flatten().map(|p| p.len() + 8).sum();
    match packed {
        Some(frames) if stored + 5 < body.len() && u32::try_from(frames.len()).is_ok() => {
            out.reserve(5 + stored);
            out.push(FRAMES);
            out.extend_from_slice(&(frames.len() as u32).to_le_bytes());
            for (raw, frame) in chunks.iter().zip(&frames) {
                out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
                out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            }
            for frame in &frames {
                out.extend_from_slice(frame);
            }
        }
        _ => {
            out.push(PLAIN);
            out.extend_from_slice(body);
        }
    }
}

/// The MessagePack body of a record's stored body (its codec byte first), decompressed if it
/// was compressed; at most `limit` bytes, or an error saying what is wrong.
pub(super) fn unpack(stored: &[u8], limit: usize) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    let (&codec, rest) = stored.split_first().ok_or("the record has no body")?;
    match codec {
        PLAIN => Ok(std::borrow::Cow::Borrowed(rest)),
        EVENT_DICT_1 => unpack_event(rest, limit).map(std::borrow::Cow::Owned),
        FRAMES => unpack_frames(rest, limit).map(std::borrow::Cow::Owned),
        other => Err(format!("unknown body encoding {other}")),
    }
}

/// The length of a stored body once decompressed, as its lengths declare; `None` if they
/// cannot be read.
pub(super) fn body_len(stored: &[u8]) -> Option<usize> {
    let (&codec, rest) = stored.split_first()?;
    match codec {
        PLAIN => Some(rest.len()),
        EVENT_DICT_1 => u32_at(rest, 0),
        FRAMES => frame_table(rest)
            .ok()?
            .iter()
            .try_fold(0usize, |sum, (raw, _)| sum.checked_add(*raw)),
        _ => None,
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<usize> {
    let bytes = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?) as usize)
}

/// The most a zstd frame of `stored` bytes can give: a block gives at most 128 KiB and takes
/// at least 4 bytes. A length claimed beyond it is a lie, refused before anything is allocated
/// for it (so a record of a few bytes cannot make the reader reserve gigabytes).
fn most_from(stored: usize) -> usize {
    stored.saturating_mul(32 * 1024).saturating_add(1024)
}

fn check_len(raw: usize, limit: usize) -> Result<(), String> {
    if raw > limit {
        return Err(format!(
            "the record's body claims {raw} bytes, over the limit of {limit}"
        ));
    }
    Ok(())
}

fn unpack_event(rest: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let raw = u32_at(rest, 0).ok_or("the compressed body is truncated")?;
    let frame = &rest[4..];
    check_len(raw, limit.min(most_from(frame.len())))?;
    EVENT_DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(
                Decompressor::with_prepared_dictionary(decoder_dictionary())
                    .map_err(|e| format!("cannot prepare zstd: {e}"))?,
            );
        }
        let d = d.as_mut().expect("set above");
        exact(raw, |buf| d.decompress_to_buffer(frame, buf))
    })
}

/// Decompresses into a buffer of exactly `raw` bytes, which `run` must fill.
fn exact(
    raw: usize,
    run: impl FnOnce(&mut Vec<u8>) -> std::io::Result<usize>,
) -> Result<Vec<u8>, String> {
    let mut buf = Vec::with_capacity(raw);
    gave(run(&mut buf), raw)?;
    Ok(buf)
}

/// Checks that a decompression gave exactly the `raw` bytes declared.
fn gave(n: std::io::Result<usize>, raw: usize) -> Result<(), String> {
    match n {
        Ok(n) if n == raw => Ok(()),
        Ok(n) => Err(format!(
            "the compressed body gives {n} bytes where it declares {raw}"
        )),
        Err(e) => Err(format!("the compressed body is damaged: {e}")),
    }
}

/// The frames of a `FRAMES` body (after its codec byte): each one's declared length and its
/// stored bytes, every length checked against what the body holds and what a frame can give.
fn frame_table(rest: &[u8]) -> Result<Vec<(usize, &[u8])>, String> {
    let truncated = || "the compressed body is truncated".to_owned();
    let n = u32_at(rest, 0).ok_or_else(truncated)?;
    let table_end = n
        .checked_mul(8)
        .and_then(|t| t.checked_add(4))
        .filter(|end| *end <= rest.len())
        .ok_or_else(truncated)?;
    let mut frames = Vec::with_capacity(n);
    let mut at = table_end;
    for i in 0..n {
        let raw = u32_at(rest, 4 + 8 * i).ok_or_else(truncated)?;
        let len = u32_at(rest, 8 + 8 * i).ok_or_else(truncated)?;
        check_len(raw, FRAME_BYTES.min(most_from(len)))?;
        let end = at.checked_add(len).ok_or_else(truncated)?;
        frames.push((raw, rest.get(at..end).ok_or_else(truncated)?));
        at = end;
    }
    if at != rest.len() {
        return Err(format!(
            "{} trailing bytes after the compressed body",
            rest.len() - at
        ));
    }
    Ok(frames)
}

/// A `FRAMES` body decompressed on every core, each frame straight into its place.
fn unpack_frames(rest: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let frames = frame_table(rest)?;
    let raw_total = frames
        .iter()
        .try_fold(0usize, |sum, (raw, _)| sum.checked_add(*raw))
        .ok_or("the compressed body is truncated")?;
    check_len(raw_total, limit)?;
    let mut body = vec![0u8; raw_total];
    let mut places = Vec::with_capacity(frames.len());
    let mut free = body.as_mut_slice();
    for (raw, frame) in frames {
        let (place, after) = std::mem::take(&mut free).split_at_mut(raw);
        places.push((place, frame));
        free = after;
    }
    in_parallel(places, |(place, frame)| {
        let raw = place.len();
        gave(
            Decompressor::new().and_then(|mut d| d.decompress_to_buffer(frame, place)),
            raw,
        )
    })
    .into_iter()
    .collect::<Result<(), String>>()?;
    Ok(body)
}

/// `f` of every item, in order, spread over the machine's cores ([`in_order`] collecting).
pub(super) fn in_parallel<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let mut out = Vec::with_capacity(items.len());
    let Ok(()) = in_order(items, f, |r| {
        out.push(r);
        Ok::<(), std::convert::Infallible>(())
    });
    out
}

/// `f` of every item, spread over the machine's cores (one thread per core, each taking every
/// k-th item), each result handed to `take` on the calling thread in the items' order as soon
/// as it and those before it are ready: the calling thread consumes while the others still
/// work, so what `take` does costs no time of its own when it is shorter than `f`. The first
/// error of `take` stops the work (each thread stops after the item it is on) and is returned.
/// With a single core, or a single item, it is a loop on the calling thread.
///
/// Scoped threads made for the call, not a pool such as rayon's: a pool's threads do not
/// survive `fork`, and a process forked after rp used one (Python's `multiprocessing` forks by
/// default on Linux) would hang at its first snapshot. Starting two threads costs tens of
/// microseconds beside milliseconds of compression.
pub(super) fn in_order<T: Send, R: Send, E>(
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync,
    mut take: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    let n = items.len();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(n);
    if threads <= 1 {
        return items.into_iter().try_for_each(|item| take(f(item)));
    }
    let mut lanes: Vec<Vec<(usize, T)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, item) in items.into_iter().enumerate() {
        lanes[i % threads].push((i, item));
    }
    let (f, stop) = (&f, &AtomicBool::new(false));
    std::thread::scope(|s| {
        let (done, ready) = std::sync::mpsc::channel::<(usize, R)>();
        for lane in lanes {
            let done = done.clone();
            s.spawn(move || {
                for (i, item) in lane {
                    if stop.load(Ordering::Relaxed) || done.send((i, f(item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        // A result ahead of its turn waits in its slot (at most one per thread, roughly).
        let mut slots: Vec<Option<R>> = (0..n).map(|_| None).collect();
        let mut next = 0;
        let taken = ready.iter().try_for_each(|(i, r)| {
            slots[i] = Some(r);
            while let Some(r) = slots.get_mut(next).and_then(Option::take) {
                next += 1;
                take(r)?;
            }
            Ok(())
        });
        if taken.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        taken
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| b"the lantern swung in the storm "[i % 31] ^ ((i / 997) as u8 & 1))
            .collect()
    }

    #[test]
    fn an_event_body_round_trips_compressed_or_plain() {
        for body in [
            text(0),
            text(10),
            text(47),
            text(48),
            text(300),
            text(70_000),
        ] {
            let mut out = Vec::new();
            pack_event(&body, &mut out);
            assert_eq!(unpack(&out, 1 << 20).unwrap().as_ref(), &body[..]);
            if body.len() >= 300 {
                assert_eq!(out[0], EVENT_DICT_1, "{} bytes not compressed", body.len());
                assert!(out.len() < body.len());
            } else if body.len() < MIN_PACKED_BYTES {
                assert_eq!(out[0], PLAIN);
            }
        }
    }

    #[test]
    fn frames_round_trip_across_many_frames() {
        for n in [0, 100, FRAME_BYTES - 1, FRAME_BYTES, 3 * FRAME_BYTES + 17] {
            let body = text(n);
            let mut out = Vec::new();
            pack_frames(&body, &mut out);
            assert_eq!(unpack(&out, usize::MAX).unwrap().as_ref(), &body[..], "{n}");
            if n > FRAME_BYTES {
                assert_eq!(out[0], FRAMES);
                assert_eq!(u32_at(&out, 1), Some(n.div_ceil(FRAME_BYTES)));
            }
        }
    }

    #[test]
    fn a_body_over_the_limit_is_refused_before_it_is_decompressed() {
        let body = text(5_000);
        let mut event = Vec::new();
        pack_event(&body, &mut event);
        let mut frames = Vec::new();
        pack_frames(&body, &mut frames);
        for stored in [&event, &frames] {
            assert!(unpack(stored, 5_000).is_ok());
            let e = unpack(stored, 4_999).unwrap_err();
            assert!(e.contains("over the limit"), "{e}");
        }
    }

    #[test]
    fn a_body_that_lies_about_its_length_is_an_error() {
        let body = text(5_000);
        let mut event = Vec::new();
        pack_event(&body, &mut event);
        for claim in [4_999u32, 5_001, u32::MAX] {
            let mut lie = event.clone();
            lie[1..5].copy_from_slice(&claim.to_le_bytes());
            assert!(unpack(&lie, usize::MAX).is_err(), "claim {claim}");
        }
        let mut frames = Vec::new();
        pack_frames(&text(2 * FRAME_BYTES), &mut frames);
        let mut lie = frames.clone();
        lie[5..9].copy_from_slice(&(FRAME_BYTES as u32 + 1).to_le_bytes());
        assert!(unpack(&lie, usize::MAX).is_err());
        let mut count = frames.clone();
        count[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(unpack(&count, usize::MAX).is_err());
        // A few bytes that claim gigabytes are refused before anything is reserved.
        let tiny = [EVENT_DICT_1, 0xff, 0xff, 0xff, 0x7f, 0x28, 0xb5, 0x2f, 0xfd];
        assert!(
            unpack(&tiny, usize::MAX)
                .unwrap_err()
                .contains("over the limit")
        );
        let mut frame = frames.clone();
        frame[5..9].copy_from_slice(&(FRAME_BYTES as u32 + 1).to_le_bytes());
        assert!(
            unpack(&frame, usize::MAX)
                .unwrap_err()
                .contains("over the limit")
        );
        let mut extra = frames;
        extra.push(0);
        assert!(unpack(&extra, usize::MAX).unwrap_err().contains("trailing"));
    }

    #[test]
    fn damage_and_truncation_are_errors_not_panics() {
        let body = text(2_000);
        let mut event = Vec::new();
        pack_event(&body, &mut event);
        let mut frames = Vec::new();
        pack_frames(&body, &mut frames);
        for stored in [event, frames] {
            for n in 0..stored.len() {
                assert!(unpack(&stored[..n], usize::MAX).is_err(), "cut at {n}");
            }
            for i in 1..stored.len() {
                let mut b = stored.clone();
                b[i] ^= 0x5a;
                // Either refused, or (a flip zstd cannot see, in a literal) a body of the
                // declared length: the record's checksum is what catches those.
                if let Ok(out) = unpack(&b, usize::MAX) {
                    assert_eq!(out.len(), body.len());
                }
            }
        }
        assert!(
            unpack(&[9, 1, 2], usize::MAX)
                .unwrap_err()
                .contains("unknown")
        );
    }

    proptest::proptest! {
        /// Any body, compressed as an event or as frames, reads back as it was, within a limit
        /// of its own length and not within one byte less.
        #[test]
        fn any_body_round_trips(body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20_000), repeat in 1usize..40) {
            let body: Vec<u8> = body.iter().copied().cycle().take(body.len() * repeat).collect();
            for pack in [pack_event as fn(&[u8], &mut Vec<u8>), pack_frames] {
                let mut out = Vec::new();
                pack(&body, &mut out);
                proptest::prop_assert_eq!(body_len(&out), Some(body.len()));
                let back = unpack(&out, body.len()).map_err(proptest::test_runner::TestCaseError::fail)?;
                proptest::prop_assert_eq!(back.as_ref(), &body[..]);
                if !body.is_empty() && out[0] != PLAIN {
                    proptest::prop_assert!(unpack(&out, body.len() - 1).is_err());
                }
            }
        }
    }

    #[test]
    fn in_parallel_keeps_the_order() {
        let items: Vec<usize> = (0..103).collect();
        assert_eq!(
            in_parallel(items, |x| x * 2),
            (0..103).map(|x| x * 2).collect::<Vec<_>>()
        );
        assert!(in_parallel(Vec::<usize>::new(), |x| x).is_empty());
    }

    #[test]
    fn in_order_hands_over_in_order_and_stops_at_the_first_error() {
        let mut seen = Vec::new();
        let all = in_order(
            (0..103).collect(),
            |x: usize| x * 2,
            |r| {
                seen.push(r);
                Ok::<(), String>(())
            },
        );
        assert_eq!(all, Ok(()));
        assert_eq!(seen, (0..103).map(|x| x * 2).collect::<Vec<_>>());
        let mut seen = Vec::new();
        let stopped = in_order(
            (0..103).collect(),
            |x: usize| x,
            |r| {
                if r == 40 {
                    return Err(format!("refused {r}"));
                }
                seen.push(r);
                Ok(())
            },
        );
        assert_eq!(stopped, Err("refused 40".to_string()));
        assert_eq!(seen, (0..40).collect::<Vec<_>>());
        let none = in_order(Vec::<usize>::new(), |x| x, |_| Err("never called"));
        assert_eq!(none, Ok(()));
    }
}
