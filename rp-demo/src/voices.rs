//! [`Voices`]: who speaks for the characters. By default the [`ScriptedLines`]; with
//! `RP_LLM_BASE_URL` set (and the `llm` feature, on by default), a [`Model`]: rp-llm's client
//! of an OpenAI-compatible server, on which the turns also run the state-update pass
//! ([`crate::model_options`]).

use crate::ScriptedLines;
use rp_core::turn::{Generate, ScriptedGenerator};
use rp_core::{EntityId, World};
use std::collections::{BTreeMap, HashSet};

/// Who speaks for the characters.
pub enum Voices {
    /// Each character's scripted lines, picked per turn from what it heard.
    Scripted(ScriptedLines),
    /// A model server.
    Model(Model),
}

impl Voices {
    /// The generator that speaks for the characters now: the model's, or the scripted lines
    /// picked from what each heard (`heard`) and has said (`said`), kept in `scripted`.
    pub fn speaking<'a>(
        &'a self,
        world: &World,
        heard: &BTreeMap<EntityId, String>,
        said: &BTreeMap<EntityId, HashSet<String>>,
        scripted: &'a mut Option<ScriptedGenerator>,
    ) -> &'a dyn Generate {
        match self {
            Voices::Model(m) => m.generator.as_ref(),
            Voices::Scripted(lines) => scripted.insert(lines.generator(world, heard, said)),
        }
    }
}

/// The model server's client: what the characters speak through instead of their scripts.
pub struct Model {
    /// The client.
    pub generator: Box<dyn Generate>,
    /// Where it is and which model answers, for the player.
    pub about: String,
}

/// Whether `RP_LLM_BASE_URL` is set (to something).
fn model_wanted() -> bool {
    std::env::var_os("RP_LLM_BASE_URL").is_some_and(|v| !v.to_string_lossy().trim().is_empty())
}

impl Model {
    /// The client of the server at `RP_LLM_BASE_URL` (model `RP_LLM_MODEL`, key
    /// `RP_LLM_API_KEY`: rp-llm's `OpenAiClient::from_env`), or `None` when it is not set. An
    /// error: a server named but not usable (no model given, a malformed URL).
    #[cfg(feature = "llm")]
    pub fn from_env() -> Result<Option<Model>, rp_llm::Error> {
        if !model_wanted() {
            return Ok(None);
        }
        let client = rp_llm::OpenAiClient::from_env()?;
        let config = client.config();
        let about = format!("{} (model {})", config.base_url, config.model);
        Ok(Some(Model {
            generator: Box::new(client),
            about,
        }))
    }

    /// `None`: this build has no model client (rp-demo's `llm` feature is off). An error when
    /// `RP_LLM_BASE_URL` is set anyway, rather than playing the scripts unasked.
    #[cfg(not(feature = "llm"))]
    pub fn from_env() -> Result<Option<Model>, String> {
        if model_wanted() {
            return Err(
                "RP_LLM_BASE_URL is set, but this build of the demo has no model client \
                 (rp-demo's `llm` feature is off); unset it to play the scripted voices"
                    .into(),
            );
        }
        Ok(None)
    }
}
