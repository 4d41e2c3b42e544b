//! `_rp._bench_native`: the Rust peer of the Python overhead benchmark
//! (`benches/python/overhead.py`, issue 8 item 8). Not part of the API: it is
//! not exported by `rp_engine`, and is there only so that the benchmark can
//! time the same operation in Rust, in the same process, on the same `World`.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use pyo3::prelude::*;
use rp_core::memory::RecallOptions;
use rp_core::turn::{
    Generate, GenerateRequest, GenerateResult, NoSink, TokenSink, TurnInput, TurnOptions,
};
use rp_core::{EntityId, Error};

use crate::world::World;

/// The benchmark's model: answers every request with the same text.
struct Fixed {
    reply: String,
    calls: AtomicU64,
}

#[async_trait::async_trait]
impl Generate for Fixed {
    async fn generate(
        &self,
        request: &GenerateRequest,
        _sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        black_box(request);
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(GenerateResult {
            text: self.reply.clone(),
            ..GenerateResult::default()
        })
    }
}

/// The Rust peer of ``benches/python/overhead.py``; not part of the API.
///
/// Runs ``op`` ``n`` times in Rust on ``world``'s engine, as a Rust host
/// calls rp-core: the GIL released and the World's lock taken once, then the
/// ``n`` calls, timed together. Returns ``(elapsed_ns, check)``:
///
/// - ``"head"``: ``Engine::head()``; ``check`` is the head;
/// - ``"recall"``: ``Engine::recall(speaker, query, now)`` with ``k`` and
///   the other options at ``World.recall``'s defaults; ``check`` is the
///   number of memories the last call found;
/// - ``"turn"``: ``Engine::run_turn_blocking`` with default options, the
///   input ``text`` said by ``speaker`` at ``now``, ``now + now_step``, ...,
///   and a generator answering ``reply`` to every request; ``check`` is the
///   number of replies.
#[pyfunction]
#[pyo3(
    name = "_bench_native",
    signature = (world, op, n, *, speaker = 0, query = "", now = 0, k = 10, text = "", reply = "", now_step = 0)
)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn bench_native(
    py: Python<'_>,
    world: &Bound<'_, World>,
    op: &str,
    n: u64,
    speaker: u64,
    query: &str,
    now: i64,
    k: usize,
    text: &str,
    reply: &str,
    now_step: i64,
) -> PyResult<(u64, u64)> {
    world.get().with_engine(py, |engine| match op {
        "head" => {
            let start = Instant::now();
            let mut head = 0;
            for _ in 0..n {
                head = black_box(black_box(&*engine).head());
            }
            Ok((elapsed_ns(start), head))
        }
        "recall" => {
            let options = RecallOptions {
                k,
                ..RecallOptions::default()
            };
            let speaker = EntityId(speaker);
            let start = Instant::now();
            let mut found = 0;
            for _ in 0..n {
                let recalled = engine.recall(speaker, black_box(query), now, &options)?;
                found = recalled.len() as u64;
                black_box(recalled);
            }
            Ok((elapsed_ns(start), found))
        }
        "turn" => {
            let generator = Fixed {
                reply: reply.to_owned(),
                calls: AtomicU64::new(0),
            };
            let start = Instant::now();
            let mut replies = 0;
            for i in 0..n as i64 {
                let input = TurnInput::say(EntityId(speaker), text, now + i * now_step);
                let outcome = engine.run_turn_blocking(
                    input,
                    TurnOptions::default(),
                    &generator,
                    &mut NoSink,
                )?;
                replies += outcome.replies.len() as u64;
            }
            Ok((elapsed_ns(start), replies))
        }
        other => Err(Error::Invalid {
            what: "benchmark operation",
            reason: format!("{other:?} is not \"head\", \"recall\" or \"turn\""),
        }),
    })
}

fn elapsed_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
