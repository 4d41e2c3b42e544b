//! A minimal HTTP/1.1 client: one `POST` per connection (`Connection: close`), over a
//! `std::net::TcpStream`, or rustls over it for `https` (feature `tls`).
//!
//! It does exactly what the client needs and no more: a request with a `Content-Length` body;
//! an answer framed by `Content-Length`, `Transfer-Encoding: chunked` or the end of the
//! connection, read incrementally so a stream reaches the caller as it arrives. Three clocks
//! bound every attempt: the connect timeout, the read timeout (the longest silence between
//! two reads, which is what catches a server that stalls in the middle of a stream) and the
//! total timeout (one attempt, from connecting to the last byte). Every byte read counts
//! against `max_bytes`. No redirects, no proxies, no compression (none is asked for), no
//! connection reuse: a model call takes seconds, next to which a new connection is nothing.

use crate::error::{Error, snippet};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

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
    /// Opening the connection (each address tried).
    pub connect: Duration,
    /// The longest silence between two reads (or a write that does not progress).
    pub read: Duration,
    /// The whole attempt, from connecting to the last byte.
    pub total: Duration,
    /// The most bytes read from the server.
    pub max_bytes: u64,
}

/// The TLS settings shared by a client's connections.
#[cfg(feature = "tls")]
pub(crate) type TlsConfig = std::sync::Arc<rustls::ClientConfig>;

/// Without the `tls` feature there is nothing to share.
#[cfg(not(feature = "tls"))]
pub(crate) type TlsConfig = ();

/// The TLS settings for `https`: rustls with the ring provider and Mozilla's root
/// certificates (webpki-roots), so the result does not depend on the machine's certificate
/// store.
#[cfg(feature = "tls")]
pub(crate) fn tls_config() -> Result<TlsConfig, Error> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| Error::config("tls", e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(std::sync::Arc::new(config))
}

enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            #[cfg(feature = "tls")]
            Stream::Tls(s) => &s.sock,
        }
    }

    fn is_tls(&self) -> bool {
        !matches!(self, Stream::Plain(_))
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The longest line of an answer's head, and the longest head.
const MAX_LINE: usize = 16 * 1024;
const MAX_HEAD: usize = 64 * 1024;

/// A connection with its read buffer, its deadline and its byte count.
struct Conn {
    stream: Stream,
    host: String,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    started: Instant,
    limits: Limits,
    received: u64,
    /// What is being waited for, for timeout messages.
    phase: &'static str,
}

impl Conn {
    /// How long the next read or write may wait: the read timeout, or what is left of the
    /// total one when that is less.
    fn wait(&self) -> Result<(Duration, &'static str), Error> {
        let left = self.limits.total.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            return Err(self.timeout("total"));
        }
        Ok(if left < self.limits.read {
            (left.max(Duration::from_millis(1)), "total")
        } else {
            (self.limits.read.max(Duration::from_millis(1)), "read")
        })
    }

    fn timeout(&self, which: &'static str) -> Error {
        let (ms, message) = match which {
            "total" => {
                let ms = self.limits.total.as_millis() as u64;
                (
                    ms,
                    format!(
                        "the attempt took longer than {ms} ms (total_timeout_ms) while {}",
                        self.phase
                    ),
                )
            }
            _ => {
                let ms = self.limits.read.as_millis() as u64;
                (
                    ms,
                    format!(
                        "the server sent nothing for {ms} ms (read_timeout_ms) while {}",
                        self.phase
                    ),
                )
            }
        };
        Error::Timeout {
            which,
            after_ms: ms,
            message,
        }
    }

    /// An I/O error of this connection as a client error.
    fn io_error(&self, e: io::Error, which: &'static str, doing: &str) -> Error {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => self.timeout(which),
            io::ErrorKind::InvalidData if self.stream.is_tls() => Error::Tls {
                host: self.host.clone(),
                message: e.to_string(),
            },
            _ => Error::dropped(format!("{doing} failed: {e}")),
        }
    }

    /// Bounds the next reads and writes by `wait` (both: a TLS handshake reads while the
    /// request is written).
    fn set_timeouts(&self, wait: Duration) {
        let tcp = self.stream.tcp();
        let _ = tcp.set_write_timeout(Some(wait));
        let _ = tcp.set_read_timeout(Some(wait));
    }

    fn write_all(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        while !bytes.is_empty() {
            let (wait, which) = self.wait()?;
            self.set_timeouts(wait);
            match self.stream.write(bytes) {
                Ok(0) => {
                    return Err(Error::dropped(
                        "the server closed the connection while the request was being sent",
                    ));
                }
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e, which, "sending the request")),
            }
        }
        let (wait, which) = self.wait()?;
        self.set_timeouts(wait);
        self.stream
            .flush()
            .map_err(|e| self.io_error(e, which, "sending the request"))
    }

    /// Reads more into the buffer; `false` at the end of the connection.
    fn fill(&mut self) -> Result<bool, Error> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        loop {
            let (wait, which) = self.wait()?;
            self.set_timeouts(wait);
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    self.received += n as u64;
                    if self.received > self.limits.max_bytes {
                        return Err(Error::TooLarge {
                            limit: self.limits.max_bytes,
                        });
                    }
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A TLS peer that closes without close_notify: the framing decides whether
                // the answer was whole.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
                Err(e) => return Err(self.io_error(e, which, "reading the answer")),
            }
        }
    }

    fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// A line of the head or of the chunk framing, without its `\r\n`; `None` at the end of
    /// the connection before any byte of it.
    fn read_line(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let mut line = Vec::new();
        loop {
            if let Some(i) = self.buf[self.start..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                line.extend_from_slice(&self.buf[self.start..self.start + i]);
                self.start += i + 1;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(line));
            }
            line.extend_from_slice(&self.buf[self.start..self.end]);
            self.start = self.end;
            if line.len() > MAX_LINE {
                return Err(Error::protocol(format!(
                    "a line of the answer's framing is longer than {MAX_LINE} bytes: {}",
                    snippet(&line, 80)
                )));
            }
            if !self.fill()? {
                return if line.is_empty() {
                    Ok(None)
                } else {
                    Err(Error::dropped(format!(
                        "the connection closed in the middle of a line while {}",
                        self.phase
                    )))
                };
            }
        }
    }

    /// Up to `max` buffered bytes (reading when none are), appended to `out`; `false` at the
    /// end of the connection.
    fn take(&mut self, max: u64, out: &mut Vec<u8>) -> Result<bool, Error> {
        if self.buffered() == 0 && !self.fill()? {
            return Ok(false);
        }
        let n = (self.buffered() as u64).min(max) as usize;
        out.extend_from_slice(&self.buf[self.start..self.start + n]);
        self.start += n;
        Ok(true)
    }
}

/// How the body of an answer ends.
#[derive(Debug)]
enum Framing {
    /// After this many more bytes.
    Length { left: u64, total: u64 },
    /// Chunked: `left` bytes remain of the current chunk; `first` until the first size line.
    Chunked { left: u64, first: bool },
    /// At the end of the connection.
    Eof,
    /// It has ended.
    Done,
}

/// An answer whose head has been read; its body is read with [`Response::read`].
pub(crate) struct Response {
    /// The status code.
    pub status: u16,
    headers: Vec<(String, String)>,
    conn: Conn,
    framing: Framing,
}

impl Response {
    /// The first header named `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Appends the next bytes of the body to `out`; `false` once the body has ended. A body
    /// cut short (fewer bytes than announced, a chunked body without its last chunk) is
    /// [`Error::Dropped`].
    pub(crate) fn read(&mut self, out: &mut Vec<u8>) -> Result<bool, Error> {
        loop {
            match &mut self.framing {
                Framing::Done => return Ok(false),
                Framing::Eof => {
                    if !self.conn.take(u64::MAX, out)? {
                        self.framing = Framing::Done;
                        return Ok(false);
                    }
                    return Ok(true);
                }
                Framing::Length { left: 0, .. } => self.framing = Framing::Done,
                Framing::Length { left, total } => {
                    let before = out.len();
                    let (left_now, total) = (*left, *total);
                    if !self.conn.take(left_now, out)? {
                        return Err(Error::dropped(format!(
                            "the connection closed after {} of the {total} bytes announced",
                            total - left_now
                        )));
                    }
                    let got = (out.len() - before) as u64;
                    self.framing = Framing::Length {
                        left: left_now - got,
                        total,
                    };
                    return Ok(true);
                }
                Framing::Chunked { left: 0, first } => {
                    if !*first {
                        // The CRLF after a chunk's data.
                        match self.conn.read_line()? {
                            Some(l) if l.is_empty() => {}
                            Some(l) => {
                                return Err(Error::protocol(format!(
                                    "a chunk of the answer is longer than its size says: {}",
                                    snippet(&l, 60)
                                )));
                            }
                            None => return Err(self.chunk_cut()),
                        }
                    }
                    let Some(line) = self.conn.read_line()? else {
                        return Err(self.chunk_cut());
                    };
                    let size = std::str::from_utf8(&line)
                        .ok()
                        .map(|l| l.split(';').next().unwrap_or("").trim())
                        .and_then(|s| u64::from_str_radix(s, 16).ok())
                        .ok_or_else(|| {
                            Error::protocol(format!(
                                "a chunk size is not a hexadecimal number: {}",
                                snippet(&line, 60)
                            ))
                        })?;
                    if size == 0 {
                        // Trailers, up to the empty line.
                        loop {
                            match self.conn.read_line()? {
                                Some(l) if l.is_empty() => break,
                                Some(_) => {}
                                None => return Err(self.chunk_cut()),
                            }
                        }
                        self.framing = Framing::Done;
                    } else {
                        self.framing = Framing::Chunked {
                            left: size,
                            first: false,
                        };
                    }
                }
                Framing::Chunked { left, .. } => {
                    let before = out.len();
                    let left_now = *left;
                    if !self.conn.take(left_now, out)? {
                        return Err(self.chunk_cut());
                    }
                    let got = (out.len() - before) as u64;
                    self.framing = Framing::Chunked {
                        left: left_now - got,
                        first: false,
                    };
                    return Ok(true);
                }
            }
        }
    }

    fn chunk_cut(&self) -> Error {
        Error::dropped("the connection closed before the last chunk of a chunked answer")
    }

    /// The whole body.
    pub(crate) fn read_to_end(&mut self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        while self.read(&mut out)? {}
        Ok(out)
    }

    /// Marks what the body is being read for (`reading the stream`), for timeout messages.
    pub(crate) fn set_phase(&mut self, phase: &'static str) {
        self.conn.phase = phase;
    }
}

/// Sends `POST {endpoint.path}{path}` with `headers` and `body`, and reads the answer's head.
pub(crate) fn post(
    endpoint: &Endpoint,
    tls: Option<&TlsConfig>,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    limits: Limits,
) -> Result<Response, Error> {
    let started = Instant::now();
    let tcp = connect(endpoint, limits, started)?;
    let _ = tcp.set_nodelay(true);
    let stream = if endpoint.tls {
        wrap_tls(endpoint, tls, tcp)?
    } else {
        Stream::Plain(tcp)
    };
    let mut conn = Conn {
        stream,
        host: endpoint.host.clone(),
        buf: vec![0; 16 * 1024],
        start: 0,
        end: 0,
        started,
        limits,
        received: 0,
        phase: "sending the request",
    };
    let mut head = format!(
        "POST {}{path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: rp-llm/{}\r\nContent-Length: {}\r\nConnection: close\r\n",
        endpoint.path,
        endpoint.authority(),
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut request = head.into_bytes();
    request.extend_from_slice(body);
    conn.write_all(&request)?;
    conn.phase = "waiting for the answer";
    let (status, headers) = read_head(&mut conn)?;
    conn.phase = "reading the answer";
    let framing = framing(&headers, limits.max_bytes)?;
    Ok(Response {
        status,
        headers,
        conn,
        framing,
    })
}

fn connect(endpoint: &Endpoint, limits: Limits, started: Instant) -> Result<TcpStream, Error> {
    let address = format!("{}:{}", endpoint.bracketed_host(), endpoint.port);
    let addrs: Vec<SocketAddr> = (endpoint.host.as_str(), endpoint.port)
        .to_socket_addrs()
        .map_err(|e| Error::Connect {
            address: address.clone(),
            message: format!("the host name does not resolve: {e}"),
        })?
        .collect();
    let mut last = Error::Connect {
        address: address.clone(),
        message: "the host name resolves to no address".into(),
    };
    for addr in addrs {
        let left = limits.total.saturating_sub(started.elapsed());
        if left.is_zero() {
            let ms = limits.total.as_millis() as u64;
            return Err(Error::Timeout {
                which: "total",
                after_ms: ms,
                message: format!(
                    "connecting to {address} took longer than {ms} ms (total_timeout_ms)"
                ),
            });
        }
        let wait = limits.connect.min(left).max(Duration::from_millis(1));
        match TcpStream::connect_timeout(&addr, wait) {
            Ok(s) => return Ok(s),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                let ms = wait.as_millis() as u64;
                last = Error::Timeout {
                    which: "connect",
                    after_ms: ms,
                    message: format!(
                        "connecting to {address} took longer than {ms} ms (connect_timeout_ms)"
                    ),
                };
            }
            Err(e) => {
                last = Error::Connect {
                    address: address.clone(),
                    message: e.to_string(),
                };
            }
        }
    }
    Err(last)
}

#[cfg(feature = "tls")]
fn wrap_tls(endpoint: &Endpoint, tls: Option<&TlsConfig>, tcp: TcpStream) -> Result<Stream, Error> {
    let tls_error = |message: String| Error::Tls {
        host: endpoint.host.clone(),
        message,
    };
    let config = tls
        .cloned()
        .ok_or_else(|| tls_error("no TLS configuration".into()))?;
    let name = rustls::pki_types::ServerName::try_from(endpoint.host.clone())
        .map_err(|e| tls_error(format!("{:?} is not a server name: {e}", endpoint.host)))?;
    let conn = rustls::ClientConnection::new(config, name).map_err(|e| tls_error(e.to_string()))?;
    Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(conn, tcp))))
}

#[cfg(not(feature = "tls"))]
fn wrap_tls(endpoint: &Endpoint, _: Option<&TlsConfig>, _: TcpStream) -> Result<Stream, Error> {
    Err(Error::config(
        "base_url",
        format!(
            "{} is https, and rp-llm was built without its `tls` feature",
            endpoint.url("")
        ),
    ))
}

/// Reads the status line and headers, skipping interim (1xx) answers.
fn read_head(conn: &mut Conn) -> Result<(u16, Vec<(String, String)>), Error> {
    let mut first = true;
    loop {
        let Some(line) = conn.read_line()? else {
            return Err(Error::dropped(if first {
                "the server closed the connection without answering"
            } else {
                "the connection closed after an interim answer"
            }));
        };
        first = false;
        let status = parse_status(&line)?;
        let mut headers = Vec::new();
        let mut size = line.len();
        loop {
            let Some(line) = conn.read_line()? else {
                return Err(Error::dropped(
                    "the connection closed in the middle of the answer's head",
                ));
            };
            if line.is_empty() {
                break;
            }
            size += line.len();
            if size > MAX_HEAD {
                return Err(Error::protocol(format!(
                    "the answer's head is longer than {MAX_HEAD} bytes"
                )));
            }
            let text = std::str::from_utf8(&line).ok();
            let Some((name, value)) = text.and_then(|t| t.split_once(':')) else {
                return Err(Error::protocol(format!(
                    "a header line of the answer is not `name: value`: {}",
                    snippet(&line, 80)
                )));
            };
            if name.is_empty() || name.starts_with([' ', '\t']) {
                return Err(Error::protocol(format!(
                    "a header line of the answer is not `name: value`: {}",
                    snippet(&line, 80)
                )));
            }
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        if (100..200).contains(&status) {
            continue;
        }
        return Ok((status, headers));
    }
}

fn parse_status(line: &[u8]) -> Result<u16, Error> {
    let not_http = || {
        Error::protocol(format!(
            "the answer is not HTTP: it starts with {}",
            snippet(line, 80)
        ))
    };
    let text = std::str::from_utf8(line).map_err(|_| not_http())?;
    let mut parts = text.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(not_http());
    }
    let code = parts.next().unwrap_or("");
    match code.parse::<u16>() {
        Ok(c) if code.len() == 3 && (100..600).contains(&c) => Ok(c),
        _ => Err(not_http()),
    }
}

fn framing(headers: &[(String, String)], max_bytes: u64) -> Result<Framing, Error> {
    fn all<'h>(
        headers: &'h [(String, String)],
        name: &'static str,
    ) -> impl Iterator<Item = &'h str> {
        headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    let get = |name: &'static str| all(headers, name);
    if let Some(enc) = get("content-encoding").find(|v| !v.eq_ignore_ascii_case("identity")) {
        return Err(Error::protocol(format!(
            "the answer is compressed (Content-Encoding: {enc}), which was not asked for"
        )));
    }
    let te: Vec<&str> = get("transfer-encoding")
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect();
    if let Some(last) = te.last() {
        if last.eq_ignore_ascii_case("chunked")
            && te[..te.len() - 1]
                .iter()
                .all(|t| t.eq_ignore_ascii_case("identity"))
        {
            return Ok(Framing::Chunked {
                left: 0,
                first: true,
            });
        }
        return Err(Error::protocol(format!(
            "the answer's Transfer-Encoding is {}, which is not supported",
            te.join(", ")
        )));
    }
    let mut length = None;
    for v in get("content-length") {
        let n: u64 = v.parse().map_err(|_| {
            Error::protocol(format!("the answer's Content-Length {v:?} is not a number"))
        })?;
        if length.is_some_and(|l| l != n) {
            return Err(Error::protocol(
                "the answer has two different Content-Lengths",
            ));
        }
        length = Some(n);
    }
    match length {
        Some(n) if n > max_bytes => Err(Error::TooLarge { limit: max_bytes }),
        Some(n) => Ok(Framing::Length { left: n, total: n }),
        None => Ok(Framing::Eof),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let mut r = post(&e, None, "/x", &[], b"", limits())?;
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
