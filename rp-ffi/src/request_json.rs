//! The JSON of generation requests, as the host's callbacks and
//! `rp_turn_step` receive it: byte for byte rp-core's serialisation of a
//! `GenerateRequest` (and of a `Step`), written faster.
//!
//! A request is mostly the prompt's text, a few kilobytes that serde_json
//! escapes one byte at a time; here strings are checked eight bytes at a
//! time and clean runs copied whole ([`escape_into`]). Every reply request
//! also carries the same two tool definitions (dice and chances): their JSON
//! is made once per process and copied in.

use std::ffi::CString;
use std::sync::OnceLock;

use rp_core::turn::{ChatMessage, GenerateRequest, Step, ToolDef};
use serde::Serialize;
use serde_json::value::RawValue;

/// The reply tools and their JSON, made once.
fn reply_tools() -> &'static (Vec<ToolDef>, Box<RawValue>) {
    static TOOLS: OnceLock<(Vec<ToolDef>, Box<RawValue>)> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let tools = rp_core::turn::tools::definitions();
        let json = serde_json::value::to_raw_value(&tools).expect("tool definitions serialise");
        (tools, json)
    })
}

/// Writes `request` as rp-core's serialisation of it would, into `out`; with
/// `tagged`, as rp-core writes a `Step::Generate` (`"step": "generate"`
/// first).
///
/// The prompt's text is most of a request, so the messages are written here
/// with [`escape_into`] rather than by serde_json, whose escaping looks at
/// one byte at a time; the small parts go through serde_json.
pub(crate) fn write_request(out: &mut Vec<u8>, request: &GenerateRequest, tagged: bool) {
    // Destructured, so a field added to the request cannot be missed here.
    let GenerateRequest {
        purpose,
        messages,
        params,
        json_schema,
        tools,
    } = request;
    out.push(b'{');
    if tagged {
        out.extend_from_slice(br#""step":"generate","#);
    }
    out.extend_from_slice(br#""purpose":"#);
    serde_into(out, purpose);
    out.extend_from_slice(br#","messages":["#);
    for (i, message) in messages.iter().enumerate() {
        let ChatMessage {
            role,
            content,
            tool_call_id,
            tool_calls,
        } = message;
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"role":"#);
        serde_into(out, role);
        out.extend_from_slice(br#","content":"#);
        escape_into(out, content);
        if let Some(id) = tool_call_id {
            out.extend_from_slice(br#","tool_call_id":"#);
            escape_into(out, id);
        }
        if !tool_calls.is_empty() {
            out.extend_from_slice(br#","tool_calls":"#);
            serde_into(out, tool_calls);
        }
        out.push(b'}');
    }
    out.extend_from_slice(br#"],"params":"#);
    serde_into(out, params);
    if let Some(schema) = json_schema {
        out.extend_from_slice(br#","json_schema":"#);
        serde_into(out, schema);
    }
    if !tools.is_empty() {
        out.extend_from_slice(br#","tools":"#);
        let (reply_tools, json) = reply_tools();
        if tools == reply_tools {
            out.extend_from_slice(json.get().as_bytes());
        } else {
            serde_into(out, tools);
        }
    }
    out.push(b'}');
}

/// A request's JSON as a C string, as the generate callback receives it.
pub(crate) fn request_c_json(request: &GenerateRequest) -> CString {
    let mut bytes = Vec::with_capacity(request_capacity(request));
    write_request(&mut bytes, request, false);
    c_string(bytes)
}

/// A step's JSON as a C string, as `rp_turn_step` writes it.
pub(crate) fn step_c_json(step: &Step) -> CString {
    let mut bytes = match step {
        Step::Generate(request) => Vec::with_capacity(request_capacity(request) + 20),
        _ => Vec::with_capacity(256),
    };
    write_step(&mut bytes, step);
    c_string(bytes)
}

/// Room for a request's JSON: its texts, the reply tools' JSON if it has
/// tools, and some for the rest, so the buffer is not grown while written.
fn request_capacity(request: &GenerateRequest) -> usize {
    let text: usize = request.messages.iter().map(|m| m.content.len()).sum();
    let tools = if request.tools.is_empty() {
        0
    } else {
        reply_tools().1.get().len()
    };
    text + text / 16 + tools + 1024
}

/// `bytes`, JSON written here, as a C string.
pub(crate) fn c_string(mut bytes: Vec<u8>) -> CString {
    debug_assert!(!bytes.contains(&0), "JSON with a NUL byte");
    bytes.push(0);
    // SAFETY: the JSON written here holds no NUL byte but the last: strings
    // escape it as \u0000 (`escape_into` and serde_json alike), and the rest
    // is punctuation, digits, literals and escaped strings.
    unsafe { CString::from_vec_with_nul_unchecked(bytes) }
}

/// Writes `step` as rp-core's serialisation of it would, into `out`.
pub(crate) fn write_step(out: &mut Vec<u8>, step: &Step) {
    match step {
        Step::Generate(request) => write_request(out, request, true),
        other => serde_into(out, other),
    }
}

/// Appends the JSON of `value`, one of rp-core's turn types (which always
/// serialise).
pub(crate) fn serde_into(out: &mut Vec<u8>, value: &impl Serialize) {
    serde_json::to_writer(&mut *out, value).expect("rp-core's turn types serialise to JSON");
}

/// Appends `text` as a JSON string, escaped exactly as serde_json escapes
/// it: `"` and `\\` with a backslash, `\b \f \n \r \t` by name, other
/// control characters as `\u00xx`, everything else as it is.
///
/// Sixteen bytes are checked at a time ([`first_special`]); runs without
/// anything to escape are copied whole.
pub(crate) fn escape_into(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes.get(i..i + 16) {
            Some(chunk) => match first_special(chunk.try_into().expect("sixteen bytes")) {
                None => {
                    i += 16;
                    continue;
                }
                Some(at) => i += at,
            },
            None if !is_special(bytes[i]) => {
                i += 1;
                continue;
            }
            None => {}
        }
        let byte = bytes[i];
        out.extend_from_slice(&bytes[copied..i]);
        match byte {
            b'"' => out.extend_from_slice(br#"\""#),
            b'\\' => out.extend_from_slice(br"\\"),
            b'\n' => out.extend_from_slice(br"\n"),
            b'\r' => out.extend_from_slice(br"\r"),
            b'\t' => out.extend_from_slice(br"\t"),
            0x08 => out.extend_from_slice(br"\b"),
            0x0c => out.extend_from_slice(br"\f"),
            _ => {
                out.extend_from_slice(br"\u00");
                out.push(HEX[usize::from(byte >> 4)]);
                out.push(HEX[usize::from(byte & 0xf)]);
            }
        }
        i += 1;
        copied = i;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

/// The place of the first byte of `chunk` that JSON escapes, if any: with
/// SSE2 (every x86-64 has it), one comparison of all sixteen bytes per kind.
#[cfg(target_arch = "x86_64")]
fn first_special(chunk: &[u8; 16]) -> Option<usize> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64; the load is unaligned and reads the
    // sixteen bytes `chunk` holds.
    let flags = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Below 0x20: unchanged by an unsigned max with 0x1f.
        let low = _mm_set1_epi8(0x1f);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(v, low), low);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
    };
    (flags != 0).then(|| flags.trailing_zeros() as usize)
}

/// The place of the first byte of `chunk` that JSON escapes, if any: two
/// words of eight bytes each.
#[cfg(not(target_arch = "x86_64"))]
fn first_special(chunk: &[u8; 16]) -> Option<usize> {
    first_special_in_words(chunk)
}

/// [`first_special`] without SIMD.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn first_special_in_words(chunk: &[u8; 16]) -> Option<usize> {
    let (a, b) = chunk.split_at(8);
    let word = |w: &[u8]| special_mask(u64::from_le_bytes(w.try_into().expect("eight bytes")));
    // The lowest flag of a word is exact (see `special_mask`).
    match (word(a), word(b)) {
        (0, 0) => None,
        (0, m) => Some(8 + (m.trailing_zeros() / 8) as usize),
        (m, _) => Some((m.trailing_zeros() / 8) as usize),
    }
}

/// Whether JSON escapes `byte`.
fn is_special(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

#[cfg(any(test, not(target_arch = "x86_64")))]
/// The high bit of each byte of `word` (read little-endian) that JSON
/// escapes, and perhaps of bytes after the first such one: a borrow moves
/// up from a flagged byte and may flag the next. So the lowest flag is
/// always exact, and the mask is 0 exactly when no byte needs escaping.
fn special_mask(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS;
    below(word, 0x20)
        | below(word ^ (ONES * u64::from(b'"')), 1)
        | below(word ^ (ONES * u64::from(b'\\')), 1)
}

#[cfg(test)]
mod tests {
    use rp_core::EntityId;
    use rp_core::turn::{ChatMessage, Purpose, Role};
    use serde_json::json;

    use super::*;

    fn requests() -> Vec<GenerateRequest> {
        let base = GenerateRequest {
            purpose: Purpose::Reply {
                speaker: EntityId(7),
            },
            messages: vec![
                ChatMessage::new(Role::System, "You are Mira. \"Quoted\" and \u{1F600}."),
                ChatMessage::new(Role::User, "Wren: any news?\n"),
            ],
            params: Default::default(),
            json_schema: None,
            tools: Vec::new(),
        };
        let mut reply = base.clone();
        reply.tools = rp_core::turn::tools::definitions();
        let mut other_tools = reply.clone();
        other_tools.tools.truncate(1);
        other_tools.tools[0].description.push_str(" (changed)");
        let mut update = base.clone();
        update.purpose = Purpose::StateUpdate;
        update.json_schema =
            Some(json!({"type": "object", "properties": {"a": {"type": "integer"}}}));
        vec![base, reply, other_tools, update]
    }

    fn written(write: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        write(&mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn requests_are_written_exactly_as_rp_core_writes_them() {
        for request in requests() {
            assert_eq!(
                written(|out| write_request(out, &request, false)),
                serde_json::to_string(&request).expect("writes"),
                "{request:?}"
            );
        }
    }

    #[test]
    fn steps_are_written_exactly_as_rp_core_writes_them() {
        let mut steps: Vec<Step> = requests().into_iter().map(Step::Generate).collect();
        steps.push(Step::Done);
        for step in steps {
            assert_eq!(
                written(|out| write_step(out, &step)),
                serde_json::to_string(&step).expect("writes"),
                "{step:?}"
            );
        }
    }

    #[test]
    fn strings_are_escaped_exactly_as_serde_json_escapes_them() {
        let every_ascii: String = (0_u8..0x80).map(char::from).collect();
        let mut texts = vec![
            String::new(),
            every_ascii.clone(),
            every_ascii.chars().rev().collect(),
            "plain text of more than eight bytes, twice over".to_owned(),
            "\"\\\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}".to_owned(),
            "é\u{2028}\u{1F600}\"ü\nß".repeat(5),
        ];
        // Every special byte at every place in and around two sixteen-byte
        // chunks, and bytes just above and below the control range.
        for special in [
            "\"", "\\", "\n", "\u{0}", "\u{1}", "\u{1f}", " ", "!", "\u{7f}", "é",
        ] {
            for at in 0..36 {
                let mut text = "abcdefghijklmnopqrstuvwxyz0123456789".to_owned();
                text.insert_str(at.min(text.len()), special);
                texts.push(text);
            }
        }
        for text in &texts {
            for chunk in text.as_bytes().windows(16) {
                let chunk: &[u8; 16] = chunk.try_into().expect("sixteen bytes");
                assert_eq!(first_special(chunk), first_special_in_words(chunk));
            }
        }
        for text in texts {
            assert_eq!(
                written(|out| escape_into(out, &text)),
                serde_json::to_string(&text).expect("writes"),
                "{text:?}"
            );
        }
    }
}
