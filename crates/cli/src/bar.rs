//! Progress bars on stderr (indicatif hides them when stderr is not a terminal).

use std::time::Duration;

use batchlab_experiments::Progress;
use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar for one run.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    pub fn new() -> Self {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} (ETA {eta}) {msg}",
            )
            .expect("the template is valid"),
        );
        bar.enable_steady_tick(Duration::from_millis(500));
        Self { bar }
    }
}

impl Progress for Bar {
    fn start(&self, total: u64, what: &str) {
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.set_prefix(what.to_string());
    }
    fn advance(&self, done: u64, message: &str) {
        self.bar.set_position(done);
        self.bar.set_message(message.to_string());
        // Without a terminal (logs, CI, batch jobs) the bar is hidden: print plain lines instead.
        if self.bar.is_hidden() {
            eprintln!("[{done}/{}] {message}", self.bar.length().unwrap_or(0));
        }
    }
    fn detail(&self, message: &str) {
        self.bar.set_message(message.to_string());
    }
    fn note(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
