//! Decoding lines: every kind round-trips, and errors name the field at fault.

use std::borrow::Cow;

use super::*;

fn err(line: &str) -> String {
    decode_line(line.as_bytes()).unwrap_err().to_string()
}

#[test]
fn decodes_a_called_line_and_borrows_its_arguments() {
    let line = r#"{"v":1,"kind":"called","session":"s1","call":{"id":"c1","name":"run","arguments":{"command":"ls"},"within":"c0"},"output":{"exit_code":0,"timed_out":false},"started_ms":1000,"finished_ms":1250,"extra":"ignored"}"#;
    let r = decode_line(line.as_bytes()).unwrap();
    assert_eq!(r.session, "s1");
    let Event::Called(c) = &r.event else {
        panic!("wrong kind")
    };
    assert_eq!(c.call.id, "c1");
    assert_eq!(c.call.within.as_deref(), Some("c0"));
    assert_eq!(
        c.call.arguments.as_ref().unwrap().get(),
        r#"{"command":"ls"}"#
    );
    assert!(matches!(c.call.arguments, Some(Json(Cow::Borrowed(_)))));
    assert_eq!(
        (c.started_ms, c.finished_ms, c.refused),
        (1000, 1250, false)
    );
}

#[test]
fn every_kind_round_trips_through_encode() {
    let lines = [
        r#"{"v":1,"kind":"session","session":"s","at_ms":1,"agent":"a","model":"m","workspace":"/w","parent":{"session":"p","call":"c"}}"#,
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":2,"text":"hi"}"#,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":3,"call":{"id":"c","name":"run","arguments":{"command":"ls"},"within":null}}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"c","name":"run","arguments":[1],"within":"d"},"output":"no","started_ms":3,"finished_ms":4,"refused":true}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"c","name":"Bash"},"output":"Exit code 3","started_ms":3,"finished_ms":4,"failed":true}"#,
        r#"{"v":1,"kind":"stopping","session":"s","at_ms":5,"reply":"done","held":1}"#,
        r#"{"v":1,"kind":"call_sent","session":"s","id":"m1","request":{"model":"x","provider":"anthropic","max_tokens":10,"messages":[]},"response":{"id":"r","model":"x2","stop_reason":"end_turn","content":[]},"usage":{"input_tokens":1,"output_tokens":2,"cache_read_tokens":3,"cache_write_tokens":4,"reasoning_tokens":5},"started_ms":6,"finished_ms":7,"first_token_ms":6,"error":{"type":"overloaded"}}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":8,"reason":"end"}"#,
        r#"{"v":1,"kind":"closed","session":"s","at_ms":9}"#,
    ];
    for line in lines {
        let r = decode_line(line.as_bytes()).unwrap();
        let again = encode_record(&r);
        let r2 = decode_line(again.as_bytes()).unwrap();
        assert_eq!(r, r2, "{line}");
        assert_eq!(r.clone().into_owned(), r2);
    }
}

#[test]
fn errors_name_the_field_and_the_reason() {
    assert_eq!(
        err(
            r#"{"v":1,"kind":"called","session":"s","call":{"id":"c","name":"run"},"started_ms":1}"#
        ),
        "missing field `finished_ms` (required for kind `called`)"
    );
    assert!(
        err(r#"{"v":1,"kind":"calling","session":"s","at_ms":1,"call":{"id":5,"name":"x"}}"#)
            .starts_with("field `call.id`: invalid type: integer `5`, expected a string")
    );
    assert!(
        err(r#"{"v":1,"kind":"prompted","session":"s","at_ms":-1,"text":""}"#)
            .starts_with("field `at_ms`: invalid value: integer `-1`")
    );
    assert!(
        err(r#"{"v":1,"kind":"closed","session":"s","at_ms":1e999}"#)
            .starts_with("field `at_ms`: number out of range")
    );
    assert!(
        err(r#"{"v":1,"kind":"closed","session":"s","at_ms":1700000000000000}"#)
            .starts_with("field `at_ms`: 1700000000000000 is after the year 2100")
    );
    assert_eq!(
        err(r#"{"v":2,"kind":"closed","session":"s","at_ms":1}"#),
        "protocol version 2 is not supported (this exporter reads version 1)"
    );
    assert!(err(r#"{"v":1,"kind":"nope","session":"s"}"#).starts_with("unknown kind `nope`"));
    assert!(err("not json").starts_with("not a JSON object"));
    assert!(err(r#"{"v":1,"kind":"closed","session":"","at_ms":1}"#).contains("must not be empty"));
    assert_eq!(
        decode_line(b"{\"v\":1,\"kind\":\"closed\",\"session\":\"\xff\"}").unwrap_err(),
        DecodeError::NotUtf8 { offset: 34 }
    );
}

#[test]
fn deep_nesting_is_refused_with_the_field_without_recursing() {
    let line = |depth: usize| {
        format!(
            r#"{{"v":1,"kind":"called","session":"s","call":{{"id":"c","name":"x","arguments":{}1{}}},"started_ms":1,"finished_ms":2}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    assert!(decode_line(line(128).as_bytes()).is_ok());
    assert_eq!(
        decode_line(line(100_000).as_bytes())
            .unwrap_err()
            .to_string(),
        "field `call.arguments`: nested deeper than 128 levels"
    );
    // Brackets inside strings do not count.
    let in_string = format!(
        r#"{{"v":1,"kind":"called","session":"s","call":{{"id":"c","name":"x","arguments":"{}\"{}"}},"started_ms":1,"finished_ms":2}}"#,
        "[".repeat(500),
        "{".repeat(500)
    );
    decode_line(in_string.as_bytes()).unwrap();
    // Unknown fields are skipped, however deep, without recursing.
    let unknown = format!(
        r#"{{"v":1,"kind":"closed","session":"s","at_ms":1,"x":{}1{}}}"#,
        "[".repeat(1_000_000),
        "]".repeat(1_000_000)
    );
    assert!(decode_line(unknown.as_bytes()).is_ok());
    // A known field that should be flat but is deep is refused by serde_json's own limit.
    let known = format!(
        r#"{{"v":1,"kind":"closed","session":"s","at_ms":1,"parent":{}1{}}}"#,
        "{\"a\":".repeat(200),
        "}".repeat(200)
    );
    assert!(decode_line(known.as_bytes()).is_err());
}

/// Issue 37: the one-hour cache writes and web searches are optional: a line without them
/// reads as before and is written as before; a line with them keeps them.
#[test]
fn hour_long_cache_writes_and_web_searches_are_optional_usage() {
    let usage = |line: &str| match decode_line(line.as_bytes()).unwrap().event {
        Event::CallSent(c) => c.usage,
        other => panic!("{other:?}"),
    };
    let line = |u: &str| {
        format!(
            r#"{{"v":1,"kind":"call_sent","session":"s","request":{{"model":"x"}},"usage":{u},"started_ms":1,"finished_ms":2}}"#
        )
    };
    let old = line(r#"{"input_tokens":1,"output_tokens":2,"cache_write_tokens":4}"#);
    let u = usage(&old);
    assert_eq!((u.cache_write_1h_tokens, u.web_searches), (0, 0));
    let written = encode_record(&decode_line(old.as_bytes()).unwrap());
    assert!(
        !written.contains("1h") && !written.contains("web"),
        "{written}"
    );
    let new = line(
        r#"{"input_tokens":1,"output_tokens":2,"cache_write_tokens":4,"cache_write_1h_tokens":3,"web_searches":2}"#,
    );
    let u = usage(&new);
    assert_eq!((u.cache_write_1h_tokens, u.web_searches), (3, 2));
    let again = encode_record(&decode_line(new.as_bytes()).unwrap());
    assert_eq!(usage(&again), u);
}
