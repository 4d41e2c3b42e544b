//! The tavern demo plays: replies stream in, `/why` and `/prompt` explain them, a `$retry`
//! brings a character back on the next line, Tobias left alone long enough speaks first
//! (`/wait 20m`, explained by `/drives` and `/why`), his plan (a rule) fires and `/rules`
//! shows it with what he learned, a second run resumes the story, `/rewind` undoes it, and bad
//! input gets a message and never a crash.
//!
//! With `--stats` it says what the session came to and that the save reopens and replays to
//! the world as played; with `RP_LLM_BASE_URL` set it plays on a model server (here a fake one
//! on 127.0.0.1) with the state-update pass on.
//!
//! These tests run the example's binary, which `cargo test -p rp-demo` builds beside the test
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
        "{} is missing; `cargo test -p rp-demo` builds it (a run narrowed with --test does not)",
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

/// Plays `input` (piped, so not a terminal) on the save at `save`, with the scripted voices
/// (whatever the environment of the test says about a model server).
fn play(save: &Path, input: &[u8]) -> Run {
    play_with(save, input, &[], None)
}

/// [`play`] with more arguments before the save, and the model server at `model` (a base URL).
fn play_with(save: &Path, input: &[u8], args: &[&str], model: Option<&str>) -> Run {
    let mut command = Command::new(tavern());
    for var in [
        "RP_LLM_BASE_URL",
        "RP_LLM_MODEL",
        "RP_LLM_API_KEY",
        "RP_LLM_FAST_MODEL",
        "RP_LLM_EMBED_MODEL",
    ] {
        command.env_remove(var);
    }
    if let Some(url) = model {
        command
            .env("RP_LLM_BASE_URL", url)
            .env("RP_LLM_MODEL", "fake-model");
    }
    let mut child = command
        .args(args)
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
    .says("↳ a line the speaker witnessed in its current scene")
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
fn left_alone_long_enough_tobias_speaks_first_and_drives_and_why_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let run = play(
        &dir.path().join("tavern.rp"),
        b"/drives Tobias\n/wait 20m\n/why Tobias\n/drives Wren\n/drives letter\n/wait soon\n",
    );
    run.ends_well()
        // /drives: energy, mode, debts, pressure against the threshold, the top candidate.
        .says("Tobias Reed's drives at day 1, 00:00:00:")
        .says("    energy 1.00, mode relaxed")
        .says("    social debt: Wren 0.00, Mira Holt 0.00 (out of earshot)")
        .says("    pressure 0.")
        .says(", threshold 0.")
        .says("personality: humor 0.60")
        .says("      Tobias Reed → Wren: pressure 0.")
        // The wait: he speaks up on his own, to Wren, and no one else answers.
        .says(": Tobias Reed speaks first, to you: social debt.)")
        .says("Tobias Reed: Quiet one, aren't you?")
        .says("(Spoken to you: answer, or let it be. /why Tobias says why.)")
        .says("(20 minutes passed: day 1, 00:20:00.)")
        // /why: the explanation kept from the wait.
        .says("Tobias Reed last spoke first at day 1, 00:")
        .says("pushed over by social_debt")
        .says("gate sheet        open (the sheet allows it)")
        .says("Wren is yours: players have no drives")
        .says("the sealed letter has no drives")
        .says("\"soon\" is not a duration; write one like 20m, 1h30m or 45s");
    // He spoke during the wait, not at once: left alone for a while.
    let waited = run.stdout.find("> /wait 20m").unwrap();
    let line = run.stdout.find("Tobias Reed: Quiet one").unwrap();
    assert!(waited < line, "{}", run.stdout);
    let at = run.stdout.find(": Tobias Reed speaks first").unwrap();
    let minute: u32 = run.stdout[at - 5..at - 3].parse().unwrap();
    assert!((5..20).contains(&minute), "{}", run.stdout);
}

#[test]
fn memories_show_their_stage_and_retention_beliefs_their_confidence_and_characters_reflect() {
    let dir = tempfile::tempdir().unwrap();
    // Enough of a conversation to reflect on (a character Wren leaves unanswered speaks up
    // less and less: docs/rules.md), then two days.
    let mut input =
        b"Evening, Tobias. Any news from the marsh?\n/beliefs Tobias\n/memories Tobias\n".to_vec();
    for _ in 0..24 {
        input.extend_from_slice(b"Tell me more about the lights, Tobias.\n");
    }
    input.extend_from_slice(b"/wait 48h\n/memories Tobias\n/memories Nobody\n");
    let run = play(&dir.path().join("tavern.rp"), &input);
    run.ends_well()
        // He heard Wren speak: he believes her there, and is sure of it.
        .says("What Tobias Reed believes, at day 1, 00:00:30:")
        .says("availability 1.00 (sure 100 %, seen, just now)")
        // Just said and heard: whole, fully kept.
        .says("Tobias Reed holds 2 memories: 2 whole, 0 summaries, 0 residues, 0 forgotten.")
        .says("[whole, retention 1.00] Wren: Evening, Tobias. Any news from the marsh?")
        .says("Since Tobias Reed last reflected: significance 0.6 of 13.5.")
        // He reflected on what he lived, and two days on the lines of closed scenes are kept
        // by their scenes' summaries.
        .says("Tobias Reed reflects: \"I keep thinking about what happened lately.\"")
        .says("[in its scene's summary, retention 0.")
        .says(", a reflection on memory#")
        .says("No one here is called \"Nobody\"");
}

#[test]
fn rules_show_tobias_plan_firing_and_what_he_learned_when_no_one_answered() {
    let dir = tempfile::tempdir().unwrap();
    let run = play(
        &dir.path().join("tavern.rp"),
        b"/rules Tobias\n/wait 2h\n/rules Tobias\n/why Tobias\n/rules Wren\n/rules letter\n\
          /rules Nobody\n/rules\n",
    );
    run.ends_well()
        // The plan the demo gives him in a new save, untouched yet.
        .says("Tobias Reed's rules, at day 1, 00:00:00 (1 of 64):")
        .says(" ask the traveller about her sealed letter\n")
        .says("      on:     once, at day 1, 01:00:00\n")
        .says("      does:   means to talk with Wren about the sealed letter she carries")
        .says("      weight: 0.80 now (0.80 at day 1, 00:00:00); forgotten unused at day 29, 00:00:00")
        .says("      never used, from the host")
        // The wait: it fires at its hour; each line of his that Wren leaves unanswered
        // teaches him something.
        .says("(day 1, 01:00:00: Tobias Reed acts on a rule: ask the traveller about her sealed letter. /rules Tobias lists them.)")
        .says("Tobias Reed learns from it: Wren did not answer within 30 min. /why Tobias says what it changed.)")
        // Spent, used once, its weight moved by what he learned; and what he learned.
        .says("      on:     once, at day 1, 01:00:00 (spent at day 1, 01:00:00)")
        .says("      used once, at day 1, 01:00:00, from the host")
        .says("  Learned: Tobias Reed speaks up less to Wren (learned × 0.")
        .says(" since Wren twice did not answer.")
        // /why: the explanation of his last initiation carries the learned factors.
        .says("(learned × 0.")
        .says("      learned: Tobias Reed speaks up less to Wren")
        .says("Wren is yours: players hold no rules")
        .says("the sealed letter holds no rules")
        .says("No one here is called \"Nobody\"")
        .says("/rules whom?");
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

#[test]
fn stats_count_the_session_and_check_that_the_save_reopens_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("tavern.rp");
    let run = play_with(
        &save,
        b"Tobias, what lights?\nDo you know the Ferryman?\n/wait\n",
        &["--stats"],
        None,
    );
    run.ends_well()
        .says("Session statistics:")
        // Three turns: two lines and the wake-up of Tobias's $retry.
        .says("  turns                 3")
        .says("  replies               2")
        // The scripted voices run no state-update pass.
        .says("  state-update passes   0")
        .says("save reopened         identical to the live world (branch main, head seq")
        .says("save replayed         identical to the live world (")
        .says("wall time");
}

#[test]
fn a_wrong_option_is_refused_with_the_usage_and_help_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("tavern.rp");
    let run = play_with(&save, b"", &["--bogus"], None);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stderr.contains("unknown option --bogus"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("usage: tavern"), "{}", run.stderr);
    assert!(!save.exists(), "nothing was played");
    play_with(&save, b"", &["--help"], None)
        .ends_well()
        .says("--show-updates")
        .says("RP_LLM_BASE_URL")
        .says("/rewind SEQ")
        .says("/wait DURATION")
        .says("/drives NAME");
}

/// The demo on a model server (rp-demo's `llm` feature).
#[cfg(feature = "llm")]
mod on_a_model {
    use super::*;
    use serde_json::{Value, json};
    use std::io::{BufRead, BufReader, Read};
    use std::net::{TcpListener, TcpStream};
    use std::sync::{Arc, Mutex};

    /// A model server on 127.0.0.1 that answers as llama-cpp-python's does: 500 to a
    /// `json_schema` response format, `json_object` with a schema accepted. Replies are one line;
    /// the `n`-th state-update answer (0-based) is `updates[n]`. Every request body is kept.
    struct FakeModel {
        url: String,
        requests: Arc<Mutex<Vec<Value>>>,
    }

    impl FakeModel {
        fn start(updates: &'static [&'static str]) -> FakeModel {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let url = format!("http://{}/v1", listener.local_addr().unwrap());
            let requests = Arc::new(Mutex::new(Vec::new()));
            let kept = requests.clone();
            std::thread::spawn(move || {
                let mut answered = 0;
                for conn in listener.incoming() {
                    let Ok(mut conn) = conn else { return };
                    let Some(body) = read_body(&mut conn) else {
                        continue;
                    };
                    kept.lock().unwrap().push(body.clone());
                    let (status, answer) = match body["response_format"]["type"].as_str() {
                        None => (200, completion("Aye. Green lights, low over the reeds.")),
                        Some("json_schema") => (
                            500,
                            json!({"error": {"message": "response_format.type: Input should be 'text' or 'json_object'"}}),
                        ),
                        Some(_) => {
                            let text = updates
                                .get(answered)
                                .copied()
                                .unwrap_or("{\"reports\": []}");
                            answered += 1;
                            (200, completion(text))
                        }
                    };
                    let body = answer.to_string();
                    let _ = write!(
                        conn,
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
            });
            FakeModel { url, requests }
        }

        fn requests(&self) -> Vec<Value> {
            self.requests.lock().unwrap().clone()
        }
    }

    fn completion(text: &str) -> Value {
        json!({"model": "fake-model", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
    }

    /// The JSON body of one HTTP request.
    fn read_body(conn: &mut TcpStream) -> Option<Value> {
        let mut reader = BufReader::new(conn.try_clone().ok()?);
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok()?;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
        serde_json::from_slice(&body).ok()
    }

    #[test]
    fn on_a_model_server_the_state_update_pass_runs_and_stats_count_its_outcomes() {
        // Turn 1: prose around the JSON (refused), then one valid report and one about nobody.
        // Turn 2: valid the first time.
        let model = FakeModel::start(&[
            "Sure! {\"reports\": []}",
            "{\"reports\": [{\"type\": \"feeling\", \"who\": \"Tobias Reed\", \"toward\": \"Wren\", \"affinity\": \"warmer\"}, {\"type\": \"learned\", \"who\": \"Tobias Reed\", \"about\": \"the Ferrymen\", \"fact\": \"He is real.\"}]}",
            "{\"reports\": [{\"type\": \"state\", \"who\": \"Tobias Reed\", \"mood\": \"curious\"}]}",
        ]);
        let dir = tempfile::tempdir().unwrap();
        let save = dir.path().join("tavern.rp");
        let run = play_with(
            &save,
            b"Tobias, what lights?\nEvening, Tobias.\n/state\n",
            &["--stats", "--show-updates"],
            Some(&model.url),
        );
        run.ends_well()
            .says("The characters speak through the model at http://127.0.0.1:")
            .says("Tobias Reed: Aye. Green lights, low over the reeds.")
            // --show-updates: the raw answers, the problems fed back, every report's fate.
            .says("[update] answer 1: Sure! {\"reports\": []}")
            .says("[update] asked again: That answer could not be used:")
            .says("[update] applied: {\"type\": \"feeling\"")
            .says("because: there is no \"the Ferrymen\"")
            .says("(State update: 2 reports, 1 applied, 1 rejected; the first answer was refused and asked again.)")
            .says("(State update: 1 report, 1 applied, 0 rejected.)")
            // The reports changed the world.
            .says("mood curious")
            .says("Tobias Reed → Wren: affinity")
            .says("  turns                 2")
            .says("  replies               2")
            .says("  state-update passes   2")
            .says("  retried               1")
            .says("  valid first time      1")
            .says("  valid after retry     0")
            .says("  rejected after retry  1 passes (1 reports)")
            .says("  reports applied       2")
            .says("  rejected after retry  1 passes (1 reports)\n                          unknown name: 1 (e.g. there is no \"the Ferrymen\")\n")
            .says("save reopened         identical to the live world")
            .says("save replayed         identical to the live world");
        // Replies go without a response format; state updates fall back from json_schema to
        // json_object with the schema (which llama-cpp-python turns into a grammar).
        let requests = model.requests();
        let formats: Vec<Option<&str>> = requests
            .iter()
            .map(|r| r["response_format"]["type"].as_str())
            .collect();
        assert_eq!(
            formats,
            [
                None,
                Some("json_schema"),
                Some("json_object"),
                Some("json_object"),
                None,
                Some("json_object"),
            ],
            "{requests:#?}"
        );
        for r in requests
            .iter()
            .filter(|r| r["response_format"]["type"] == "json_object")
        {
            assert!(
                r["response_format"]["schema"]["properties"]["reports"].is_object(),
                "{r:#}"
            );
            assert_eq!(r["max_tokens"], rp_demo::UPDATE_MAX_TOKENS);
        }
        assert_eq!(requests[0]["max_tokens"], rp_demo::REPLY_MAX_TOKENS);
    }

    #[test]
    fn a_model_server_that_is_down_fails_the_turn_and_the_session_goes_on() {
        // A port nothing listens on: bound, then closed.
        let url = {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}/v1", listener.local_addr().unwrap())
        };
        let dir = tempfile::tempdir().unwrap();
        let run = play_with(
            &dir.path().join("tavern.rp"),
            b"Tobias, what lights?\n/state\n",
            &["--stats"],
            Some(&url),
        );
        run.ends_well()
            .says("Error: ")
            .says("Wren (you)")
            .says("  turns failed          1")
            .says("save replayed         identical to the live world");
    }
}

#[test]
fn a_card_brought_in_stands_in_the_booth_and_greets_you() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("aria.json");
    std::fs::write(
        &card,
        r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Aria Vell",
        "description":"{{char}} is a bard with a cracked lute.","first_mes":"*tunes her lute* Evening, {{user}}.",
        "extensions":{},"character_book":{"entries":[{"keys":["lute"],"content":"Aria's lute was her mother's.","enabled":true}]}}}"#,
    )
    .unwrap();
    let run = play_with(
        &dir.path().join("tavern.rp"),
        b"Aria, where is your lute from?\n",
        &["--card", card.to_str().unwrap()],
        None,
    );
    run.ends_well()
        .says("Aria Vell joins you in the booth (from ")
        .says("Aria Vell: *tunes her lute* Evening, Wren.")
        .says("within earshot: Tobias Reed, Aria Vell");
    let missing = play_with(
        &dir.path().join("other.rp"),
        b"",
        &["--card", dir.path().join("nope.png").to_str().unwrap()],
        None,
    );
    assert_ne!(missing.code, Some(0));
    assert!(missing.stderr.contains("nope.png"), "{}", missing.stderr);
}

#[test]
fn a_reply_is_swiped_and_chosen_and_past_lines_edited_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("tavern.rp");
    play(
        &save,
        b"Tobias, what lights?\n/swipe\n/choose 1\n/choose 9\n/edit\n/delete\n/edit 99999 x\n",
    )
    .ends_well()
    .says("Tobias Reed: Lights, aye.")
    // /swipe: the alternatives, the line first and marked.
    .says("  * 0: Lights, aye.")
    .says("(Alternative 1 is new; /choose 1 makes it the line.)")
    // /choose 1: the new one is the line now.
    .says("  * 1: ")
    .says("alternative 9 of line")
    // /edit and /delete alone list the lines by seq.
    .says("/edit SEQ TEXT; the lines by seq:")
    .says("/delete SEQ; the lines by seq:")
    .says("Seq 99999 is not a line of this branch");
}
