//! The HTTP side of the client: the base URL, and one `POST` through a ureq [`ureq::Agent`]
//! (blocking HTTP/1.1 over `std::net`, and rustls for `https` with the `tls` feature).
//!
//! ureq parses the status line and headers, decodes `Content-Length`, chunked and
//! close-delimited bodies, and enforces the three clocks of an attempt: the connect timeout
//! (TCP and the TLS handshake), the read timeout (ureq's per-read timeout: the longest
//! silence of the server, restarted by every read, which is what catches a server that
//! stalls in the middle of a stream; the same bound holds for a write that does not
//! progress) and the total timeout (ureq's global timeout: the whole attempt, from resolving
//! the name to the last byte of the body). This module builds the agent with those bounds,
//! sends the request, hands the body out piece by piece as it arrives (so a stream reaches
//! the SSE parser, and the caller's sink, incrementally), caps the body at `max_bytes`, and
//! turns ureq's errors into the client's own [`Error`] kinds.
//!
//! No redirects are followed (a `3xx` is returned as it is, and the client reports it as an
//! error status), no proxy is taken from the environment, no compression is asked for, and
//! no connection is kept for reuse: a model call takes seconds, next to which a new
//! connection is nothing.

use crate::error::Error;
use std::io::{self, Read};
use std::time::Duration;

/// Where a server is: scheme, host, port and the path the API lives under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// `https`.
    pub tls: bool,
    /// The host name or address (an IPv6 address without its brackets), lowercased.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The API's path, without a trailing `/` (`/v1`).
    pub path: String,
}

impl Endpoint {
    /// Parses a base URL: `http://` or `https://`, a host, an optional port and an optional
    /// path (`/v1` when there is none). No user info, query or fragment.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, String> {
        let url = url.trim();
        if url.is_empty() {
            return Err(
                "it is empty; give the server's base URL, e.g. http://127.0.0.1:8080/v1".into(),
            );
        }
        if let Some(c) = url.chars().find(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("{url:?} contains {c:?}"));
        }
        let lower = url.to_ascii_lowercase();
        let (tls, rest) = if lower.starts_with("http://") {
            (false, &url[7..])
        } else if lower.starts_with("https://") {
            (true, &url[8..])
        } else {
            return Err(format!(
                "{url:?} is not an http:// or https:// URL (e.g. http://127.0.0.1:8080/v1)"
            ));
        };
        if rest.contains(['?', '#']) {
            return Err(format!(
                "{url:?} has a query or fragment; give the base URL only"
            ));
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(format!(
                "{url:?} has user info; give the key as the API key instead"
            ));
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let Some((host, after)) = v6.split_once(']') else {
                return Err(format!("{url:?} has an unclosed `[` in its host"));
            };
            let port = match after {
                "" => None,
                p => Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| format!("{url:?}: unexpected {p:?} after the host"))?,
                ),
            };
            (host, port)
        } else {
            match authority.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(format!("{url:?} has no host"));
        }
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))
        {
            return Err(format!("{url:?}: {host:?} is not a host name or address"));
        }
        let port = match port {
            None => default_port,
            Some(p) => match p.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => return Err(format!("{url:?}: {p:?} is not a port (1–65535)")),
            },
        };
        let path = path.trim_end_matches('/');
        let path = if path.is_empty() { "/v1" } else { path };
        Ok(Endpoint {
            tls,
            host: host.to_ascii_lowercase(),
            port,
            path: path.to_string(),
        })
    }

    /// The `Host` header: the port only when it is not the scheme's default.
    fn authority(&self) -> String {
        let host = self.bracketed_host();
        if self.port == if self.tls { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }

    /// The host, an IPv6 address in brackets.
    fn bracketed_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }

    /// The full URL of `path` under the API (`/chat/completions`), for messages.
    pub(crate) fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{}{path}", self.authority(), self.path)
    }
}

/// The bounds of one attempt.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Opening the connection: TCP, and the TLS handshake for `https`.
    pub connect: Duration,
    /// The longest silence between two reads (or a write that does not progress).
    pub read: Duration,
    /// The whole attempt, from resolving the name to the last byte.
    pub total: Duration,
    /// The most bytes of body read from the server.
    pub max_bytes: u64,
}

/// The agent that sends a client's requests: its timeouts are `limits`; error statuses are
/// answers, not errors; no redirect, no proxy, no pooled connection.
pub(crate) fn agent(limits: Limits) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_connect(Some(limits.connect))
        .timeout_per_read(Some(limits.read))
        .timeout_per_write(Some(limits.read))
        .timeout_global(Some(limits.total))
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .max_idle_connections(0)
        .max_idle_connections_per_host(0)
        .user_agent(concat!("rp-llm/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent()
}

/// How much of the body one [`Response::read`] asks for at most.
const READ_SIZE: usize = 16 * 1024;

/// An answer whose head has been read; its body is read with [`Response::read`].
pub(crate) struct Response {
    /// The status code.
    pub status: u16,
    headers: ureq::http::HeaderMap,
    body: ureq::BodyReader<'static>,
    context: Context,
}

/// What an error of the exchange is reported with.
struct Context {
    /// `host:port`, an IPv6 address in brackets.
    address: String,
    host: String,
    tls: bool,
    limits: Limits,
    /// What is being waited for, for timeout messages.
    phase: &'static str,
}

impl Response {
    /// The first header named `name` (case-insensitive), if it is text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Appends the next bytes of the body to `out`, as soon as some have arrived; `false`
    /// once the body has ended. A body cut short (fewer bytes than announced, a chunked body
    /// without its last chunk) is [`Error::Dropped`]; more than `max_bytes` is
    /// [`Error::TooLarge`].
    pub(crate) fn read(&mut self, out: &mut Vec<u8>) -> Result<bool, Error> {
        let start = out.len();
        out.resize(start + READ_SIZE, 0);
        loop {
            match self.body.read(&mut out[start..]) {
                Ok(n) => {
                    out.truncate(start + n);
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    out.truncate(start);
                    return Err(self.context.error(ureq::Error::from(e)));
                }
            }
        }
    }

    /// The whole body.
    pub(crate) fn read_to_end(&mut self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        while self.read(&mut out)? {}
        Ok(out)
    }

    /// Marks what the body is being read for (`reading the stream`), for timeout messages.
    pub(crate) fn set_phase(&mut self, phase: &'static str) {
        self.context.phase = phase;
    }
}

/// Sends `POST {endpoint.path}{path}` with `headers` and `body` through `agent`, and reads
/// the answer's head.
pub(crate) fn post(
    agent: &ureq::Agent,
    endpoint: &Endpoint,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    limits: Limits,
) -> Result<Response, Error> {
    let mut context = Context {
        address: format!("{}:{}", endpoint.bracketed_host(), endpoint.port),
        host: endpoint.host.clone(),
        tls: endpoint.tls,
        limits,
        phase: "waiting for the answer",
    };
    let mut request = agent.post(endpoint.url(path));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send(body).map_err(|e| context.error(e))?;
    context.phase = "reading the answer";
    let (head, body) = response.into_parts();
    // Nothing asks for a compressed answer, so the body would be bytes nobody can read.
    if let Some(enc) = head
        .headers
        .get_all("content-encoding")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| !v.eq_ignore_ascii_case("identity"))
    {
        return Err(Error::protocol(format!(
            "the answer is compressed (Content-Encoding: {enc}), which was not asked for"
        )));
    }
    // `chunked` is the one transfer coding this client reads; any other would need decoding.
    let te: Vec<&str> = head
        .headers
        .get_all("transfer-encoding")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("identity"))
        .collect();
    match te.as_slice() {
        [] => {}
        [t] if t.eq_ignore_ascii_case("chunked") => {}
        _ => {
            return Err(Error::protocol(format!(
                "the answer's Transfer-Encoding is {}, which is not supported",
                te.join(", ")
            )));
        }
    }
    if body.content_length().is_some_and(|n| n > limits.max_bytes) {
        return Err(Error::TooLarge {
            limit: limits.max_bytes,
        });
    }
    Ok(Response {
        status: head.status.as_u16(),
        headers: head.headers,
        body: body.into_with_config().limit(limits.max_bytes).reader(),
        context,
    })
}

impl Context {
    /// A ureq error of this exchange as a client error.
    fn error(&self, e: ureq::Error) -> Error {
        use ureq::Error as U;
        let connect = |message: String| Error::Connect {
            address: self.address.clone(),
            message,
        };
        let tls = |message: String| Error::Tls {
            host: self.host.clone(),
            message,
        };
        match e {
            U::Timeout(which) => self.timeout(which),
            U::HostNotFound => connect("the host name does not resolve".into()),
            U::ConnectionFailed => connect("no connection could be opened".into()),
            U::Io(e) => match e.kind() {
                io::ErrorKind::ConnectionRefused
                | io::ErrorKind::HostUnreachable
                | io::ErrorKind::NetworkUnreachable
                | io::ErrorKind::NetworkDown
                | io::ErrorKind::AddrNotAvailable => connect(e.to_string()),
                io::ErrorKind::InvalidData if self.tls => tls(e.to_string()),
                io::ErrorKind::UnexpectedEof => Error::dropped(format!(
                    "the server closed the connection while {}",
                    self.phase
                )),
                _ => Error::dropped(format!("{} failed: {e}", self.phase)),
            },
            U::Protocol(e) => Error::protocol(protocol_message(&e)),
            U::LargeResponseHeader(_, max) => {
                Error::protocol(format!("the answer's head is longer than {max} bytes"))
            }
            U::BodyExceedsLimit(_) => Error::TooLarge {
                limit: self.limits.max_bytes,
            },
            U::Tls(m) => tls(m.to_string()),
            U::TlsRequired => tls("the connection is not secured".into()),
            #[cfg(feature = "tls")]
            U::Rustls(e) => tls(e.to_string()),
            #[cfg(feature = "tls")]
            U::Pem(e) => tls(format!("{e:?}")),
            U::BadUri(m) => Error::config("base_url", m),
            U::Http(e) => Error::config("request", e.to_string()),
            e => Error::dropped(format!("{} failed: {e}", self.phase)),
        }
    }

    fn timeout(&self, which: ureq::Timeout) -> Error {
        let ms = |d: Duration| d.as_millis() as u64;
        let (which, after_ms, message) = match which {
            ureq::Timeout::Connect => {
                let after = ms(self.limits.connect);
                (
                    "connect",
                    after,
                    format!(
                        "connecting to {} took longer than {after} ms (connect_timeout_ms)",
                        self.address
                    ),
                )
            }
            ureq::Timeout::PerRead => {
                let after = ms(self.limits.read);
                (
                    "read",
                    after,
                    format!(
                        "the server sent nothing for {after} ms (read_timeout_ms) while {}",
                        self.phase
                    ),
                )
            }
            ureq::Timeout::PerWrite => {
                let after = ms(self.limits.read);
                (
                    "read",
                    after,
                    format!(
                        "the server took no more of the request for {after} ms (read_timeout_ms) while sending it"
                    ),
                )
            }
            _ => {
                let after = ms(self.limits.total);
                (
                    "total",
                    after,
                    format!(
                        "the attempt took longer than {after} ms (total_timeout_ms) while {}",
                        self.phase
                    ),
                )
            }
        };
        Error::Timeout {
            which,
            after_ms,
            message,
        }
    }
}

/// What a framing error of the answer (ureq's HTTP/1.1 parser's) means, in the client's words.
fn protocol_message(e: &dyn std::fmt::Display) -> String {
    let what = e.to_string();
    if what.contains("version") || what.contains("invalid status") {
        format!("the answer is not HTTP ({what})")
    } else if ["invalid header", "invalid token", "new line"]
        .iter()
        .any(|w| what.contains(w))
    {
        format!("a header line of the answer is not `name: value` ({what})")
    } else {
        format!("the answer's HTTP framing is malformed ({what})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    #[test]
    fn base_urls_parse_with_defaults() {
        let e = Endpoint::parse("http://127.0.0.1:8080/v1/").unwrap();
        assert_eq!(
            (e.tls, e.host.as_str(), e.port, e.path.as_str()),
            (false, "127.0.0.1", 8080, "/v1")
        );
        assert_eq!(
            e.url("/chat/completions"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        let e = Endpoint::parse("HTTPS://API.Example.com").unwrap();
        assert_eq!(
            (e.tls, e.host.as_str(), e.port, e.path.as_str()),
            (true, "api.example.com", 443, "/v1")
        );
        assert_eq!(e.authority(), "api.example.com");
        let e = Endpoint::parse("http://[::1]:9000/api/v1").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("::1", 9000, "/api/v1")
        );
        assert_eq!(e.authority(), "[::1]:9000");
        assert_eq!(Endpoint::parse("http://localhost").unwrap().port, 80);
    }

    #[test]
    fn malformed_base_urls_say_what_is_wrong() {
        for (url, says) in [
            ("", "empty"),
            ("localhost:8080", "not an http"),
            ("ftp://x", "not an http"),
            ("http://", "no host"),
            ("http://:80/v1", "no host"),
            ("http://x:0", "not a port"),
            ("http://x:99999", "not a port"),
            ("http://x:abc", "not a port"),
            ("http://user:pw@x", "user info"),
            ("http://x/v1?a=b", "query"),
            ("http://x y", "contains"),
            ("http://[::1", "unclosed"),
            ("http://ex%41mple", "not a host"),
        ] {
            let e = Endpoint::parse(url).unwrap_err();
            assert!(e.contains(says), "{url:?}: {e}");
        }
    }

    /// A server that writes `bytes` in pieces of `piece` bytes, then closes.
    fn serve(bytes: Vec<u8>, piece: usize) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && s.read(&mut b).unwrap_or(0) == 1 {
                head.push(b[0]);
            }
            for p in bytes.chunks(piece) {
                let _ = s.write_all(p);
                let _ = s.flush();
            }
        });
        Endpoint::parse(&format!("http://127.0.0.1:{port}/v1")).unwrap()
    }

    fn limits() -> Limits {
        Limits {
            connect: Duration::from_secs(2),
            read: Duration::from_secs(2),
            total: Duration::from_secs(5),
            max_bytes: 1 << 20,
        }
    }

    fn fetch(bytes: &[u8], piece: usize) -> Result<(u16, Vec<u8>), Error> {
        let e = serve(bytes.to_vec(), piece);
        let mut r = post(&agent(limits()), &e, "/x", &[], b"", limits())?;
        Ok((r.status, r.read_to_end()?))
    }

    #[test]
    fn bodies_are_framed_by_length_chunks_or_the_end() {
        for piece in [1, 3, 1000] {
            let chunked = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: x\r\n\r\n";
            assert_eq!(
                fetch(chunked, piece).unwrap(),
                (200, b"hello world".to_vec())
            );
            let length = b"HTTP/1.1 201 Created\r\ncontent-length: 5\r\n\r\nhelloIGNORED";
            assert_eq!(fetch(length, piece).unwrap(), (201, b"hello".to_vec()));
            let eof = b"HTTP/1.0 200 OK\r\n\r\nuntil the end";
            assert_eq!(fetch(eof, piece).unwrap(), (200, b"until the end".to_vec()));
        }
    }

    #[test]
    fn cut_or_malformed_bodies_are_errors() {
        let cases: [(&[u8], ErrorKindIs); 7] = [
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
                Dropped,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
                Dropped,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n",
                Protocol,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                Protocol,
            ),
            (b"SSH-2.0-OpenSSH\r\n", Protocol),
            (b"", Dropped),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n",
                TooLarge,
            ),
        ];
        for (bytes, want) in cases {
            let e = fetch(bytes, 7).unwrap_err();
            let ok = match want {
                Dropped => matches!(e, Error::Dropped { .. }),
                Protocol => matches!(e, Error::Protocol { .. }),
                TooLarge => matches!(e, Error::TooLarge { .. }),
            };
            assert!(ok, "{:?}: {e}", String::from_utf8_lossy(bytes));
        }
    }

    enum ErrorKindIs {
        Dropped,
        Protocol,
        TooLarge,
    }
    use ErrorKindIs::*;
}
