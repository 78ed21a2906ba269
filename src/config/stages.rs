//! One function per stage: each resolves that stage's own settings type from the layers
//! (flags, environment, file, defaults), so that [`Settings::resolve`](super::Settings) is
//! only their sum.

use std::sync::Arc;

use super::layers::Layers;
use super::{default_hook_dir, default_spool_root, defaults, parse};
use super::{ConfigError, ExporterKind, HookSettings, Overrides};
use crate::assemble::redact::{RedactError, Scrubber};
use crate::assemble::{AssembleConfig, ContentPolicy};
use crate::export::otlp::OtlpSettings;
use crate::export::ResourceInfo;
use crate::pipeline::{MetricsConfig, PipelineConfig, SpoolConfig, UserId};

/// Where spans go: the flag, `OTEL_TRACES_EXPORTER`, or OTLP.
pub(super) fn exporter(e: &Layers<'_>, overrides: &Overrides) -> Result<ExporterKind, ConfigError> {
    if let Some(k) = &overrides.exporter {
        return Ok(k.clone());
    }
    let Some(f) = e.first(&[super::env::OTEL_TRACES_EXPORTER]) else {
        return Ok(ExporterKind::Otlp);
    };
    match f.value.trim() {
        "otlp" => Ok(ExporterKind::Otlp),
        "console" => Ok(ExporterKind::Console),
        _ => Err(parse::invalid(
            &f.name,
            &f.value,
            "not supported here; use otlp or console (or --exporter file)",
        )),
    }
}

/// What the assembler keeps and cuts: content switches, the length limit, the scrubber's
/// rules (the file's, then the flags': both apply), and its memory bounds.
pub(super) fn assemble(
    e: &Layers<'_>,
    overrides: &Overrides,
) -> Result<AssembleConfig, ConfigError> {
    use super::env::*;
    let capture_messages = e.pick(
        overrides.capture_messages,
        &[OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT],
        parse::flag,
        false,
    )?;
    let capture_tool_content = e.pick(
        overrides.capture_tool_content,
        &[ALBEDO_OTEL_CAPTURE_TOOL_CONTENT],
        parse::flag,
        true,
    )?;
    let max_value_len = e.pick(
        overrides.max_attribute_length,
        &[
            OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT,
            OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT,
        ],
        parse::count,
        defaults::MAX_VALUE_LEN,
    )?;
    let file = e.file;
    let rules = file
        .map(|f| f.redact.clone())
        .unwrap_or_default()
        .into_iter()
        .chain(overrides.redact.iter().cloned());
    let scrubber =
        Scrubber::with_patterns(rules).map_err(|err: RedactError| ConfigError::Redact {
            name: match file {
                Some(f) if !f.redact.is_empty() => {
                    format!("--redact or {} [content.redact]", f.path.display())
                }
                _ => "--redact".into(),
            },
            message: err.to_string(),
        })?;
    Ok(AssembleConfig {
        policy: ContentPolicy::new(
            capture_tool_content,
            capture_messages,
            max_value_len,
            Arc::new(scrubber),
        ),
        max_sessions: overrides.max_sessions.unwrap_or(defaults::MAX_SESSIONS),
        max_calls_per_turn: overrides
            .max_calls_per_turn
            .unwrap_or(defaults::MAX_CALLS_PER_TURN),
        ..AssembleConfig::default()
    })
}

/// Who the spans come from: `service.name`, and the file's resource attributes, then the
/// variable's (the variable wins for a key).
pub(super) fn resource(e: &Layers<'_>, overrides: &Overrides) -> Result<ResourceInfo, ConfigError> {
    use super::env::*;
    let service_name = e
        .pick(
            overrides.service_name.clone().map(Some),
            &[OTEL_SERVICE_NAME],
            |_, v| Ok(Some(v.trim().to_string())),
            None,
        )?
        .filter(|n| !n.is_empty());
    let mut attributes = e
        .file
        .map(|f| f.resource_attributes.clone())
        .unwrap_or_default();
    if let Some(f) = e.env(OTEL_RESOURCE_ATTRIBUTES) {
        let pairs = parse::pairs(&f.value).map_err(|_| {
            parse::invalid(
                &f.name,
                &f.value,
                "expected key=value pairs, comma-separated",
            )
        })?;
        attributes.retain(|(k, _)| !pairs.iter().any(|(p, _)| p == k));
        attributes.extend(pairs);
    }
    Ok(ResourceInfo::build(service_name.as_deref(), &attributes))
}

/// How the pipeline batches, queues, closes and spools, with the assembler's and the
/// resource's settings it carries.
pub(super) fn pipeline(
    e: &Layers<'_>,
    overrides: &Overrides,
) -> Result<PipelineConfig, ConfigError> {
    use super::env::*;
    let pipeline = PipelineConfig {
        assemble: assemble(e, overrides)?,
        resource: resource(e, overrides)?,
        batch_size: e.pick(
            overrides.batch_size,
            &[OTEL_BSP_MAX_EXPORT_BATCH_SIZE],
            parse::count,
            defaults::BATCH_SIZE,
        )?,
        batch_delay: e.pick(
            overrides.batch_delay,
            &[OTEL_BSP_SCHEDULE_DELAY],
            parse::millis,
            defaults::BATCH_DELAY,
        )?,
        queue_size: e.pick(
            None,
            &[OTEL_BSP_MAX_QUEUE_SIZE],
            parse::count,
            defaults::QUEUE_SIZE,
        )?,
        flush_timeout: e.pick(
            overrides.flush_timeout,
            &[ALBEDO_OTEL_FLUSH_TIMEOUT],
            parse::millis,
            defaults::FLUSH_TIMEOUT,
        )?,
        max_concurrent_exports: e.pick(
            overrides.max_concurrent_exports,
            &[OTEL_BSP_MAX_CONCURRENT_EXPORTS],
            parse::count,
            defaults::MAX_CONCURRENT_EXPORTS,
        )?,
        spool: spool(e, overrides)?,
        #[cfg(feature = "store")]
        store: store(e)?,
        user_id: e.pick(
            None,
            &[ALBEDO_OTEL_USER_ID],
            |_, v| Ok(user_id(v)),
            UserId::Auto,
        )?,
        ..PipelineConfig::default()
    };
    if pipeline.batch_size == 0 {
        return Err(parse::invalid("--batch-size", "0", "must be above 0"));
    }
    Ok(pipeline)
}

/// GenAI metrics, sent to the traces' collector (or `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`)
/// with metrics' own settings ([`super::otlp::resolve_metrics_in`]: the file's headers only to
/// the file's endpoint, never the traces' own variables), unless `OTEL_METRICS_EXPORTER` is
/// `none`. `None` too when spans do not go over OTLP (a file, the console).
pub(super) fn metrics(
    e: &Layers<'_>,
    overrides: &super::otlp::OtlpOverrides,
    otlp: Option<&OtlpSettings>,
) -> Result<Option<MetricsConfig>, ConfigError> {
    use super::env::*;
    let Some(otlp) = otlp else {
        return Ok(None);
    };
    if let Some(f) = e.first(&[OTEL_METRICS_EXPORTER]) {
        match f.value.trim() {
            "none" => return Ok(None),
            "otlp" | "" => {}
            _ => {
                return Err(parse::invalid(
                    &f.name,
                    &f.value,
                    "not supported here; use otlp or none",
                ))
            }
        }
    }
    let interval = e.pick(
        None,
        &[OTEL_METRIC_EXPORT_INTERVAL],
        parse::millis,
        defaults::METRIC_EXPORT_INTERVAL,
    )?;
    if interval.is_zero() {
        return Err(parse::invalid(
            OTEL_METRIC_EXPORT_INTERVAL,
            "0",
            "must be above 0",
        ));
    }
    Ok(Some(MetricsConfig {
        otlp: super::otlp::resolve_metrics_in(otlp, overrides, e)?,
        interval,
    }))
}

/// `none` turns `user.id` off; any other value is the id.
fn user_id(value: &str) -> UserId {
    match value.trim() {
        v if v.eq_ignore_ascii_case("none") => UserId::Off,
        v => UserId::Fixed(v.to_string()),
    }
}

/// The local store: on unless `ALBEDO_OTEL_STORE=false` (or `store.enabled = false`), at
/// `ALBEDO_OTEL_STORE_PATH` (`store.path`) or its default, kept within its limits
/// (`store.keep`, `store.max_bytes`); off, with a warning, when there is no folder to put it in.
#[cfg(feature = "store")]
pub(super) fn store(
    e: &Layers<'_>,
) -> Result<Option<crate::export::store::StoreConfig>, ConfigError> {
    use super::env::*;
    if !e.pick(None, &[ALBEDO_OTEL_STORE], parse::flag, true)? {
        return Ok(None);
    }
    let path = e
        .first(&[ALBEDO_OTEL_STORE_PATH])
        .map(|f| std::path::PathBuf::from(f.value))
        .or_else(|| super::paths::default_store_path(e.env));
    match path {
        Some(path) => Ok(Some(crate::export::store::StoreConfig {
            path,
            batch_job: false,
            limits: crate::export::store::Limits {
                keep: e.pick(
                    None,
                    &[ALBEDO_OTEL_STORE_KEEP],
                    |n, v| parse::duration(n, v).map(Some),
                    None,
                )?,
                max_bytes: e.pick(
                    None,
                    &[ALBEDO_OTEL_STORE_MAX_BYTES],
                    |n, v| parse::count(n, v).map(|b| Some(b as u64)),
                    None,
                )?,
            },
        })),
        None => {
            tracing::warn!("no local store: neither XDG_DATA_HOME nor HOME is set");
            Ok(None)
        }
    }
}

/// The spool: off with `--no-spool` or `ALBEDO_OTEL_SPOOL=false`, and without a folder to
/// put it in (then with a warning).
pub(super) fn spool(
    e: &Layers<'_>,
    overrides: &Overrides,
) -> Result<Option<SpoolConfig>, ConfigError> {
    use super::env::*;
    if !e.pick(overrides.spool, &[ALBEDO_OTEL_SPOOL], parse::flag, true)? {
        return Ok(None);
    }
    let root = overrides
        .spool_dir
        .clone()
        .or_else(|| e.first(&[ALBEDO_OTEL_SPOOL_DIR]).map(|f| f.value.into()))
        .or_else(|| default_spool_root(e.env));
    let Some(root) = root else {
        tracing::warn!("no spool: neither XDG_STATE_HOME nor HOME is set (use --spool-dir)");
        return Ok(None);
    };
    let max_bytes = e.pick(
        overrides.spool_max_bytes,
        &[ALBEDO_OTEL_SPOOL_MAX_BYTES],
        |name, v| parse::count(name, v).map(|n| n as u64),
        defaults::SPOOL_MAX_BYTES,
    )?;
    Ok(Some(SpoolConfig { root, max_bytes }))
}

/// Command hooks: where journals go and how the daemon paces itself.
pub(super) fn hooks(e: &Layers<'_>, overrides: &Overrides) -> Result<HookSettings, ConfigError> {
    use super::env::*;
    Ok(HookSettings {
        dir: overrides
            .hook_dir
            .clone()
            .or_else(|| e.first(&[ALBEDO_OTEL_HOOK_DIR]).map(|f| f.value.into()))
            .or_else(|| default_hook_dir(e.env)),
        idle_exit: e.pick(
            overrides.idle_exit,
            &[ALBEDO_OTEL_IDLE_EXIT],
            parse::duration,
            defaults::IDLE_EXIT,
        )?,
        stop_grace: e.pick(
            overrides.stop_grace,
            &[ALBEDO_OTEL_STOP_GRACE],
            parse::duration,
            defaults::STOP_GRACE,
        )?,
    })
}
