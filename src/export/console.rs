//! A readable tree of each trace on stderr: what a newcomer without a collector sees first.
//!
//! Spans arrive children first and the turn's root last, so spans wait here, grouped by trace,
//! until their root comes; then the whole tree is printed at once. Spans that arrive for a
//! trace already printed (a sub-agent that outlived its parent's turn) are printed as a
//! continuation, and whatever never got a root is printed at shutdown.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::io::Write;
use std::time::{Duration, UNIX_EPOCH};

use crate::assemble::semconv::*;
use crate::assemble::span::{Span, SpanId, Status, TraceId, Value};
use crate::export::{ExportError, Exported};

/// How many printed traces are remembered, to recognise late spans.
const REMEMBER_PRINTED: usize = 10_000;
/// How much of a tool's arguments is shown on its line.
const PREVIEW_CHARS: usize = 72;

pub struct ConsoleExporter {
    out: Box<dyn Write + Send>,
    pending: HashMap<TraceId, Vec<Span>>,
    /// First-seen order of pending traces, for a stable order at shutdown.
    order: Vec<TraceId>,
    printed: HashSet<TraceId>,
    printed_order: VecDeque<TraceId>,
}

impl ConsoleExporter {
    pub fn stderr() -> Self {
        Self::to(Box::new(std::io::stderr()))
    }

    pub fn to(out: Box<dyn Write + Send>) -> Self {
        ConsoleExporter {
            out,
            pending: HashMap::new(),
            order: Vec::new(),
            printed: HashSet::new(),
            printed_order: VecDeque::new(),
        }
    }

    pub fn export(&mut self, spans: &[Span]) -> Result<Exported, ExportError> {
        let mut ready = Vec::new();
        for span in spans {
            if !self.pending.contains_key(&span.trace_id) {
                self.order.push(span.trace_id);
            }
            self.pending
                .entry(span.trace_id)
                .or_default()
                .push(span.clone());
            let late = self.printed.contains(&span.trace_id);
            if (span.parent_span_id.is_none() || late) && !ready.contains(&span.trace_id) {
                ready.push(span.trace_id);
            }
        }
        for trace in ready {
            let continued = self.printed.contains(&trace);
            self.print(trace, continued)?;
        }
        Ok(Exported {
            accepted: spans.len() as u64,
            rejected: 0,
        })
    }

    fn print(&mut self, trace: TraceId, continued: bool) -> Result<(), ExportError> {
        let Some(spans) = self.pending.remove(&trace) else {
            return Ok(());
        };
        self.order.retain(|t| *t != trace);
        let text = render(&spans, continued);
        self.out
            .write_all(text.as_bytes())
            .map_err(|source| ExportError::Io {
                target: "stderr".into(),
                source,
            })?;
        if self.printed.insert(trace) {
            self.printed_order.push_back(trace);
            if self.printed_order.len() > REMEMBER_PRINTED {
                if let Some(old) = self.printed_order.pop_front() {
                    self.printed.remove(&old);
                }
            }
        }
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), ExportError> {
        self.out.flush().map_err(|source| ExportError::Io {
            target: "stderr".into(),
            source,
        })
    }

    /// Prints every trace still waiting for its root.
    pub fn finish(&mut self) -> Result<(), ExportError> {
        for trace in std::mem::take(&mut self.order) {
            let continued = self.printed.contains(&trace);
            self.print(trace, continued)?;
        }
        self.flush()
    }
}

fn str_attr<'a>(s: &'a Span, key: &str) -> Option<&'a str> {
    s.attr(key).and_then(Value::as_str)
}

fn int_attr(s: &Span, key: &str) -> Option<i64> {
    match s.attr(key) {
        Some(Value::Int(n)) => Some(*n),
        _ => None,
    }
}

fn flag(s: &Span, key: &str) -> bool {
    matches!(s.attr(key), Some(Value::Bool(true)))
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
            if let Some(Value::StrList(r)) = s.attr(GEN_AI_RESPONSE_FINISH_REASONS) {
                d.push(r.join(","));
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
    if let Status::Error(m) = &s.status {
        d.push(format!("ERROR {}", preview(m)));
    }
    d
}

/// The tree of one trace's spans as text.
pub fn render(spans: &[Span], continued: bool) -> String {
    let ids: HashSet<SpanId> = spans.iter().map(|s| s.span_id).collect();
    let mut children: HashMap<SpanId, Vec<&Span>> = HashMap::new();
    let mut roots: Vec<&Span> = Vec::new();
    for s in spans {
        match s.parent_span_id {
            Some(p) if ids.contains(&p) => children.entry(p).or_default().push(s),
            _ => roots.push(s),
        }
    }
    let order =
        |v: &mut Vec<&Span>| v.sort_by(|a, b| (a.start_ns, &a.name).cmp(&(b.start_ns, &b.name)));
    order(&mut roots);
    for v in children.values_mut() {
        order(v);
    }
    let first = roots.first().copied().unwrap_or(&spans[0]);
    let when = humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_nanos(first.start_ns));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}trace {} · session {} · {}",
        if continued { "(continued) " } else { "" },
        first.trace_id,
        str_attr(first, SESSION_ID).unwrap_or("?"),
        when
    );
    let base = roots.iter().map(|s| s.start_ns).min().unwrap_or(0);
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
        duration(s.end_ns.saturating_sub(s.start_ns)),
        duration(s.start_ns.saturating_sub(base))
    );
    for d in details(s) {
        text.push_str(" · ");
        text.push_str(&d);
    }
    out.push_str(&text);
    out.push('\n');
}

fn walk(out: &mut String, s: &Span, children: &HashMap<SpanId, Vec<&Span>>, lead: &str, base: u64) {
    let Some(kids) = children.get(&s.span_id) else {
        return;
    };
    for (i, kid) in kids.iter().enumerate() {
        let last = i + 1 == kids.len();
        line(out, kid, lead, if last { "└─ " } else { "├─ " }, base);
        let next = format!("{lead}{}", if last { "   " } else { "│  " });
        walk(out, kid, children, &next, base);
    }
}
