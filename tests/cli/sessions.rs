//! `sessions` and `show` on what a replay of the example session stored: the session listed
//! with its turns, tokens and cost, and each turn drawn as the console exporter drew it live.

use crate::support::*;
use serde_json::Value;

use super::albedo;

const DEMO: &str = "examples/demo-session.ndjson";

/// Each line of a console tree cut after what the store keeps of its span: the branches, the
/// span's kind and (for a tool or an agent) its name; and the turn lines whole up to their
/// ends (what the store keeps of a turn: its calls, tokens and cost).
fn skeleton(tree: &str) -> Vec<String> {
    tree.lines()
        .filter_map(|l| {
            let name_at = l.find(|c: char| !"│├└─ ".contains(c))?;
            let (lead, rest) = l.split_at(name_at);
            // A tree's line, not the log's around it.
            if !rest.starts_with("invoke_agent") && lead.is_empty() {
                return None;
            }
            let name = rest.split("  ").next().unwrap_or(rest);
            let name = if name.starts_with("chat ") {
                "chat"
            } else {
                name
            };
            Some(match rest.split_once(" · turn ") {
                Some((_, t)) => format!(
                    "{lead}{name} · turn {}",
                    t.split(" · ended").next().unwrap()
                ),
                None => format!("{lead}{name}"),
            })
        })
        .collect()
}

#[test]
fn sessions_lists_the_replay_and_show_draws_its_turns_as_they_ran() {
    let home = scratch("sessions");
    let live = albedo(&home, &["replay", DEMO, "--exporter", "console"], &[]);
    let live =
        String::from_utf8_lossy(&live.stdout).into_owned() + &String::from_utf8_lossy(&live.stderr);

    let listed = albedo(&home, &["sessions", "--json"], &[]);
    let rows: Vec<Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let s = &rows[0];
    assert_eq!(
        (s["session"].as_str(), s["agent"].as_str()),
        (Some("demo-7f3a"), Some("albedo"))
    );
    assert_eq!(
        (s["turns"].as_i64(), s["modelCalls"].as_i64()),
        (Some(2), Some(9)),
        "{s}"
    );
    // The same tokens and cost `report` adds up for the session.
    let report = albedo(&home, &["report", "session", "--json"], &[]);
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let totals = &report["totals"];
    for key in [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheCreationTokens",
    ] {
        assert_eq!(s[key], totals[key], "{key}: {s} against {totals}");
    }
    let cost = |v: &Value| v.as_f64().unwrap();
    assert!((cost(&s["totalCost"]) - cost(&totals["totalCost"])).abs() < 1e-9);
    let table = albedo(&home, &["sessions"], &[]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("demo-7f3a") && table.contains("albedo"),
        "{table}"
    );

    let shown = albedo(&home, &["show", "demo-7f3a"], &[]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    let (want, got) = (skeleton(&live), skeleton(&shown));
    assert!(!want.is_empty(), "{live}");
    assert_eq!(got, want, "show:\n{shown}\nlive:\n{live}");
    // One trace on its own, by its id.
    let trace = shown.lines().next().unwrap().split(' ').nth(1).unwrap();
    let one = albedo(&home, &["show", trace], &[]);
    assert_eq!(
        String::from_utf8_lossy(&one.stdout)
            .matches("trace ")
            .count(),
        1
    );
}

#[test]
fn show_names_what_it_cannot_find_and_how_to_look() {
    let home = scratch("show-none");
    albedo(&home, &["replay", DEMO, "--exporter", "console"], &[]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(["show", "no-such-session"])
        .env("XDG_DATA_HOME", home.join("data"))
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no-such-session") && said.contains("albedo-otel sessions"),
        "{said}"
    );
}
