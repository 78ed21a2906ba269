//! Reading Copilot's log on from where the last turn or the last daemon stopped, and from its
//! start again when it shrank or was replaced.

use super::*;
use crate::sources::command_hooks::engine::AgentRules;

#[test]
fn a_later_turn_reads_the_log_on_from_where_the_last_one_stopped() {
    let whole = log().0;
    let lines: Vec<usize> = whole.split_inclusive('\n').map(str::len).collect();
    // The first turn's four lines, then the second turn's first line (after the first `Stop`,
    // so not the first turn's, and not to be skipped by the next read), and half of its
    // second, still being written.
    let first: usize = lines[..4].iter().sum();
    let mut logs = Growing {
        text: whole[..first + lines[4] + 30].to_string(),
        reads: Vec::new(),
    };
    let (mut a, mut out) = (Adapter::new(), Vec::new());
    turn(&mut a, &mut logs, &mut out, 0, "run it");
    logs.text = whole.clone();
    turn(&mut a, &mut logs, &mut out, 10_000, "push");
    // The second read starts on the newline before the first line it needs.
    // Each turn's log is first looked at past its `Stop` (a held stop's continuation), from
    // where the last turn's read got to; so is the next prompt (the reason a hook blocked the
    // stop with, submitted as a prompt, continues the turn), once when it comes and once when
    // the next hook decides it.
    assert_eq!(
        logs.reads,
        [
            0,
            0,
            first as u64,
            first as u64,
            first as u64,
            first as u64 - 1
        ],
        "the later line and the half line are read again"
    );
    let ids = call_ids(&out);
    assert_eq!(
        ids,
        ["chatcmpl-1", "chatcmpl-2", "chatcmpl-3", "chatcmpl-4"],
        "each model call once"
    );
}

/// A daemon that exits between turns leaves where the log was read to in the resume state; the
/// next daemon's first read goes on from there, not through the whole session's log again.
#[test]
fn a_new_daemon_reads_the_log_on_from_the_resume_point() {
    let whole = log().0;
    let first: usize = whole.split_inclusive('\n').take(4).map(str::len).sum();
    let mut logs = Growing {
        text: whole[..first].to_string(),
        reads: Vec::new(),
    };
    let (mut a, mut out) = (Adapter::new(), Vec::new());
    turn(&mut a, &mut logs, &mut out, 0, "run it");
    let saved = AgentRules::cursor(&a, SID).expect("a cursor in the log");
    assert_eq!(saved.offset, first as u64);
    // The next daemon: a new adapter, resumed.
    let (mut b, mut out) = (Adapter::new(), Vec::new());
    AgentRules::resume(&mut b, SID, saved);
    logs.text = whole.clone();
    logs.reads.clear();
    turn(&mut b, &mut logs, &mut out, 10_000, "push");
    assert!(
        logs.reads.iter().all(|r| *r + 1 >= first as u64),
        "nothing before the resume point is read again: {:?}",
        logs.reads
    );
    assert_eq!(call_ids(&out), ["chatcmpl-3", "chatcmpl-4"]);
}

#[test]
fn a_log_that_shrank_or_was_replaced_is_read_again_from_its_start() {
    let whole = log().0;
    let first: usize = whole.split_inclusive('\n').take(4).map(str::len).sum();
    let mut logs = Growing {
        text: whole[..first].to_string(),
        reads: Vec::new(),
    };
    let (mut a, mut out) = (Adapter::new(), Vec::new());
    turn(&mut a, &mut logs, &mut out, 0, "run it");
    // Replaced by a shorter log: the second turn's two model calls.
    let second: Vec<&str> = whole.split_inclusive('\n').skip(4).collect();
    logs.text = [second[0], second[second.len() - 1]].concat();
    assert!(logs.text.len() < first);
    out.clear();
    turn(&mut a, &mut logs, &mut out, 10_000, "push");
    assert_eq!(
        logs.reads,
        [
            0,
            0,
            first as u64,
            first as u64,
            first as u64,
            first as u64 - 1,
            0
        ]
    );
    let ids = call_ids(&out);
    assert_eq!(ids, ["chatcmpl-3", "chatcmpl-4"]);
}
