//! The scale tier as local processes: a gateway collector on deploy/scale/gateway-collector.yaml
//! (`load_balancing` by trace id, static resolver) in front of two sampler collectors on
//! deploy/scale/sampler-collector.yaml (`tail_sampling`), each sending what it keeps to a Jaeger
//! of its own, so that where a trace went shows. Every kept trace must arrive whole through one
//! sampler; every turn with an error is kept; slow ok turns are kept and fast ok ones dropped
//! (the "rest" share set to 0 % here, so that the outcome is exact). Then one sampler is killed
//! mid-run, and what happens to the traces in flight is measured (deploy/scale/README.md).
//! albedo-otel's own GenAI metrics go through the gateway to Prometheus (deploy/scale/'s
//! flags), whose totals must be the spans' across runs, over gRPC and HTTP.
//!
//! Needs `scripts/stack build` (Go); see tests/support/stack.rs.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::support::exporter::stream_seeded;
use crate::support::otlp_json::by_key;
use crate::support::prometheus::Prometheus;
use crate::support::scale::*;
use crate::support::stack::Tools;
use crate::support::team::{checkout, session, span_totals, wait_for_totals, ALICE, BOB};
use crate::support::traces::{assembled, send_with, traces_of, write_input};
use crate::support::*;

#[test]
fn each_trace_is_kept_or_dropped_whole_by_one_sampler_as_the_policy_says() {
    let Some(tools) = Tools::find() else { return };
    let tier = tier(&tools, "stack-scale", "2s", |_| GATEWAY.to_string());
    let input = write_input(&tier.dir, "turns", &sessions(60, "scale"));
    let spans = by_key(assembled(&input));
    let (kept, classes) = kept_by_policy(&spans);
    assert!(
        classes.len() == 3 && classes.values().all(|n| *n >= 20),
        "the input lacks a kind of turn: {classes:?}"
    );

    let outcome = run(&tier, &input, &spans, &[]);
    assert!(
        outcome.routed.iter().all(|n| *n > 0),
        "the gateway sent everything one way: {:?}",
        outcome.routed
    );
    assert_eq!(outcome.split, 0, "traces reached both samplers");
    assert!(
        outcome.problems.is_empty(),
        "{} traces not as the policy says:\n{}",
        outcome.problems.len(),
        outcome.problems.join("\n")
    );
    eprintln!(
        "{} traces ({classes:?}) through the gateway: {} and {} to the two samplers; {} kept, each whole, none split",
        traces_of(&spans).len(),
        outcome.routed[0],
        outcome.routed[1],
        kept.len()
    );
}

/// The check above can fail: a gateway that routes by span name and call id instead of by
/// trace id splits turns across the samplers, and the same check reports them.
#[test]
fn a_gateway_that_splits_traces_is_caught_by_the_same_check() {
    let Some(tools) = Tools::find() else { return };
    let tier = tier(&tools, "stack-scale-split", "2s", |dir| {
        let text = std::fs::read_to_string(repo_file(GATEWAY)).unwrap();
        assert!(
            text.contains("routing_key: traceID"),
            "{GATEWAY} no longer routes by trace id"
        );
        let split = text.replace(
            "routing_key: traceID",
            "routing_key: attributes\n    routing_attributes: [span.name, gen_ai.tool.call.id]",
        );
        let file = dir.join("gateway-by-call.yaml");
        std::fs::write(&file, split).unwrap();
        file.display().to_string()
    });
    let input = write_input(&tier.dir, "generated", &stream_seeded(20, 41).0);
    let spans = by_key(assembled(&input));
    // One span per export, so that each span is routed on its own.
    let outcome = run(&tier, &input, &spans, &["--batch-size", "1"]);
    // A split trace shows in both Jaegers, or in one only partly: the other sampler saw no
    // error in its part and dropped it.
    let reported = outcome
        .problems
        .iter()
        .filter(|p| p.contains("not whole through one sampler"))
        .count();
    assert!(
        reported > 0,
        "routing by span name and call id split no trace that the check saw ({} in both Jaegers): {:?}",
        outcome.split,
        outcome.problems
    );
    eprintln!(
        "routing by span: {reported} traces reported split, {} of them in both Jaegers; the first: {}",
        outcome.split,
        outcome.problems[0]
    );
}

/// One sampler is killed (SIGKILL, as a crash or an OOM kill) while it holds turns waiting
/// for their decision; more turns are sent while it is down; then it starts again on its port.
/// What this measures is written in deploy/scale/README.md.
#[test]
fn a_sampler_killed_mid_run_loses_the_turns_it_held_and_splits_none() {
    let Some(tools) = Tools::find() else { return };
    // A 10-second decision wait leaves time to kill the sampler while it holds the turns.
    let mut tier = tier(&tools, "stack-scale-kill", "10s", |_| GATEWAY.to_string());
    let before = write_input(&tier.dir, "before", &sessions(30, "before"));
    let during = write_input(&tier.dir, "during", &sessions(30, "during"));
    let (spans_before, spans_during) = (by_key(assembled(&before)), by_key(assembled(&during)));
    let (traces_before, traces_during) = (traces_of(&spans_before), traces_of(&spans_during));
    let (kept_before, _) = kept_by_policy(&spans_before);
    let (kept_during, _) = kept_by_policy(&spans_during);
    let gateway = format!("http://127.0.0.1:{}", tier.gateway.grpc);

    send_with(&before, "grpc", &gateway, &[]);
    let total = traces_before.len() as u64;
    wait_for(
        Duration::from_secs(30),
        "both samplers to hold the first turns",
        || received(&tier.samplers[0]) + received(&tier.samplers[1]) >= total,
    );
    let held = [received(&tier.samplers[0]), received(&tier.samplers[1])];
    assert!(
        held[1] > 0,
        "the gateway sent the sampler to be killed nothing: {held:?}"
    );
    let undecided = held[1] - decided(&tier.samplers[1]);
    tier.samplers[1].proc.kill();
    let killed_at = Instant::now();

    send_with(&during, "grpc", &gateway, &[]);
    let port = tier.samplers[1].grpc;
    let again = sampler(
        &tools,
        &tier.jaegers[1],
        &tier.dir,
        "sampler-2-again",
        port,
        "10s",
    );
    let down_for = killed_at.elapsed();
    tier.samplers[1] = again;

    // The gateway keeps what it could not send to the dead sampler and retries: wait until
    // every turn sent meanwhile has reached a sampler, then until every one is decided.
    let during_total = traces_during.len() as u64;
    let first_share_later = || received(&tier.samplers[0]) - held[0];
    let redelivered = poll_until(Duration::from_secs(90), Duration::from_millis(100), || {
        first_share_later() + received(&tier.samplers[1]) >= during_total
    });
    let redelivered_after = killed_at.elapsed();
    wait_for(Duration::from_secs(30), "the samplers' decisions", || {
        tier.samplers.iter().all(|s| decided(s) >= received(s))
    });

    let mut all = traces_before.clone();
    all.extend(traces_during.clone());
    let shown = [0, 1].map(|i| shown(&tier, i, &all, Duration::from_secs(10)));
    let shown_after = killed_at.elapsed();
    let split = shown[0]
        .keys()
        .filter(|t| shown[1].contains_key(*t))
        .count();
    assert_eq!(split, 0, "a trace reached both samplers");
    let partial: Vec<&String> = shown
        .iter()
        .flat_map(|s| s.iter())
        .filter(|(t, spans)| all.get(*t) != Some(spans))
        .map(|(t, _)| t)
        .collect();
    assert!(partial.is_empty(), "traces arrived in part: {partial:?}");
    let arrived = |kept: &BTreeSet<String>| {
        kept.iter()
            .filter(|t| shown.iter().any(|s| s.contains_key(*t)))
            .count()
    };
    let (arrived_before, arrived_during) = (arrived(&kept_before), arrived(&kept_during));
    let lost = kept_before.len() - arrived_before;
    // Only turns the killed sampler held undecided can be lost; everything the other kept
    // arrived (its own count of the traces it kept against what its Jaeger shows).
    assert!(
        undecided > 0,
        "the sampler had decided everything before it was killed"
    );
    assert!(
        lost > 0 && lost as u64 <= undecided,
        "{lost} kept turns lost, of {undecided} the killed sampler held"
    );
    let kept_by_survivor = shown[0]
        .keys()
        .filter(|t| kept_before.contains(*t) || kept_during.contains(*t))
        .count() as u64;
    assert_eq!(
        sampled(&tier.samplers[0]),
        kept_by_survivor,
        "the surviving sampler's kept turns did not all arrive"
    );
    let before_via_restarted = kept_before
        .iter()
        .filter(|t| shown[1].contains_key(*t))
        .count();
    assert_eq!(
        before_via_restarted, 0,
        "turns the killed sampler held came back"
    );
    assert!(
        redelivered,
        "the gateway did not redeliver the turns sent while a sampler was down"
    );
    assert_eq!(
        arrived_during,
        kept_during.len(),
        "turns sent while a sampler was down were lost"
    );
    eprintln!(
        "killed a sampler holding {undecided} undecided of the {total} turns sent ({} and {} held); down {:.1} s; \
         of the {} kept turns sent before, {arrived_before} arrived ({lost} lost); of the {} kept turns sent while \
         it was down, {arrived_during} arrived: at the samplers {:.1} s after the kill, in Jaeger by {:.1} s",
        held[0],
        held[1],
        down_for.as_secs_f64(),
        kept_before.len(),
        kept_during.len(),
        redelivered_after.as_secs_f64(),
        shown_after.as_secs_f64()
    );
}

/// The gateway's metrics pipeline: albedo-otel's deltas, from runs one after another (one
/// series, two processes; over gRPC, then HTTP), reach Prometheus' OTLP receiver through the
/// gateway, and Prometheus' totals are the spans', person by person, after each run.
#[test]
fn genai_metrics_through_the_gateway_add_up_in_prometheus() {
    let Some(tools) = Tools::find() else { return };
    let dir = scratch("stack-scale-metrics");
    let prometheus = Prometheus::start(&tools, "deploy/scale/prometheus.yml", &[], &dir);
    let otlp = format!("http://127.0.0.1:{}/api/v1/otlp", prometheus.port);
    let tier = tier_with_metrics(
        &tools,
        "stack-scale-metrics",
        "2s",
        |_| GATEWAY.to_string(),
        &otlp,
    );
    let (alice_repo, bob_repo) = (checkout(&ALICE), checkout(&BOB));
    let runs = [
        (session(&dir, &alice_repo, "a1"), "grpc", tier.gateway.grpc),
        (
            session(&dir, &alice_repo, "a2"),
            "http/protobuf",
            tier.gateway.http,
        ),
        (session(&dir, &bob_repo, "b1"), "grpc", tier.gateway.grpc),
    ];
    let mut inputs = Vec::new();
    for (input, protocol, port) in &runs {
        let (input_s, endpoint) = (
            input.display().to_string(),
            format!("http://127.0.0.1:{port}"),
        );
        let args = [
            "replay",
            &input_s,
            "--metrics",
            "--no-spool",
            "--protocol",
            protocol,
        ];
        let run = run_binary(&[&args[..], &["--endpoint", &endpoint]].concat(), &[], b"");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            run.status.success() && !stderr.contains("WARN"),
            "{protocol}: {stderr}"
        );
        inputs.push(input.as_path());
        let expected = span_totals(&inputs);
        if let Err(e) = wait_for_totals(&prometheus, &expected, Duration::from_secs(30)) {
            panic!(
                "through the gateway, after {} run(s): {e}\n\nthe gateway's log ends:\n{}",
                inputs.len(),
                crate::support::stack::tail(&tier.gateway.proc.log(), 10)
            );
        }
    }
    let totals = span_totals(&inputs);
    let (alice, bob) = (&totals[ALICE.user], &totals[BOB.user]);
    assert!(bob.input > 0.0 && bob.cost > 0.0, "{totals:?}");
    assert_eq!(alice.input, 2.0 * bob.input, "{totals:?}");
    eprintln!("GenAI metrics through the gateway into Prometheus: {totals:?}");
}
