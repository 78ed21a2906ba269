//! Talking to a collector securely: `https` endpoints with a CA the test generates
//! (`OTEL_EXPORTER_OTLP_CERTIFICATE`), mutual TLS (`..._CLIENT_CERTIFICATE`, `..._CLIENT_KEY`),
//! and a clear refusal of a server whose certificate the system roots do not vouch for.

use crate::support::*;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

struct Pki {
    ca_pem: String,
    server: TlsServer,
    client_cert_pem: String,
    client_key_pem: String,
}

fn pki(mutual: bool) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "albedo-otel test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);

    let server_key = KeyPair::generate().unwrap();
    let server_params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let server_cert = server_params.signed_by(&server_key, &issuer).unwrap();

    let client_key = KeyPair::generate().unwrap();
    let mut client_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    client_params
        .distinguished_name
        .push(DnType::CommonName, "albedo-otel test client");
    let client_cert = client_params.signed_by(&client_key, &issuer).unwrap();

    Pki {
        ca_pem: ca_cert.pem(),
        server: TlsServer {
            cert_pem: server_cert.pem(),
            key_pem: server_key.serialize_pem(),
            client_ca_pem: mutual.then(|| ca_cert.pem()),
        },
        client_cert_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
    }
}

fn write(dir: &std::path::Path, name: &str, pem: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, pem).unwrap();
    p.display().to_string()
}

fn endpoint(rx: &Receiver, protocol: &str) -> String {
    let port = if protocol == "grpc" {
        rx.grpc.port()
    } else {
        rx.http.port()
    };
    format!("https://localhost:{port}")
}

#[test]
fn https_with_the_configured_ca_delivers_over_both_protocols() {
    let pki = pki(false);
    let dir = scratch("tls");
    let ca = write(&dir, "ca.pem", &pki.ca_pem);
    for protocol in ["grpc", "http/protobuf"] {
        let rx = Receiver::start_tls(&pki.server);
        let out = run_binary(
            &[
                "run",
                "--protocol",
                protocol,
                "--endpoint",
                &endpoint(&rx, protocol),
            ],
            &[("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca)],
            &demo_session(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.contains("21 delivered"),
            "{protocol}: {stderr}"
        );
        assert_eq!(rx.spans().len(), 21);
    }
}

#[test]
fn mutual_tls_sends_the_client_certificate_and_fails_clearly_without_it() {
    let pki = pki(true);
    let dir = scratch("mtls");
    let ca = write(&dir, "ca.pem", &pki.ca_pem);
    let cert = write(&dir, "client.pem", &pki.client_cert_pem);
    let key = write(&dir, "client.key", &pki.client_key_pem);
    for protocol in ["grpc", "http/protobuf"] {
        let rx = Receiver::start_tls(&pki.server);
        let out = run_binary(
            &[
                "run",
                "--protocol",
                protocol,
                "--endpoint",
                &endpoint(&rx, protocol),
            ],
            &[
                ("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca),
                ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &cert),
                ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &key),
            ],
            &demo_session(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.contains("21 delivered"),
            "{protocol}: {stderr}"
        );
        assert_eq!(rx.spans().len(), 21);

        let rx = Receiver::start_tls(&pki.server);
        let out = replay_once(
            protocol,
            &endpoint(&rx, protocol),
            &[("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca)],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{protocol}: {stderr}");
        assert!(stderr.contains("21 NOT delivered"), "{protocol}: {stderr}");
        assert!(rx.spans().is_empty());
    }
}

#[test]
fn an_unknown_issuer_is_refused_with_the_reason() {
    let pki = pki(false);
    for protocol in ["grpc", "http/protobuf"] {
        let rx = Receiver::start_tls(&pki.server);
        let out = replay_once(protocol, &endpoint(&rx, protocol), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{protocol}: {stderr}");
        assert!(
            stderr.to_lowercase().contains("certificate"),
            "{protocol}: the error should say why: {stderr}"
        );
        eprintln!(
            "{protocol}: {}",
            stderr
                .lines()
                .find(|l| l.contains("could not reach"))
                .unwrap_or("")
        );
        assert!(rx.spans().is_empty());
    }
}

#[test]
fn a_missing_certificate_file_is_a_clear_error_before_anything_is_read() {
    let out = run_binary(
        &["run", "--endpoint", "https://localhost:1"],
        &[("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem")],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "cannot read the CA certificate (OTEL_EXPORTER_OTLP_CERTIFICATE) /nonexistent/ca.pem"
        ),
        "{stderr}"
    );
}

/// Everything in the configuration file and nothing in the environment: the endpoint, gRPC,
/// a private CA, and the client's certificate and key for mutual TLS.
#[test]
fn grpc_with_a_private_ca_and_mutual_tls_from_the_configuration_file_alone() {
    let pki = pki(true);
    let dir = scratch("tls-file");
    let ca = write(&dir, "ca.pem", &pki.ca_pem);
    let cert = write(&dir, "client.pem", &pki.client_cert_pem);
    let key = write(&dir, "client-key.pem", &pki.client_key_pem);
    let rx = Receiver::start_tls(&pki.server);
    let config = dir.join("config.toml");
    let file = |with_client: bool| {
        let mut text = format!(
            "[otlp]\nendpoint = \"{}\"\nprotocol = \"grpc\"\ncertificate = \"{ca}\"\n",
            endpoint(&rx, "grpc")
        );
        if with_client {
            text.push_str(&format!(
                "client_certificate = \"{cert}\"\nclient_key = \"{key}\"\n"
            ));
        }
        std::fs::write(&config, text).unwrap();
    };
    file(true);
    let env = [("ALBEDO_OTEL_CONFIG", config.to_str().unwrap())];
    let out = run_binary(&["run"], &env, &demo_session());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("21 spans, 21 delivered"), "{stderr}");
    assert_eq!(rx.spans().len(), 21);
    // Without the client's certificate the server refuses: the file's TLS settings were used.
    file(false);
    let out = run_binary(
        &["replay", "-", "--no-spool", "--flush-timeout", "2s"],
        &env,
        &demo_session(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(rx.spans().len(), 21, "nothing more arrived");
}
