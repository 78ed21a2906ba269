//! TLS material named by `OTEL_EXPORTER_OTLP_*CERTIFICATE*` and `*CLIENT_KEY`, read once at
//! start-up so that a wrong path is a clear error before the first span, not a failed export.

use super::TlsFiles;
use crate::export::ExportError;

/// The PEM contents of the configured files.
#[derive(Default)]
pub struct TlsMaterial {
    pub ca: Option<Vec<u8>>,
    /// Client certificate and key, for mutual TLS.
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

fn read(what: &str, path: &str) -> Result<Vec<u8>, ExportError> {
    std::fs::read(path)
        .map_err(|e| ExportError::Setup(format!("cannot read the {what} {path}: {e}")))
}

pub fn load(files: &TlsFiles) -> Result<TlsMaterial, ExportError> {
    let ca = files
        .ca
        .as_deref()
        .map(|p| read("CA certificate (OTEL_EXPORTER_OTLP_CERTIFICATE)", p))
        .transpose()?;
    let identity = match (&files.client_cert, &files.client_key) {
        (Some(c), Some(k)) => Some((
            read("client certificate (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE)", c)?,
            read("client key (OTEL_EXPORTER_OTLP_CLIENT_KEY)", k)?,
        )),
        (None, None) => None,
        _ => {
            return Err(ExportError::Setup(
                "mutual TLS needs both OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY".into(),
            ))
        }
    };
    Ok(TlsMaterial { ca, identity })
}
