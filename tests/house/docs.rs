//! The documentation's examples are real: every JSON line in docs/protocol.md decodes.

use albedo_otel::protocol::decode_line;

#[test]
fn every_protocol_example_decodes() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md")).unwrap();
    let mut in_json = false;
    let mut kinds = std::collections::BTreeSet::new();
    for line in doc.lines() {
        match line.trim() {
            "```json" => in_json = true,
            "```" => in_json = false,
            l if in_json && !l.is_empty() => {
                let record = decode_line(l.as_bytes()).unwrap_or_else(|e| panic!("{l}: {e}"));
                kinds.insert(record.event.kind().as_str());
            }
            _ => {}
        }
    }
    let all = [
        "call_sent",
        "called",
        "calling",
        "closed",
        "prompted",
        "session",
        "stopping",
        "turn_ended",
    ];
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        all,
        "an example of every kind"
    );
}

/// `--help` and the README's table of what each agent gives name every agent the hook route
/// serves, taken from the list the code dispatches on.
#[test]
fn help_and_readme_name_every_agent() {
    use albedo_otel::sources::command_hooks::agent::Agent;
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = readme
        .split("### What each agent gives")
        .nth(1)
        .expect("the README has its table of agents");
    for agent in Agent::ALL {
        assert!(
            help.contains(agent.title()),
            "--help names {}:\n{help}",
            agent.title()
        );
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("| {} ", agent.title()))),
            "the README's table has a row for {}",
            agent.title()
        );
    }
}
