//! Opening a damaged save prints nothing: a panic inside the storage engine becomes a
//! `Corrupt` error, and the host's terminal sees neither the panic message nor a backtrace. A
//! panic hook the host installed still hears of every other panic.
//!
//! Panic hooks are per process, so each case runs in a child: this test binary re-executed
//! with `RP_QUIET_CHILD=<case>:<path>`, running only [`quiet_child`]. Without the variable
//! that test does nothing.

use rp_core::{Engine, ErrorKind};
use std::path::Path;
use std::process::Command;

const CHILD_ENV: &str = "RP_QUIET_CHILD";

/// Opens the save at `path` and prints the error's kind and text to stdout.
fn open_and_report(path: &Path) {
    match Engine::open(path) {
        Ok(_) => println!("opened"),
        Err(e) => println!("error {}: {e}", e.kind()),
    }
}

#[test]
fn quiet_child() {
    let Ok(arg) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (case, path) = arg.split_once(':').expect("case:path");
    let path = Path::new(path);
    match case {
        "plain" => open_and_report(path),
        "host-hook" => {
            std::panic::set_hook(Box::new(|info| {
                eprintln!("host hook: {}", info.payload_as_str().unwrap_or("?"));
            }));
            open_and_report(path);
            let r = std::panic::catch_unwind(|| panic!("the host's own panic"));
            assert!(r.is_err());
            open_and_report(path);
        }
        other => panic!("unknown case {other}"),
    }
}

/// A save whose first tree page is damaged so that redb panics reading it.
fn damaged_save(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("damaged.rp");
    drop(Engine::create(&path, "Inn", 0).expect("create"));
    let mut bytes = std::fs::read(&path).expect("read");
    bytes[4096] = 0xFF;
    std::fs::write(&path, &bytes).expect("write");
    path
}

/// Runs `case` in a child; returns its stdout and stderr.
fn run_child(case: &str, path: &Path) -> (String, String) {
    let exe = std::env::current_exe().expect("current_exe");
    let out = Command::new(exe)
        .args(["quiet_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{case}:{}", path.display()))
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn opening_a_damaged_save_prints_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = damaged_save(dir.path());
    let (stdout, stderr) = run_child("plain", &path);
    let corrupt = format!("error {}", ErrorKind::Corrupt);
    // The damage does reach the panic inside redb (not an error it returns).
    assert!(
        stdout.contains(&corrupt) && stdout.contains("the storage engine could not read it"),
        "{stdout}"
    );
    assert_eq!(stderr, "", "the terminal saw output");
}

#[test]
fn the_hosts_panic_hook_still_hears_other_panics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = damaged_save(dir.path());
    let (stdout, stderr) = run_child("host-hook", &path);
    let corrupt = format!("error {}", ErrorKind::Corrupt);
    assert_eq!(stdout.matches(&corrupt).count(), 2, "{stdout}");
    assert_eq!(stderr, "host hook: the host's own panic\n");
}
