//! Server-sent events, parsed incrementally as the WHATWG specification says: lines end with
//! `\r\n`, `\n` or `\r`; `data:` lines accumulate (joined with `\n`) until an empty line
//! dispatches the event; `event:` names it; lines starting with `:` are comments (servers
//! send them as keep-alives); other fields (`id:`, `retry:`) are ignored. The bytes may arrive
//! split anywhere, even inside a `\r\n`.

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// Its `event:` name (empty when none was given).
    pub event: String,
    /// Its data: the `data:` lines joined with `\n`. Bytes, so that JSON decoding reports
    /// text that is not UTF-8.
    pub data: Vec<u8>,
}

/// The parser's state between two pieces of the stream.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    event: String,
    /// The last byte was a `\r`: a `\n` right after it ends nothing.
    after_cr: bool,
    /// The first line has been seen (a byte order mark before it is dropped).
    started: bool,
}

impl SseParser {
    /// Feeds the next bytes; complete events are appended to `out`.
    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out);
                }
                b'\n' => self.end_line(out),
                b => self.line.push(b),
            }
        }
    }

    /// The stream has ended cleanly: an event whose lines all ended but which lacks the final
    /// empty line is dispatched; an unfinished line is dropped.
    pub(crate) fn finish(&mut self, out: &mut Vec<SseEvent>) {
        self.line.clear();
        self.dispatch(out);
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let mut line = std::mem::take(&mut self.line);
        if !self.started {
            self.started = true;
            if line.starts_with("\u{feff}".as_bytes()) {
                line.drain(..3);
            }
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        match field {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            _ => {}
        }
        self.line = line;
        self.line.clear();
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        out.push(SseEvent { event, data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(pieces: &[&[u8]]) -> Vec<(String, String)> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for piece in pieces {
            p.push(piece, &mut out);
        }
        p.finish(&mut out);
        out.into_iter()
            .map(|e| (e.event, String::from_utf8(e.data).unwrap()))
            .collect()
    }

    fn ev(event: &str, data: &str) -> (String, String) {
        (event.into(), data.into())
    }

    #[test]
    fn data_lines_comments_and_line_ends() {
        let s: &[u8] = b"\xef\xbb\xbf: keep-alive\n\ndata: a\n\ndata:b\r\ndata:  c\r\n\r\nevent: error\rdata: {}\r\rid: 7\nretry: 10\nfield\ndata\n\n";
        assert_eq!(
            parse(&[s]),
            vec![ev("", "a"), ev("", "b\n c"), ev("error", "{}"), ev("", "")]
        );
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_and_its_name_does_not_leak() {
        assert_eq!(parse(&[b"event: ping\n\ndata: x\n\n"]), vec![ev("", "x")]);
    }

    #[test]
    fn the_end_dispatches_finished_lines_and_drops_an_unfinished_one() {
        assert_eq!(parse(&[b"data: [DONE]\n"]), vec![ev("", "[DONE]")]);
        assert_eq!(
            parse(&[b"data: {\"a\":1}\n\ndata: {\"choi"]),
            vec![ev("", "{\"a\":1}")]
        );
    }

    #[test]
    fn a_cr_lf_split_across_pieces_ends_one_line() {
        assert_eq!(
            parse(&[b"data: a\r", b"\n", b"\r", b"\ndata: b\r\n\r\n"]),
            vec![ev("", "a"), ev("", "b")]
        );
    }

    proptest! {
        /// However the stream is cut into pieces, the same events come out.
        #[test]
        fn events_do_not_depend_on_how_the_bytes_are_split(
            lines in proptest::collection::vec(
                prop_oneof![
                    "data: [a-z{}\":, ]{0,12}".prop_map(|s| s),
                    Just(String::new()),
                    Just(": ping".to_string()),
                    Just("event: e".to_string()),
                    Just("data".to_string()),
                ],
                0..20,
            ),
            ends in proptest::collection::vec(0usize..3, 20),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mut bytes = Vec::new();
            for (i, l) in lines.iter().enumerate() {
                bytes.extend_from_slice(l.as_bytes());
                bytes.extend_from_slice([&b"\n"[..], b"\r\n", b"\r"][ends[i]]);
            }
            let whole = parse(&[&bytes]);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort();
            let mut pieces = Vec::new();
            let mut at = 0;
            for c in cuts {
                pieces.push(&bytes[at..c]);
                at = c;
            }
            pieces.push(&bytes[at..]);
            prop_assert_eq!(parse(&pieces), whole);
        }
    }
}
