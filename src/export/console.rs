//! A readable tree of each trace on stderr: what a newcomer without a collector sees first.
//!
//! Spans arrive children first and the turn's root last, so spans wait here, grouped by trace,
//! until their root comes; then the whole tree is printed at once. Spans that arrive for a
//! trace already printed (a sub-agent that outlived its parent's turn) are printed as a
//! continuation, and whatever never got a root is printed at shutdown. It reads the same OTLP
//! bytes every exporter is given, so what it shows is what a collector would receive.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, UNIX_EPOCH};

use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::{status::StatusCode, Span};

use crate::assemble::semconv::*;
use crate::export::{ready, Batch, ExportError, ExportFuture, Exported, SpanExporter};

/// How many printed traces are remembered, to recognise late spans.
const REMEMBER_PRINTED: usize = 10_000;
/// How much of a tool's arguments is shown on its line.
const PREVIEW_CHARS: usize = 72;

type TraceId = Vec<u8>;

pub struct ConsoleExporter {
    state: Mutex<State>,
}

struct State {
    out: Box<dyn Write + Send>,
    pending: HashMap<TraceId, Vec<Span>>,
    /// First-seen order of pending traces, for a stable order at shutdown.
    order: Vec<TraceId>,
    printed: HashSet<TraceId>,
    printed_order: VecDeque<TraceId>,
}

fn io(source: std::io::Error) -> ExportError {
    ExportError::Io {
        target: "stderr".into(),
        source,
    }
}

impl ConsoleExporter {
    pub fn stderr() -> Self {
        Self::to(Box::new(std::io::stderr()))
    }

    pub fn to(out: Box<dyn Write + Send>) -> Self {
        ConsoleExporter {
            state: Mutex::new(State {
                out,
                pending: HashMap::new(),
                order: Vec::new(),
                printed: HashSet::new(),
                printed_order: VecDeque::new(),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while printing leaves nothing half-done that matters here.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SpanExporter for ConsoleExporter {
    fn export(&self, batch: Batch, _timeout: Option<Duration>) -> ExportFuture {
        let result = batch.decode().and_then(|request| {
            let spans = request
                .resource_spans
                .into_iter()
                .flat_map(|r| r.scope_spans)
                .flat_map(|s| s.spans);
            self.state().take(spans)?;
            Ok(Exported {
                accepted: batch.spans,
                rejected: 0,
            })
        });
        ready(result)
    }

    fn force_flush(&self) -> Result<(), ExportError> {
        self.state().out.flush().map_err(io)
    }

    /// Prints every trace still waiting for its root.
    fn shutdown_with_timeout(&self, _timeout: Duration) -> Result<(), ExportError> {
        let mut state = self.state();
        for trace in std::mem::take(&mut state.order) {
            let continued = state.printed.contains(&trace);
            state.print(trace, continued)?;
        }
        state.out.flush().map_err(io)
    }

    fn describe(&self) -> String {
        "the console (stderr)".into()
    }
}

impl State {
    fn take(&mut self, spans: impl Iterator<Item = Span>) -> Result<(), ExportError> {
        let mut ready = Vec::new();
        for span in spans {
            let trace = span.trace_id.clone();
            if !self.pending.contains_key(&trace) {
                self.order.push(trace.clone());
            }
            let late = self.printed.contains(&trace);
            let root = span.parent_span_id.is_empty();
            self.pending.entry(trace.clone()).or_default().push(span);
            if (root || late) && !ready.contains(&trace) {
                ready.push(trace);
            }
        }
        for trace in ready {
            let continued = self.printed.contains(&trace);
            self.print(trace, continued)?;
        }
        Ok(())
    }

    fn print(&mut self, trace: TraceId, continued: bool) -> Result<(), ExportError> {
        let Some(spans) = self.pending.remove(&trace) else {
            return Ok(());
        };
        self.order.retain(|t| *t != trace);
        let text = render(&spans, continued);
        self.out.write_all(text.as_bytes()).map_err(io)?;
        if self.printed.insert(trace.clone()) {
            self.printed_order.push_back(trace);
            if self.printed_order.len() > REMEMBER_PRINTED {
                if let Some(old) = self.printed_order.pop_front() {
                    self.printed.remove(&old);
                }
            }
        }
        Ok(())
    }
}

fn attr<'a>(s: &'a Span, key: &str) -> Option<&'a Value> {
    s.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

fn str_attr<'a>(s: &'a Span, key: &str) -> Option<&'a str> {
    match attr(s, key) {
        Some(Value::StringValue(v)) => Some(v),
        _ => None,
    }
}

fn int_attr(s: &Span, key: &str) -> Option<i64> {
    match attr(s, key) {
        Some(Value::IntValue(n)) => Some(*n),
        _ => None,
    }
}

fn double_attr(s: &Span, key: &str) -> Option<f64> {
    match attr(s, key) {
        Some(Value::DoubleValue(n)) => Some(*n),
        _ => None,
    }
}

/// `$0.0123`: a model call costs cents or less, so four places show it.
fn dollars(usd: f64) -> String {
    format!("${usd:.4}")
}

fn flag(s: &Span, key: &str) -> bool {
    matches!(attr(s, key), Some(Value::BoolValue(true)))
}

fn plural(n: i64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `1.23s`, `340ms`, `2m03s`.
pub fn duration(ns: u64) -> String {
    let ms = ns / 1_000_000;
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.2}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

fn preview(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= PREVIEW_CHARS {
        flat
    } else {
        let cut: String = flat.chars().take(PREVIEW_CHARS - 1).collect();
        format!("{cut}…")
    }
}

fn details(s: &Span) -> Vec<String> {
    let mut d = Vec::new();
    match str_attr(s, GEN_AI_OPERATION_NAME) {
        Some(OP_INVOKE_AGENT) => {
            if let Some(n) = int_attr(s, ALBEDO_TURN_NUMBER) {
                d.push(format!("turn {n}"));
            }
            let tools = int_attr(s, ALBEDO_TURN_TOOL_CALLS).unwrap_or(0);
            let models = int_attr(s, ALBEDO_TURN_MODEL_CALLS).unwrap_or(0);
            d.push(format!(
                "{} tool call{}, {} model call{}",
                tools,
                plural(tools),
                models,
                plural(models)
            ));
            if models > 0 {
                d.push(format!(
                    "tokens {} in / {} out",
                    int_attr(s, ALBEDO_TURN_INPUT_TOKENS).unwrap_or(0),
                    int_attr(s, ALBEDO_TURN_OUTPUT_TOKENS).unwrap_or(0)
                ));
            }
            if let Some(cost) = double_attr(s, ALBEDO_TURN_COST) {
                d.push(dollars(cost));
            }
            if let Some(r) = str_attr(s, ALBEDO_TURN_REASON) {
                d.push(format!("ended: {r}"));
            }
            if !s.events.is_empty() {
                let stops = s.events.len() as i64;
                d.push(format!("{stops} stop{}", plural(stops)));
            }
        }
        Some(OP_CHAT) => {
            let input = int_attr(s, GEN_AI_USAGE_INPUT_TOKENS).unwrap_or(0);
            let cached = int_attr(s, GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS).unwrap_or(0);
            let output = int_attr(s, GEN_AI_USAGE_OUTPUT_TOKENS).unwrap_or(0);
            if cached > 0 {
                d.push(format!(
                    "tokens {input} in ({cached} cached) / {output} out"
                ));
            } else {
                d.push(format!("tokens {input} in / {output} out"));
            }
            if let Some(cost) = double_attr(s, GEN_AI_USAGE_COST) {
                d.push(dollars(cost));
            }
            if let Some(Value::ArrayValue(r)) = attr(s, GEN_AI_RESPONSE_FINISH_REASONS) {
                let reasons: Vec<&str> = r
                    .values
                    .iter()
                    .filter_map(|v| match v.value.as_ref()? {
                        Value::StringValue(s) => Some(s.as_str()),
                        _ => None,
                    })
                    .collect();
                d.push(reasons.join(","));
            }
        }
        Some(OP_EXECUTE_TOOL) => {
            if let Some(code) = int_attr(s, PROCESS_EXIT_CODE) {
                d.push(format!("exit {code}"));
            }
            if let Some(args) = str_attr(s, INPUT_VALUE) {
                d.push(preview(args));
            }
        }
        _ => {}
    }
    if flag(s, ALBEDO_SYNTHESIZED) {
        d.push("never reported, stands in for its nested calls".into());
    } else if flag(s, ALBEDO_UNFINISHED) {
        d.push("unfinished".into());
    }
    if let Some(status) = s
        .status
        .as_ref()
        .filter(|st| st.code == StatusCode::Error as i32)
    {
        d.push(format!("ERROR {}", preview(&status.message)));
    }
    d
}

/// The tree of one trace's spans as text.
pub fn render(spans: &[Span], continued: bool) -> String {
    let ids: HashSet<&[u8]> = spans.iter().map(|s| s.span_id.as_slice()).collect();
    let mut children: HashMap<&[u8], Vec<&Span>> = HashMap::new();
    let mut roots: Vec<&Span> = Vec::new();
    for s in spans {
        let parent = s.parent_span_id.as_slice();
        if !parent.is_empty() && ids.contains(parent) {
            children.entry(parent).or_default().push(s);
        } else {
            roots.push(s);
        }
    }
    let order = |v: &mut Vec<&Span>| {
        v.sort_by(|a, b| (a.start_time_unix_nano, &a.name).cmp(&(b.start_time_unix_nano, &b.name)))
    };
    order(&mut roots);
    for v in children.values_mut() {
        order(v);
    }
    let Some(first) = roots.first().copied().or(spans.first()) else {
        return String::new();
    };
    let when = humantime::format_rfc3339_millis(
        UNIX_EPOCH + Duration::from_nanos(first.start_time_unix_nano),
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}trace {} · session {} · {}",
        if continued { "(continued) " } else { "" },
        hex(&first.trace_id),
        str_attr(first, SESSION_ID).unwrap_or("?"),
        when
    );
    let base = roots
        .iter()
        .map(|s| s.start_time_unix_nano)
        .min()
        .unwrap_or(0);
    for root in &roots {
        line(&mut out, root, "", "", base);
        walk(&mut out, root, &children, "", base);
    }
    out.push('\n');
    out
}

fn line(out: &mut String, s: &Span, lead: &str, branch: &str, base: u64) {
    let mut text = format!(
        "{lead}{branch}{}  {} @+{}",
        s.name,
        duration(s.end_time_unix_nano.saturating_sub(s.start_time_unix_nano)),
        duration(s.start_time_unix_nano.saturating_sub(base))
    );
    for d in details(s) {
        text.push_str(" · ");
        text.push_str(&d);
    }
    out.push_str(&text);
    out.push('\n');
}

fn walk(out: &mut String, s: &Span, children: &HashMap<&[u8], Vec<&Span>>, lead: &str, base: u64) {
    let Some(kids) = children.get(s.span_id.as_slice()) else {
        return;
    };
    for (i, kid) in kids.iter().enumerate() {
        let last = i + 1 == kids.len();
        line(out, kid, lead, if last { "└─ " } else { "├─ " }, base);
        let next = format!("{lead}{}", if last { "   " } else { "│  " });
        walk(out, kid, children, &next, base);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
