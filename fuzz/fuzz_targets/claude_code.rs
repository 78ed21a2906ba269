//! Arbitrary sequences of Claude Code hook payloads through the command-hook adapter, then
//! validation and the assembly (`albedo_otel::testing::fuzz::claude_code`): nothing panics,
//! and the spans keep the assembly's invariant.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = albedo_otel::testing::fuzz::claude_code(data) {
        panic!("{e}");
    }
});
