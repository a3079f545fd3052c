//! Progress on stderr for work longer than about a second, and only on a terminal
//! (indicatif hides its bars when stderr is not one).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// A spinner that appears after one second if the work is still running.
pub struct Spinner {
    bar: ProgressBar,
}

impl Spinner {
    /// Starts (invisibly) a spinner with `msg`.
    pub fn start(msg: &str) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed} {pos:>7} rows").unwrap(),
        );
        bar.set_message(msg.to_string());
        let b = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if !b.is_finished() {
                b.set_draw_target(ProgressDrawTarget::stderr());
                b.enable_steady_tick(Duration::from_millis(120));
            }
        });
        Spinner { bar }
    }

    /// Shows the library's progress messages after `lead` until the spinner finishes.
    pub fn follow_library(&self, lead: &str) {
        let (bar, lead) = (self.bar.clone(), lead.to_string());
        oose::progress::set_hook(Some(Box::new(move |m: &str| {
            bar.set_message(format!("{lead}: {m}"));
        })));
    }

    /// Adds `n` processed rows.
    pub fn inc(&self, n: usize) {
        self.bar.inc(n as u64);
    }

    /// Removes the spinner (and stops following the library).
    pub fn finish(self) {
        oose::progress::set_hook(None);
        self.bar.finish_and_clear();
    }
}
