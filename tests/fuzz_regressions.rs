//! What the fuzzer found, kept: every input in fuzz/regressions and fuzz/seeds goes through the
//! reader, the decoder and the assembly (with the fuzz target's small caps), and the output must
//! pass `check_tree`.

use albedo_otel::assemble::{AssembleConfig, Assembler, Output};
use albedo_otel::protocol::decode_line;
use albedo_otel::sources::stream::read_lines;
use albedo_otel::testing::check_tree;

#[test]
fn every_kept_fuzz_input_gives_a_whole_tree() {
    let config = AssembleConfig {
        max_sessions: 4,
        max_calls_per_turn: 8,
        ..AssembleConfig::default()
    };
    let mut inputs = 0;
    for dir in ["fuzz/regressions", "fuzz/seeds"] {
        for entry in std::fs::read_dir(format!("{}/{dir}", env!("CARGO_MANIFEST_DIR"))).unwrap() {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let mut asm = Assembler::new(config.clone());
            let mut out = Output::default();
            read_lines("fuzz".into(), &data[..], 4096, |chunk| {
                for (_, line) in chunk.lines() {
                    if let Ok(record) = line.and_then(decode_line) {
                        asm.push(&record, &mut out);
                    }
                }
                true
            })
            .unwrap();
            asm.finish(&mut out);
            assert_eq!(check_tree(&out.spans), Ok(()), "{}", path.display());
            inputs += 1;
        }
    }
    assert!(inputs >= 3);
}
