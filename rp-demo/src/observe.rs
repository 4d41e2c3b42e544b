//! [`Observed`]: a [`Generate`] that passes every call on to another and keeps a record of it
//! (purpose, the request's last message, the answer or the error), so the demo can tell a
//! state-update pass that was retried from one that was not, count tool calls, and show the
//! model's raw answers (`--show-updates`). The engine's own record of a turn (the log) keeps
//! only what replay needs.

use rp_core::turn::{EmbedRequest, Generate, GenerateRequest, GenerateResult, Purpose, TokenSink};
use rp_core::update::ActionCall;
use std::sync::Mutex;

/// One generation as the wrapped generator answered it.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// Why it was asked for.
    pub purpose: Purpose,
    /// The content of the request's last message (for a state-update retry: the problems the
    /// engine found in the first answer).
    pub last_message: String,
    /// The answer, or the generator's error.
    pub result: Result<GenerateResult, String>,
    /// Whether it was work between turns (a reflection, summaries of faded memories, or the
    /// tone of an answer to an initiation), not part of a turn.
    pub memory: bool,
}

impl Call {
    /// Whether it was a state-update request.
    pub fn is_update(&self) -> bool {
        self.purpose == Purpose::StateUpdate
    }
}

/// A generator that records the calls it passes on to `inner`.
pub struct Observed<'a> {
    inner: &'a dyn Generate,
    calls: Mutex<Vec<Call>>,
}

impl<'a> Observed<'a> {
    /// Wraps `inner`.
    pub fn new(inner: &'a dyn Generate) -> Observed<'a> {
        Observed {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The calls made since the last `take`, in order.
    pub fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[async_trait::async_trait]
impl Generate for Observed<'_> {
    async fn generate(
        &self,
        request: &GenerateRequest,
        sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        let result = self.inner.generate(request, sink).await;
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Call {
                purpose: request.purpose,
                last_message: request
                    .messages
                    .last()
                    .map(|m| m.content.clone())
                    .unwrap_or_default(),
                result: result.clone(),
                memory: matches!(
                    request.purpose,
                    Purpose::Reflect { .. } | Purpose::Classify { .. } | Purpose::Think { .. }
                ) || (request.purpose == Purpose::Summary && request.json_schema.is_some()),
            });
        result
    }

    async fn embed(&self, request: &EmbedRequest) -> Result<Vec<Vec<f32>>, String> {
        self.inner.embed(request).await
    }

    async fn act(&self, call: &ActionCall) -> Result<serde_json::Value, String> {
        self.inner.act(call).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rp_core::EntityId;
    use rp_core::turn::{ChatMessage, NoSink, Role, Sampling, ScriptedGenerator, block_on};

    fn request(purpose: Purpose, last: &str) -> GenerateRequest {
        GenerateRequest {
            purpose,
            messages: vec![
                ChatMessage::new(Role::System, "system"),
                ChatMessage::new(Role::User, last),
            ],
            params: Sampling::default(),
            json_schema: None,
            tools: Vec::new(),
        }
    }

    #[test]
    fn calls_are_passed_on_and_recorded_in_order() {
        let scripted = ScriptedGenerator::new("...");
        scripted.script(EntityId(2), ["Evening."]);
        let observed = Observed::new(&scripted);
        let reply = Purpose::Reply {
            speaker: EntityId(2),
        };
        let r = block_on(observed.generate(&request(reply, "Wren: hello"), &mut NoSink)).unwrap();
        assert_eq!(r.text, "Evening.");
        let _ = block_on(
            observed.generate(&request(Purpose::StateUpdate, "What changed?"), &mut NoSink),
        );
        let calls = observed.take();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].purpose, reply);
        assert_eq!(calls[0].last_message, "Wren: hello");
        assert_eq!(calls[0].result.as_ref().unwrap().text, "Evening.");
        assert!(!calls[0].is_update() && calls[1].is_update());
        assert_eq!(calls[1].last_message, "What changed?");
        assert!(observed.take().is_empty(), "take empties the record");
    }
}
