//! What the fuzzer found, kept: every input in fuzz/regressions/<target> and fuzz/seeds/<target>
//! goes through the same driver the fuzz target runs (`albedo_otel::testing::fuzz`), and must
//! neither panic nor break the assembly's invariant.

use albedo_otel::testing::fuzz;

fn replay(target: &str, driver: fn(&[u8]) -> Result<(), String>) -> usize {
    let mut inputs = 0;
    for dir in ["fuzz/regressions", "fuzz/seeds"] {
        let dir = format!("{}/{dir}/{target}", env!("CARGO_MANIFEST_DIR"));
        // A target the fuzzer never broke has no regressions folder.
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            assert_eq!(driver(&data), Ok(()), "{}", path.display());
            inputs += 1;
        }
    }
    inputs
}

#[test]
fn every_kept_input_of_the_line_fuzzer_gives_a_whole_tree() {
    assert!(replay("decode_assemble", fuzz::decode_assemble) >= 3);
}

#[test]
fn every_kept_input_of_the_claude_code_fuzzer_gives_a_whole_tree() {
    assert!(replay("claude_code", fuzz::claude_code) >= 2);
}

#[test]
fn every_kept_input_of_the_agents_fuzzer_gives_a_whole_tree() {
    assert!(replay("agents", fuzz::agents) >= 3);
}

proptest::proptest! {
    // The fuzzer runs apart from CI; this keeps its driver honest on every run: random
    // interleavings of the four agents' payloads must build a whole tree.
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
    #[test]
    fn random_interleavings_of_every_agents_payloads_give_a_whole_tree(
        data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)
    ) {
        proptest::prop_assert_eq!(fuzz::agents(&data), Ok(()));
    }
}
