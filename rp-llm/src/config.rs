//! The client's configuration: where the server is, which model answers which purpose, and
//! the bounds on time, retries, size and the circuit breaker. It comes from code
//! ([`ClientConfig::new`] and its fields), from JSON ([`ClientConfig::from_json`], unknown
//! fields refused) or from the environment ([`ClientConfig::from_env`]).

use crate::error::Error;
use crate::http::Endpoint;
use rp_core::turn::Purpose;
use serde::{Deserialize, Serialize};

/// The environment variable with the server's base URL (required by
/// [`ClientConfig::from_env`]).
pub const ENV_BASE_URL: &str = "RP_LLM_BASE_URL";
/// The environment variable with the model's name (required).
pub const ENV_MODEL: &str = "RP_LLM_MODEL";
/// The environment variable with the API key (optional: local servers need none).
pub const ENV_API_KEY: &str = "RP_LLM_API_KEY";
/// The environment variable with a cheaper model for state updates, summaries and queries
/// (optional; replies keep [`ENV_MODEL`]).
pub const ENV_FAST_MODEL: &str = "RP_LLM_FAST_MODEL";
/// The environment variable with the embedding model (optional; else [`ENV_MODEL`]).
pub const ENV_EMBED_MODEL: &str = "RP_LLM_EMBED_MODEL";

/// Models per purpose, overriding [`ClientConfig::model`], so a host can send cheap work to
/// a fast model and replies to a smart one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PurposeModels {
    /// For [`Purpose::Reply`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// For [`Purpose::StateUpdate`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_update: Option<String>,
    /// For [`Purpose::Summary`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// For [`Purpose::Query`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// For [`Purpose::Initiate`] (a character speaking first); unset: the reply model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initiate: Option<String>,
    /// For [`Purpose::Reflect`] (a character reflecting on its memories); unset: the reply
    /// model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reflect: Option<String>,
    /// For [`Purpose::Classify`] (a short classification: the tone of an answer); unset: the
    /// summary model (the fast one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classify: Option<String>,
    /// For [`Purpose::Think`] (a character thinking over a stimulus); unset: the reply model
    /// (the smart one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<String>,
    /// For embeddings (`/embeddings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed: Option<String>,
}

/// Everything the client needs. Only `base_url` and `model` have no default; the defaults of
/// the rest are the `DEFAULT_*` constants.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientConfig {
    /// The API's base URL, `http://` or `https://`, up to the version: `/chat/completions`
    /// and `/embeddings` are appended (`http://127.0.0.1:8080/v1`,
    /// `https://openrouter.ai/api/v1`). A URL without a path gets `/v1`.
    pub base_url: String,
    /// The model, for every purpose without its own in `models`.
    pub model: String,
    /// The API key, sent as `Authorization: Bearer <key>`. `None` sends no header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Models per purpose.
    #[serde(default)]
    pub models: PurposeModels,
    /// The longest wait for a connection to open: one budget for every address the name
    /// resolves to, and the TLS handshake for `https`.
    #[serde(default = "d_connect")]
    pub connect_timeout_ms: u64,
    /// The longest silence from the server: waiting for its answer to start (which includes
    /// the model reading the prompt) and between two pieces of it.
    #[serde(default = "d_read")]
    pub read_timeout_ms: u64,
    /// The longest one attempt may take, from connecting to the last byte.
    #[serde(default = "d_total")]
    pub total_timeout_ms: u64,
    /// Attempts after the first, for errors that may pass (see
    /// [`crate::Error::is_retryable`]). At most [`MAX_RETRIES`].
    #[serde(default = "d_retries")]
    pub max_retries: u32,
    /// The wait before the first retry; it doubles for each next one, up to
    /// `backoff_max_ms`, and each wait is drawn between half of it and all of it (jitter).
    #[serde(default = "d_backoff_base")]
    pub backoff_base_ms: u64,
    /// The longest wait between two attempts (also the most a `Retry-After` is honoured).
    #[serde(default = "d_backoff_max")]
    pub backoff_max_ms: u64,
    /// Failed calls in a row that open the circuit breaker; 0 turns the breaker off.
    #[serde(default = "d_breaker_threshold")]
    pub breaker_threshold: u32,
    /// How long an open breaker fails calls fast before it lets one trial call through.
    #[serde(default = "d_breaker_cooldown")]
    pub breaker_cooldown_ms: u64,
    /// The most bytes of body read for one answer (the head is capped at 64 KiB on its own);
    /// more is an error, so a hostile or broken server cannot exhaust memory. At least 1024.
    #[serde(default = "d_max_bytes")]
    pub max_response_bytes: u64,
    /// Ask for a stream (`stream: true`), so tokens reach the sink as they are generated.
    #[serde(default = "d_true")]
    pub stream: bool,
    /// With `stream`, ask for the token counts in the stream
    /// (`stream_options: {include_usage: true}`). Turn off for a server that refuses it.
    #[serde(default = "d_true")]
    pub stream_usage: bool,
}

/// Default of [`ClientConfig::connect_timeout_ms`]: 10 s.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
/// Default of [`ClientConfig::read_timeout_ms`]: 120 s, room for a model on a CPU to read a
/// long prompt before its first token.
pub const DEFAULT_READ_TIMEOUT_MS: u64 = 120_000;
/// Default of [`ClientConfig::total_timeout_ms`]: 10 min.
pub const DEFAULT_TOTAL_TIMEOUT_MS: u64 = 600_000;
/// Default of [`ClientConfig::max_retries`]: 2.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// The most [`ClientConfig::max_retries`] may be.
pub const MAX_RETRIES: u32 = 10;
/// Default of [`ClientConfig::backoff_base_ms`]: 500 ms.
pub const DEFAULT_BACKOFF_BASE_MS: u64 = 500;
/// Default of [`ClientConfig::backoff_max_ms`]: 10 s.
pub const DEFAULT_BACKOFF_MAX_MS: u64 = 10_000;
/// Default of [`ClientConfig::breaker_threshold`]: 3 failed calls in a row.
pub const DEFAULT_BREAKER_THRESHOLD: u32 = 3;
/// Default of [`ClientConfig::breaker_cooldown_ms`]: 30 s.
pub const DEFAULT_BREAKER_COOLDOWN_MS: u64 = 30_000;
/// Default of [`ClientConfig::max_response_bytes`]: 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

fn d_connect() -> u64 {
    DEFAULT_CONNECT_TIMEOUT_MS
}
fn d_read() -> u64 {
    DEFAULT_READ_TIMEOUT_MS
}
fn d_total() -> u64 {
    DEFAULT_TOTAL_TIMEOUT_MS
}
fn d_retries() -> u32 {
    DEFAULT_MAX_RETRIES
}
fn d_backoff_base() -> u64 {
    DEFAULT_BACKOFF_BASE_MS
}
fn d_backoff_max() -> u64 {
    DEFAULT_BACKOFF_MAX_MS
}
fn d_breaker_threshold() -> u32 {
    DEFAULT_BREAKER_THRESHOLD
}
fn d_breaker_cooldown() -> u64 {
    DEFAULT_BREAKER_COOLDOWN_MS
}
fn d_max_bytes() -> u64 {
    DEFAULT_MAX_RESPONSE_BYTES
}
fn d_true() -> bool {
    true
}

impl std::fmt::Debug for ClientConfig {
    /// Like the derived form, with the API key hidden.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<hidden>"))
            .field("models", &self.models)
            .field("connect_timeout_ms", &self.connect_timeout_ms)
            .field("read_timeout_ms", &self.read_timeout_ms)
            .field("total_timeout_ms", &self.total_timeout_ms)
            .field("max_retries", &self.max_retries)
            .field("backoff_base_ms", &self.backoff_base_ms)
            .field("backoff_max_ms", &self.backoff_max_ms)
            .field("breaker_threshold", &self.breaker_threshold)
            .field("breaker_cooldown_ms", &self.breaker_cooldown_ms)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("stream", &self.stream)
            .field("stream_usage", &self.stream_usage)
            .finish()
    }
}

impl ClientConfig {
    /// A configuration for `model` at `base_url`, everything else at its default.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> ClientConfig {
        ClientConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            models: PurposeModels::default(),
            connect_timeout_ms: DEFAULT_CONNECT_TIMEOUT_MS,
            read_timeout_ms: DEFAULT_READ_TIMEOUT_MS,
            total_timeout_ms: DEFAULT_TOTAL_TIMEOUT_MS,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff_base_ms: DEFAULT_BACKOFF_BASE_MS,
            backoff_max_ms: DEFAULT_BACKOFF_MAX_MS,
            breaker_threshold: DEFAULT_BREAKER_THRESHOLD,
            breaker_cooldown_ms: DEFAULT_BREAKER_COOLDOWN_MS,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            stream: true,
            stream_usage: true,
        }
    }

    /// The same, with `api_key`.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> ClientConfig {
        self.api_key = Some(api_key.into());
        self
    }

    /// Reads a configuration from a JSON object with the fields of this type; `base_url` and
    /// `model` are required, the rest default. An unknown field (a typo) is refused, and so
    /// is a value [`ClientConfig::validate`] refuses.
    pub fn from_json(json: &str) -> Result<ClientConfig, Error> {
        let config: ClientConfig = serde_json::from_str(json)
            .map_err(|e| Error::config("client configuration", e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Reads a configuration from the environment: [`ENV_BASE_URL`] and [`ENV_MODEL`]
    /// (required), [`ENV_API_KEY`], [`ENV_FAST_MODEL`] and [`ENV_EMBED_MODEL`] (optional; an
    /// empty one counts as unset). Everything else is at its default. The error names the
    /// variable that is missing or malformed.
    pub fn from_env() -> Result<ClientConfig, Error> {
        ClientConfig::from_vars(|name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })
    }

    /// [`ClientConfig::from_env`] with the variables read through `var` (for tests, or a
    /// host with its own settings store).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<ClientConfig, Error> {
        let required = |name: &str, example: &str| -> Result<String, Error> {
            match var(name) {
                None => Err(Error::config(
                    name,
                    format!("is not set; set it to {example}"),
                )),
                Some(v) if v.trim().is_empty() => Err(Error::config(
                    name,
                    format!("is set but empty; set it to {example}"),
                )),
                Some(v) => Ok(v.trim().to_string()),
            }
        };
        let optional = |name: &str| {
            var(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let base_url = required(
            ENV_BASE_URL,
            "the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1",
        )?;
        Endpoint::parse(&base_url).map_err(|e| Error::config(ENV_BASE_URL, e))?;
        let model = required(ENV_MODEL, "the model's name as the server knows it")?;
        check_model(&model).map_err(|e| Error::config(ENV_MODEL, e))?;
        let api_key = optional(ENV_API_KEY);
        if let Some(key) = &api_key {
            check_key(key).map_err(|e| Error::config(ENV_API_KEY, e))?;
        }
        let fast = optional(ENV_FAST_MODEL);
        if let Some(m) = &fast {
            check_model(m).map_err(|e| Error::config(ENV_FAST_MODEL, e))?;
        }
        let embed = optional(ENV_EMBED_MODEL);
        if let Some(m) = &embed {
            check_model(m).map_err(|e| Error::config(ENV_EMBED_MODEL, e))?;
        }
        let mut config = ClientConfig::new(base_url, model);
        config.api_key = api_key;
        config.models = PurposeModels {
            reply: None,
            state_update: fast.clone(),
            summary: fast.clone(),
            query: fast,
            initiate: None,
            reflect: None,
            classify: None,
            think: None,
            embed,
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks every field; the error names the field and what is wrong (never the key
    /// itself).
    pub fn validate(&self) -> Result<(), Error> {
        Endpoint::parse(&self.base_url).map_err(|e| Error::config("base_url", e))?;
        check_model(&self.model).map_err(|e| Error::config("model", e))?;
        if let Some(key) = &self.api_key {
            check_key(key).map_err(|e| Error::config("api_key", e))?;
        }
        for (name, m) in [
            ("models.reply", &self.models.reply),
            ("models.state_update", &self.models.state_update),
            ("models.summary", &self.models.summary),
            ("models.query", &self.models.query),
            ("models.initiate", &self.models.initiate),
            ("models.reflect", &self.models.reflect),
            ("models.embed", &self.models.embed),
        ] {
            if let Some(m) = m {
                check_model(m).map_err(|e| Error::config(name, e))?;
            }
        }
        for (name, ms) in [
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("read_timeout_ms", self.read_timeout_ms),
            ("total_timeout_ms", self.total_timeout_ms),
            ("breaker_cooldown_ms", self.breaker_cooldown_ms),
        ] {
            if ms == 0 {
                return Err(Error::config(name, "must be more than 0"));
            }
        }
        if self.max_retries > MAX_RETRIES {
            return Err(Error::config(
                "max_retries",
                format!(
                    "{} is more than the {MAX_RETRIES} allowed",
                    self.max_retries
                ),
            ));
        }
        if self.backoff_base_ms > self.backoff_max_ms {
            return Err(Error::config(
                "backoff_base_ms",
                format!(
                    "{} is more than backoff_max_ms ({})",
                    self.backoff_base_ms, self.backoff_max_ms
                ),
            ));
        }
        if self.max_response_bytes < 1024 {
            return Err(Error::config("max_response_bytes", "must be at least 1024"));
        }
        Ok(())
    }

    /// The model that answers `purpose`.
    pub fn model_for(&self, purpose: &Purpose) -> &str {
        let m = match purpose {
            Purpose::Reply { .. } => &self.models.reply,
            Purpose::StateUpdate => &self.models.state_update,
            Purpose::Summary => &self.models.summary,
            Purpose::Query => &self.models.query,
            Purpose::Initiate { .. } => {
                if self.models.initiate.is_some() {
                    &self.models.initiate
                } else {
                    &self.models.reply
                }
            }
            Purpose::Reflect { .. } => {
                if self.models.reflect.is_some() {
                    &self.models.reflect
                } else {
                    &self.models.reply
                }
            }
            Purpose::Classify { .. } => {
                if self.models.classify.is_some() {
                    &self.models.classify
                } else {
                    &self.models.summary
                }
            }
            Purpose::Think { .. } => {
                if self.models.think.is_some() {
                    &self.models.think
                } else {
                    &self.models.reply
                }
            }
        };
        m.as_deref().unwrap_or(&self.model)
    }

    /// The model that embeds.
    pub fn embed_model(&self) -> &str {
        self.models.embed.as_deref().unwrap_or(&self.model)
    }
}

fn check_model(m: &str) -> Result<(), String> {
    if m.trim().is_empty() {
        return Err("is empty".into());
    }
    if m.chars().any(char::is_control) {
        return Err(format!("{m:?} contains a control character"));
    }
    Ok(())
}

fn check_key(k: &str) -> Result<(), String> {
    if k.is_empty() {
        return Err("is empty; leave it unset when the server needs no key".into());
    }
    if !k.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(
            "holds a space, a line break or a character outside ASCII, which cannot go in an \
             HTTP header (the key is not shown)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rp_core::EntityId;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn the_environment_gives_url_model_key_and_fast_model() {
        let c = ClientConfig::from_vars(vars(&[
            (ENV_BASE_URL, " http://127.0.0.1:8080/v1 "),
            (ENV_MODEL, "smart"),
            (ENV_API_KEY, "sk-test"),
            (ENV_FAST_MODEL, "fast"),
        ]))
        .unwrap();
        assert_eq!(c.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(c.api_key.as_deref(), Some("sk-test"));
        assert_eq!(
            c.model_for(&Purpose::Reply {
                speaker: EntityId(1)
            }),
            "smart"
        );
        for p in [Purpose::StateUpdate, Purpose::Summary, Purpose::Query] {
            assert_eq!(c.model_for(&p), "fast");
        }
        // A character's first line goes to the smart model, as a reply does.
        let initiate = Purpose::Initiate {
            speaker: EntityId(1),
        };
        assert_eq!(c.model_for(&initiate), "smart");
        let mut own = c.clone();
        own.models.initiate = Some("opener".into());
        assert_eq!(own.model_for(&initiate), "opener");
        assert_eq!(c.embed_model(), "smart");
        assert_eq!(c.max_retries, DEFAULT_MAX_RETRIES);
        // An empty key is no key.
        let c = ClientConfig::from_vars(vars(&[
            (ENV_BASE_URL, "http://h"),
            (ENV_MODEL, "m"),
            (ENV_API_KEY, ""),
        ]))
        .unwrap();
        assert_eq!(c.api_key, None);
    }

    #[test]
    fn a_missing_or_malformed_variable_is_named() {
        for (pairs, names, says) in [
            (&[(ENV_MODEL, "m")][..], ENV_BASE_URL, "is not set"),
            (
                &[(ENV_BASE_URL, "  "), (ENV_MODEL, "m")],
                ENV_BASE_URL,
                "empty",
            ),
            (
                &[(ENV_BASE_URL, "localhost:8080"), (ENV_MODEL, "m")],
                ENV_BASE_URL,
                "not an http",
            ),
            (&[(ENV_BASE_URL, "http://h")], ENV_MODEL, "is not set"),
            (
                &[
                    (ENV_BASE_URL, "http://h"),
                    (ENV_MODEL, "m"),
                    (ENV_API_KEY, "sk bad\n"),
                ],
                ENV_API_KEY,
                "cannot go in an HTTP header",
            ),
            (
                &[
                    (ENV_BASE_URL, "http://h"),
                    (ENV_MODEL, "m"),
                    (ENV_FAST_MODEL, "a\u{7}"),
                ],
                ENV_FAST_MODEL,
                "control",
            ),
        ] {
            let e = ClientConfig::from_vars(vars(pairs)).unwrap_err();
            assert!(
                matches!(&e, Error::Config { what, .. } if what == names),
                "{e}"
            );
            assert!(e.to_string().contains(says), "{e}");
            assert!(!e.to_string().contains("sk bad"), "the key leaks: {e}");
        }
    }

    #[test]
    fn json_configs_default_and_refuse_unknown_fields() {
        let c = ClientConfig::from_json(
            r#"{"base_url": "http://h/v1", "model": "m", "models": {"summary": "s"}, "max_retries": 0}"#,
        )
        .unwrap();
        assert_eq!(c.model_for(&Purpose::Summary), "s");
        assert_eq!(c.max_retries, 0);
        assert_eq!(c.breaker_threshold, DEFAULT_BREAKER_THRESHOLD);
        assert_eq!(c.max_response_bytes, DEFAULT_MAX_RESPONSE_BYTES);
        assert_eq!(
            ClientConfig::from_json(&serde_json::to_string(&c).unwrap()).unwrap(),
            c
        );
        for (bad, says) in [
            (
                r#"{"base_url": "http://h", "model": "m", "retries": 3}"#,
                "unknown field `retries`",
            ),
            (
                r#"{"base_url": "http://h", "model": "m", "models": {"replies": "x"}}"#,
                "unknown field `replies`",
            ),
            (r#"{"model": "m"}"#, "missing field `base_url`"),
            (
                r#"{"base_url": "http://h", "model": "m", "read_timeout_ms": 0}"#,
                "read_timeout_ms",
            ),
            (
                r#"{"base_url": "http://h", "model": "m", "max_retries": 99}"#,
                "max_retries",
            ),
            (
                r#"{"base_url": "http://h", "model": "m", "backoff_base_ms": 5, "backoff_max_ms": 1}"#,
                "backoff_base_ms",
            ),
            (
                r#"{"base_url": "http://h", "model": "m", "max_response_bytes": 10}"#,
                "max_response_bytes",
            ),
            (r#"{"base_url": "ftp://h", "model": "m"}"#, "base_url"),
            (r#"{"base_url": "http://h", "model": ""}"#, "model"),
            ("[]", "client configuration"),
        ] {
            let e = ClientConfig::from_json(bad).unwrap_err();
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn debug_hides_the_key() {
        let c = ClientConfig::new("http://h", "m").with_api_key("sk-secret");
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("sk-secret") && shown.contains("<hidden>"),
            "{shown}"
        );
    }
}
