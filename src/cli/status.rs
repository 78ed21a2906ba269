//! `status`: what waits in the spool, per destination, on standard output.

use std::path::PathBuf;

use anyhow::{Context, Result};

use albedo_otel::pipeline::spool::Spool;

pub fn run(flag: Option<PathBuf>) -> Result<i32> {
    let Some(root) = super::spool_root(flag) else {
        anyhow::bail!(
            "no spool folder: set --spool-dir, ALBEDO_OTEL_SPOOL_DIR, XDG_STATE_HOME or HOME"
        );
    };
    println!("spool: {}", root.display());
    if !root.exists() {
        println!("  empty (nothing was ever spooled here)");
        return Ok(0);
    }
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .with_context(|| format!("reading {}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut total = 0;
    for dir in dirs {
        let spool =
            Spool::open(&dir, u64::MAX).with_context(|| format!("opening {}", dir.display()))?;
        total += spool.spans();
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!(
            "  {name}: {} batches, {} spans, {} bytes",
            spool.files(),
            spool.spans(),
            spool.bytes()
        );
        // Metrics exports wait in a folder of their own, sent before the next ones.
        let metrics = dir.join("metrics");
        if metrics.is_dir() {
            let m = Spool::open(&metrics, u64::MAX)
                .with_context(|| format!("opening {}", metrics.display()))?;
            if !m.is_empty() {
                total += m.spans();
                println!(
                    "  {name}: {} metrics exports, {} points, {} bytes",
                    m.files(),
                    m.spans(),
                    m.bytes()
                );
            }
        }
    }
    if total == 0 {
        println!("  empty: everything was delivered");
    }
    Ok(0)
}
