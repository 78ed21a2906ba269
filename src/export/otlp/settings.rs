//! What the OTLP exporter needs to know: where, how, with which headers and TLS files. The
//! configuration (`crate::config`) resolves flags, variables and the file into these; the
//! exporter reads nothing else.

use std::time::Duration;

/// Where a collector is when nothing says: the ports the OTLP spec gives each protocol.
pub const GRPC_ENDPOINT: &str = "http://localhost:4317";
pub const HTTP_ENDPOINT: &str = "http://localhost:4318";
/// The path the generic endpoint variable gets for traces over HTTP.
pub const HTTP_TRACES_PATH: &str = "/v1/traces";
/// The path metrics go to over HTTP, beside the traces.
pub const HTTP_METRICS_PATH: &str = "/v1/metrics";
/// How long one export request may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Grpc,
    HttpProtobuf,
    HttpJson,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Grpc => "grpc",
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::HttpJson => "http/json",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    #[default]
    None,
    Gzip,
}

impl Compression {
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
        }
    }
}

/// Client TLS material, as file paths (PEM).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// Trust this CA instead of the system roots.
    pub ca: Option<String>,
    pub client_cert: Option<String>,
    pub client_key: Option<String>,
}

/// Where and how to send OTLP.
#[derive(Clone, PartialEq, Eq)]
pub struct OtlpSettings {
    /// The full URL: for HTTP it includes the path.
    pub endpoint: String,
    pub protocol: Protocol,
    /// Sent with every request. Never logged: they usually carry API keys.
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
    pub compression: Compression,
    pub tls: TlsFiles,
}

impl std::fmt::Debug for OtlpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpSettings")
            .field("endpoint", &shown_endpoint(&self.endpoint))
            .field("protocol", &self.protocol)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .field("compression", &self.compression)
            .field("tls", &self.tls)
            .finish()
    }
}

/// `url` as it may be shown (logs, `config show`, `status`, spool folder names): a password
/// in it (`https://tenant:TOKEN@host`, which is sent as Basic auth) masked, and a user part
/// with no password (`https://TOKEN@host`) masked whole; the rest as given.
pub fn shown_endpoint(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let masked = match authority[..at].split_once(':') {
        Some((user, _)) => format!("{user}:******"),
        None => "******".to_string(),
    };
    format!(
        "{}://{masked}@{}{}",
        &url[..scheme_end],
        &authority[at + 1..],
        &rest[authority_end..]
    )
}

impl OtlpSettings {
    /// The endpoint as it may be shown: see [`shown_endpoint`].
    pub fn shown_endpoint(&self) -> String {
        shown_endpoint(&self.endpoint)
    }

    /// A hint when the endpoint's port is the usual one of the other protocol.
    pub fn port_hint(&self) -> Option<String> {
        let uri: http::Uri = self.endpoint.parse().ok()?;
        match (self.protocol, uri.port_u16()) {
            (Protocol::Grpc, Some(4318)) => Some(
                "port 4318 is usually OTLP/HTTP; set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf or use port 4317".into(),
            ),
            (Protocol::HttpProtobuf | Protocol::HttpJson, Some(4317)) => Some(
                "port 4317 is usually OTLP/gRPC; set OTEL_EXPORTER_OTLP_PROTOCOL=grpc or use port 4318".into(),
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shown_endpoint;

    #[test]
    fn a_password_in_the_endpoint_is_never_shown() {
        assert_eq!(
            shown_endpoint("https://tenant:glc_TOKEN@otlp.example:443/otlp/v1/traces"),
            "https://tenant:******@otlp.example:443/otlp/v1/traces"
        );
        assert_eq!(
            shown_endpoint("https://glc_TOKEN@otlp.example/v1/traces?a=b@c"),
            "https://******@otlp.example/v1/traces?a=b@c"
        );
        for plain in [
            "http://localhost:4318/v1/traces",
            "http://h/p@q",
            "not a url",
        ] {
            assert_eq!(shown_endpoint(plain), plain);
        }
    }
}
