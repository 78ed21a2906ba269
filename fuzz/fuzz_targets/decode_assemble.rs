//! Arbitrary bytes through the line reader, the decoder and the assembly. Besides not
//! panicking, the output must keep the assembly's invariant: unique span ids, no dangling
//! parent, every end at or after its start.
#![no_main]

use std::sync::OnceLock;

use albedo_otel::assemble::{AssembleConfig, Assembler, Output};
use albedo_otel::testing::check_tree;
use albedo_otel::protocol::decode_line;
use albedo_otel::sources::stream::read_lines;
use libfuzzer_sys::fuzz_target;

/// Built once: compiling the scrubber's regexes per input would be most of the time.
fn config() -> AssembleConfig {
    static CONFIG: OnceLock<AssembleConfig> = OnceLock::new();
    CONFIG
        .get_or_init(|| AssembleConfig {
            // Small caps, so the fuzzer reaches the eviction paths too.
            max_sessions: 4,
            max_calls_per_turn: 8,
            ..AssembleConfig::default()
        })
        .clone()
}

fuzz_target!(|data: &[u8]| {
    let mut asm = Assembler::new(config());
    let mut out = Output::default();
    let _ = read_lines("fuzz".into(), data, 4096, |chunk| {
        for (_, line) in chunk.lines() {
            if let Ok(record) = line.and_then(decode_line) {
                asm.push(&record, &mut out);
            }
        }
        true
    });
    asm.finish(&mut out);
    if let Err(e) = check_tree(&out.spans) {
        panic!("{e}");
    }
});
