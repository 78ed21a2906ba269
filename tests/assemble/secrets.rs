//! Secrets never leave: the scrubber's table-driven corpus (real-looking keys of every kind
//! and look-alikes that must stay), user patterns, every exported string of a stream seeded
//! with secrets, the spool, and logs that never show header values.

use crate::support::*;
use albedo_otel::assemble::redact::Scrubber;

fn corpus() -> Vec<(String, String, Option<String>)> {
    std::fs::read_to_string(repo_file("tests/fixtures/redaction_corpus.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            let kind = f.next().unwrap().to_string();
            let text = f.next().unwrap().to_string();
            (kind, text, f.next().map(str::to_string))
        })
        .collect()
}

#[test]
fn the_corpus_redacts_every_secret_by_kind_and_spares_every_look_alike() {
    let s = Scrubber::builtin();
    let rows = corpus();
    let (mut secrets, mut look_alikes, mut kinds) = (0, 0, std::collections::BTreeSet::new());
    for (kind, text, secret) in &rows {
        let out = s.scrub(text);
        match secret {
            Some(secret) => {
                secrets += 1;
                assert!(
                    albedo_otel::assemble::redact::has_trigger(secret)
                        || albedo_otel::assemble::redact::has_trigger(text),
                    "{kind}: no trigger fragment in {text}"
                );
                kinds.insert(kind.clone());
                assert!(!out.contains(secret.as_str()), "{kind} leaked in {out}");
                assert!(
                    out.contains(&format!("[REDACTED:{kind}]")),
                    "expected {kind} in {out}"
                );
            }
            None => {
                look_alikes += 1;
                assert_eq!(out, text.as_str(), "a look-alike was changed");
            }
        }
    }
    println!(
        "redaction corpus: {secrets} secrets of {} kinds, {look_alikes} look-alikes",
        kinds.len()
    );
    for k in [
        "anthropic-key",
        "openai-key",
        "github-token",
        "gitlab-token",
        "slack-token",
        "stripe-key",
        "google-api-key",
        "aws-access-key",
        "jwt",
        "bearer-token",
        "basic-auth",
        "private-key",
        "url-password",
        "secret",
    ] {
        assert!(kinds.contains(k), "the corpus has no {k}");
    }
    assert!(secrets >= 40 && look_alikes >= 20);
}

/// A stream with a secret in every field that reaches a span.
fn seeded(secret: &str) -> String {
    let lines = [
        format!(
            r#"{{"v":1,"kind":"session","session":"s-{secret}","at_ms":1796400000000,"agent":"agent-{secret}","model":"m-{secret}","workspace":"/home/{secret}","parent":{{"session":"p-{secret}","call":"c-{secret}"}}}}"#
        ),
        format!(
            r#"{{"v":1,"kind":"prompted","session":"s-{secret}","at_ms":1796400000001,"text":"use {secret}"}}"#
        ),
        format!(
            r#"{{"v":1,"kind":"calling","session":"s-{secret}","at_ms":1796400000002,"call":{{"id":"id-{secret}","name":"tool-{secret}","arguments":{{"k":"{secret}"}},"within":"w-{secret}"}}}}"#
        ),
        format!(
            r#"{{"v":1,"kind":"called","session":"s-{secret}","call":{{"id":"id-{secret}","name":"tool-{secret}","arguments":{{"k":"{secret}"}},"within":"w-{secret}"}},"output":"out {secret}","started_ms":1796400000002,"finished_ms":1796400000003,"refused":true}}"#
        ),
        format!(
            r#"{{"v":1,"kind":"called","session":"s-{secret}","call":{{"id":"r-{secret}","name":"run","arguments":{{"command":"x"}}}},"output":{{"exit_code":1,"timed_out":true}},"started_ms":1796400000002,"finished_ms":1796400000004}}"#
        ),
        format!(
            r#"{{"v":1,"kind":"call_sent","session":"s-{secret}","id":"m-{secret}","request":{{"model":"model-{secret}","provider":"p-{secret}","messages":["{secret}"]}},"response":{{"id":"r-{secret}","model":"rm-{secret}","stop_reason":"s-{secret}","content":["{secret}"]}},"usage":{{"input_tokens":1,"output_tokens":1}},"started_ms":1796400000005,"finished_ms":1796400000006,"error":{{"type":"t-{secret}","message":"m {secret}"}}}}"#
        ),
        format!(
            r#"{{"v":1,"kind":"stopping","session":"s-{secret}","at_ms":1796400000007,"reply":"bye {secret}","held":0}}"#
        ),
        format!(
            r#"{{"v":1,"kind":"turn_ended","session":"s-{secret}","at_ms":1796400000008,"reason":"r-{secret}"}}"#
        ),
    ];
    lines.join("\n") + "\n"
}

#[test]
fn no_exported_string_carries_a_secret() {
    // Every kind, through every field, with message capture on: nothing may come out.
    for (kind, _, secret) in corpus().into_iter().filter(|(_, _, s)| s.is_some()) {
        let secret = secret.unwrap();
        // Secrets that need context (a header name, a NAME=) are placed with it.
        let text = match kind.as_str() {
            "bearer-token" => format!("Bearer {secret}"),
            "basic-auth" => format!("Authorization: Basic {secret}"),
            "secret" => format!("API_KEY={secret}"),
            "url-password" => format!("https://u:{secret}@h"),
            "private-key" => continue,
            _ => secret.clone(),
        };
        let text = text.replace('"', "");
        let out_dir = scratch("leak");
        let out_file = out_dir.join("out.jsonl");
        let out = run_binary(
            &[
                "replay",
                "-",
                "--exporter",
                "file",
                "--file",
                out_file.to_str().unwrap(),
                "--capture-messages",
            ],
            &[],
            seeded(&text).as_bytes(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let exported = std::fs::read_to_string(&out_file).unwrap();
        assert!(
            exported.contains("REDACTED"),
            "{kind}: nothing was redacted"
        );
        assert!(
            !exported.contains(secret.as_str()),
            "{kind} leaked: {exported}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains(secret.as_str()),
            "{kind} leaked into the log: {stderr}"
        );
    }
}

#[test]
fn user_patterns_redact_and_bad_ones_are_clear_errors() {
    let out_dir = scratch("user");
    let out_file = out_dir.join("out.jsonl");
    let out = run_binary(
        &[
            "replay",
            "-",
            "--exporter",
            "file",
            "--file",
            out_file.to_str().unwrap(),
            "--redact",
            "ticket=TICKET-[0-9]{4}",
        ],
        &[],
        seeded("TICKET-1234").as_bytes(),
    );
    assert!(out.status.success());
    let exported = std::fs::read_to_string(&out_file).unwrap();
    assert!(exported.contains("[REDACTED:ticket]") && !exported.contains("TICKET-1234"));

    let out = run_binary(&["run", "--redact", "broken=("], &[], b"");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--redact") && stderr.contains("`(` is not a valid regular expression"),
        "{stderr}"
    );
}

#[test]
fn tool_content_can_be_turned_off() {
    let out_dir = scratch("off");
    let out_file = out_dir.join("out.jsonl");
    let out = run_binary(
        &[
            "replay",
            "-",
            "--exporter",
            "file",
            "--file",
            out_file.to_str().unwrap(),
        ],
        &[("ALBEDO_OTEL_CAPTURE_TOOL_CONTENT", "false")],
        &demo_session(),
    );
    assert!(out.status.success());
    let exported = std::fs::read_to_string(&out_file).unwrap();
    assert!(exported.contains("execute_tool"));
    for key in [
        "input.value",
        "output.value",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ] {
        assert!(!exported.contains(key), "{key} was exported");
    }
    assert!(!exported.contains("cargo test parser"));
}

#[test]
fn the_spool_holds_scrubbed_data_only() {
    let secret = "sk-ant-api03-SPOOLSPOOLSPOOLSPOOLSPOOLSPOOL";
    let spool = scratch("spool");
    let port = free_port();
    let out = run_binary(
        &[
            "replay",
            "-",
            "--metrics",
            "--capture-messages",
            "--endpoint",
            &format!("http://127.0.0.1:{port}"),
            "--spool-dir",
            spool.to_str().unwrap(),
        ],
        &[],
        seeded(secret).as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (mut files, mut metrics) = (0, 0);
    for dir in std::fs::read_dir(&spool).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = f.unwrap().path();
            if path.is_dir() {
                // The destination's metrics exports: no message text, and no secret either.
                for m in std::fs::read_dir(&path).unwrap() {
                    let bytes = std::fs::read(m.unwrap().path()).unwrap();
                    metrics += 1;
                    assert!(!String::from_utf8_lossy(&bytes).contains(secret));
                }
                continue;
            }
            let bytes = std::fs::read(path).unwrap();
            files += 1;
            assert!(!String::from_utf8_lossy(&bytes).contains(secret));
            assert!(String::from_utf8_lossy(&bytes).contains("[REDACTED:anthropic-key]"));
        }
    }
    assert!(files > 0, "the batch was spooled");
    assert!(metrics > 0, "the metrics were spooled");
}

#[test]
fn header_values_never_reach_the_logs() {
    let secret = "hdr-secret-value-0123456789";
    let port = free_port();
    for protocol in ["grpc", "http/protobuf"] {
        let out = replay_once(
            protocol,
            &format!("http://127.0.0.1:{port}"),
            &[
                (
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    &format!("x-api-key={secret},authorization=Bearer%20{secret}"),
                ),
                ("ALBEDO_OTEL_LOG", "trace"),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains("could not reach the collector"), "{stderr}");
        assert!(
            !stderr.contains(secret),
            "{protocol}: a header value is in the log"
        );
    }
    // A malformed header names the variable and the key, never the value.
    let out = run_binary(
        &["run"],
        &[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            &format!("x-api-key={secret}\u{7f}"),
        )],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_HEADERS: header `x-api-key`"),
        "{stderr}"
    );
    assert!(!stderr.contains(secret));
}

/// A password in the endpoint URL (`https://tenant:TOKEN@host`, sent as Basic auth) is shown
/// nowhere: not in the `ready:` line or any log, not in the spool's folder names or `status`,
/// not in `config show`.
#[test]
fn a_password_in_the_endpoint_is_never_shown() {
    let secret = "glc_SECRET_TOKEN_93";
    let dir = scratch("endpoint-password");
    let spool = dir.join("spool");
    // Nothing listens there: the batches go to the spool, whose folder is named for the
    // destination.
    let endpoint = format!("http://tenant:{secret}@127.0.0.1:{}", free_port());
    let env = [
        ("ALBEDO_OTEL_SPOOL_DIR", spool.to_str().unwrap()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("ALBEDO_OTEL_LOG", "debug"),
    ];
    let out = run_binary(
        &["replay", "-", "--metrics", "--flush-timeout", "1s"],
        &env,
        &demo_session(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tenant:******@127.0.0.1"), "{stderr}");
    assert!(!stderr.contains(secret), "{stderr}");
    let files = files_under(&spool);
    assert!(!files.is_empty(), "nothing was spooled: {stderr}");
    for f in &files {
        assert!(
            !f.to_string_lossy().contains(secret),
            "a spool path names it: {}",
            f.display()
        );
    }
    for args in [&["status"][..], &["config", "show"][..]] {
        let out = run_binary(args, &env, b"");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains(secret), "{args:?}: {all}");
    }
}
