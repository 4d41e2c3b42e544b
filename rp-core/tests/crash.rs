//! Process crashes: a child process appending turns to a save file is killed with SIGKILL at
//! random moments, over and over on the same file. Every reopen must succeed and hold exactly
//! the batches committed so far: every batch the child reported, at most the one it was
//! writing, and never part of a batch.
//!
//! The child is this test binary re-executed with `RP_CRASH_CHILD=<path>`, running only
//! [`crash_child`]. Without the variable that test does nothing.
#![cfg(unix)]

mod support;

use rp_core::Engine;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::{Reference, Rng, WORLD_NAME, batch, batches_at, options};

const CHILD_ENV: &str = "RP_CRASH_CHILD";
/// How many kill cycles the parent runs.
const CYCLES: u32 = 60;
/// The fewest cycles that must end in a SIGKILL (rather than the child finishing first).
const MIN_KILLS: u32 = 50;
/// A child stops by itself after this many batches (it is normally killed long before).
const CHILD_BATCHES: u64 = 400;
/// Snapshots every this many events, so recovery also goes through the snapshot path.
const SNAPSHOT_EVERY: u64 = 9;

/// The child: opens the save, finds where the log ends and appends batch after batch, printing
/// `committed k` once `append` has returned (the batch is then on stable storage).
#[test]
fn crash_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut engine = Engine::open_with(&path, options(SNAPSHOT_EVERY))
        .unwrap_or_else(|e| panic!("child: open failed: {e}"));
    let head = engine.head();
    let first =
        batches_at(head).unwrap_or_else(|| panic!("child: head {head} falls inside a batch"));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "\nready {first}").expect("stdout");
    out.flush().expect("stdout");
    for k in first..first + CHILD_BATCHES {
        let events = batch(k, engine.world());
        engine
            .append(events)
            .unwrap_or_else(|e| panic!("child: append of batch {k} failed: {e}"));
        writeln!(out, "committed {k}").expect("stdout");
        out.flush().expect("stdout");
    }
}

enum Line {
    Ready(u64),
    Committed(u64),
}

fn parse(line: &str) -> Option<Line> {
    if let Some(at) = line.find("committed ") {
        return line[at + 10..].trim().parse().ok().map(Line::Committed);
    }
    if let Some(at) = line.find("ready ") {
        return line[at + 6..].trim().parse().ok().map(Line::Ready);
    }
    None
}

fn spawn_child(path: &std::path::Path, stderr: &std::path::Path) -> Child {
    let exe = std::env::current_exe().expect("current_exe");
    Command::new(exe)
        .args([
            "crash_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(CHILD_ENV, path)
        .env_remove("RUST_TEST_THREADS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).expect("stderr file"))
        .spawn()
        .expect("spawn the child")
}

#[test]
fn sigkill_at_random_moments_keeps_whole_committed_batches() {
    let seed = support::seed("sigkill_at_random_moments_keeps_whole_committed_batches");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("crash.rp");
    let stderr_path = dir.path().join("child.stderr");
    drop(Engine::create_with(&path, WORLD_NAME, 0, options(SNAPSHOT_EVERY)).expect("create"));

    let mut reference = Reference::new();
    // Batches 0..confirmed were reported committed by some child.
    let mut confirmed = 0u64;
    // Batches found on disk at the last reopen.
    let mut on_disk = 0u64;
    let mut kills = 0u32;
    let mut unreported = 0u32;
    let mut killed_before_ready = 0u32;
    let started = Instant::now();

    for cycle in 0..CYCLES {
        let ctx = format!("seed {seed}, cycle {cycle}");
        let mut child = spawn_child(&path, &stderr_path);
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(l) = parse(&line)
                    && tx.send(l).is_err()
                {
                    break;
                }
            }
        });

        // Pick the moment: a quarter of the time while the child starts, opens and recovers
        // the file (redb repairs after a crash), otherwise a few commits into its run, at a
        // random offset into the next commit.
        let mut reported = Vec::new();
        let mut ready = None;
        if rng.chance(1, 4) {
            std::thread::sleep(Duration::from_micros(rng.below(40_000)));
        } else {
            let wanted = 1 + rng.below(6);
            let mut seen = 0;
            while seen < wanted {
                match rx.recv_timeout(Duration::from_secs(20)) {
                    Ok(Line::Ready(k)) => ready = Some(k),
                    Ok(Line::Committed(k)) => {
                        reported.push(k);
                        seen += 1;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let _ = child.kill();
                        panic!("{ctx}: the child made no progress for 20 s");
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            std::thread::sleep(Duration::from_micros(rng.below(6_000)));
        }
        let _ = child.kill(); // SIGKILL
        let status = child.wait().expect("wait for the child");
        reader.join().expect("reader thread");
        for l in rx.try_iter() {
            match l {
                Line::Ready(k) => ready = Some(k),
                Line::Committed(k) => reported.push(k),
            }
        }
        match status.signal() {
            Some(libc::SIGKILL) => kills += 1,
            _ if status.success() => {}
            _ => panic!(
                "{ctx}: the child failed ({status}):\n{}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            ),
        }
        if ready.is_none() {
            killed_before_ready += 1;
        }
        if let Some(start) = ready {
            assert_eq!(
                start, confirmed,
                "{ctx}: the child found a different log from the one the parent checked"
            );
        }
        for (i, k) in reported.iter().enumerate() {
            let expected = ready.unwrap_or(0) + i as u64;
            assert_eq!(
                *k, expected,
                "{ctx}: the child reported batches out of order"
            );
        }
        if let Some(last) = reported.last() {
            confirmed = confirmed.max(last + 1);
        }

        let engine = Engine::open(&path)
            .unwrap_or_else(|e| panic!("{ctx}: reopening after SIGKILL failed: {e}"));
        let m = reference.check(&engine, &ctx);
        assert!(
            m >= confirmed,
            "{ctx}: batches {m}..{confirmed} were reported committed but are gone"
        );
        assert!(
            m <= confirmed + 1,
            "{ctx}: {m} batches on disk, but only {confirmed} were reported (at most one more \
             can be in flight)"
        );
        assert!(
            m >= on_disk,
            "{ctx}: {m} batches on disk, fewer than the {on_disk} found before"
        );
        if m > confirmed {
            unreported += 1;
        }
        on_disk = m;
        confirmed = m; // an unreported batch that is on disk is committed too
        drop(engine);
    }

    eprintln!(
        "{CYCLES} cycles, {kills} SIGKILLs ({killed_before_ready} before the child was ready, \
         {unreported} with a batch committed but not yet reported), {on_disk} batches, {:?}",
        started.elapsed()
    );
    assert!(
        kills >= MIN_KILLS,
        "seed {seed}: only {kills} of {CYCLES} cycles ended in a SIGKILL"
    );
    // The file still takes new turns after all that.
    let mut engine = Engine::open_with(&path, options(SNAPSHOT_EVERY)).expect("final open");
    let events = batch(on_disk, engine.world());
    engine.append(events).expect("append after the crashes");
    assert_eq!(reference.check(&engine, "final"), on_disk + 1);
}
