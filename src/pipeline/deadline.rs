//! The close's deadline, shared between the guard that sets it and the export thread that
//! races everything it has in flight against it.

use std::sync::Arc;
use std::time::{Duration, Instant};

/// When the close began and by when it must end: set once by the guard, read by the export
/// thread's retry loop and awaited by everything it has in flight.
#[derive(Clone)]
pub(crate) struct Deadline(Arc<tokio::sync::watch::Sender<Option<(Instant, Instant)>>>);

/// The most of the close window kept for settling what the deadline cuts short (spooling the
/// batches whose exports are abandoned, fsyncs included).
const MAX_CUT_MARGIN: Duration = Duration::from_millis(500);

impl Deadline {
    pub(super) fn new() -> Self {
        Deadline(Arc::new(tokio::sync::watch::channel(None).0))
    }

    pub(super) fn set(&self, by: Instant) {
        self.0.send_replace(Some((Instant::now(), by)));
    }

    /// By when the close must end, once it has begun.
    pub(crate) fn by(&self) -> Option<Instant> {
        self.0.borrow().map(|(_, by)| by)
    }

    /// When what is still unanswered is given up on: a fifth of the close window before its
    /// end (at most half a second), which leaves the rest for keeping it in the spool.
    pub(crate) fn cut_at(&self) -> Option<Instant> {
        self.0.borrow().map(|(began, by)| {
            let margin = (by.saturating_duration_since(began) / 5).min(MAX_CUT_MARGIN);
            by.checked_sub(margin).unwrap_or(by)
        })
    }

    /// Resolves at [`cut_at`](Self::cut_at); never before a close begins.
    pub(crate) async fn cut(&self) {
        let mut rx = self.0.subscribe();
        if rx.wait_for(Option::is_some).await.is_err() {
            return std::future::pending().await;
        }
        if let Some(at) = self.cut_at() {
            tokio::time::sleep_until(at.into()).await;
        }
    }
}
