//! The README says what the suite says: its table of what each agent cannot keep is made
//! here from the scripts' `cannot`, and every agent has a row in its table of what each
//! agent gives. A README that drifted fails with the text it should have.

use super::scripts;
use crate::sources::command_hooks::registry::Agent;
use crate::sources::command_hooks::steps::Promise;

const README: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
const BEGIN: &str =
    "<!-- promises: made by the test in src/sources/command_hooks/conformance/readme.rs -->\n";
const END: &str = "<!-- promises: end -->";

/// The table: each promise, the agents that keep it, and why the others cannot.
fn table() -> String {
    let scripts = scripts();
    let mut t = String::from("| promise | kept by | cannot be kept by |\n| --- | --- | --- |\n");
    for promise in Promise::ALL {
        let (mut kept, mut cannot) = (Vec::new(), Vec::new());
        for script in &scripts {
            let title = Agent::from_name(script.spec().name).map_or("?", Agent::title);
            match script.cannot(promise) {
                Some(why) => cannot.push(format!("{title}: {}", why.replace('|', "\\|"))),
                None => kept.push(title),
            }
        }
        t += &format!(
            "| {} | {} | {} |\n",
            promise.words(),
            kept.join(", "),
            cannot.join("; ")
        );
    }
    t
}

#[test]
fn the_readme_says_which_promises_each_agent_cannot_keep() {
    let expected = table();
    let found = README
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(table, _)| table);
    assert!(
        found == Some(expected.as_str()),
        "README.md's table of promises is not the suite's: put this between `{}` and `{END}`:\n\n{expected}",
        BEGIN.trim_end()
    );
}

#[test]
fn every_agent_has_a_row_in_the_readmes_table_of_what_each_agent_gives() {
    let (_, table) = README
        .split_once("### What each agent gives")
        .expect("the README's table of what each agent gives");
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(1).map(str::trim))
        .collect();
    let missing: Vec<&str> = Agent::ALL
        .into_iter()
        .map(Agent::title)
        .filter(|t| !rows.contains(t))
        .collect();
    assert!(
        missing.is_empty(),
        "no row in README.md's table of what each agent gives for {missing:?}"
    );
}
