//! OTLP/JSON lines to a file: one `ExportTraceServiceRequest` per line, the format the
//! Collector's `otlpjsonfile` receiver reads, so a recording can be loaded into any backend
//! later.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Mutex;
use std::time::Duration;

use crate::export::otlp::encode;
use crate::export::{ready, Batch, ExportError, ExportFuture, Exported, SpanExporter};

pub struct FileExporter {
    out: Mutex<BufWriter<Box<dyn Write + Send>>>,
    target: String,
}

impl FileExporter {
    /// Writes to `path` (created or truncated); `-` is standard output.
    pub fn create(path: &str) -> Result<Self, ExportError> {
        let out: Box<dyn Write + Send> = if path == "-" {
            Box::new(std::io::stdout())
        } else {
            Box::new(File::create(path).map_err(|source| ExportError::Io {
                target: path.to_string(),
                source,
            })?)
        };
        Ok(FileExporter {
            out: Mutex::new(BufWriter::new(out)),
            target: if path == "-" {
                "standard output".into()
            } else {
                path.to_string()
            },
        })
    }

    fn io(&self, source: std::io::Error) -> ExportError {
        ExportError::Io {
            target: self.target.clone(),
            source,
        }
    }

    fn write(&self, batch: &Batch) -> Result<Exported, ExportError> {
        let line = encode::json_bytes(&batch.decode()?)?;
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        out.write_all(&line).map_err(|e| self.io(e))?;
        out.write_all(b"\n").map_err(|e| self.io(e))?;
        out.flush().map_err(|e| self.io(e))?;
        Ok(Exported {
            accepted: batch.spans,
            rejected: 0,
        })
    }
}

impl SpanExporter for FileExporter {
    fn export(&self, batch: Batch, _timeout: Option<Duration>) -> ExportFuture {
        ready(self.write(&batch))
    }

    fn force_flush(&self) -> Result<(), ExportError> {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        out.flush().map_err(|e| self.io(e))
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> Result<(), ExportError> {
        self.force_flush()
    }

    fn describe(&self) -> String {
        format!("{} (OTLP/JSON lines)", self.target)
    }
}
