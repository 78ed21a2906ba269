//! OTLP/JSON lines to a file: one `ExportTraceServiceRequest` per line, the format the
//! Collector's `otlpjsonfile` receiver reads, so a recording can be loaded into any backend
//! later.

use std::fs::File;
use std::io::{BufWriter, Write};

use crate::assemble::Span;
use crate::export::otlp::encode;
use crate::export::{ExportError, Exported, ResourceInfo};

pub struct FileExporter {
    out: BufWriter<Box<dyn Write + Send>>,
    target: String,
    resource: ResourceInfo,
}

impl FileExporter {
    /// Writes to `path` (created or truncated); `-` is standard output.
    pub fn create(path: &str, resource: ResourceInfo) -> Result<Self, ExportError> {
        let out: Box<dyn Write + Send> = if path == "-" {
            Box::new(std::io::stdout())
        } else {
            Box::new(File::create(path).map_err(|source| ExportError::Io {
                target: path.to_string(),
                source,
            })?)
        };
        Ok(FileExporter {
            out: BufWriter::new(out),
            target: if path == "-" {
                "standard output".into()
            } else {
                path.to_string()
            },
            resource,
        })
    }

    pub fn export(&mut self, spans: &[Span]) -> Result<Exported, ExportError> {
        let io = |source| ExportError::Io {
            target: self.target.clone(),
            source,
        };
        let line = encode::json(&self.resource, spans);
        self.out.write_all(&line).map_err(io)?;
        self.out.write_all(b"\n").map_err(io)?;
        self.out.flush().map_err(io)?;
        Ok(Exported {
            accepted: spans.len() as u64,
            rejected: 0,
        })
    }

    pub fn flush(&mut self) -> Result<(), ExportError> {
        self.out.flush().map_err(|source| ExportError::Io {
            target: self.target.clone(),
            source,
        })
    }

    pub fn describe(&self) -> String {
        format!("{} (OTLP/JSON lines)", self.target)
    }
}
