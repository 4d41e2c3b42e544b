//! The tavern demo plays: replies stream in, `/why` and `/prompt` explain them, a `$retry`
//! brings a character back on the next line, a second run resumes the story, `/rewind` undoes
//! it, and bad input gets a message and never a crash.
//!
//! These tests run the example's binary, which `cargo test -p rp-core` builds beside the test
//! binaries (`target/<profile>/examples/tavern`) before running them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The built example: test binaries live in `target/<profile>/deps/`, examples in
/// `target/<profile>/examples/`.
fn tavern() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary is in target/<profile>/deps");
    let bin = profile
        .join("examples")
        .join(format!("tavern{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing; `cargo test -p rp-core` builds it (a run narrowed with --test does not)",
        bin.display()
    );
    bin
}

/// What one run printed.
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

impl Run {
    fn says(&self, text: &str) -> &Self {
        assert!(
            self.stdout.contains(text),
            "expected {text:?} in the output:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    fn never_says(&self, text: &str) -> &Self {
        assert!(
            !self.stdout.contains(text),
            "did not expect {text:?} in the output:\n{}",
            self.stdout
        );
        self
    }

    fn ends_well(&self) -> &Self {
        assert_eq!(
            self.code,
            Some(0),
            "exit code; output:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        assert!(
            self.stderr.is_empty(),
            "nothing on stderr, got:\n{}",
            self.stderr
        );
        self
    }

    /// The head seq the run reported on leaving.
    fn head(&self) -> u64 {
        let at = self.stdout.rfind("head seq ").expect("a head seq") + "head seq ".len();
        let digits: String = self.stdout[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().expect("a number after \"head seq\"")
    }
}

/// Plays `input` (piped, so not a terminal) on the save at `save`.
fn play(save: &Path, input: &[u8]) -> Run {
    let mut child = Command::new(tavern())
        .arg(save)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_vec();
    // Written from a thread so a long output can never block the input.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("the example runs");
    match writer.join().expect("writer") {
        // A run that stops early (/quit, a refused save) may leave input unread.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("writing the input: {e}"),
        _ => {}
    }
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
    }
}

#[test]
fn a_line_gets_a_streamed_reply_and_why_and_prompt_explain_it() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("tavern.rp");
    play(
        &save,
        b"Tobias, what lights?\n/why Tobias\n/prompt Tobias\n/quit\nnever read\n",
    )
    .ends_well()
    .says("Created")
    .says("> Tobias, what lights?")
    .says("Tobias Reed: Lights, aye.")
    // /why: the decision, with its trace.
    .says("Tobias Reed weighed \"Tobias, what lights?\"")
    .says("→ responds")
    // /prompt: pieces by section, each with why it is there.
    .says("[identity]")
    .says("[dialogue]")
    .says("    Wren: Tobias, what lights?")
    .says("↳ a recent line the speaker witnessed")
    .says("↳ the speaker's edge to Wren, who is present")
    // /quit stops reading.
    .never_says("never read");
    assert!(save.is_file(), "the save was created");
}

#[test]
fn a_retry_brings_tobias_back_on_the_next_line_and_lore_shows_in_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let run = play(
        &dir.path().join("tavern.rp"),
        b"Do you know the Ferryman?\n/why Tobias\nAnd this letter's seal?\n/prompt Tobias\n",
    );
    run.ends_well()
        .says("Tobias Reed hesitates: $retry")
        .says("fired: $retry 30000")
        .says("→ not now; evaluate again in 30000 ms")
        .says("Tobias Reed comes back to it.")
        .says("Tobias Reed: ...You'd do well not to say that name so loud.")
        .says("Tobias Reed: A heron in black wax.")
        .says("[lore]")
        .says("the Ferryman: A boatman no one admits to having met.")
        .says("\"Ferryman\" was mentioned in what the speaker heard");
    // The wake-up reply comes before the answer to the new line.
    let back = run.stdout.find("that name so loud").unwrap();
    let seal = run.stdout.find("A heron in black wax").unwrap();
    assert!(back < seal, "{}", run.stdout);
}

#[test]
fn mira_at_the_bar_answers_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    play(
        &dir.path().join("tavern.rp"),
        b"/go bar\nWhat a night.\n/why Mira\nMira, a cider please.\n/state\n",
    )
    .ends_well()
    .says("You walk over to the bar")
    .says("within earshot: Mira Holt")
    .says("Mira Holt heard and said nothing")
    .says("→ stays silent")
    .says("Mira Holt: Cider or dark ale")
    .says("Wren (you): leaning on the counter")
    .says("Mira Holt → Wren: affinity -0.10")
    // Tobias, in the booth, is out of earshot: he would have had something to say.
    .never_says("Storm like this");
}

#[test]
fn a_second_run_resumes_the_story_and_rewind_undoes_it() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("tavern.rp");
    play(&save, b"Tobias, what lights?\n").ends_well();

    let resumed = play(&save, b"");
    resumed
        .ends_well()
        .says("Resumed")
        .says("branch main")
        .says("  Wren: Tobias, what lights?")
        .says("  Tobias Reed: Lights, aye.");
    let before = resumed.head();

    let run = play(
        &save,
        format!("Evening, Tobias.\n/rewind\n/rewind {before}\n/branches\n").as_bytes(),
    );
    run.ends_well()
        .says("Tobias Reed: Evening, stranger.")
        .says(&format!("/rewind {before} "))
        .says(&format!("to seq {before}"))
        .says("unsaid: Wren: Evening, Tobias.")
        .says("unsaid: Tobias Reed: Evening, stranger.")
        .says("kept as branch \"main~2\"")
        .says("  * main (head seq");
    assert_eq!(run.head(), before);

    // The rewind is in the save; the undone line waits on its branch.
    play(&save, b"/branches\n/why Tobias\n")
        .ends_well()
        .says(&format!("head seq {before}"))
        .says("Tobias Reed's last decision, from the log")
        .says("Tobias Reed: Lights, aye.")
        .never_says("Evening, Tobias.")
        .says("main~2");
}

#[test]
fn bad_commands_and_names_get_a_message_and_the_run_ends_well() {
    let dir = tempfile::tempdir().unwrap();
    play(
        &dir.path().join("tavern.rp"),
        b"/bogus\n/why Nobody\n/why\n/prompt Nobody\n/rewind abc\n/rewind 1\n/rewind 99999\n\
          /go cellar\n/go\n/switch nope\n/\n\xff\xfe broken\n/why Wren\n",
    )
    .ends_well()
    .says("There is no /bogus command")
    .says("No one here is called \"Nobody\"")
    .says("/why whom?")
    .says("/rewind takes a seq number")
    .says("Seq 1 is before the story begins")
    .says("Seq 99999 is ahead of the story")
    .says("There is no place called \"cellar\"")
    .says("/go where?")
    .says("There is no branch \"nope\"")
    .says("A command name follows the slash")
    .says("not UTF-8")
    .says("Wren is yours");
}

#[test]
fn a_file_that_is_not_a_save_is_refused_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("notes.txt");
    std::fs::write(&save, "Dear diary, the tavern was quiet tonight.\n").unwrap();
    let run = play(&save, b"hello\n");
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(run.stderr.starts_with("tavern: "), "{}", run.stderr);
}
