//! Ingest: bytes in, protocol records out.
//!
//! [`reader`] splits a stream into numbered lines, [`decode`] turns one line into a
//! [`protocol::Record`] or a [`DecodeError`] that names the field at fault. Nothing here knows
//! about spans; the next stage is [`crate::assemble`].

pub mod claude_code;
pub mod decode;
pub mod protocol;
pub mod reader;
pub mod shared;
pub mod transcript;

pub use decode::{decode_line, encode_record, DecodeError};
pub use protocol::{Event, Record};
pub use reader::{read_lines, LineChunk, DEFAULT_MAX_LINE_BYTES};
pub use shared::{HookEvent, Input, Observed, SharedEvent};
