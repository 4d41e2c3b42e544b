//! [`Args`]: the demo's command line (`tavern [--stats] [--show-updates] [SAVE]`) and its
//! [`USAGE`].

use crate::HELP;
use std::path::PathBuf;

/// What `tavern --help` and a wrong argument print above the commands.
pub const USAGE: &str = "\
usage: tavern [--stats] [--show-updates] [--card FILE] [SAVE]   (default SAVE: tavern.rp here)

  --stats          at exit, print turns, replies, state-update passes by outcome (with the
                   reasons of rejected reports) and whether the save reopens and replays to
                   the world as played
  --show-updates   print each state-update pass's raw answers and every report's fate
  --card FILE      bring a SillyTavern character card (JSON or PNG) into the booth; it greets
                   you with its first message (docs/cards.md)

With RP_LLM_BASE_URL and RP_LLM_MODEL set (RP_LLM_API_KEY if the server wants one), the
characters speak through that OpenAI-compatible server, with the state-update pass on.";

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    /// The save to resume or create (`tavern.rp` in the working directory by default).
    pub save: PathBuf,
    /// At exit, print what the session came to and check the save (`--stats`).
    pub stats: bool,
    /// Print each state-update pass's raw answers and every report's fate (`--show-updates`).
    pub show_updates: bool,
    /// A character card to bring into the booth (`--card FILE`).
    pub card: Option<PathBuf>,
}

impl Args {
    /// Reads the process's command line ([`Args::parse`]).
    pub fn from_env() -> Result<Option<Args>, String> {
        Args::parse(std::env::args().skip(1))
    }

    /// Reads `args` (the command line without the program's name). `None` after printing the
    /// usage and the commands (`-h`, `--help`); an error, with the usage, for an unknown option
    /// or a second save.
    ///
    /// ```
    /// let args = rp_demo::Args::parse(["--stats", "my.rp"].map(String::from)).unwrap().unwrap();
    /// assert!(args.stats && !args.show_updates);
    /// assert_eq!(args.save, std::path::Path::new("my.rp"));
    /// assert!(rp_demo::Args::parse(["--loud".to_string()]).is_err());
    /// ```
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
        let mut parsed = Args {
            save: PathBuf::from("tavern.rp"),
            stats: false,
            show_updates: false,
            card: None,
        };
        let mut save = None;
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--stats" => parsed.stats = true,
                "--card" => match args.next() {
                    Some(file) => parsed.card = Some(PathBuf::from(file)),
                    None => return Err(format!("--card needs a file\n\n{USAGE}")),
                },
                "--show-updates" => parsed.show_updates = true,
                "-h" | "--help" => {
                    println!("{USAGE}\n\n{HELP}");
                    return Ok(None);
                }
                a if a.starts_with('-') => return Err(format!("unknown option {a}\n\n{USAGE}")),
                _ if save.is_some() => return Err(format!("one save at most\n\n{USAGE}")),
                _ => save = Some(PathBuf::from(arg)),
            }
        }
        if let Some(save) = save {
            parsed.save = save;
        }
        Ok(Some(parsed))
    }
}
