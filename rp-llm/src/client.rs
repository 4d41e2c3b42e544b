//! [`OpenAiClient`]: the engine's [`Generate`] over an OpenAI-compatible server.

use crate::breaker::{Breaker, BreakerState, Clock, SystemClock};
use crate::config::ClientConfig;
use crate::error::Error;
use crate::http::{self, Endpoint, Limits, Response};
use crate::sse::SseParser;
use crate::wire::{self, ChatOptions, Format, StreamState};
use rp_core::turn::{EmbedRequest, Generate, GenerateRequest, GenerateResult, TokenSink};
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

const CHAT_PATH: &str = "/chat/completions";
const EMBED_PATH: &str = "/embeddings";
/// How much of an error answer is read for its message.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// A client of an OpenAI-compatible server (llama.cpp's server, Ollama, vLLM, LM Studio,
/// OpenRouter, OpenAI). It implements [`Generate`], so the engine drives it
/// ([`rp_core::Engine::run_turn_blocking`]); [`OpenAiClient::chat`] and
/// [`OpenAiClient::embeddings`] are the same calls with typed errors.
///
/// Calls block the calling thread: the `async fn`s of [`Generate`] do all their work in
/// their first poll, which is what [`rp_core::turn::block_on`] and
/// [`rp_core::Engine::run_turn_blocking`] expect. Inside an async runtime, call the engine
/// from a blocking task (`spawn_blocking`).
///
/// One client may serve many threads at once; they share its circuit breaker and what it
/// learnt about the server (`json_schema` support, and whether `json_object` takes a
/// `schema`).
pub struct OpenAiClient {
    config: ClientConfig,
    endpoint: Endpoint,
    agent: ureq::Agent,
    breaker: Breaker,
    clock: Arc<dyn Clock>,
    /// How far down the JSON fallbacks the server has been found to be (`Format::level`).
    json_fallback: AtomicU8,
    jitter: AtomicU64,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("config", &self.config)
            .field("breaker", &self.breaker_state())
            .field("json_schema_supported", &self.json_schema_supported())
            .finish()
    }
}

impl OpenAiClient {
    /// A client for `config`, after [`ClientConfig::validate`]. Nothing is sent yet.
    pub fn new(config: ClientConfig) -> Result<OpenAiClient, Error> {
        config.validate()?;
        let endpoint =
            Endpoint::parse(&config.base_url).map_err(|e| Error::config("base_url", e))?;
        check_tls(&endpoint)?;
        let agent = http::agent(limits(&config));
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        Ok(OpenAiClient {
            breaker: Breaker::new(
                config.breaker_threshold,
                Duration::from_millis(config.breaker_cooldown_ms),
            ),
            config,
            endpoint,
            agent,
            clock: Arc::new(SystemClock),
            json_fallback: AtomicU8::new(0),
            jitter: AtomicU64::new(seed | 1),
        })
    }

    /// A client configured from the environment ([`ClientConfig::from_env`]).
    pub fn from_env() -> Result<OpenAiClient, Error> {
        OpenAiClient::new(ClientConfig::from_env()?)
    }

    /// The same client with its breaker and backoff on `clock` (a
    /// [`crate::ManualClock`] in tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> OpenAiClient {
        self.clock = clock;
        self
    }

    /// Its configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Where its circuit breaker stands.
    pub fn breaker_state(&self) -> BreakerState {
        self.breaker.state(self.clock.now())
    }

    /// `false` once the server has shown it lacks `response_format: json_schema` (and
    /// answered `json_object` instead); from then on this client asks for `json_object`
    /// with the schema in `response_format.schema` (llama-cpp-python's server constrains
    /// decoding with it) and in the system message, or, for a server that refused the
    /// `schema` field too, in the system message only.
    pub fn json_schema_supported(&self) -> bool {
        self.json_fallback.load(Ordering::Relaxed) == 0
    }

    /// One generation: `POST {base_url}/chat/completions` with the model for the request's
    /// purpose. Streamed text goes to `sink` as it arrives; a retry restarts the stream, so
    /// the sink then sees the text again from its start (see the crate docs).
    pub fn chat(
        &self,
        request: &GenerateRequest,
        sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, Error> {
        self.call(|| {
            let mut format = if request.json_schema.is_none() {
                Format::Text
            } else {
                Format::for_level(self.json_fallback.load(Ordering::Relaxed))
            };
            // A refusal of the format asks again at once, one fallback down, in the same
            // attempt; what worked is remembered for the client's lifetime.
            loop {
                match self.chat_attempt(request, format, sink) {
                    Err(e) => match format.fallback(&e) {
                        Some(next) => format = next,
                        None => return Err(e),
                    },
                    Ok(r) => {
                        self.json_fallback
                            .fetch_max(format.level(), Ordering::Relaxed);
                        return Ok(r);
                    }
                }
            }
        })
    }

    /// One vector per text: `POST {base_url}/embeddings` with the embedding model. No texts,
    /// no call.
    pub fn embeddings(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.call(|| {
            let body = wire::embed_body(self.config.embed_model(), texts).to_string();
            let mut response = self.post(EMBED_PATH, "application/json", body.as_bytes())?;
            let content_type = response.header("content-type").map(str::to_string);
            let bytes = response.read_to_end()?;
            wire::parse_embeddings(&bytes, content_type.as_deref(), texts.len())
        })
    }

    /// Runs `attempt` behind the breaker, retrying what may pass.
    fn call<T>(&self, mut attempt: impl FnMut() -> Result<T, Error>) -> Result<T, Error> {
        if let Err(refused) = self.breaker.admit(self.clock.now()) {
            return Err(Error::CircuitOpen {
                failures: self.breaker.threshold(),
                retry_in_ms: refused.retry_in.as_millis() as u64,
            });
        }
        // Records a failure if `attempt` unwinds (a panicking sink), so a trial call can
        // never leave the breaker half-open for good.
        let mut outcome = Outcome {
            client: self,
            server_ok: false,
        };
        let mut retries = 0;
        let result = loop {
            match attempt() {
                Err(e) if e.is_retryable() && retries < self.config.max_retries => {
                    self.clock.sleep(self.backoff(retries, &e));
                    retries += 1;
                }
                r => break r,
            }
        };
        outcome.server_ok = match &result {
            Ok(_) => true,
            Err(e) => !e.counts_against_server(),
        };
        drop(outcome);
        result
    }

    /// The wait before retry `retry` (0-based): the base doubled per retry up to the
    /// maximum, drawn between half of that and all of it; at least what a `Retry-After` asked
    /// for, up to the maximum.
    fn backoff(&self, retry: u32, error: &Error) -> Duration {
        let max = self.config.backoff_max_ms;
        let full = self
            .config
            .backoff_base_ms
            .saturating_mul(1u64 << retry.min(32))
            .min(max);
        let half = full / 2;
        let ms = half + self.random() % (full - half + 1);
        let ms = match error {
            Error::Status {
                retry_after_ms: Some(asked),
                ..
            } => ms.max((*asked).min(max)),
            _ => ms,
        };
        Duration::from_millis(ms)
    }

    /// xorshift64*, for jitter only.
    fn random(&self) -> u64 {
        let step = |mut x: u64| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x
        };
        let prev = self
            .jitter
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| Some(step(x)))
            .unwrap_or(1);
        step(prev).wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Sends a JSON body and returns the answer if its status is a success; an error status
    /// is read into an [`Error::Status`].
    fn post(&self, path: &str, accept: &str, body: &[u8]) -> Result<Response, Error> {
        let auth = self.config.api_key.as_ref().map(|k| format!("Bearer {k}"));
        let mut headers = vec![("Content-Type", "application/json"), ("Accept", accept)];
        if let Some(auth) = &auth {
            headers.push(("Authorization", auth));
        }
        let mut response = http::post(
            &self.agent,
            &self.endpoint,
            path,
            &headers,
            body,
            limits(&self.config),
        )?;
        if (200..300).contains(&response.status) {
            return Ok(response);
        }
        let retry_after_ms = response
            .header("retry-after")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|s| s.saturating_mul(1000));
        let content_type = response.header("content-type").map(str::to_string);
        let mut body = Vec::new();
        let message = loop {
            match response.read(&mut body) {
                Ok(true) if body.len() < ERROR_BODY_BYTES => {}
                Ok(_) => break wire::error_message(&body, content_type.as_deref()),
                Err(e) if body.is_empty() => break format!("(its body could not be read: {e})"),
                Err(_) => break wire::error_message(&body, content_type.as_deref()),
            }
        };
        Err(Error::Status {
            status: response.status,
            message,
            retry_after_ms,
        })
    }

    fn chat_attempt(
        &self,
        request: &GenerateRequest,
        format: Format,
        sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, Error> {
        let body = wire::chat_body(
            request,
            &ChatOptions {
                model: self.config.model_for(&request.purpose),
                stream: self.config.stream,
                stream_usage: self.config.stream_usage,
                format,
            },
        )
        .to_string();
        let accept = if self.config.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut response = self.post(CHAT_PATH, accept, body.as_bytes())?;
        let content_type = response.header("content-type").map(str::to_ascii_lowercase);
        if content_type
            .as_deref()
            .is_some_and(|c| c.starts_with("text/event-stream"))
        {
            return read_stream(&mut response, request, sink);
        }
        // A server may answer a stream request with one JSON object (some do when tools are
        // given), or send a stream under another content type.
        let bytes = response.read_to_end()?;
        if bytes.trim_ascii_start().starts_with(b"data:") {
            return stream_from(&bytes, request, sink);
        }
        let result = wire::parse_completion(&bytes, content_type.as_deref())?;
        if !result.text.is_empty() {
            sink.token(&request.purpose, &result.text);
        }
        Ok(result)
    }

    fn describe(&self, path: &str, e: Error) -> String {
        format!("{}: {e}", self.endpoint.url(path))
    }
}

/// Ends a call for the breaker, also when it unwinds.
struct Outcome<'a> {
    client: &'a OpenAiClient,
    server_ok: bool,
}

impl Drop for Outcome<'_> {
    fn drop(&mut self) {
        let c = self.client;
        c.breaker.record(self.server_ok, c.clock.now());
    }
}

/// The bounds of one attempt under `config`.
fn limits(config: &ClientConfig) -> Limits {
    Limits {
        connect: Duration::from_millis(config.connect_timeout_ms),
        read: Duration::from_millis(config.read_timeout_ms),
        total: Duration::from_millis(config.total_timeout_ms),
        max_bytes: config.max_response_bytes,
    }
}

/// An `https` base URL needs the `tls` feature.
fn check_tls(endpoint: &Endpoint) -> Result<(), Error> {
    if endpoint.tls && !cfg!(feature = "tls") {
        return Err(Error::config(
            "base_url",
            format!(
                "{} is https, and rp-llm was built without its `tls` feature",
                endpoint.url("")
            ),
        ));
    }
    Ok(())
}

/// Reads a stream as it arrives, up to `data: [DONE]`.
fn read_stream(
    response: &mut Response,
    request: &GenerateRequest,
    sink: &mut dyn TokenSink,
) -> Result<GenerateResult, Error> {
    response.set_phase("reading the stream");
    let mut parser = SseParser::default();
    let mut state = StreamState::default();
    let mut bytes = Vec::new();
    let mut events = Vec::new();
    loop {
        bytes.clear();
        let more = response.read(&mut bytes)?;
        if more {
            parser.push(&bytes, &mut events);
        } else {
            parser.finish(&mut events);
        }
        for e in events.drain(..) {
            state.event(&e, &request.purpose, sink)?;
            if state.done {
                return state.finish();
            }
        }
        if !more {
            return ended(state);
        }
    }
}

/// A stream that arrived whole (under another content type).
fn stream_from(
    bytes: &[u8],
    request: &GenerateRequest,
    sink: &mut dyn TokenSink,
) -> Result<GenerateResult, Error> {
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    parser.push(bytes, &mut events);
    parser.finish(&mut events);
    let mut state = StreamState::default();
    for e in &events {
        state.event(e, &request.purpose, sink)?;
        if state.done {
            return state.finish();
        }
    }
    ended(state)
}

/// A stream whose body ended without `[DONE]`: whole if the model said why it finished,
/// else cut.
fn ended(state: StreamState) -> Result<GenerateResult, Error> {
    if state.finished {
        return state.finish();
    }
    Err(Error::dropped(
        "the stream ended before `data: [DONE]` and before the model finished",
    ))
}

#[async_trait::async_trait]
impl Generate for OpenAiClient {
    /// [`OpenAiClient::chat`], its error as text with the URL.
    async fn generate(
        &self,
        request: &GenerateRequest,
        sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        self.chat(request, sink)
            .map_err(|e| self.describe(CHAT_PATH, e))
    }

    /// [`OpenAiClient::embeddings`], its error as text with the URL.
    async fn embed(&self, request: &EmbedRequest) -> Result<Vec<Vec<f32>>, String> {
        self.embeddings(&request.texts)
            .map_err(|e| self.describe(EMBED_PATH, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "tls"))]
    #[test]
    fn without_tls_an_https_url_is_refused_up_front() {
        let e =
            OpenAiClient::new(ClientConfig::new("https://example.invalid/v1", "m")).unwrap_err();
        assert!(e.to_string().contains("`tls` feature"), "{e}");
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum_with_jitter_and_honours_retry_after() {
        let mut config = ClientConfig::new("http://127.0.0.1:1/v1", "m");
        config.backoff_base_ms = 100;
        config.backoff_max_ms = 1_000;
        let c = OpenAiClient::new(config).unwrap();
        let e = Error::dropped("x");
        for _ in 0..200 {
            for (retry, lo, hi) in [(0, 50, 100), (1, 100, 200), (2, 200, 400), (5, 500, 1_000)] {
                let ms = c.backoff(retry, &e).as_millis() as u64;
                assert!((lo..=hi).contains(&ms), "retry {retry}: {ms}");
            }
        }
        let asked = |ms| Error::Status {
            status: 429,
            message: String::new(),
            retry_after_ms: Some(ms),
        };
        assert!(c.backoff(0, &asked(700)).as_millis() >= 700);
        assert!(c.backoff(0, &asked(60_000)).as_millis() <= 1_000);
    }
}
