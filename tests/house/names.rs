//! A file's name says its concern, and no other concern goes by it (issue 38): each agent's
//! folder uses the same names as the others for the same concerns (`payload.rs`,
//! `contract.rs`, `script.rs`), and outside those folders a name is used once, so that
//! `stream.rs`, `turn.rs` or `records.rs` never again name two different things.

use std::collections::BTreeMap;
use std::path::Path;

/// Names any folder may use: its own module, and its tests.
const ANY_FOLDER: &[&str] = &["mod.rs", "tests.rs"];

/// Files of the CLI named, as all of its files are, after the command they parse, where that
/// command is the source's module of the same name: one concern at its two ends.
const COMMAND_AND_MODULE: &[(&str, &str)] = &[("cli/doctor.rs", "sources/command_hooks/doctor.rs")];

const HOOKS: &str = "sources/command_hooks/";

/// The one name an agent's folder gives each of these concerns, and the names the same concern
/// went by in other folders before (issue 38: "the same file names for the same concerns").
const AGENT_CONCERNS: &[(&str, &[&str])] = &[
    // Sub-agents: children opened under the call that started them.
    (
        "subagents.rs",
        &["agents.rs", "sub_agents.rs", "children.rs"],
    ),
    // How a turn ends: the held stop, its grace, the next prompt.
    ("ends.rs", &["stops.rs", "turns.rs", "ending.rs"]),
    // The agent's model calls, as its files or hooks give them.
    ("models.rs", &["messages.rs", "model_calls.rs", "calls.rs"]),
    // The agent's tool calls.
    ("tools.rs", &["tool_calls.rs"]),
];

/// Files in an agents' folder named for a concern [`AGENT_CONCERNS`] names otherwise.
fn synonyms(files: &[String], agents: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for f in files {
        let Some((folder, name)) = f.strip_prefix(HOOKS).and_then(|r| r.split_once('/')) else {
            continue;
        };
        if !agents.contains(&folder) {
            continue;
        }
        for (one, others) in AGENT_CONCERNS {
            if others.contains(&name) {
                found.push(format!("{f}: the agents call this concern {one}"));
            }
        }
    }
    found
}

/// The homonyms among `files` (paths under `src/`, `/`-separated), given the agents' folder
/// names, each said in a line:
/// - a file under `src/sources/` outside the agents' folders shares its name with no other
///   file under `src/` outside them (but for [`ANY_FOLDER`] and [`COMMAND_AND_MODULE`]);
/// - no file in an agent's folder is named as a shared module of `command_hooks/` (a file at
///   any depth outside the agents' folders and the conformance suite's, or a folder that is
///   not an agent's), so that
///   `super::records` and `crate::sources::command_hooks::engine::records` never mean two
///   things.
fn homonyms(files: &[String], agents: &[&str]) -> Vec<String> {
    let in_agent = |f: &str| {
        f.strip_prefix(HOOKS)
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(folder, _)| agents.contains(&folder))
    };
    let name = |f: &str| f.rsplit('/').next().unwrap_or(f).to_string();
    let mut found = Vec::new();

    let mut shared: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for f in files.iter().filter(|f| !in_agent(f)) {
        if !ANY_FOLDER.contains(&name(f).as_str()) {
            shared.entry(name(f)).or_default().push(f);
        }
    }
    for (n, paths) in &shared {
        let sanctioned = |a: &str, b: &str| {
            COMMAND_AND_MODULE
                .iter()
                .any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
        };
        let clash = paths.iter().any(|a| {
            a.starts_with("sources/") && paths.iter().any(|b| a != b && !sanctioned(a, b))
        });
        if clash {
            found.push(format!("{n}: {}", paths.join(", ")));
        }
    }

    let beside: Vec<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix(HOOKS))
        .flat_map(|rest| match rest.split_once('/') {
            None => vec![rest.to_string()],
            // The conformance suite names its files for the promise each states, as the
            // agents name theirs for the same concerns.
            Some((folder, _)) if folder == "conformance" => vec![format!("{folder}.rs")],
            Some((folder, _)) if !agents.contains(&folder) => {
                vec![format!("{folder}.rs"), name(rest)]
            }
            Some(_) => Vec::new(),
        })
        .filter(|n| !ANY_FOLDER.contains(&n.as_str()))
        .collect();
    for f in files.iter().filter(|f| in_agent(f)) {
        if beside.contains(&name(f)) {
            found.push(format!("{f}: named as the shared module beside its folder"));
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Every `.rs` file under `dir`, as a path from `root` with `/` between its parts.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap();
            let parts: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
            out.push(parts.join("/"));
        }
    }
}

#[test]
fn no_two_concerns_go_by_one_file_name() {
    use albedo_otel::sources::command_hooks::agent::Agent;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    assert!(files.len() > 100, "too few files read: {files:?}");
    let agents: Vec<&str> = Agent::ALL
        .into_iter()
        .map(|a| a.spec().folder_name())
        .collect();
    let found = homonyms(&files, &agents);
    assert!(
        found.is_empty(),
        "one file name for two concerns (rename one to say what it holds): {found:#?}"
    );
}

#[test]
fn every_agent_folder_names_a_concern_as_the_others_do() {
    use albedo_otel::sources::command_hooks::agent::Agent;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    let agents: Vec<&str> = Agent::ALL
        .into_iter()
        .map(|a| a.spec().folder_name())
        .collect();
    assert_eq!(synonyms(&files, &agents), Vec::<String>::new());
    // The names the folders used before they were made one are found.
    let before: Vec<String> = [
        "sources/command_hooks/claude_code/agents.rs",
        "sources/command_hooks/gemini/stops.rs",
        "sources/command_hooks/cline/messages.rs",
        "sources/command_hooks/kimi/subagents.rs",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        synonyms(&before, &["claude_code", "gemini", "cline", "kimi"]).len(),
        3
    );
}

/// The check finds the homonyms issue 38 named, and lets agents' folders share names.
#[test]
fn the_homonyms_that_were_are_found() {
    let files: Vec<String> = [
        "cli/stream.rs",
        "sources/stream.rs",
        "sources/command_hooks/stream.rs",
        "assemble/turn.rs",
        "sources/command_hooks/turn.rs",
        "sources/command_hooks/claude_code/records.rs",
        "sources/command_hooks/engine/mod.rs",
        "sources/command_hooks/gemini/engine.rs",
        // Sanctioned: the same concern in every agent's folder, and the command's two ends.
        "sources/command_hooks/claude_code/payload.rs",
        "sources/command_hooks/gemini/payload.rs",
        "sources/command_hooks/gemini/tests.rs",
        "sources/command_hooks/mod.rs",
        "cli/doctor.rs",
        "sources/command_hooks/doctor.rs",
        "sources/command_hooks/engine/records.rs",
        "sources/command_hooks/kimi/records.rs",
        // Outside the sources, left to each stage.
        "config/defaults.rs",
        "pipeline/defaults.rs",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        homonyms(&files, &["claude_code", "gemini", "kimi"]),
        [
            "sources/command_hooks/claude_code/records.rs: named as the shared module beside its folder",
            "sources/command_hooks/gemini/engine.rs: named as the shared module beside its folder",
            "sources/command_hooks/kimi/records.rs: named as the shared module beside its folder",
            "stream.rs: cli/stream.rs, sources/stream.rs, sources/command_hooks/stream.rs",
            "turn.rs: assemble/turn.rs, sources/command_hooks/turn.rs",
        ]
    );
}
