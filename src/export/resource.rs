//! The resource (who sent these spans) and the instrumentation scope, in OTLP form.
//!
//! The `telemetry.sdk.*` attributes come from the SDK's own detector; `service.name` and the
//! other attributes come from the configuration (`OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, or the config file: see `crate::config`). The fallback service
//! name is `albedo`, not the SDK's `unknown_service`, so traces land where users look for them.
//! `host.name` is the machine's own name, unless the attributes say another.

use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_proto::tonic::common::v1::{
    any_value, AnyValue, ArrayValue, InstrumentationScope, KeyValue as ProtoKeyValue,
};
use opentelemetry_proto::tonic::resource::v1::Resource as ProtoResource;
use opentelemetry_sdk::resource::TelemetryResourceDetector;
use opentelemetry_sdk::Resource;

use crate::assemble::semconv::HOST_NAME;

/// `service.name` when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` sets one.
pub const DEFAULT_SERVICE_NAME: &str = "albedo";
/// The instrumentation scope of every span.
pub const SCOPE_NAME: &str = "albedo-otel";

/// The resource and scope every export carries.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInfo {
    pub resource: ProtoResource,
    pub scope: InstrumentationScope,
}

impl ResourceInfo {
    /// The resource with `attributes` (`OTEL_RESOURCE_ATTRIBUTES`' pairs) and `service_name`,
    /// which wins over a `service.name` among the attributes; with neither, `albedo`.
    pub fn build(service_name: Option<&str>, attributes: &[(String, String)]) -> Self {
        let service = service_name
            .map(str::to_string)
            .or_else(|| {
                attributes
                    .iter()
                    .rev()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_string());
        let resource = Resource::builder_empty()
            .with_detector(Box::new(TelemetryResourceDetector))
            .with_attributes(
                attributes
                    .iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
            )
            .with_attributes([
                KeyValue::new("telemetry.distro.name", SCOPE_NAME),
                KeyValue::new("telemetry.distro.version", env!("CARGO_PKG_VERSION")),
            ])
            .with_attributes(
                host_name()
                    .filter(|_| !attributes.iter().any(|(k, _)| k == HOST_NAME))
                    .map(|h| KeyValue::new(HOST_NAME, h)),
            )
            .with_service_name(service)
            .build();
        Self::from_resource(&resource)
    }

    pub fn from_resource(resource: &Resource) -> Self {
        let mut attributes: Vec<ProtoKeyValue> = resource
            .iter()
            .map(|(k, v)| ProtoKeyValue {
                key: k.to_string(),
                key_strindex: 0,
                value: Some(to_any(v)),
            })
            .collect();
        // Detection order is a hash map's; a stable order keeps output reproducible.
        attributes.sort_by(|a, b| a.key.cmp(&b.key));
        ResourceInfo {
            resource: ProtoResource {
                attributes,
                dropped_attributes_count: 0,
                entity_refs: Vec::new(),
            },
            scope: InstrumentationScope {
                name: SCOPE_NAME.into(),
                version: env!("CARGO_PKG_VERSION").into(),
                attributes: Vec::new(),
                dropped_attributes_count: 0,
            },
        }
    }

    /// `service.name`, for messages.
    pub fn service_name(&self) -> &str {
        self.resource
            .attributes
            .iter()
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                any_value::Value::StringValue(s) => Some(s.as_str()),
                _ => None,
            })
            .unwrap_or(DEFAULT_SERVICE_NAME)
    }
}

/// The machine's name, as `uname` gives it (no process, no DNS lookup).
#[cfg(unix)]
fn host_name() -> Option<String> {
    let name = rustix::system::uname();
    let name = name.nodename().to_string_lossy();
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(not(unix))]
fn host_name() -> Option<String> {
    std::env::var("COMPUTERNAME")
        .ok()
        .filter(|n| !n.trim().is_empty())
}

fn to_any(v: &OtelValue) -> AnyValue {
    use opentelemetry::Array;
    let value = match v {
        OtelValue::Bool(b) => any_value::Value::BoolValue(*b),
        OtelValue::I64(i) => any_value::Value::IntValue(*i),
        OtelValue::F64(f) => any_value::Value::DoubleValue(*f),
        OtelValue::String(s) => any_value::Value::StringValue(s.to_string()),
        OtelValue::Array(a) => {
            let values = match a {
                Array::Bool(v) => v.iter().map(|b| any_value::Value::BoolValue(*b)).collect(),
                Array::I64(v) => v.iter().map(|i| any_value::Value::IntValue(*i)).collect(),
                Array::F64(v) => v
                    .iter()
                    .map(|f| any_value::Value::DoubleValue(*f))
                    .collect(),
                Array::String(v) => v
                    .iter()
                    .map(|s| any_value::Value::StringValue(s.to_string()))
                    .collect(),
                _ => Vec::new(),
            };
            any_value::Value::ArrayValue(ArrayValue {
                values: values
                    .into_iter()
                    .map(|value| AnyValue { value: Some(value) })
                    .collect::<Vec<_>>(),
            })
        }
        _ => any_value::Value::StringValue(v.as_str().into_owned()),
    };
    AnyValue { value: Some(value) }
}
