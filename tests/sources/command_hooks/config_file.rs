//! The configuration file as users meet it through hooks: two configurations reaching their
//! own collectors through one daemon, an edited file taking effect without a restart, a
//! malformed file that loses nothing, albedo's clean environment, `config show`, and
//! `doctor` testing the installed route.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::hooks::Setup;
use crate::support::*;

fn config(dir: &Path, name: &str, endpoint: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "[otlp]\nendpoint = \"{endpoint}\"\nprotocol = \"grpc\"\n\n[bsp]\nschedule_delay = 100\n"
        ),
    )
    .unwrap();
    path
}

/// One turn of session `s`: a prompt, a tool call, a stop, and the end of the session.
fn turn(setup: &Setup, s: &str, n: u32, end: bool) {
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"UserPromptSubmit","prompt":"turn {n}"}}"#
    ));
    setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t{n}","tool_input":{{}}}}"#));
    setup.hook(&format!(r#"{{"session_id":"{s}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t{n}","duration_ms":5}}"#));
    setup.hook(&format!(
        r#"{{"session_id":"{s}","hook_event_name":"Stop","stop_hook_active":false}}"#
    ));
    if end {
        setup.hook(&format!(
            r#"{{"session_id":"{s}","hook_event_name":"SessionEnd"}}"#
        ));
    }
}

fn sessions(spans: &[FlatSpan]) -> Vec<String> {
    let mut s: Vec<String> = spans.iter().filter_map(|x| x.attr("session.id")).collect();
    s.sort();
    s.dedup();
    s
}

/// A user install and a project install set up for two collectors: one daemon, and each
/// session's spans reach its own collector. Then the user's file is edited to point at a
/// third: the next turn goes there, without a restart, and no span is lost or sent twice.
#[test]
fn two_configurations_reach_their_own_collectors_and_an_edit_takes_effect() {
    let (a, b, c) = (Receiver::start(), Receiver::start(), Receiver::start());
    let dir = scratch("two-configs");
    let hooks = dir.join("hooks");
    let user = config(&dir, "user.toml", &a.grpc_url());
    let project = config(&dir, "project.toml", &b.grpc_url());
    let (via_user, via_project) = (
        Setup::with_config(&hooks, &user),
        Setup::with_config(&hooks, &project),
    );
    turn(&via_user, "user-session", 1, false);
    turn(&via_project, "project-session", 1, true);
    let to_a = a.wait_for_spans(2, Duration::from_secs(30));
    let to_b = b.wait_for_spans(2, Duration::from_secs(30));
    assert_eq!(sessions(&to_a), ["user-session"]);
    assert_eq!(sessions(&to_b), ["project-session"]);

    config(&dir, "user.toml", &c.grpc_url());
    turn(&via_user, "user-session", 2, true);
    via_user.wait_idle();
    let (to_a, to_b, to_c) = (a.spans(), b.spans(), c.spans());
    assert_eq!(check_invariants(&to_a), 1, "turn 1 stayed where it went");
    assert_eq!(check_invariants(&to_b), 1);
    assert_eq!(check_invariants(&to_c), 1, "turn 2 followed the edit");
    assert_eq!(sessions(&to_c), ["user-session"]);
    assert_eq!(
        to_a.len() + to_b.len() + to_c.len(),
        6,
        "nothing lost, nothing twice"
    );
    let log = via_user.daemon_log();
    assert_eq!(
        log.matches("draining hook journals").count(),
        1,
        "one daemon: {log}"
    );
}

/// A malformed file: the hook still exits 0 and prints nothing; the daemon says what is wrong
/// (file, line, key) once; the journaled events wait, and arrive once the file is fixed.
#[test]
fn a_malformed_file_is_named_once_and_loses_nothing() {
    let rx = Receiver::start();
    let dir = scratch("bad-config");
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[otlp]\nendpoint = \"{}\"\nprotocol = \"grpc\"\ntimeout = [10]\n",
            rx.grpc_url()
        ),
    )
    .unwrap();
    let setup = Setup::with_config(&dir.join("hooks"), &path);
    turn(&setup, "waits", 1, false);
    turn(&setup, "waits", 2, false);
    let expected = format!(
        "{}:4: key `otlp.timeout`: expected a string",
        path.display()
    );
    wait_until(
        Duration::from_secs(10),
        "the daemon to name the error",
        || setup.daemon_log().contains(&expected),
    );
    assert_eq!(
        setup.daemon_log().matches(&expected).count(),
        1,
        "logged once"
    );
    assert!(rx.spans().is_empty());
    // Waiting payloads are not work: with the file still broken, the daemon goes idle and
    // exits (it used to re-read the journal every 25 ms for as long as the file was broken).
    wait_until(
        Duration::from_secs(20),
        "the daemon to exit while the file is broken",
        || setup.daemon_log().contains("daemon done (Some(Idle))"),
    );
    assert!(!albedo_otel::sources::command_hooks::daemon::running(
        &setup.hook_dir
    ));

    config(&dir, "config.toml", &rx.grpc_url());
    setup.hook(r#"{"session_id":"waits","hook_event_name":"SessionEnd"}"#);
    setup.wait_idle();
    let spans = rx.spans();
    assert_eq!(
        spans.len(),
        4,
        "both turns, journaled while the file was broken"
    );
    assert_eq!(check_invariants(&spans), 2);
}

/// The file's `[otlp.headers]` hold its API keys, for the file's collector. With
/// `OTEL_EXPORTER_OTLP_ENDPOINT` pointing elsewhere, they used to go along to that other
/// collector. Now they stay behind, and both the run and `config show` say so.
#[test]
fn the_file_s_api_key_goes_only_to_the_file_s_endpoint() {
    let (ours, other) = (Receiver::start(), Receiver::start());
    // A collector that would take the key: it shows whether the key came.
    other.require_header("x-api-key", "file-secret-81");
    let dir = scratch("headers-layer");
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[otlp]\nendpoint = \"{}\"\nprotocol = \"grpc\"\n[otlp.headers]\nx-api-key = \"file-secret-81\"\n",
            ours.grpc_url()
        ),
    )
    .unwrap();
    let config = ("ALBEDO_OTEL_CONFIG", path.to_str().unwrap());
    let elsewhere = other.grpc_url();
    let out = run_binary(
        &["replay", "-", "--no-spool", "--flush-timeout", "1s"],
        &[config, ("OTEL_EXPORTER_OTLP_ENDPOINT", &elsewhere)],
        &demo_session(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(other.spans().is_empty(), "the key went to {elsewhere}");
    assert!(other.unauthorized() > 0, "{stderr}");
    assert!(
        stderr.contains("[otlp.headers] is not sent: the traces endpoint")
            && stderr.contains("comes from env OTEL_EXPORTER_OTLP_ENDPOINT"),
        "{stderr}"
    );
    assert!(!stderr.contains("file-secret-81"), "{stderr}");
    let shown = run_binary(
        &["config", "show"],
        &[config, ("OTEL_EXPORTER_OTLP_ENDPOINT", &elsewhere)],
        b"",
    );
    let stdout = String::from_utf8_lossy(&shown.stdout);
    assert!(
        stdout.contains("NOT SENT: the endpoint comes from env OTEL_EXPORTER_OTLP_ENDPOINT"),
        "{stdout}"
    );
    // Without the variable, or with one naming the file's own endpoint, the file's key goes
    // to the file's collector.
    ours.require_header("x-api-key", "file-secret-81");
    let same = ours.grpc_url();
    let out = run_binary(
        &["replay", "-", "--no-spool", "--flush-timeout", "1s"],
        &[config, ("OTEL_EXPORTER_OTLP_ENDPOINT", &same)],
        &demo_session(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("is not sent"), "{stderr}");
    assert_eq!(ours.unauthorized(), 0);
    let out = run_binary(
        &["replay", "-", "--no-spool", "--flush-timeout", "1s"],
        &[config],
        &demo_session(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!ours.spans().is_empty());
    assert_eq!(ours.unauthorized(), 0);
}

/// The same guard for metrics: a metrics endpoint the environment names gets the
/// environment's headers (`OTEL_EXPORTER_OTLP_METRICS_HEADERS` included), never the file's key
/// nor the traces' own headers; the file's collector still gets its key with the traces.
#[test]
fn the_file_s_api_key_never_goes_to_a_metrics_endpoint_named_elsewhere() {
    let (ours, other) = (Receiver::start(), Receiver::start());
    ours.require_header("x-api-key", "file-secret-82");
    let dir = scratch("headers-metrics");
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[otlp]\nendpoint = \"{}\"\nprotocol = \"grpc\"\n[otlp.headers]\nx-api-key = \"file-secret-82\"\n",
            ours.grpc_url()
        ),
    )
    .unwrap();
    let config = ("ALBEDO_OTEL_CONFIG", path.to_str().unwrap());
    let elsewhere = other.grpc_url();
    let metrics_elsewhere = ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", elsewhere.as_str());
    let out = run_binary(
        &[
            "replay",
            "-",
            "--metrics",
            "--no-spool",
            "--flush-timeout",
            "2s",
        ],
        &[
            config,
            metrics_elsewhere,
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-traces-only=t1"),
            ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-metrics-key=m1"),
        ],
        &demo_session(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(ours.unauthorized(), 0, "the traces kept the file's key");
    assert!(!ours.spans().is_empty(), "{stderr}");
    assert!(
        ours.metrics().is_empty(),
        "metrics went to the file's collector"
    );
    let metrics = other.metrics();
    assert!(
        !metrics.is_empty(),
        "no metrics reached {elsewhere}: {stderr}"
    );
    for m in &metrics {
        let names: Vec<&str> = m.headers.iter().map(|(k, _)| k.as_str()).collect();
        assert!(
            !names.contains(&"x-api-key") && !names.contains(&"x-traces-only"),
            "the metrics host got {names:?}"
        );
        assert!(
            m.headers
                .iter()
                .any(|(k, v)| k == "x-metrics-key" && v == "m1"),
            "OTEL_EXPORTER_OTLP_METRICS_HEADERS was not sent: {names:?}"
        );
    }
    assert!(
        stderr.contains("[otlp.headers] is not sent with metrics: the metrics endpoint")
            && stderr.contains("comes from env OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
        "{stderr}"
    );
    assert!(!stderr.contains("file-secret-82"), "{stderr}");
    let shown = run_binary(&["config", "show"], &[config, metrics_elsewhere], b"");
    let stdout = String::from_utf8_lossy(&shown.stdout);
    assert!(
        stdout.contains(
            "NOT SENT with metrics: the metrics endpoint comes from env OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
        ),
        "{stdout}"
    );
}

/// `config set` makes the folders it creates private, and only those: a file named
/// `$HOME/albedo.toml` used to make `$HOME` 0700. A `config.toml` that is a link into a
/// dotfiles repository is written through, and stays a link.
#[cfg(unix)]
#[test]
fn config_set_leaves_folders_it_did_not_make_alone_and_writes_through_links() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = scratch("config-set");
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = home.join("albedo.toml");
    let set = |file: &Path, key: &str, value: &str| {
        let out = run_binary(
            &["config", "set", key, value],
            &[("ALBEDO_OTEL_CONFIG", file.to_str().unwrap())],
            b"",
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    set(&file, "otlp.endpoint", "http://collector:4317");
    assert_eq!(
        mode(&home),
        0o755,
        "a folder it did not make keeps its mode"
    );
    assert_eq!(mode(&file), 0o600);
    let made = home.join("new/albedo-otel/config.toml");
    set(&made, "otlp.protocol", "grpc");
    assert_eq!(
        mode(&home.join("new")),
        0o700,
        "folders it makes are private"
    );
    assert_eq!(mode(&home.join("new/albedo-otel")), 0o700);

    // A relative name whose folders are missing: made, and private.
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(["config", "set", "otlp.protocol", "grpc"])
        .current_dir(&home)
        .env("ALBEDO_OTEL_CONFIG", "conf/albedo/a.toml")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&home.join("conf")), 0o700);
    assert_eq!(mode(&home.join("conf/albedo/a.toml")), 0o600);

    let real = dir.join("dotfiles/albedo.toml");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "# mine\n[otlp]\nendpoint = \"http://old:4317\"\n").unwrap();
    let link = home.join("config.toml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    set(&link, "otlp.endpoint", "http://new:4317");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(
        text.starts_with("# mine") && text.contains("http://new:4317"),
        "{text}"
    );
    assert_eq!(mode(&real), 0o600);
}

/// albedo runs command hooks with a clean environment: no HOME, no XDG_*, no OTEL_*. What
/// `install albedo` writes must work there on its own.
#[test]
fn albedo_s_clean_environment_gets_everything_from_the_installed_command() {
    let rx = Receiver::start();
    let dir = scratch("albedo-clean");
    let albedo_home = dir.join("albedo");
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(["install", "albedo"])
        .env("ALBEDO_HOME", &albedo_home)
        .env("HOME", dir.join("home"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", rx.http_url())
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hooks: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(albedo_home.join("hooks.json")).unwrap())
            .unwrap();
    let command = hooks["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let session = "clean-env";
    for payload in [
        format!(
            r#"{{"session_id":"{session}","hook_event_name":"UserPromptSubmit","prompt":"go","cwd":"/w","transcript_path":"","permission_mode":"default"}}"#
        ),
        format!(
            r#"{{"session_id":"{session}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"c1","tool_input":{{"command":"ls"}}}}"#
        ),
        format!(
            r#"{{"session_id":"{session}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"c1","tool_input":{{"command":"ls"}},"tool_response":{{"exit_code":0}}}}"#
        ),
        format!(
            r#"{{"session_id":"{session}","hook_event_name":"Stop","stop_hook_active":false}}"#
        ),
    ] {
        crate::support::hooks::run_as_agent(
            Command::new("/bin/sh")
                .arg("-c")
                .arg(&command)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("ALBEDO_OTEL_STOP_GRACE", "200ms")
                .env("ALBEDO_OTEL_IDLE_EXIT", "1s"),
            &payload,
        );
    }
    // The turn and its tool call.
    let spans = rx.wait_for_spans(2, Duration::from_secs(30));
    assert_eq!(spans.len(), 2);
    assert_eq!(check_invariants(&spans), 1);
    assert_eq!(sessions(&spans), [session]);
}

/// `config show`: every setting and where it came from; a header's value never shows.
#[test]
fn config_show_says_where_each_setting_comes_from() {
    let dir = scratch("show");
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        "service_name = \"file-svc\"\n[otlp]\ntimeout = 1500\nendpiont = \"typo\"\n[otlp.headers]\nx-api-key = \"sekrit-value\"\n",
    )
    .unwrap();
    let out = run_binary(
        &["config", "show", "--batch-size", "7"],
        &[
            ("ALBEDO_OTEL_CONFIG", path.to_str().unwrap()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let line = |key: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no {key}: {stdout}"))
            .to_string()
    };
    assert!(
        line("bsp.max_export_batch_size").ends_with("7  (flag)"),
        "{stdout}"
    );
    assert!(line("otlp.protocol").ends_with("grpc  (env OTEL_EXPORTER_OTLP_PROTOCOL)"));
    assert!(
        line("otlp.timeout").contains(&format!("1500  (file {}:3 `otlp.timeout`)", path.display()))
    );
    assert!(line("service_name").contains("file-svc"));
    assert!(line("bsp.max_queue_size").ends_with("65536  (default)"));
    assert!(line("otlp.headers.x-api-key").contains("******"));
    assert!(!stdout.contains("sekrit"), "{stdout}");
    assert!(stdout.contains("unknown key `otlp.endpiont`"), "{stdout}");
    // A malformed file is an error that names its file, line and key.
    std::fs::write(&path, "[otlp]\nprotocol = \"udp\"\n").unwrap();
    let out = run_binary(
        &["replay", "-"],
        &[("ALBEDO_OTEL_CONFIG", path.to_str().unwrap())],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains(&format!("{}:2 `otlp.protocol`=\"udp\"", path.display())),
        "{stderr}"
    );
}

/// `doctor` runs the installed hook command as Claude Code would and waits for the collector:
/// on a working install it says so and exits 0; with a wrong key or no collector it says why
/// in one line and exits 1.
#[test]
fn doctor_tests_the_installed_route() {
    let rx = Receiver::start();
    rx.require_header("x-api-key", "right-key-27f");
    let dir = scratch("doctor-route");
    let settings = dir.join("settings.json");
    let install = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
        cmd.args(["install", "claude-code", "--settings"])
            .arg(&settings)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_STATE_HOME", dir.join("state"))
            .envs(env.iter().copied());
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let doctor_with = |env: &[(&str, &str)]| {
        let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
            .args(["doctor", "--settings"])
            .arg(&settings)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_STATE_HOME", dir.join("state"))
            .env("ALBEDO_OTEL_IDLE_EXIT", "1s")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let hook_line = stdout
            .lines()
            .find(|l| {
                l.contains(" hook, Claude Code (--settings): through") || l.starts_with("FAIL hook")
            })
            .unwrap_or_else(|| panic!("no hook line: {stdout}"))
            .to_string();
        (out.status.code(), hook_line, stdout)
    };
    let doctor = || doctor_with(&[]);
    install(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &rx.grpc_url()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=right-key-27f"),
    ]);
    let (code, line, all) = doctor();
    assert_eq!(code, Some(0), "{all}");
    assert!(line.starts_with("ok   hook"), "{line}");
    assert!(
        !all.contains("right-key-27f"),
        "no key in doctor's output: {all}"
    );
    // A value of our own the route cannot read (no unit): the test trace still goes through,
    // and doctor names the value (issue 37.13).
    let (code, line, all) = doctor_with(&[("ALBEDO_OTEL_STOP_GRACE", "1")]);
    assert_eq!(code, Some(1), "{all}");
    assert!(
        line.starts_with("FAIL hook")
            && line.contains("accepted a test trace")
            && line.contains("ALBEDO_OTEL_STOP_GRACE=\"1\": expected a duration such as 15s"),
        "{line}"
    );

    install(&[("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=wrong-key-8c1")]);
    let (code, line, all) = doctor();
    assert_eq!(code, Some(1), "{all}");
    assert!(
        line.starts_with("FAIL hook")
            && line.contains("Unauthenticated")
            && line.contains("the API key is missing or wrong"),
        "{line}"
    );
    assert!(!all.contains("wrong-key-8c1"), "{all}");

    let port = free_port();
    install(&[(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        &format!("http://127.0.0.1:{port}"),
    )]);
    let (code, line, _) = doctor();
    assert_eq!(code, Some(1));
    assert!(
        line.starts_with("FAIL hook")
            && line.contains(&format!("no collector at 127.0.0.1:{port}")),
        "{line}"
    );

    // A hook command whose binary is gone.
    let text = std::fs::read_to_string(&settings).unwrap();
    let program = dir.join("albedo-otel-hook");
    let gone = text.replace(
        env!("CARGO_BIN_EXE_albedo-otel-hook"),
        program.to_str().unwrap(),
    );
    std::fs::write(&settings, gone).unwrap();
    let (code, line, _) = doctor();
    assert_eq!(code, Some(1));
    assert!(
        line.contains("points at a binary that no longer exists"),
        "{line}"
    );
}

/// A checkout's `.claude/settings.json` can name our hook and add a command of its own after
/// it. `doctor` used to run such a line through `sh -c`, in whatever folder it was started
/// from. Now it leaves the project's file alone unless asked (`--project`), and even then
/// runs only our executable with its arguments, never the rest of the line.
#[test]
fn doctor_runs_only_our_executable_and_a_project_s_file_only_when_asked() {
    let rx = Receiver::start();
    let dir = scratch("doctor-project");
    let checkout = dir.join("checkout");
    std::fs::create_dir_all(checkout.join(".claude")).unwrap();
    let config_file = config(&dir, "config.toml", &rx.grpc_url());
    let pwned = dir.join("PWNED");
    let command = format!(
        "{} --config {} --hook-dir {} && touch {}",
        env!("CARGO_BIN_EXE_albedo-otel-hook"),
        config_file.display(),
        dir.join("hooks").display(),
        pwned.display()
    );
    let settings = serde_json::json!({
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}
    });
    std::fs::write(checkout.join(".claude/settings.json"), settings.to_string()).unwrap();
    let doctor = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
            .arg("doctor")
            .args(extra)
            .current_dir(&checkout)
            .env("HOME", dir.join("home"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_STATE_HOME", dir.join("state"))
            .env("ALBEDO_OTEL_CONFIG", &config_file)
            .env("ALBEDO_OTEL_IDLE_EXIT", "1s")
            .env_remove("ALBEDO_HOME")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = doctor(&[]);
    assert!(
        said.contains("(this project): .claude/settings.json has our hook; not run"),
        "{said}"
    );
    assert!(!pwned.exists(), "nothing of the checkout's ran");
    let said = doctor(&["--project"]);
    assert!(
        said.contains("ok   hook, Claude Code (this project): through the hook and its daemon"),
        "{said}"
    );
    assert!(
        !pwned.exists(),
        "only our executable ran, not the rest of the line"
    );
}
