//! `config`: the configuration file, shown, changed and found.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use super::{process_env, ExportArgs};
use albedo_otel::config::{self, edit, explain, file, mask, Overrides, Source};

#[derive(Args)]
pub struct ConfigCmd {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Every setting, its value and where it comes from: flag, env, file or default. Header
    /// values are masked.
    Show {
        #[command(flatten)]
        export: Box<ExportArgs>,
    },
    /// Set KEY to VALUE in the configuration file (the keys are those `config show` lists;
    /// a header is `otlp.headers.<name>`). The file is made 0600, in a 0700 folder.
    Set {
        key: String,
        value: String,
        /// Another configuration file [env: ALBEDO_OTEL_CONFIG]
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Remove KEY from the configuration file.
    Unset {
        key: String,
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Print the configuration file's path.
    Path {
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

fn path_of(flag: &Option<PathBuf>) -> Result<PathBuf> {
    let overrides = Overrides {
        config: flag.clone(),
        ..Overrides::default()
    };
    config::config_path(&overrides, &process_env)
        .context("no place for the configuration file: set --config, ALBEDO_OTEL_CONFIG, XDG_CONFIG_HOME or HOME")
}

/// Header values and redaction rules never print; everything else does.
fn shown_value(key: &str, value: &str) -> String {
    if key.starts_with(file::HEADERS) {
        mask(value)
    } else {
        value.to_string()
    }
}

pub fn run(cmd: &ConfigCmd) -> Result<i32> {
    match &cmd.action {
        Action::Show { export } => {
            let overrides = export.overrides(None);
            let path = config::config_path(&overrides, &process_env);
            let file = config::load_file(&overrides, &process_env)?;
            match (&path, &file) {
                (Some(p), Some(_)) => println!("configuration file: {}", p.display()),
                (Some(p), None) => println!("configuration file: {} (not there yet)", p.display()),
                (None, _) => println!("configuration file: none (no XDG_CONFIG_HOME or HOME)"),
            }
            for w in file.iter().flat_map(|f| &f.warnings) {
                println!("warning: {w}");
            }
            let rows = explain(&overrides, &process_env, file.as_ref());
            let width = rows.iter().map(|r| r.key.len()).max().unwrap_or(0);
            for r in rows {
                let source = match &r.source {
                    Source::Default => "default".to_string(),
                    other => other.to_string(),
                };
                println!("{:width$}  {}  ({source})", r.key, r.value);
            }
            // The settings must resolve, too: a bad value is an error here, named.
            config::Settings::resolve(&overrides, &process_env, file.as_ref())?;
            Ok(0)
        }
        Action::Set { key, value, config } => {
            let path = path_of(config)?;
            edit::set(&path, key, value)?;
            println!(
                "set {key} = {} in {} (0600)",
                shown_value(key, value),
                path.display()
            );
            Ok(0)
        }
        Action::Unset { key, config } => {
            let path = path_of(config)?;
            if edit::unset(&path, key)? {
                println!("removed {key} from {}", path.display());
            } else {
                println!("{key} is not set in {}", path.display());
            }
            Ok(0)
        }
        Action::Path { config } => {
            println!("{}", path_of(config)?.display());
            Ok(0)
        }
    }
}
