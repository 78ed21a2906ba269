//! What `import` reads of a session the hooks traced part of, for an agent whose files share
//! no id with its hooks ([`History::Untraced`](super::spec::History::Untraced)): the turns
//! before the first the hooks traced (they were installed half-way) and after the last (they
//! were taken out). Those in between are the hooks' trace.

use std::ops::RangeInclusive;

use crate::protocol::{Event, Record};

/// Of one session file's records (the session's, its sub-agents' inside its turns, and any
/// after it of sub-agents placed under no call), the turns of the session that lie wholly
/// outside `traced` (the hooks' first turn's start to their last one's end, in ms), with what
/// happened inside them; the session closes at the last of those (none: nothing). The
/// sub-agents placed under no call are left out: nothing says on which side they ran.
pub fn outside(records: Vec<Record<'static>>, traced: RangeInclusive<u64>) -> Vec<Record<'static>> {
    let Some(own) = records.first().map(|r| r.session.clone()) else {
        return records;
    };
    let (mut kept, mut turn) = (Vec::new(), Vec::new());
    let (mut began, mut last) = (None::<u64>, None::<u64>);
    for r in records {
        let mine = r.session == own;
        match &r.event {
            Event::Session(_) if mine => kept.push(r),
            Event::Prompted { at_ms, .. } if mine => {
                turn.clear();
                began = Some(*at_ms);
                turn.push(r);
            }
            Event::TurnEnded { at_ms, .. } if mine => {
                let before = *at_ms < *traced.start();
                let after = began.is_some_and(|b| b > *traced.end());
                if before || after {
                    last = Some(last.map_or(*at_ms, |l| l.max(*at_ms)));
                    turn.push(r);
                    kept.append(&mut turn);
                }
                began = None;
                turn.clear();
            }
            Event::Closed { at_ms } if mine => {
                // No turn of it outside the hooks' trace: it is all theirs.
                let Some(last) = last else {
                    return Vec::new();
                };
                kept.push(Record {
                    event: Event::Closed {
                        at_ms: last.min(*at_ms),
                    },
                    ..r
                });
                // What comes after is of sub-agents no call holds.
                break;
            }
            _ if began.is_some() => turn.push(r),
            _ => {}
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::command_hooks::engine::records::{prompted, record, turn_ended};

    fn session(id: &str, at_ms: u64) -> Record<'static> {
        record(
            id,
            Event::Session(crate::protocol::SessionInfo {
                at_ms,
                ..Default::default()
            }),
        )
    }

    fn kinds(records: &[Record<'_>]) -> Vec<(String, &'static str, u64)> {
        records
            .iter()
            .map(|r| {
                let at = match &r.event {
                    Event::Session(i) => i.at_ms,
                    Event::Prompted { at_ms, .. }
                    | Event::TurnEnded { at_ms, .. }
                    | Event::Closed { at_ms }
                    | Event::Calling { at_ms, .. } => *at_ms,
                    _ => 0,
                };
                (r.session.to_string(), r.event.kind().as_str(), at)
            })
            .collect()
    }

    #[test]
    fn the_turns_before_and_after_the_hooks_traced_are_kept_with_their_sub_agents() {
        let records = vec![
            session("s", 100),
            prompted("s", 100, "one".into()),
            session("s/child", 110),
            prompted("s/child", 110, "go".into()),
            turn_ended("s/child", 150),
            record("s/child", Event::Closed { at_ms: 150 }),
            turn_ended("s", 200),
            // The hooks began in this one: it is theirs.
            prompted("s", 300, "two".into()),
            turn_ended("s", 400),
            prompted("s", 500, "three".into()),
            turn_ended("s", 600),
            record("s", Event::Closed { at_ms: 600 }),
            session("s/unplaced", 700),
            record("s/unplaced", Event::Closed { at_ms: 710 }),
        ];
        let kept = outside(records.clone(), 350..=450);
        let s = |k, at| ("s".to_string(), k, at);
        let child = |k, at| ("s/child".to_string(), k, at);
        assert_eq!(
            kinds(&kept),
            vec![
                s("session", 100),
                s("prompted", 100),
                child("session", 110),
                child("prompted", 110),
                child("turn_ended", 150),
                child("closed", 150),
                s("turn_ended", 200),
                // Taken out before the third.
                s("prompted", 500),
                s("turn_ended", 600),
                s("closed", 600),
            ]
        );
        // The hooks traced it all: nothing.
        assert!(outside(records.clone(), 150..=550).is_empty());
        // After everything: every turn, and the session's own close.
        assert_eq!(outside(records.clone(), 10_000..=10_000).len(), 12);
    }
}
