//! ccusage 20, the tool users reconcile with: found as a user has it, run on an agent's own
//! files, and set against `report session --json` of a store, session by session.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{require_tool, which};

/// The four token counts both tools give a session: input (neither read from nor written to
/// the cache), output, cache writes, cache reads.
pub type Tokens = [i64; 4];

const KINDS: [&str; 4] = [
    "inputTokens",
    "outputTokens",
    "cacheCreationTokens",
    "cacheReadTokens",
];

/// ccusage 20, as a user has it: `CCUSAGE_BIN`, else `ccusage` on PATH.
pub fn find() -> Option<PathBuf> {
    let found = std::env::var_os("CCUSAGE_BIN")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| which("ccusage"));
    require_tool(
        "ccusage",
        found,
        "`npm install ccusage@20.0.24 @ccusage/ccusage-linux-x64@20.0.24` and set CCUSAGE_BIN to node_modules/.bin/ccusage",
    )
}

fn tokens(row: &Value) -> Tokens {
    KINDS.map(|k| row[k].as_i64().unwrap_or(-1))
}

/// `ccusage AGENT session --json --offline` in `env` (HOME, the agent's home variable): each
/// session's tokens, by the session's id (the end of ccusage's, which names the file).
pub fn sessions(ccusage: &Path, agent: &str, env: &[(&str, &Path)]) -> BTreeMap<String, Tokens> {
    let out = Command::new(ccusage)
        .args([agent, "session", "--json", "--offline"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ccusage: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["sessions"].as_array().cloned().unwrap_or_default();
    rows.iter()
        .map(|r| {
            let id = r["sessionId"].as_str().unwrap_or("").to_string();
            (id, tokens(r))
        })
        .collect()
}

/// `albedo-otel report session --json` of the store under `data` (`XDG_DATA_HOME`): each
/// session's tokens, by its id.
pub fn report(data: &Path) -> BTreeMap<String, Tokens> {
    let out = reading(data, &["report", "session", "--json"]);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let rows = v["session"].as_array().cloned().unwrap_or_default();
    rows.iter()
        .map(|r| (r["sessionId"].as_str().unwrap_or("").to_string(), tokens(r)))
        .collect()
}

/// `albedo-otel sessions --json` of the store under `data`: each session's turns and model
/// calls, by its id, as a user sees them listed.
pub fn shown(data: &Path) -> BTreeMap<String, (i64, i64)> {
    let out = reading(data, &["sessions", "--json", "--limit", "100000"]);
    String::from_utf8_lossy(&out)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let n = |k: &str| v[k].as_i64().unwrap_or(-1);
            let id = v["session"].as_str().unwrap_or("").to_string();
            (id, (n("turns"), n("modelCalls")))
        })
        .collect()
}

/// What `albedo-otel ARGS` prints of the store under `data` (`XDG_DATA_HOME`).
fn reading(data: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// ccusage's sessions under our ids: each of ours is the one ccusage's id ends with.
pub fn matched(
    theirs: &BTreeMap<String, Tokens>,
    ours: &BTreeMap<String, Tokens>,
) -> BTreeMap<String, Tokens> {
    theirs
        .iter()
        .map(|(id, t)| {
            let ours = ours.keys().find(|o| id.ends_with(o.as_str())).cloned();
            (ours.unwrap_or_else(|| id.clone()), *t)
        })
        .collect()
}

/// `albedo-otel import AGENT` into the store under `data` (as `report` reads it), in `env`.
pub fn import(agent: &str, data: &Path, env: &[(&str, &Path)]) {
    import_with(agent, data, env, &[]);
}

/// [`import`], with `args` after the agent's name.
fn import_with(agent: &str, data: &Path, env: &[(&str, &Path)], args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(["import", agent])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        // The store by its own variable: `XDG_DATA_HOME` is where some agents keep their
        // history (opencode, Kilo), under `HOME` in these tests.
        .env(
            "ALBEDO_OTEL_STORE_PATH",
            data.join("albedo-otel/store.sqlite"),
        )
        .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "import: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The live route's store in a test's home (`isolated_env`'s folders) against `ccusage AGENT
/// session` on the agent's files there: the same tokens, session by session.
pub fn live_route_agrees(agent: &str, home: &Path) {
    live_route_agrees_as(agent, home, |t| t);
}

/// As [`live_route_agrees`], with ccusage's counts first read as they should be (`fix`),
/// where ccusage is known to count differently, and wrongly.
pub fn live_route_agrees_as(agent: &str, home: &Path, fix: impl Fn(Tokens) -> Tokens) {
    let Some(ccusage) = find() else { return };
    let (data, config) = (home.join(".local/share"), home.join(".config"));
    let env = [
        ("HOME", home),
        ("XDG_DATA_HOME", data.as_path()),
        ("XDG_CONFIG_HOME", config.as_path()),
    ];
    let live = report(&data);
    let mut theirs = matched(&sessions(&ccusage, agent, &env), &live);
    theirs.values_mut().for_each(|t| *t = fix(*t));
    assert!(!live.is_empty(), "nothing stored");
    assert_eq!(
        live, theirs,
        "the live route's store against ccusage {agent}"
    );
}

/// An import of the agent's own files under `home` into an empty store counts what the live
/// route's store there counted, session by session; importing again, into that store or into
/// the live route's, adds nothing.
pub fn import_agrees(agent: &str, home: &Path) {
    let (fresh, live_store) = (
        super::scratch(&format!("{agent}-import")),
        home.join(".local/share"),
    );
    let env = [("HOME", home)];
    let live = report(&live_store);
    let listed = shown(&live_store);
    import(agent, &fresh, &env);
    assert_eq!(
        report(&fresh),
        live,
        "an import of {agent}'s files against the live route"
    );
    import(agent, &fresh, &env);
    // After the live route, which sent what it traced: sending the import sends none of it
    // again (no span, no metric point).
    let collector = super::Receiver::start();
    let endpoint = collector.grpc_url();
    let export = [
        "--export",
        "--protocol",
        "grpc",
        "--endpoint",
        endpoint.as_str(),
    ];
    import_with(agent, &live_store, &env, &export);
    let again = collector.spans();
    assert!(
        again.is_empty() && collector.metrics().is_empty(),
        "{agent}: `import --export` after the live route sent again {:?}",
        again.iter().map(|s| &s.span.name).collect::<Vec<_>>()
    );
    assert_eq!(report(&fresh), live, "{agent} imported twice");
    assert_eq!(
        report(&live_store),
        live,
        "{agent} imported after the live route"
    );
    assert_eq!(
        shown(&live_store),
        listed,
        "{agent}'s sessions after an import of what the live route traced: each turn once"
    );
}
