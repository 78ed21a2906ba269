//! The one integration test binary (ripgrep's layout): `support` is compiled once, and the
//! folders mirror src/ (sources, assemble, export, cli), with deploy/, dist and the house
//! beside them. `cargo test` runs it all; `cargo test sources::command_hooks::agents::` one
//! folder.

mod support;

mod assemble;
mod cli;
mod deploy;
mod dist;
mod export;
mod house;
mod sources;
mod viewers;
