//! `Generate`: the host's model behind a trait, for hosts that would rather hand the engine a
//! model than answer each request themselves ([`super::run`] drives any machine through one).
//! Nothing here needs an async runtime: [`block_on`] runs a future on the calling thread.

use super::{ActionCall, EmbedRequest, GenerateRequest, GenerateResult, Purpose};
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// Where streamed tokens go as they arrive. Any `FnMut(&Purpose, &str)` is a sink.
pub trait TokenSink: Send {
    /// A piece of the text being generated for `purpose`.
    fn token(&mut self, purpose: &Purpose, text: &str);
}

impl<F: FnMut(&Purpose, &str) + Send> TokenSink for F {
    fn token(&mut self, purpose: &Purpose, text: &str) {
        self(purpose, text)
    }
}

/// A sink that drops every token.
pub struct NoSink;

impl TokenSink for NoSink {
    fn token(&mut self, _: &Purpose, _: &str) {}
}

/// The host's model. `generate` streams tokens into `sink` as they arrive and returns the
/// whole result; the engine does its bookkeeping only after it returns, so nothing delays the
/// tokens. An error abandons the turn (its input stays committed).
#[async_trait::async_trait]
pub trait Generate: Send + Sync {
    /// Generates for `request`.
    async fn generate(
        &self,
        request: &GenerateRequest,
        sink: &mut dyn TokenSink,
    ) -> std::result::Result<GenerateResult, String>;

    /// Vectors for `request.texts` (semantic recall). The default refuses: a generator that
    /// embeds overrides it.
    async fn embed(&self, request: &EmbedRequest) -> std::result::Result<Vec<Vec<f32>>, String> {
        let _ = request;
        Err("this generator does not embed; turn off `semantic`".into())
    }

    /// Carries out a host action a state-update pass reported (see
    /// `crate::update::ActionType`): `Ok` with what the game did (recorded), `Err` with why
    /// it refused (the report is recorded as rejected; the turn goes on). The default refuses:
    /// a host that declares actions overrides it.
    async fn act(&self, call: &ActionCall) -> std::result::Result<serde_json::Value, String> {
        Err(format!(
            "this host carries out no actions (asked for \"{}\")",
            call.name
        ))
    }
}

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to completion on the calling thread, parking while it waits.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return out,
            Poll::Pending => std::thread::park(),
        }
    }
}
