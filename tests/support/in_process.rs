//! What the exporter makes of a stream, assembled in the test's own process: the spans a
//! viewer should show, to compare with what it does show.

use albedo_otel::assemble::{AssembleConfig, Assembler, ContentPolicy, Output, Span};
use albedo_otel::protocol::decode_line;

/// The spans of `lines`, tool content captured, messages only with `capture_messages` (who
/// and where are left out: the pipeline, not the assembly, adds them).
pub fn assemble_lines(lines: &[String], capture_messages: bool) -> Vec<Span> {
    let d = ContentPolicy::default();
    let config = AssembleConfig {
        policy: ContentPolicy::new(true, capture_messages, d.max_value_len, d.scrubber),
        ..AssembleConfig::default()
    };
    let mut asm = Assembler::new(config);
    let mut out = Output::default();
    for l in lines {
        asm.push(&decode_line(l.as_bytes()).unwrap(), &mut out);
    }
    asm.finish(&mut out);
    out.spans
}
