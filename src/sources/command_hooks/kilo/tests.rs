//! What is Kilo's own on top of opencode's plugin and adapter: the plugin starts the hook for
//! Kilo, and every session (a sub-agent's too) is Kilo's. The rest is the conformance suite's.

use serde_json::Value;

use super::script::script;
use super::{adapter, AGENT, SPEC};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::spec::Form;
use crate::sources::command_hooks::steps::{Step, Sub, T0};

#[test]
fn the_plugin_starts_the_hook_for_kilo_and_is_read_back() {
    let Form::Plugin(plugin) = SPEC.install.form else {
        panic!("Kilo takes a plugin");
    };
    let command: Vec<String> = ["/opt/bin/albedo-otel-hook", "--agent", AGENT]
        .map(String::from)
        .to_vec();
    let text = (plugin.text)(&command);
    assert!(text.contains(r#"["/opt/bin/albedo-otel-hook","--agent","kilo"]"#));
    assert_eq!((plugin.command_in)(&text), Some(command));
    // Kilo's plugin folders are not opencode's: neither agent loads the other's plugin.
    assert_eq!(SPEC.install.project_file, ".kilo/plugin/albedo-otel.js");
    let home = |k: &str| (k == "HOME").then(|| "/home/u".to_string());
    assert_eq!(
        (SPEC.install.user_file)(&home),
        Some("/home/u/.config/kilo/plugin/albedo-otel.js".into())
    );
}

#[test]
fn a_session_and_its_sub_agent_are_kilo_s() {
    let mut s = script();
    let mut log = String::new();
    let (call, agent) = ("call_task", "helper");
    let mut payloads: Vec<(u64, Value)> = Vec::new();
    let mut at = T0;
    let mut take = |ps: Vec<Value>, at: u64| payloads.extend(ps.into_iter().map(|p| (at, p)));
    take(s.step(Step::Prompt("look"), at, &mut log), at);
    for sub in [
        Sub::Spawn { call, agent },
        Sub::Started { call, agent },
        Sub::Stopped { agent },
        Sub::Returned { call, agent },
    ] {
        at += 100;
        take(s.sub_agent(sub, at, &mut log).unwrap(), at);
    }
    at += 100;
    take(s.step(Step::Stop, at, &mut log), at);

    let mut a = adapter(0);
    let mut out: Vec<Record<'static>> = Vec::new();
    for (at, p) in payloads {
        let parsed = a.parse(&p.to_string()).unwrap();
        a.take(parsed, at, &mut NoTranscripts, &mut out);
    }
    let agents: Vec<(String, Option<String>, bool)> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Session(s) => Some((
                r.session.to_string(),
                s.agent.as_deref().map(str::to_string),
                s.parent.is_some(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(agents.len(), 2, "{agents:?}");
    assert!(agents.iter().all(|(_, a, _)| a.as_deref() == Some("kilo")));
    assert!(agents.iter().any(|(_, _, under_call)| *under_call));
}
