//! Writes a generated, interleaved protocol stream to stdout:
//! `cargo run --release --example gen_stream -- SESSIONS [TURNS]`.
use std::io::Write;

use albedo_otel::testing::{generate, GenConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let sessions = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let turns = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let (lines, expected) = generate(&GenConfig {
        sessions,
        turns_per_session: turns,
        ..GenConfig::default()
    });
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for l in lines {
        writeln!(out, "{l}").unwrap();
    }
    eprintln!("{} events, {} spans", expected.events, expected.spans());
}
