//! rp-core's layers (docs/architecture.md), enforced: every `crate::…` path in the sources
//! (a `use` line or a path written inline) must point to the module's own layer or one below,
//! and no two modules may import each other, directly or round a longer circle. A failure
//! names the file and line of each arrow that breaks the map.
//!
//! The map is data ([`LAYERS`]); a new module must be placed in it, or the test fails and says
//! so. Comments are not read (a doc link may point anywhere).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// rp-core's top-level modules, from the ground up. A module may use its own layer and the
/// ones below; within a layer the arrows must not make a circle.
const LAYERS: &[&[&str]] = &[
    // The records: ids, entities, memories, what a generation and a query leave in the log;
    // errors; strict JSON reading.
    &["error", "json", "model"],
    // The fact language; the storage of the log.
    &["facts", "store"],
    // The log and the World it projects: events, apply, replay.
    &["log"],
    // Readers of the World: relationship queries, the memory index and recall, lore, drives.
    &["graph", "memory", "lore", "drives"],
    // A World bound to its store.
    &["engine"],
    // The contract of the sans-IO machines: requests, steps, `Generate`.
    &["machine"],
    // The machines, each on the ones before it in this list, and `job`, which holds them all.
    &[
        "story", "update", "scene", "turn", "skip", "query", "decay", "tick", "edit", "job",
    ],
    // World files: parsed, planned, applied through the engine.
    &["worldfile", "cards"],
];

/// One arrow: `from` uses `to` at `file:line`.
#[derive(Clone, Debug)]
struct Arrow {
    from: String,
    to: String,
    file: String,
    line: usize,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("rp-core/src is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`log/apply/mod.rs` → `log`, `skip.rs` → `skip`);
/// `None` for `lib.rs`.
fn module_of(relative: &Path) -> Option<String> {
    let first = relative
        .components()
        .next()?
        .as_os_str()
        .to_str()?
        .to_owned();
    if first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_owned())
}

/// The modules the crate root re-exports names from (`pub use engine::{Engine, …}`), so that
/// `crate::Engine` counts as an arrow to `engine`. Names of `pub use model::*` are the rest.
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut rest = lib;
    while let Some(i) = rest.find("pub use ") {
        rest = &rest[i + "pub use ".len()..];
        let end = rest.find(';').expect("a `pub use` ends with `;`");
        let (statement, after) = rest.split_at(end);
        rest = after;
        let Some((module, names)) = statement.split_once("::") else {
            continue;
        };
        let names = names.trim_matches(|c| c == '{' || c == '}');
        for name in names.split(',') {
            let name = name.trim();
            if !name.is_empty() && name != "*" {
                map.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    map
}

/// The text of `line` without its comment, if it is code at all.
fn code_of(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed.starts_with("//") {
        return "";
    }
    match line.find("//") {
        // A `//` inside a string is rare in rp-core's paths; cutting there can only hide a
        // `crate::` written after a URL in a string, which is no import.
        Some(i) => &line[..i],
        None => line,
    }
}

/// The modules named after `crate::` in `code`, including each of a grouped import
/// (`use crate::{log::World, model::Seq}`).
fn targets(
    code: &str,
    exports: &BTreeMap<String, String>,
    modules: &BTreeSet<String>,
) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `rp_crate::…` and the like
        }
        let mut paths = Vec::new();
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            paths.extend(group[..end].split(',').map(str::trim).map(str::to_owned));
        } else {
            paths.push(rest.to_owned());
        }
        for path in paths {
            let name: String = path
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() || name == "self" {
                continue;
            }
            if modules.contains(&name) {
                found.push(name);
            } else if let Some(module) = exports.get(&name) {
                found.push(module.clone());
            } else if name.chars().next().is_some_and(char::is_uppercase) {
                // `pub use model::*`: the records.
                found.push("model".to_owned());
            }
        }
    }
    found
}

fn arrows() -> (Vec<Arrow>, BTreeSet<String>) {
    let root = src();
    let lib = std::fs::read_to_string(root.join("lib.rs")).expect("lib.rs is readable");
    let exports = root_exports(&lib);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_of(f.strip_prefix(&root).expect("under src")))
        .collect();
    let mut arrows = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&root).expect("under src");
        let Some(from) = module_of(relative) else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file is readable");
        for (n, line) in text.lines().enumerate() {
            for to in targets(code_of(line), &exports, &modules) {
                if to != from {
                    arrows.push(Arrow {
                        from: from.clone(),
                        to,
                        file: format!("rp-core/src/{}", relative.display()),
                        line: n + 1,
                    });
                }
            }
        }
    }
    (arrows, modules)
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every arrow that points to a higher layer, as `file:line: from → to (…)`.
fn upward(arrows: &[Arrow]) -> Vec<String> {
    arrows
        .iter()
        .filter_map(|a| {
            let (from, to) = (layer_of(&a.from)?, layer_of(&a.to)?);
            (to > from).then(|| {
                format!(
                    "{}:{}: `{}` (layer {from}) uses `{}` (layer {to}), a layer above it",
                    a.file, a.line, a.from, a.to
                )
            })
        })
        .collect()
}

/// A circle of modules, if the arrows make one: each arrow of it with its file and line.
fn circle(arrows: &[Arrow]) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, BTreeMap<&str, &Arrow>> = BTreeMap::new();
    for a in arrows {
        next.entry(&a.from).or_default().entry(&a.to).or_insert(a);
    }
    // Depth-first search with the path kept: a module met again on the path closes a circle.
    fn visit<'a>(
        module: &'a str,
        next: &BTreeMap<&'a str, BTreeMap<&'a str, &'a Arrow>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(i) = path.iter().position(|m| *m == module) {
            let mut circle = path[i..].to_vec();
            circle.push(module);
            return Some(circle);
        }
        if !done.insert(module) {
            return None;
        }
        path.push(module);
        for to in next.get(module).into_iter().flat_map(|m| m.keys()) {
            if let Some(circle) = visit(to, next, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for start in next.keys() {
        if let Some(found) = visit(start, &next, &mut Vec::new(), &mut done) {
            return Some(
                found
                    .windows(2)
                    .map(|w| {
                        let a = next[w[0]][w[1]];
                        format!("{}:{}: `{}` uses `{}`", a.file, a.line, a.from, a.to)
                    })
                    .collect(),
            );
        }
    }
    None
}

#[test]
fn every_module_is_on_the_map() {
    let (arrows, modules) = arrows();
    // The reading works: the turn's use of the log is among the arrows it found.
    assert!(
        arrows.iter().any(|a| a.from == "turn" && a.to == "log"),
        "no arrow from turn to log was read"
    );
    let missing: Vec<_> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules not placed in LAYERS (rp-core/tests/layers.rs) and docs/architecture.md: {missing:?}"
    );
}

#[test]
fn no_module_uses_a_layer_above_it() {
    let (arrows, _) = arrows();
    let up = upward(&arrows);
    assert!(
        up.is_empty(),
        "imports against the layer map:\n{}",
        up.join("\n")
    );
}

#[test]
fn no_two_modules_use_each_other() {
    let (arrows, _) = arrows();
    if let Some(circle) = circle(&arrows) {
        panic!("modules that use each other:\n{}", circle.join("\n"));
    }
}

#[test]
fn the_check_sees_an_upward_import_and_a_circle() {
    let exports = root_exports("pub use engine::{Engine, EngineOptions};\npub use model::*;");
    let modules: BTreeSet<String> = ["log", "turn", "engine", "model"].map(str::to_owned).into();
    assert_eq!(
        targets(
            "use crate::{turn::Purpose, model::Seq};",
            &exports,
            &modules
        ),
        ["turn", "model"]
    );
    assert_eq!(
        targets("let e: &crate::Engine = x;", &exports, &modules),
        ["engine"]
    );
    assert_eq!(targets("crate::EntityId(3)", &exports, &modules), ["model"]);
    assert!(
        targets("/// [`crate::turn::Step`]", &exports, &modules).is_empty() || {
            // Comments are cut by `code_of`, not by `targets`.
            code_of("/// [`crate::turn::Step`]").is_empty()
        }
    );
    let arrow = |from: &str, to: &str, line| Arrow {
        from: from.into(),
        to: to.into(),
        file: format!("rp-core/src/{from}/x.rs"),
        line,
    };
    let up = upward(&[arrow("log", "turn", 7)]);
    assert_eq!(up.len(), 1);
    assert!(up[0].starts_with("rp-core/src/log/x.rs:7:"), "{up:?}");
    assert!(upward(&[arrow("turn", "log", 7)]).is_empty());
    let found = circle(&[arrow("turn", "scene", 1), arrow("scene", "turn", 2)]).unwrap();
    assert_eq!(found.len(), 2);
    assert!(circle(&[arrow("turn", "scene", 1), arrow("scene", "log", 2)]).is_none());
}
