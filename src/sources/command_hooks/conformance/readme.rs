//! The README says what the suite says: its table of what each agent cannot keep is made
//! here from the scripts' `cannot`, its table of what each agent gives from the scripts'
//! `gives`, and its table of the agents' pages from their specs. A README that drifted fails
//! with the text it should have (or gets it, with `ALBEDO_OTEL_BLESS=1`).

use super::scripts;
use crate::sources::command_hooks::agent::Agent;
use crate::sources::command_hooks::steps::Promise;

use super::generated::region;

/// The host's own row, above the agents': albedo's extension is not an agent folder.
const ALBEDO: &str = "| albedo (extension) | `Prompted` to `TurnEnded` | real start and end, nested in code cells | every call, with usage and messages (observe's `CallSent`) | under their `agents.spawn` call | |\n";

/// The table: each promise, the agents that keep it, and why the others cannot.
fn table() -> String {
    let scripts = scripts();
    let mut t = String::from("| promise | kept by | cannot be kept by |\n| --- | --- | --- |\n");
    for promise in Promise::ALL {
        let (mut kept, mut cannot) = (Vec::new(), Vec::new());
        for script in &scripts {
            let title = Agent::from_name(script.spec().name).map_or("?", Agent::title);
            match script.cannot(promise) {
                Some(why) => cannot.push(format!("{title}: {}", cell(why))),
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

/// Text for a table's cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[test]
fn the_readme_says_which_promises_each_agent_cannot_keep() {
    region(
        "README.md",
        "<!-- promises: made by the test in src/sources/command_hooks/conformance/readme.rs -->",
        "<!-- promises: end -->",
        &table(),
        "The table of promises",
    );
}

/// Every agent's row in the table of what each agent gives, from its folder's script.
#[test]
fn the_readme_says_what_each_agent_gives() {
    let mut t = String::from(
        "| agent | turn | tool calls | model calls | sub-agents | cannot give |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    t += ALBEDO;
    for script in scripts() {
        let g = script.gives();
        let title = Agent::from_name(script.spec().name).map_or("?", Agent::title);
        t += &format!(
            "| {title} | {} | {} | {} | {} | {} |\n",
            cell(g.turn),
            cell(g.tool_calls),
            cell(g.model_calls),
            cell(g.sub_agents),
            cell(g.cannot)
        );
    }
    region(
        "README.md",
        "<!-- agents' rows: made by the test in src/sources/command_hooks/conformance/readme.rs -->",
        "<!-- agents' rows: end -->",
        &t,
        "The table of what each agent gives",
    );
}

/// The README's table of the agents' pages: each agent's install command, where it writes,
/// and its page under docs/agents/, which must be there.
#[test]
fn the_readme_links_each_agent_s_page() {
    let mut t =
        String::from("| agent | turn it on | where | its page |\n| --- | --- | --- | --- |\n");
    for agent in Agent::ALL {
        let spec = agent.spec();
        let page = format!("docs/agents/{}.md", spec.name);
        let file = format!("{}/{page}", env!("CARGO_MANIFEST_DIR"));
        assert!(
            std::path::Path::new(&file).is_file(),
            "{} has no page: write {page}",
            spec.title
        );
        let trust = if spec.install.asks_trust {
            " --trust"
        } else {
            ""
        };
        let about = spec.install.about;
        let place = about
            .strip_prefix(spec.title)
            .and_then(|r| r.strip_prefix(": "))
            .unwrap_or(about);
        t += &format!(
            "| {} | `albedo-otel install {}{trust}` | {} | [{page}]({page}) |\n",
            spec.title,
            spec.name,
            cell(place)
        );
    }
    region(
        "README.md",
        "<!-- agents' pages: made by the test in src/sources/command_hooks/conformance/readme.rs -->",
        "<!-- agents' pages: end -->",
        &t,
        "The table of the agents' pages",
    );
}
