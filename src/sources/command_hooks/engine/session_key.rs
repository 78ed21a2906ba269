//! A sub-agent's session id is made from its parent's, in one format for every agent, so that
//! any record of it (one a tick or an abandon makes, outside its journal's lines) finds the
//! journal and the settings of its top session.

/// Sub-agent `id`'s session, under session `parent` (itself a sub-agent's, maybe).
pub fn sub_agent(parent: &str, id: &str) -> String {
    format!("{parent}/agent-{id}")
}

/// The top session a session belongs to: itself, or the one its sub-agent id was made from.
pub fn top(session: &str) -> &str {
    session
        .split_once("/agent-")
        .map_or(session, |(parent, _)| parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_agents_sub_agent_belongs_to_the_top_session() {
        let child = sub_agent("s1", "a");
        let grandchild = sub_agent(&child, "b");
        assert_eq!(top(&grandchild), "s1");
        assert_eq!(top("s1"), "s1");
    }
}
