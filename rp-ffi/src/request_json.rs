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

/// Room for a request's JSON: its texts and some for the rest.
fn request_capacity(request: &GenerateRequest) -> usize {
    let text: usize = request.messages.iter().map(|m| m.content.len()).sum();
    text + text / 16 + 2048
}

fn c_string(mut bytes: Vec<u8>) -> CString {
    bytes.push(0);
    CString::from_vec_with_nul(bytes).expect("JSON holds no NUL byte: it is escaped")
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
fn serde_into(out: &mut Vec<u8>, value: &impl Serialize) {
    serde_json::to_writer(&mut *out, value).expect("rp-core's turn types serialise to JSON");
}

/// Appends `text` as a JSON string, escaped exactly as serde_json escapes
/// it: `"` and `\\` with a backslash, `\b \f \n \r \t` by name, other
/// control characters as `\u00xx`, everything else as it is.
///
/// Eight bytes are checked at a time; runs without anything to escape are
/// copied whole.
pub(crate) fn escape_into(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes.get(i..i + 8) {
            Some(chunk) => {
                let mask = special_mask(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
                if mask == 0 {
                    i += 8;
                    continue;
                }
                // The lowest flag is exact (see `special_mask`).
                i += (mask.trailing_zeros() / 8) as usize;
            }
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

/// Whether JSON escapes `byte`.
fn is_special(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

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
        // Every special byte at every place in and around an eight-byte word.
        for special in ["\"", "\\", "\n", "\u{1}", "\u{1f}"] {
            for at in 0..18 {
                let mut text = "abcdefghijklmnopq".to_owned();
                text.insert_str(at.min(text.len()), special);
                texts.push(text);
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
