//! Property tests of the assembly over random but valid event streams: many sessions
//! interleaved in any order, cells with nested calls, parallel calls, sub-agents, turns with
//! and without prompts or ends, calls with and without `calling`. Whatever the order:
//! every `called` yields exactly one tool span, every `call_sent` one chat span, every turn one
//! root, and no parent id dangles.

use std::collections::HashMap;

use albedo_otel::assemble::{semconv::*, AssembleConfig, Assembler, Output, Span};
use albedo_otel::protocol::decode_line;
use albedo_otel::testing::check_tree;
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Action {
    Model,
    /// `parallel` calls side by side, each a cell running `nested` inner calls.
    Tool {
        parallel: u8,
        nested: u8,
    },
    Stop {
        held: u32,
    },
    /// A cell that spawns a sub-agent running one turn.
    Spawn,
}

#[derive(Debug, Clone)]
struct TurnSpec {
    prompted: bool,
    ended: bool,
    announce: bool,
    actions: Vec<Action>,
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => Just(Action::Model),
        4 => (1u8..4, 0u8..4).prop_map(|(parallel, nested)| Action::Tool { parallel, nested }),
        1 => (0u32..3).prop_map(|held| Action::Stop { held }),
        1 => Just(Action::Spawn),
    ]
}

fn turn() -> impl Strategy<Value = TurnSpec> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(action(), 1..6),
    )
        .prop_map(|(prompted, ended, announce, actions)| TurnSpec {
            prompted,
            ended,
            announce,
            actions,
        })
}

/// What the stream must produce.
#[derive(Default, Debug)]
struct Counts {
    called: Vec<(String, String)>,
    call_sent: usize,
    turns: usize,
    /// (session, call id) -> the call it is within.
    within: HashMap<(String, String), String>,
}

struct Builder {
    queues: Vec<Vec<String>>,
    counts: Counts,
    next_session: usize,
}

impl Builder {
    fn session(
        &mut self,
        turns: &[TurnSpec],
        start: u64,
        parent: Option<(String, String)>,
    ) -> usize {
        let sid = format!("s{}", self.next_session);
        self.next_session += 1;
        let q = self.queues.len();
        self.queues.push(Vec::new());
        let mut meta = json!({"v":1,"kind":"session","session":sid,"at_ms":start});
        if let Some((ps, pc)) = &parent {
            meta["parent"] = json!({"session": ps, "call": pc});
        }
        self.queues[q].push(meta.to_string());
        let mut t = start + 1;
        let mut open = false;
        let mut n = 0;
        for (i, spec) in turns.iter().enumerate() {
            // An unprompted turn right after one that never ended would be the same turn.
            let prompted = spec.prompted || open;
            if prompted {
                self.queues[q].push(
                    json!({"v":1,"kind":"prompted","session":sid,"at_ms":t,"text":"go"})
                        .to_string(),
                );
            }
            self.counts.turns += 1;
            for a in &spec.actions {
                t += 1;
                match a {
                    Action::Model => {
                        self.counts.call_sent += 1;
                        self.queues[q].push(json!({"v":1,"kind":"call_sent","session":sid,"request":{"model":"m"},"usage":{"input_tokens":1,"output_tokens":1},"started_ms":t,"finished_ms":t + 3}).to_string());
                    }
                    Action::Stop { held } => {
                        self.queues[q].push(json!({"v":1,"kind":"stopping","session":sid,"at_ms":t,"reply":"r","held":held}).to_string());
                    }
                    Action::Tool { parallel, nested } => {
                        let ids: Vec<String> = (0..*parallel)
                            .map(|_| {
                                n += 1;
                                format!("c{n}")
                            })
                            .collect();
                        if spec.announce {
                            for id in &ids {
                                self.queues[q].push(json!({"v":1,"kind":"calling","session":sid,"at_ms":t,"call":{"id":id,"name":"code"}}).to_string());
                            }
                        }
                        for id in &ids {
                            for _ in 0..*nested {
                                n += 1;
                                let inner = format!("c{n}");
                                t += 1;
                                if spec.announce {
                                    self.queues[q].push(json!({"v":1,"kind":"calling","session":sid,"at_ms":t,"call":{"id":inner,"name":"run","within":id}}).to_string());
                                }
                                self.queues[q].push(json!({"v":1,"kind":"called","session":sid,"call":{"id":inner,"name":"run","within":id},"output":{"exit_code":0,"timed_out":false},"started_ms":t,"finished_ms":t + 1}).to_string());
                                self.counts.called.push((sid.clone(), inner.clone()));
                                self.counts.within.insert((sid.clone(), inner), id.clone());
                            }
                        }
                        for id in &ids {
                            t += 1;
                            self.queues[q].push(json!({"v":1,"kind":"called","session":sid,"call":{"id":id,"name":"code"},"started_ms":t - 2,"finished_ms":t}).to_string());
                            self.counts.called.push((sid.clone(), id.clone()));
                        }
                    }
                    Action::Spawn => {
                        n += 1;
                        let id = format!("c{n}");
                        self.queues[q].push(json!({"v":1,"kind":"calling","session":sid,"at_ms":t,"call":{"id":id,"name":"agents.spawn"}}).to_string());
                        // The child's lines are a queue of their own: they interleave freely.
                        let child_turn = TurnSpec {
                            prompted: true,
                            ended: true,
                            announce: true,
                            actions: vec![
                                Action::Model,
                                Action::Tool {
                                    parallel: 1,
                                    nested: 1,
                                },
                            ],
                        };
                        self.session(&[child_turn], t, Some((sid.clone(), id.clone())));
                        t += 10;
                        self.queues[q].push(json!({"v":1,"kind":"called","session":sid,"call":{"id":id,"name":"agents.spawn"},"started_ms":t - 10,"finished_ms":t}).to_string());
                        self.counts.called.push((sid.clone(), id));
                    }
                }
            }
            t += 1;
            open = !spec.ended;
            if spec.ended {
                self.queues[q]
                    .push(json!({"v":1,"kind":"turn_ended","session":sid,"at_ms":t}).to_string());
            }
            if i + 1 == turns.len() && t.is_multiple_of(2) {
                self.queues[q]
                    .push(json!({"v":1,"kind":"closed","session":sid,"at_ms":t + 1}).to_string());
            }
        }
        q
    }
}

/// Merges the queues in the order `choices` picks, keeping each queue's own order.
fn interleave(mut queues: Vec<Vec<String>>, choices: &[u16]) -> Vec<String> {
    for q in &mut queues {
        q.reverse();
    }
    let mut out = Vec::new();
    let mut k = 0;
    loop {
        let live: Vec<usize> = (0..queues.len())
            .filter(|i| !queues[*i].is_empty())
            .collect();
        if live.is_empty() {
            return out;
        }
        let pick = live[choices.get(k).copied().unwrap_or(0) as usize % live.len()];
        k += 1;
        out.push(queues[pick].pop().unwrap());
    }
}

fn attr<'a>(s: &'a Span, key: &str) -> Option<&'a str> {
    s.attr(key).and_then(|v| v.as_str())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn any_interleaving_gives_whole_trees(
        sessions in prop::collection::vec(prop::collection::vec(turn(), 1..4), 1..6),
        choices in prop::collection::vec(any::<u16>(), 0..2000),
    ) {
        let mut b = Builder { queues: Vec::new(), counts: Counts::default(), next_session: 0 };
        for (i, turns) in sessions.iter().enumerate() {
            b.session(turns, 1_796_000_000_000 + i as u64 * 7, None);
        }
        let lines = interleave(std::mem::take(&mut b.queues), &choices);
        let mut asm = Assembler::new(AssembleConfig::default());
        let mut out = Output::default();
        for l in &lines {
            asm.push(&decode_line(l.as_bytes()).unwrap(), &mut out);
        }
        asm.finish(&mut out);
        let c = b.counts;

        // Ids are unique and no parent dangles.
        prop_assert_eq!(check_tree(&out.spans), Ok(()));
        // Every `called` is exactly one tool span.
        let mut tools: HashMap<(String, String), Vec<&Span>> = HashMap::new();
        for s in out.spans.iter().filter(|s| attr(s, GEN_AI_OPERATION_NAME) == Some(OP_EXECUTE_TOOL)) {
            let key = (attr(s, GEN_AI_CONVERSATION_ID).unwrap().to_string(), attr(s, GEN_AI_TOOL_CALL_ID).unwrap().to_string());
            tools.entry(key).or_default().push(s);
        }
        prop_assert_eq!(tools.len(), c.called.len());
        for key in &c.called {
            let spans = tools.get(key).map(Vec::len).unwrap_or(0);
            prop_assert_eq!(spans, 1, "{:?}", key);
        }
        // Nested calls hang under the span of the call they are within.
        let span_of: HashMap<_, _> = tools.iter().map(|(k, v)| (k.clone(), v[0].span_id)).collect();
        for ((sid, id), within) in &c.within {
            let inner = tools[&(sid.clone(), id.clone())][0];
            prop_assert_eq!(inner.parent_span_id, Some(span_of[&(sid.clone(), within.clone())]));
        }
        // Every `call_sent` is exactly one chat span; every turn exactly one root span.
        let chats = out.spans.iter().filter(|s| attr(s, GEN_AI_OPERATION_NAME) == Some(OP_CHAT)).count();
        prop_assert_eq!(chats, c.call_sent);
        let turns = out.spans.iter().filter(|s| attr(s, GEN_AI_OPERATION_NAME) == Some(OP_INVOKE_AGENT)).count();
        prop_assert_eq!(turns, c.turns);
        // A trace's root is a turn; everything else has a parent.
        for s in out.spans.iter().filter(|s| s.parent_span_id.is_none()) {
            prop_assert_eq!(attr(s, GEN_AI_OPERATION_NAME), Some(OP_INVOKE_AGENT));
        }
    }
}
