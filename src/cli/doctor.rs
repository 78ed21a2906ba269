//! `doctor`: is everything in place? The collector is sent a real test trace; the hook
//! installs, the daemon and the spool are looked at. It says what it found and what to do.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use super::{install, ExportArgs, HookArgs};
use albedo_otel::assemble::span::{Attr, Span, SpanId, SpanKind, Status, TraceId, Value};
use albedo_otel::config::ExporterKind;
use albedo_otel::export::otlp::{Encoder, OtlpExporter};
use albedo_otel::export::SpanExporter;
use albedo_otel::sources::command_hooks::{daemon, journal};

fn test_span() -> Span {
    let now = albedo_otel::clock::unix_ns();
    let seed = now ^ u64::from(std::process::id()) << 32;
    Span {
        trace_id: TraceId::from(u128::from(seed) << 64 | u128::from(seed.rotate_left(17) | 1)),
        span_id: SpanId::from(seed | 1),
        parent_span_id: None,
        name: "albedo-otel doctor".into(),
        kind: SpanKind::Internal,
        start_ns: now,
        end_ns: now + 1_000_000,
        attributes: vec![
            Attr {
                key: "gen_ai.operation.name",
                value: Value::Static("invoke_agent"),
            },
            Attr {
                key: "gen_ai.agent.name",
                value: Value::Static("albedo-otel doctor"),
            },
            Attr {
                key: "session.id",
                value: Value::Str("albedo-otel-doctor".into()),
            },
        ],
        events: Vec::new(),
        links: Vec::new(),
        status: Status::Unset,
    }
}

pub fn run(args: &ExportArgs, hook_args: &HookArgs) -> Result<i32> {
    let mut ok = true;
    println!("albedo-otel {}", env!("CARGO_PKG_VERSION"));
    let resolved = args.settings(Some(hook_args))?;
    match (&resolved.exporter, &resolved.otlp) {
        (ExporterKind::Otlp, Some(settings)) => {
            let keys: Vec<_> = settings.headers.iter().map(|(k, _)| k.as_str()).collect();
            println!(
                "collector: {} ({})",
                settings.endpoint,
                settings.protocol.as_str()
            );
            if !keys.is_empty() {
                println!("  headers: {} (values hidden)", keys.join(", "));
            }
            if let Some(hint) = settings.port_hint() {
                println!("  note: {hint}");
            }
            let resource = &resolved.pipeline.resource;
            let service = resource.service_name().to_string();
            let span = test_span();
            let trace = span.trace_id;
            let payload = Encoder::new(resource)
                .encode(std::slice::from_ref(&span))
                .unwrap_or_else(|mismatch| mismatch.fallback);
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let sent = runtime.block_on(async {
                let exporter = OtlpExporter::new(settings.clone())?;
                exporter
                    .export(payload, Some(Duration::from_secs(10)))
                    .await
            });
            match sent {
                Ok(done) if done.accepted == 1 => {
                    println!("  test trace: accepted by the collector");
                    println!(
                    "  find it: service `{service}`, span `albedo-otel doctor`, trace id {trace}"
                );
                    if settings.endpoint.contains("localhost")
                        || settings.endpoint.contains("127.0.0.1")
                    {
                        println!("    Jaeger: http://localhost:16686/trace/{trace}");
                    }
                }
                Ok(_) => {
                    ok = false;
                    println!("  test trace: the collector answered but refused the span");
                }
                Err(e) => {
                    ok = false;
                    println!("  test trace: NOT delivered: {e}");
                    println!("  start a collector (`docker compose -f deploy/docker-compose.yml up -d`) or set OTEL_EXPORTER_OTLP_ENDPOINT");
                }
            }
        }
        _ => println!("exporter: not OTLP; nothing to check upstream"),
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut places: Vec<(String, PathBuf)> = Vec::new();
    if let Some(h) = &home {
        places.push(("Claude Code (user)".into(), h.join(".claude/settings.json")));
    }
    places.push((
        "Claude Code (this project)".into(),
        PathBuf::from(".claude/settings.json"),
    ));
    if let Some(a) = std::env::var_os("ALBEDO_HOME") {
        places.push(("albedo hooks".into(), PathBuf::from(a).join("hooks.json")));
    }
    for (what, file) in places {
        let state = if install::installed_in(&file) {
            "installed"
        } else {
            "not installed"
        };
        println!("hook, {what}: {state} ({})", file.display());
    }
    match &resolved.hooks.dir {
        Some(dir) => {
            let journals = journal::list(dir).len();
            let running = dir.exists() && daemon::running(dir);
            println!(
                "hook journals: {} ({journals} open), daemon {}",
                dir.display(),
                if running {
                    "running"
                } else {
                    "not running (a hook starts it)"
                }
            );
        }
        None => println!(
            "hook journals: no folder (set --hook-dir, ALBEDO_OTEL_HOOK_DIR, XDG_STATE_HOME or HOME)"
        ),
    }
    Ok(if ok { 0 } else { 1 })
}
