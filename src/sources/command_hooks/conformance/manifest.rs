//! Each agent's spec is the one place that names it: the list in `command_hooks/mod.rs` holds every
//! agent folder, `.ci/run` installs exactly the CLIs the specs pin, and the README's Layout
//! table has the row each spec writes. What drifted fails with the text it should have (or is
//! written, with `ALBEDO_OTEL_BLESS=1`).

use crate::sources::command_hooks::agent::Agent;

use super::generated::region;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

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
    region(
        ".ci/run",
        "# agents: begin",
        "# agents: end",
        &expected,
        "the agent CLIs installed",
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
    region(
        "README.md",
        "<!-- agents' folders: made by the test in src/sources/command_hooks/conformance/manifest.rs -->",
        "<!-- agents' folders: end -->",
        &expected,
        "the Layout rows for the agents",
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
