//! Arbitrary interleavings of every agent's hook payloads through the daemon's dispatch, then
//! validation and the assembly (`albedo_otel::testing::fuzz::agents`): nothing panics, and the
//! spans keep the assembly's invariant.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = albedo_otel::testing::fuzz::agents(data) {
        panic!("{e}");
    }
});
