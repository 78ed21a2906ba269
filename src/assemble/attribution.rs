//! Who made a turn, and in which repository: facts about the machine that the assembly, which
//! does no I/O, cannot look up. The pipeline reads them (`pipeline::attribution`) and hands
//! them in with a session's `session` and `prompted` records; each turn keeps the facts it
//! started with, and says them on its root and on every model call, so cost per repository
//! or per user needs no join.

use super::policy::ContentPolicy;
use super::semconv::*;
use super::span::{Span, Value};

/// What the pipeline found out. Every field may be missing: a folder that is not a checkout
/// has no repository, a detached HEAD no branch, identity can be turned off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attribution {
    /// The `origin` remote's web address, with no credentials in it.
    pub repository: Option<String>,
    /// The checked-out branch.
    pub branch: Option<String>,
    /// The commit checked out.
    pub revision: Option<String>,
    /// Who the user is: the configured id, their git `user.email`, or their login.
    pub user: Option<String>,
}

impl Attribution {
    /// Attributes a span can take: at most this many.
    pub(crate) const ATTRS: usize = 4;

    /// The facts on `span`. They come from files, so they pass the scrubber like any input;
    /// they repeat on every span of a session, so each is shared, not copied.
    pub(crate) fn push(&self, span: &mut Span, policy: &ContentPolicy) {
        let mut put = |key, text: &Option<String>| {
            if let Some(t) = text {
                span.push(key, Value::Shared(policy.name(t)));
            }
        };
        put(VCS_REPOSITORY_URL_FULL, &self.repository);
        put(VCS_REF_HEAD_NAME, &self.branch);
        put(VCS_REF_HEAD_REVISION, &self.revision);
        put(USER_ID, &self.user);
    }

    /// Who and which repository, alone: what a tool span carries, so tool calls split by
    /// user and repository (and their metric points) need no join. Branch and commit stay
    /// on the turn and its model calls.
    pub(crate) fn push_who(&self, span: &mut Span, policy: &ContentPolicy) {
        for (key, text) in [
            (VCS_REPOSITORY_URL_FULL, &self.repository),
            (USER_ID, &self.user),
        ] {
            if let Some(t) = text {
                span.push(key, Value::Shared(policy.name(t)));
            }
        }
    }
}
