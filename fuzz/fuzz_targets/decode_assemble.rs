//! Arbitrary bytes through the line reader, the decoder and the assembly. Besides not
//! panicking, the output must keep the assembly's invariant: unique span ids, no dangling
//! parent, every end at or after its start (`albedo_otel::testing::fuzz::decode_assemble`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = albedo_otel::testing::fuzz::decode_assemble(data) {
        panic!("{e}");
    }
});
