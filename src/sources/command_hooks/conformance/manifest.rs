//! Each agent's spec is the one place that names it: the list in `command_hooks/mod.rs` holds every
//! agent folder, `.ci/run` installs exactly the CLIs the specs pin, and the README's Layout
//! table has the row each spec writes. What drifted fails with the text it should have.

use crate::sources::command_hooks::agent::Agent;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const CI_BEGIN: &str = "# agents: begin\n";
const CI_END: &str = "# agents: end";
const LAYOUT_BEGIN: &str =
    "<!-- agents' folders: made by the test in src/sources/command_hooks/conformance/manifest.rs -->\n";
const LAYOUT_END: &str = "<!-- agents' folders: end -->";

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()
}

/// The text between `begin` and `end` in `text`.
fn between<'a>(text: &'a str, begin: &str, end: &str) -> Option<&'a str> {
    text.split_once(begin)
        .and_then(|(_, rest)| rest.split_once(end))
        .map(|(part, _)| part)
}

#[test]
fn every_agent_folder_is_in_the_list_and_every_listed_agent_has_its_folder() {
    let dir = format!("{ROOT}/src/sources/command_hooks");
    let mut folders: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("contract.rs").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut listed: Vec<String> = Agent::ALL
        .into_iter()
        .map(|a| a.spec().folder_name().to_string())
        .collect();
    listed.sort();
    assert_eq!(
        folders, listed,
        "the agent folders (each with a contract.rs) and the list in command_hooks/mod.rs"
    );
}

#[test]
fn ci_installs_the_cli_each_spec_pins() {
    let expected: String = Agent::ALL
        .into_iter()
        .filter_map(|a| a.spec().ci_line())
        .map(|l| l + "\n")
        .collect();
    let ci = read(".ci/run");
    assert!(
        between(&ci, CI_BEGIN, CI_END) == Some(expected.as_str()),
        ".ci/run's agent CLIs are not the specs': put this between `{}` and `{CI_END}`:\n\n{expected}",
        CI_BEGIN.trim_end()
    );
}

#[test]
fn the_readme_s_layout_has_each_agent_folder_s_row() {
    let mut expected = String::from("| agent's folder | what |\n| --- | --- |\n");
    expected += &Agent::ALL
        .into_iter()
        .map(|a| {
            let spec = a.spec();
            format!(
                "| `src/sources/command_hooks/{}/` | {} |\n",
                spec.folder_name(),
                spec.holds
            )
        })
        .collect::<String>();
    let readme = read("README.md");
    assert!(
        between(&readme, LAYOUT_BEGIN, LAYOUT_END) == Some(expected.as_str()),
        "README.md's Layout rows for the agents are not the specs': put this between `{}` and `{LAYOUT_END}`:\n\n{expected}",
        LAYOUT_BEGIN.trim_end()
    );
}

/// The one sanctioned use of another agent's folder, said in the spec, names a listed agent
/// other than itself (`tests/house/layout.rs` checks the imports against it).
#[test]
fn an_agent_extends_only_another_listed_agent() {
    for a in Agent::ALL {
        if let Some(other) = a.spec().extends {
            let found = Agent::from_name(other);
            assert!(
                found.is_some_and(|o| o != a),
                "{} extends {other}, not another listed agent",
                a.name()
            );
        }
    }
}
