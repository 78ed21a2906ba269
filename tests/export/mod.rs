//! The exporters against real receivers: end to end over gRPC and HTTP, TLS, faults, the close
//! and the drain, metrics, and a real collector in between.

mod close_and_drain;
mod e2e;
mod faults;
pub(crate) mod metrics;
mod rotel_chain;
mod tls;
