//! A long command's progress (`import`'s files): a bar on stderr when stderr is a terminal,
//! redrawn a few times a second, and nothing at all when it is not one (a log, a pipe), where
//! the plain lines the command prints as each part ends say how far it got.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// One part's progress (one agent's files); cleared when dropped, so that the plain line that
/// follows it stands alone.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// Progress through `total` files of `title`'s.
    pub fn files(title: &str, total: usize) -> Progress {
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:24}] {pos}/{len} files, {msg} events, {elapsed}",
        )
        .expect("the template is well formed")
        .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(
            Some(total as u64),
            ProgressDrawTarget::stderr_with_hz(8),
        )
        .with_style(style)
        .with_prefix(title.to_string())
        .with_message("0");
        Progress { bar }
    }

    /// One more file read, `events` events read so far.
    pub fn read(&self, events: u64) {
        self.bar.set_message(events.to_string());
        self.bar.inc(1);
    }

    /// Runs `f` (a log line) with the bar out of its way.
    pub fn aside<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
