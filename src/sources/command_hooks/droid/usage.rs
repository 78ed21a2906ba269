//! Each model call's usage, from totals Droid writes after the call's line: the session's
//! running sum and the newest call's own, in the session's `.settings.json`. Droid writes a
//! call's answer to the session file first and its usage later (the last answer's only once
//! the stop hooks have run), so a call found in the file waits, oldest first, until the
//! totals show its usage; whatever is found, the session's sum stays exact.

use std::collections::VecDeque;

use super::transcript::{added, least, Answer, Totals};
use crate::protocol::Usage;

/// The model calls of one session waiting for their usage, and the totals given out so far.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    /// Answers found, oldest first, each with when its call began.
    waiting: VecDeque<(Answer, u64)>,
    /// The totals when usage was last given out; `None` before, or after a restart.
    given: Option<Usage>,
    /// Resumed from an earlier daemon: what it gave out is not known.
    resumed: bool,
}

/// A call whose usage is known, with when it began.
pub(super) type Settled = (Answer, u64, Usage);

impl Ledger {
    /// A ledger for a session an earlier daemon read up to its resume point.
    pub fn resumed() -> Ledger {
        Ledger {
            resumed: true,
            ..Ledger::default()
        }
    }

    pub fn wait(&mut self, answer: Answer, began: u64) {
        self.waiting.push_back((answer, began));
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The calls whose usage `totals` shows, oldest first. The totals gained since usage was
    /// last given out go to the oldest call waiting when they are one call's (the newest
    /// call's own usage, or one call waiting); when they are more, every call waiting is
    /// settled: the newest with its own usage, the oldest with the rest. With `flush` (the
    /// session ends), calls whose usage never showed go out with none.
    pub fn settle(&mut self, totals: Option<Totals>, flush: bool) -> Vec<Settled> {
        let mut settled = Vec::new();
        if let Some(t) = totals.filter(|_| !self.waiting.is_empty()) {
            let gained = match self.given {
                Some(before) => added(&t.all, &before),
                // Resumed: the newest call's own usage is all that is known.
                None if self.resumed => t.last,
                None => t.all,
            };
            if gained != Usage::default() {
                self.given = Some(t.all);
                if self.waiting.len() == 1 || gained == t.last {
                    let (a, began) = self.waiting.pop_front().expect("one waits");
                    settled.push((a, began, gained));
                } else {
                    // More than one call's: the newest of them has the last call's usage,
                    // the oldest waiting the rest; calls after those two wait on (their
                    // usage may not show yet), so that nothing is given twice or lost.
                    let newest = least(&t.last, &gained);
                    let oldest = added(&gained, &newest);
                    let (a, began) = self.waiting.pop_front().expect("two wait");
                    settled.push((a, began, oldest));
                    let (a, began) = self.waiting.pop_front().expect("two wait");
                    settled.push((a, began, newest));
                }
            }
        }
        if flush {
            settled.extend(self.waiting.drain(..).map(|(a, b)| (a, b, Usage::default())));
        }
        settled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(id: &str) -> Answer {
        Answer {
            id: id.into(),
            response_id: None,
            model: "m".into(),
            at_ms: 0,
            calls: Vec::new(),
            text: String::new(),
            provider: None,
        }
    }

    fn used(input: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: input / 10,
            ..Usage::default()
        }
    }

    fn totals(all: u64, last: u64) -> Option<Totals> {
        Some(Totals {
            all: used(all),
            last: used(last),
            provider: None,
        })
    }

    fn ids(s: &[Settled]) -> Vec<(&str, u64)> {
        s.iter().map(|(a, _, u)| (a.id.as_str(), u.input_tokens)).collect()
    }

    /// As Droid 0.215.0 writes them with a stop hook blocking once: the first answer's
    /// usage by the `PreToolUse`, each later one's a hook late, the last after the stops.
    #[test]
    fn a_call_waits_for_its_usage_and_each_gets_its_own() {
        let mut l = Ledger::default();
        l.wait(answer("a1"), 0);
        assert_eq!(ids(&l.settle(totals(1000, 1000), false)), [("a1", 1000)]);
        l.wait(answer("a2"), 0);
        assert!(l.settle(totals(1000, 1000), false).is_empty(), "not yet shown");
        l.wait(answer("a3"), 0);
        assert_eq!(ids(&l.settle(totals(3000, 2000), false)), [("a2", 2000)]);
        assert_eq!(ids(&l.settle(totals(6000, 3000), true)), [("a3", 3000)]);
        assert!(l.is_empty());
    }

    #[test]
    fn several_calls_shown_at_once_share_the_sum_exactly_and_the_rest_waits() {
        let mut l = Ledger::default();
        for id in ["a", "b", "c"] {
            l.wait(answer(id), 0);
        }
        // The totals show two calls' (1000 and 2000): the third waits for its own.
        let s = l.settle(totals(3000, 2000), false);
        assert_eq!(ids(&s), [("a", 1000), ("b", 2000)]);
        let s = l.settle(totals(6000, 3000), true);
        assert_eq!(ids(&s), [("c", 3000)], "nothing lost");
    }

    #[test]
    fn a_session_that_ends_sends_what_never_showed_with_none_and_a_restart_takes_the_last() {
        let mut l = Ledger::default();
        l.wait(answer("a"), 0);
        assert_eq!(ids(&l.settle(None, true)), [("a", 0)]);
        let mut resumed = Ledger::resumed();
        resumed.wait(answer("b"), 0);
        assert_eq!(ids(&resumed.settle(totals(9000, 700), false)), [("b", 700)]);
    }
}
