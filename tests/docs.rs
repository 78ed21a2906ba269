//! The documentation's examples are real: every JSON line in docs/protocol.md decodes.

use albedo_otel::protocol::decode_line;

#[test]
fn every_protocol_example_decodes() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md")).unwrap();
    let mut in_json = false;
    let mut kinds = std::collections::BTreeSet::new();
    for line in doc.lines() {
        match line.trim() {
            "```json" => in_json = true,
            "```" => in_json = false,
            l if in_json && !l.is_empty() => {
                let record = decode_line(l.as_bytes()).unwrap_or_else(|e| panic!("{l}: {e}"));
                kinds.insert(record.event.kind().as_str());
            }
            _ => {}
        }
    }
    let all = [
        "call_sent",
        "called",
        "calling",
        "closed",
        "prompted",
        "session",
        "stopping",
        "turn_ended",
    ];
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        all,
        "an example of every kind"
    );
}
