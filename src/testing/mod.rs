//! Test support that ships with the crate behind the `testing` feature: tests, benchmarks,
//! the fuzzer and load tests use it; an embedder's build never compiles it.

pub mod fuzz;
mod generate;

pub use generate::{generate, Expected, GenConfig, Rng};

use std::collections::HashSet;

use crate::assemble::span::{Span, SpanId, TraceId};

/// Checks what every output of the assembly must satisfy: span ids unique, every parent id
/// present in the same trace, no span ending before it starts. Tests, property tests and the
/// fuzzer hold the assembly to it.
pub fn check_tree(spans: &[Span]) -> Result<(), String> {
    let ids: HashSet<(TraceId, SpanId)> = spans.iter().map(|s| (s.trace_id, s.span_id)).collect();
    if ids.len() != spans.len() {
        return Err(format!("{} spans share an id", spans.len() - ids.len()));
    }
    for s in spans {
        if s.end_ns < s.start_ns {
            return Err(format!("{} ends before it starts", s.name));
        }
        if let Some(p) = s.parent_span_id {
            if !ids.contains(&(s.trace_id, p)) {
                return Err(format!("{} has a dangling parent {p}", s.name));
            }
        }
    }
    Ok(())
}

/// The spans `records` make, as the exporter assembles them (each record validated first),
/// checked to form trees: how an adapter's or an importer's records are read in its tests.
pub fn assembled(records: &[crate::protocol::Record<'_>]) -> Vec<Span> {
    use crate::assemble::{AssembleConfig, Assembler, Output};
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    for r in records {
        if let Err(e) = crate::protocol::validate(r) {
            panic!("an invalid record {r:?}: {e:?}");
        }
        asm.push(r, &mut out);
    }
    asm.finish(&mut out);
    assert_eq!(check_tree(&out.spans), Ok(()));
    out.spans
}
