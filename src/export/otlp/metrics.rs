//! OTLP metrics through the traces' own transports, so a collector that takes our spans gets
//! our metrics with exactly the same headers, TLS, compression, timeout and protocol.
//!
//! Why not the SDK's `PeriodicReader` and `opentelemetry-otlp`'s exporter: that would be a
//! second HTTP and gRPC client configured a second time (and able to disagree with the
//! first), its export failures would be logged through the SDK's own `otel_error!` once per
//! interval, and we need to know, per export, that the collector has no metrics service at
//! all, to stop after one warning.

use std::time::Duration;

use super::{OtlpSettings, Signal, Transport};
use crate::export::{Batch, ExportError, ExportFuture};

/// Sends encoded `ExportMetricsServiceRequest`s; cheap to share.
#[derive(Clone)]
pub struct MetricsExporter {
    transport: Transport,
    endpoint: String,
}

impl MetricsExporter {
    /// Call inside a tokio runtime (the gRPC channel needs one); nothing is sent yet.
    pub fn new(settings: &OtlpSettings) -> Result<Self, ExportError> {
        Ok(MetricsExporter {
            transport: Transport::new(settings, Signal::Metrics)?,
            endpoint: settings.shown_endpoint(),
        })
    }

    /// One attempt; `batch.spans` counts data points here.
    pub fn export(&self, batch: Batch, timeout: Option<Duration>) -> ExportFuture {
        self.transport.send(batch, timeout)
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

/// Whether `e` says the collector has no metrics service at all (HTTP 404, 405 or 501; gRPC
/// `Unimplemented`): a collector configured for traces only. Asking again will not help.
pub fn no_metrics_service(e: &ExportError) -> bool {
    match e {
        ExportError::Rejected { status, .. } => {
            ["HTTP 404", "HTTP 405", "HTTP 501", "gRPC Unimplemented"]
                .iter()
                .any(|s| status.starts_with(s))
        }
        _ => false,
    }
}
