//! rp-llm: an OpenAI-compatible model client for rp. [`OpenAiClient`] implements
//! [`rp_core::turn::Generate`] over `POST /chat/completions` and `POST /embeddings`, the API
//! that llama.cpp's server, Ollama, vLLM, LM Studio, OpenRouter and OpenAI all speak
//! (docs/architecture.md). It lives beside rp-core so the engine itself stays free of network code;
//! hosts opt in by depending on this crate (the demo and the bindings through a cargo
//! feature).
//!
//! ```no_run
//! use rp_core::Engine;
//! use rp_core::turn::{TurnInput, TurnOptions};
//! use rp_llm::{ClientConfig, OpenAiClient};
//!
//! // RP_LLM_BASE_URL, RP_LLM_MODEL and (optionally) RP_LLM_API_KEY...
//! let client = OpenAiClient::from_env()?;
//! // ...or the same in code.
//! let client = OpenAiClient::new(ClientConfig::new("http://127.0.0.1:8080/v1", "local"))?;
//!
//! let mut engine = Engine::in_memory("The Crooked Lantern", 0)?;
//! # let player = rp_core::EntityId(1);
//! let mut print = |_: &rp_core::turn::Purpose, token: &str| print!("{token}");
//! let outcome = engine.run_turn_blocking(
//!     TurnInput::say(player, "Evening, Mira.", 1_000),
//!     TurnOptions::default(),
//!     &client,
//!     &mut print,
//! )?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `docs/llm-client.md` is the user's guide: configuration, environment variables, the
//! `json_schema` fallback, retries and the breaker, routing by purpose.
//!
//! # What a call does
//!
//! * **Request.** Messages with their roles (a tool result with its `tool_call_id`), the
//!   sampling parameters, the tools as `function` definitions, and the model configured for
//!   the request's [`rp_core::turn::Purpose`]. A request with a JSON schema asks for
//!   `response_format: {type: "json_schema", json_schema: {name, schema, strict: true}}`.
//! * **Streaming.** With `stream` (the default) the answer is server-sent events; each text
//!   delta reaches the [`rp_core::turn::TokenSink`] as it arrives, tool-call deltas are put
//!   together by index, and the token counts and model id are kept when the server sends
//!   them. A stream is whole at `data: [DONE]` (or, for servers that omit it, when its body
//!   ends cleanly after the model said why it finished); one that ends before is an
//!   [`Error::Dropped`], never a partial result.
//! * **`json_schema` fallback.** A server that answers a `json_schema` request with 500 or
//!   501, or with a 400/404/422 that names the response format or schema, is asked again at
//!   once with `{type: "json_object", schema}` and the schema in the system message too
//!   (llama-cpp-python's server builds a grammar from `schema` and constrains decoding with
//!   it); a server that refuses the `schema` field (a 400/422 naming it) gets plain
//!   `{type: "json_object"}`. What works the client remembers for its lifetime
//!   ([`OpenAiClient::json_schema_supported`]).
//! * **Retries.** Connection failures, timeouts, dropped streams, 408, 429 and 5xx are tried
//!   again, up to `max_retries` times, after an exponential backoff with jitter (at least
//!   what a `Retry-After` asks for, up to `backoff_max_ms`). Other 4xx and answers that are
//!   not answers (HTML, not JSON, the wrong shape) fail at once. **A retry restarts the
//!   stream**: the sink has then seen the start of the failed attempt's text, and sees the
//!   new attempt's text from its beginning; a host that displays tokens should treat them as
//!   provisional until the call returns.
//! * **Circuit breaker.** After `breaker_threshold` (3) failed calls in a row it opens and
//!   calls fail fast with [`Error::CircuitOpen`] for `breaker_cooldown_ms` (30 s); then one
//!   trial call goes through: success closes it, failure opens it again. Only failures of
//!   the server count (those that are retried, and garbage); a refused request (401, 400…)
//!   shows the server is up and counts as a success. The breaker and the backoff run on a
//!   [`Clock`] that tests replace ([`ManualClock`]).
//! * **Bounds.** A connect timeout, a read timeout (the longest silence, which catches a
//!   server that stalls in the middle of a stream) and a total timeout per attempt; answers
//!   are capped at `max_response_bytes` (16 MiB). A stalled or hostile server gives an error,
//!   never a hang, a panic or unbounded memory.
//!
//! # Blocking, without an async runtime
//!
//! rp runs turns without an async runtime ([`rp_core::turn::block_on`]), so the client is a
//! blocking one: its `async fn`s do their I/O on the calling thread and are ready at the
//! first poll. Inside an async runtime, run the engine in a blocking task.
//!
//! # HTTP: ureq
//!
//! The HTTP/1.1 underneath is [ureq](https://docs.rs/ureq) 3, a maintained blocking client:
//! it parses the answer's head, decodes `Content-Length`, chunked and close-delimited
//! bodies, and bounds every attempt with three clocks, which the client sets from its
//! configuration: the connect timeout (TCP and the TLS handshake), ureq's per-read timeout
//! as the read timeout (it restarts with every read, which is what tells a slow stream,
//! fine, from a stalled one; writes get the same bound), and ureq's global timeout as the
//! total one. The body is handed to the SSE parser piece by piece as it arrives and is cut
//! off at `max_response_bytes`. The agent follows no redirect (a `3xx` is an error status),
//! takes no proxy from the environment, asks for no compression and keeps no connection for
//! reuse (a model call takes seconds, next to which a new connection is nothing). What stays
//! in `http` is the base URL's validation, the request, and the mapping of ureq's errors
//! onto this crate's [`Error`] kinds. For `https` the `tls` feature (on by default) turns on
//! ureq's rustls, with the ring provider and Mozilla's roots (webpki-roots): no system
//! OpenSSL, no cmake, and the same trust everywhere. Without the feature ureq is built
//! without TLS, and an `https` base URL is refused with a [`Error::Config`], for hosts that
//! only talk to a server on their own machine or network.
#![warn(missing_docs)]

mod breaker;
mod client;
pub mod config;
mod error;
mod http;
mod sse;
mod wire;

pub use breaker::{BreakerState, Clock, ManualClock, SystemClock};
pub use client::OpenAiClient;
pub use config::{ClientConfig, PurposeModels};
pub use error::{Error, ErrorKind};

/// `docs/llm-client.md`, whose examples are compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/llm-client.md")]
pub struct LlmClientGuide;
