//! The albedo extension's Erlang side on a real BEAM: the test module calls the typed functions
//! `albedo_otel.gleam` calls (with the terms Gleam passes), checks each protocol line they make,
//! then `albedo_otel_ffi` opens the real binary as a port and plays scripted sessions (nested
//! cell calls, a child session, an exporter killed mid-session, a missing binary); this test's
//! receiver checks the trees that arrived.
//! Needs Erlang (`apt-get install erlang-base`); `.ci/run` installs it.

use std::process::Command;
use std::time::Duration;

use crate::support::*;

#[test]
fn the_extension_ffi_on_a_real_beam() {
    let (Some(erlc), Some(erl)) = (
        require_tool(
            "erlc",
            which("erlc"),
            "install Erlang: `apt-get install erlang-base`",
        ),
        require_tool(
            "erl",
            which("erl"),
            "install Erlang: `apt-get install erlang-base`",
        ),
    ) else {
        return;
    };
    let build = scratch("beam");
    for src in [
        "integrations/albedo/src/albedo_otel_ffi.erl",
        "integrations/albedo/test/albedo_otel_ffi_tests.erl",
    ] {
        let out = Command::new(&erlc)
            .arg("-o")
            .arg(&build)
            .arg(repo_file(src))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{src}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rx = Receiver::start();
    let out = Command::new(&erl)
        .args(["-noshell", "-pa"])
        .arg(&build)
        .args(["-eval", "albedo_otel_ffi_tests:main()."])
        .env("ALBEDO_OTEL_BIN", env!("CARGO_BIN_EXE_albedo-otel"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", rx.grpc_url())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("ALBEDO_OTEL_SPOOL_DIR", temp_dir("spool"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Session A: 7 spans; B's second turn: 2; C: 2. (B's first turn may have died with its
    // exporter.)
    let spans = rx.wait_for_spans(11, Duration::from_secs(30));
    check_invariants(&spans);
    let of = |session: &str| -> Vec<&FlatSpan> {
        spans
            .iter()
            .filter(|s| s.attr("gen_ai.conversation.id").as_deref() == Some(session))
            .collect()
    };
    let a = of("beam-a");
    let kid = of("beam-a-child");
    assert_eq!(
        a.len() + kid.len(),
        7,
        "{}",
        render_trees(&spans, &["session.id"])
    );
    // Session A's and its child's calls: session C has a call `c1` of its own, which comes
    // first or not as the exports fall.
    let by_call = |id: &str| {
        a.iter()
            .chain(&kid)
            .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some(id))
            .copied()
            .unwrap()
    };
    assert_eq!(
        by_call("c1a").span.parent_span_id,
        by_call("c1").span.span_id,
        "nested in the cell"
    );
    // The extension reads no agent name from albedo's session, so every turn is the default
    // agent's.
    let child_turn = kid
        .iter()
        .find(|s| s.span.name == "invoke_agent albedo")
        .unwrap();
    assert_eq!(
        child_turn.span.parent_span_id,
        by_call("sp").span.span_id,
        "the child under agents.spawn"
    );
    assert_eq!(by_call("k1").span.parent_span_id, child_turn.span.span_id);
    let root = a.iter().find(|s| s.span.parent_span_id.is_empty()).unwrap();
    assert_eq!(root.span.name, "invoke_agent albedo");
    let chat = a.iter().find(|s| s.span.name == "chat claude-x").unwrap();
    assert_eq!(chat.span.parent_span_id, root.span.span_id);
    assert_eq!(
        chat.attr("gen_ai.usage.input_tokens").as_deref(),
        Some("10")
    );
    assert_eq!(
        chat.attr("gen_ai.usage.output_tokens").as_deref(),
        Some("5")
    );
    assert_eq!(by_call("c1").span.parent_span_id, root.span.span_id);
    assert!(
        of("beam-b")
            .iter()
            .any(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("b2")),
        "the session went on after the restart"
    );
    assert_eq!(of("beam-c").len(), 2);
    assert!(of("beam-d").is_empty());
}
