//! The library API a Rust host embeds, and the albedo extension on a real BEAM.

mod beam;
mod host_api;
