//! The wire format through a real collector: albedo-otel → rotel's OTLP receiver → rotel's OTLP
//! exporter (which gzips) → this test's receiver. Trees must arrive intact: ids, parents,
//! timestamps, attributes, resource. `.ci/run` installs rotel (`pip install rotel`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::*;

fn rotel_agent() -> Option<PathBuf> {
    let found = std::env::var_os("ROTEL_AGENT")
        .map(PathBuf::from)
        .or_else(|| which("rotel-agent"))
        .or_else(|| {
            let out = Command::new("python3")
                .args(["-c", "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))"])
                .output()
                .ok()?;
            let p = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
            p.is_file().then_some(p)
        });
    require_tool(
        "rotel-agent",
        found,
        "install it with `pip install rotel==0.0.1a15`",
    )
}

struct Rotel {
    child: Child,
    grpc: u16,
    http: u16,
    dir: PathBuf,
}

impl Rotel {
    fn start(agent: &PathBuf, exporter_protocol: &str, receiver: &Receiver) -> Rotel {
        let (grpc, http) = (free_port(), free_port());
        let dir =
            std::env::temp_dir().join(format!("albedo-otel-rotel-{}-{grpc}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let endpoint = match exporter_protocol {
            "grpc" => receiver.grpc_url(),
            _ => receiver.http_url(),
        };
        let child = Command::new(agent)
            .args([
                "start",
                "--otlp-grpc-endpoint",
                &format!("127.0.0.1:{grpc}"),
            ])
            .args(["--otlp-http-endpoint", &format!("127.0.0.1:{http}")])
            .args(["--exporter", "otlp", "--otlp-exporter-endpoint", &endpoint])
            .args(["--otlp-exporter-protocol", exporter_protocol])
            .args(["--batch-timeout", "100ms"])
            .arg("--pid-file")
            .arg(dir.join("rotel.pid"))
            .arg("--log-file")
            .arg(dir.join("rotel.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rotel-agent starts");
        wait_for_port(grpc, Duration::from_secs(15), "rotel's gRPC receiver");
        wait_for_port(http, Duration::from_secs(15), "rotel's HTTP receiver");
        Rotel {
            child,
            grpc,
            http,
            dir,
        }
    }
}

impl Drop for Rotel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What arrives when albedo-otel sends straight to a receiver: the reference.
fn direct() -> Vec<FlatSpan> {
    let rx = Receiver::start();
    let out = run_binary(
        &["run", "--protocol", "grpc", "--endpoint", &rx.grpc_url()],
        &[],
        &demo_session(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    rx.spans()
}

fn through_rotel(ours: &str, rotels: &str) {
    let Some(agent) = rotel_agent() else { return };
    let expected = direct();
    assert_eq!(expected.len(), 21);
    let rx = Receiver::start();
    let rotel = Rotel::start(&agent, rotels, &rx);
    let endpoint = match ours {
        "grpc" => format!("http://127.0.0.1:{}", rotel.grpc),
        _ => format!("http://127.0.0.1:{}", rotel.http),
    };
    let out = run_binary(
        &["run", "--protocol", ours, "--endpoint", &endpoint],
        &[],
        &demo_session(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("21 spans, 21 delivered"), "{stderr}");
    let got = rx.wait_for_spans(expected.len(), Duration::from_secs(30));
    assert_same_spans(&expected, &got);
    check_invariants(&got);
    let requests = rx.requests();
    assert!(!requests.is_empty());
    for r in &requests {
        assert!(r.gzip, "rotel gzips what it sends");
        assert_eq!(
            r.via,
            if rotels == "grpc" {
                "grpc"
            } else {
                "http/protobuf"
            }
        );
    }
}

#[test]
fn grpc_into_rotel_grpc_out() {
    through_rotel("grpc", "grpc");
}

#[test]
fn http_into_rotel_http_out() {
    through_rotel("http/protobuf", "http");
}
