//! The house is one-way (README, "Layout"): no two sibling modules import each other, however
//! roundabout, and no stage of the pipeline imports a stage above it, as `cargo modules`
//! 0.27.0 sees the `use`s of the library and of the command.
//! Needs cargo-modules: `cargo install cargo-modules --version 0.27.0 --locked`, and
//! `CARGO_MODULES_BIN` (or `cargo-modules` on PATH); `.ci/run` does both.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

/// The stages, top to bottom: each may import those after it, never those before.
const STAGES: &[&str] = &[
    "sources", "config", "pipeline", "export", "assemble", "protocol",
];

/// The small modules under every stage, side by side.
const UNDER: &[&str] = &["text", "fs", "clock", "process"];

fn cargo_modules() -> Option<PathBuf> {
    let found = std::env::var_os("CARGO_MODULES_BIN")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| crate::support::which("cargo-modules"));
    crate::support::require_tool(
        "cargo-modules",
        found,
        "`cargo install cargo-modules --version 0.27.0 --locked`, or set CARGO_MODULES_BIN",
    )
}

/// The `uses` edges between modules of `target` (`--lib`, or `--bin NAME`), as DOT gives them,
/// leaving out a module's uses of its own ancestors and descendants.
/// `least`: how many `uses` edges there are at the least, or the graph was not read whole.
fn uses(bin: &PathBuf, target: &[&str], least: usize) -> BTreeMap<String, BTreeSet<String>> {
    let out = Command::new(bin)
        .arg("dependencies")
        .args(target)
        .args([
            "--no-externs",
            "--no-sysroot",
            "--no-fns",
            "--no-traits",
            "--no-types",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let dot = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dot.contains("digraph"),
        "cargo modules {target:?}: {}{dot}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = dot
        .lines()
        .filter(|l| l.contains("label=\"uses\""))
        .collect();
    assert!(lines.len() >= least, "too few modules read:\n{dot}");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in lines {
        let quoted: Vec<&str> = line.split('"').collect();
        let (from, to) = (quoted[1], quoted[3]);
        let kin = |a: &str, b: &str| a.starts_with(&format!("{b}::"));
        if from != to && !kin(from, to) && !kin(to, from) {
            edges
                .entry(from.to_string())
                .or_default()
                .insert(to.to_string());
        }
    }
    edges
}

/// The strongly connected groups of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let low = match self.index.get(w.as_str()) {
                    None => {
                        self.visit(w);
                        self.index[w.as_str()].1
                    }
                    Some(&(i, _)) if self.stack.contains(&w.as_str()) => i,
                    Some(_) => continue,
                };
                let e = self.index.get_mut(v).unwrap();
                e.1 = e.1.min(low);
            }
            let (i, low) = self.index[v];
            if i == low {
                let at = self.stack.iter().position(|s| *s == v).unwrap();
                let group: Vec<String> = self.stack.drain(at..).map(String::from).collect();
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

/// The level of module `m` (`crate::stage::...`), if it is in a stage or under them.
fn stage(m: &str) -> Option<usize> {
    let top = m.split("::").nth(1)?;
    STAGES
        .iter()
        .position(|s| *s == top)
        .or_else(|| UNDER.contains(&top).then_some(STAGES.len()))
}

fn check(target: &[&str], least: usize) {
    let Some(bin) = cargo_modules() else {
        return;
    };
    let edges = uses(&bin, target, least);
    let cycles = cycles(&edges);
    assert!(
        cycles.is_empty(),
        "modules that import each other: {cycles:#?}"
    );
    let up = ups(&edges);
    assert!(up.is_empty(), "imports up the pipeline: {up:#?}");
}

/// The imports of a module from a level above its own.
fn ups(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    edges
        .iter()
        .flat_map(|(a, bs)| bs.iter().map(move |b| (a, b)))
        .filter(|(a, b)| matches!((stage(a), stage(b)), (Some(x), Some(y)) if y < x))
        .map(|(a, b)| format!("{a} -> {b}"))
        .collect()
}

#[test]
fn the_library_s_imports_run_one_way_down() {
    check(&["--lib"], 300);
}

#[test]
fn the_command_s_imports_run_one_way_down() {
    check(&["--bin", "albedo-otel"], 20);
}

/// Uses of a module inside an agent's folder from outside it, not sanctioned: only the agent
/// the folder's spec says it extends (Codex on Claude Code, Kilo on opencode) may use another
/// agent's folder, and no shared module may name an agent (the list in `command_hooks`, their
/// parent, declares them).
fn foreign_uses(
    edges: &BTreeMap<String, BTreeSet<String>>,
    allowed: &[(&str, &str)],
) -> Vec<String> {
    use albedo_otel::sources::command_hooks::agent::Agent;
    const HOOKS: &str = "albedo_otel::sources::command_hooks::";
    let folder = |m: &str| -> Option<Agent> {
        let seg = m.strip_prefix(HOOKS)?.split("::").next()?;
        Agent::ALL
            .into_iter()
            .find(|a| a.spec().folder_name() == seg)
    };
    edges
        .iter()
        .flat_map(|(a, bs)| bs.iter().map(move |b| (a, b)))
        .filter(|(a, b)| {
            let Some(used) = folder(b) else {
                return false;
            };
            match folder(a) {
                Some(user) if user == used => false,
                Some(user) => user.spec().extends != Some(used.name()),
                None => !allowed.contains(&(a.as_str(), used.spec().folder_name())),
            }
        })
        .map(|(a, b)| format!("{a} -> {b}"))
        .collect()
}

/// Shared code that still names an agent's folder: the fuzz driver's Claude Code target
/// (each agent's payloads are to come from its own script).
const NAMED_BY_HAND: &[(&str, &str)] = &[("albedo_otel::testing::fuzz", "claude_code")];

#[test]
fn an_agent_folder_is_used_only_by_its_own_and_the_agent_that_extends_it() {
    let Some(bin) = cargo_modules() else {
        return;
    };
    let edges = uses(&bin, &["--lib", "--all-features"], 300);
    let foreign = foreign_uses(&edges, NAMED_BY_HAND);
    assert!(
        foreign.is_empty(),
        "uses of an agent's folder from outside it: {foreign:#?}"
    );
}

/// The check finds an agent using another it does not extend, and shared code naming one.
#[test]
fn a_use_of_another_agent_s_folder_is_found() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        // Sanctioned: Codex extends Claude Code.
        ("codex::contract", "claude_code::payload"),
        ("gemini::stops", "claude_code::payload"),
        ("daemon", "cursor"),
        ("agent", "pi"),
    ]
    .iter()
    .fold(BTreeMap::new(), |mut m, (a, b)| {
        let hooks = "albedo_otel::sources::command_hooks::";
        m.entry(format!("{hooks}{a}"))
            .or_default()
            .insert(format!("{hooks}{b}"));
        m
    });
    assert_eq!(
        foreign_uses(&edges, &[]),
        [
            "albedo_otel::sources::command_hooks::agent -> albedo_otel::sources::command_hooks::pi",
            "albedo_otel::sources::command_hooks::daemon -> albedo_otel::sources::command_hooks::cursor",
            "albedo_otel::sources::command_hooks::gemini::stops -> albedo_otel::sources::command_hooks::claude_code::payload",
        ]
    );
}

/// The check itself finds a cycle and an import up, on a graph that has them.
#[test]
fn a_cycle_and_an_import_up_are_found() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("c::assemble::a", "c::assemble::b"),
        ("c::assemble::b", "c::assemble::c"),
        ("c::assemble::c", "c::assemble::a"),
        ("c::protocol::x", "c::assemble::a"),
        ("c::text", "c::fs"),
    ]
    .iter()
    .fold(BTreeMap::new(), |mut m, (a, b)| {
        m.entry(a.to_string()).or_default().insert(b.to_string());
        m
    });
    let found = cycles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].len(), 3, "{found:?}");
    assert_eq!(
        ups(&edges),
        ["c::protocol::x -> c::assemble::a"],
        "the small modules side by side"
    );
}
