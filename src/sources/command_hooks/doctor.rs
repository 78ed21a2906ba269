//! The test behind `albedo-otel doctor`: a test session goes through the installed hook
//! command like any other, and the daemon answers it by sending a test trace with the
//! settings that session was handed off with, then writes down what the collector said. So
//! the whole route the host runs is tested: the command, the hand-off, the configuration
//! file, the daemon, the network, the collector and its keys.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::assemble::span::{Attr, Span, SpanId, SpanKind, Status, TraceId, Value};
use crate::config::{ExporterKind, Settings};
use crate::export::otlp::{Encoder, OtlpExporter};
use crate::export::{ExportError, SpanExporter};

/// The hook event name of a doctor's test payload.
pub const EVENT: &str = "AlbedoOtelDoctor";

/// What the daemon found, for the doctor to print.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub ok: bool,
    /// One line: what happened and, on failure, what to do.
    pub message: String,
    /// The test trace's id, to find it in a viewer.
    pub trace_id: String,
}

/// Where the daemon writes the answer to test `id`.
pub fn answer_path(dir: &Path, id: &str) -> PathBuf {
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(64)
        .collect();
    dir.join(format!("doctor-{safe}.json"))
}

/// A single span, named `albedo-otel doctor`, with a fresh trace id.
pub fn test_span() -> Span {
    let now = crate::clock::unix_ns();
    let seed = now ^ (u64::from(std::process::id()) << 32);
    Span {
        trace_id: TraceId::from((u128::from(seed) << 64) | u128::from(seed.rotate_left(17) | 1)),
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

/// Sends the test trace with `settings` and says, in one line, how it went; a setting of our
/// own whose value could not be read (it took its default) fails the test and is named.
pub fn probe(settings: &Settings, timeout: Duration) -> Answer {
    let mut answer = send_test_trace(settings, timeout);
    if !settings.unread.is_empty() {
        answer.ok = false;
        answer.message = format!(
            "{}; but {} (fix it where the agent runs: its environment, or the configuration file)",
            answer.message,
            settings.unread.join("; ")
        );
    }
    answer
}

fn send_test_trace(settings: &Settings, timeout: Duration) -> Answer {
    let span = test_span();
    let trace_id = span.trace_id.to_string();
    let answer = |ok, message| Answer {
        ok,
        message,
        trace_id: trace_id.clone(),
    };
    let (ExporterKind::Otlp, Some(otlp)) = (&settings.exporter, &settings.otlp) else {
        return answer(
            true,
            "spans go to a file or the console: no collector to test".into(),
        );
    };
    let payload = Encoder::new(&settings.pipeline.resource)
        .encode(std::slice::from_ref(&span))
        .unwrap_or_else(|mismatch| mismatch.fallback);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return answer(false, format!("cannot start a runtime: {e}")),
    };
    let sent = runtime.block_on(async {
        let exporter = OtlpExporter::new(otlp.clone())?;
        exporter.export(payload, Some(timeout)).await
    });
    match sent {
        Ok(done) if done.accepted == 1 => answer(
            true,
            format!(
                "the collector at {} ({}) accepted a test trace",
                otlp.shown_endpoint(),
                otlp.protocol.as_str()
            ),
        ),
        Ok(_) => answer(
            false,
            format!(
                "the collector at {} answered, but refused the test span",
                otlp.shown_endpoint()
            ),
        ),
        Err(e) => answer(false, explain(&e, settings)),
    }
}

/// A failed export as one line, with the fix.
pub fn explain(e: &ExportError, settings: &Settings) -> String {
    let Some(otlp) = &settings.otlp else {
        return e.to_string();
    };
    let headers = if otlp.headers.is_empty() {
        match &settings.file {
            Some(f) => format!("{} has no [otlp.headers]", f.path.display()),
            None => "no headers are set, and there is no configuration file".into(),
        }
    } else {
        let names: Vec<&str> = otlp.headers.iter().map(|(k, _)| k.as_str()).collect();
        format!("headers sent: {}", names.join(", "))
    };
    match e {
        ExportError::Rejected { status, .. }
            if status.contains("401")
                || status.contains("403")
                || status.contains("Unauthenticated")
                || status.contains("PermissionDenied") =>
        {
            format!(
                "{} from the collector at {}: the API key is missing or wrong ({headers}); set it with `albedo-otel config set otlp.headers.<name> <key>`",
                status.trim_start_matches("HTTP ").trim_start_matches("gRPC "),
                otlp.shown_endpoint()
            )
        }
        ExportError::Unreachable { reason, .. } => format!(
            "no collector at {} ({reason}); start one, or point at yours with `albedo-otel config set otlp.endpoint <url>`",
            host_port(&otlp.shown_endpoint())
        ),
        other => other.to_string(),
    }
}

fn host_port(endpoint: &str) -> String {
    endpoint
        .parse::<http::Uri>()
        .ok()
        .and_then(|u| {
            let host = u.host()?.to_string();
            Some(match u.port_u16() {
                Some(p) => format!("{host}:{p}"),
                None => host,
            })
        })
        .unwrap_or_else(|| endpoint.to_string())
}

/// Writes `answer` where the doctor waits for it (0600: it is about the user's setup).
pub fn write_answer(dir: &Path, id: &str, answer: &Answer) -> std::io::Result<()> {
    let path = answer_path(dir, id);
    let text = serde_json::to_vec(answer).map_err(std::io::Error::other)?;
    crate::fs::replace_durably(&path, &text)
}
