//! The assembler's bounds when nothing sets them: what keeps its memory and its attributes in
//! check.

/// `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`'s default here: long enough for a command line or an
/// error, short enough that a 64 KiB tool output does not become a 64 KiB attribute.
pub const MAX_VALUE_LEN: usize = 4096;
/// Open sessions kept before the least recently active one is closed and exported.
pub const MAX_SESSIONS: usize = 20_000;
/// Calls remembered per turn (running ones, and finished ones that nested calls may name).
pub const MAX_CALLS_PER_TURN: usize = 4_096;
