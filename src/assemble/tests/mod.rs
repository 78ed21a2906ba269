//! The assembly on its own: protocol lines in, span trees checked field by field.

use super::*;
use crate::assemble::span::Value;
use crate::protocol::decode_line;
use crate::testing::check_tree;

mod attribution;
mod bounds;
mod continued;
mod cost;
mod ids;
mod repairs;
mod semconv;
mod trees;

fn run_with(config: AssembleConfig, lines: &[&str]) -> Output {
    let mut asm = Assembler::new(config);
    let mut out = Output::default();
    for line in lines {
        let rec = decode_line(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
        asm.push(&rec, &mut out);
    }
    asm.finish(&mut out);
    assert_no_dangling_parents(&out.spans);
    out
}

fn run(lines: &[&str]) -> Output {
    run_with(AssembleConfig::default(), lines)
}

/// The invariant: unique ids, every parent id names a span emitted in the same trace.
fn assert_no_dangling_parents(spans: &[Span]) {
    if let Err(e) = check_tree(spans) {
        panic!("{e}");
    }
}

fn by_name<'a>(out: &'a Output, name: &str) -> &'a Span {
    let found: Vec<_> = out.spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(
        found.len(),
        1,
        "exactly one span named {name}: {:#?}",
        names(out)
    );
    found[0]
}

fn names(out: &Output) -> Vec<&str> {
    out.spans.iter().map(|s| s.name.as_str()).collect()
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

fn bool_attr(s: &Span, key: &str) -> Option<bool> {
    match s.attr(key) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

const MS: u64 = 1_000_000;
