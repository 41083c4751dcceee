//! How runners report progress without knowing how it is shown (the CLI draws indicatif bars).

/// Receives progress from a running study. Implementations must be cheap: runners call them
/// between timed regions, never inside one.
pub trait Progress: Sync {
    /// A phase with `total` units of work begins.
    fn start(&self, total: u64, what: &str);
    /// `done` units of the current phase are finished; `message` says which.
    fn advance(&self, done: u64, message: &str);
    /// Where the current unit is (shown beside the bar, not logged). Default: nothing.
    fn detail(&self, _message: &str) {}
    /// A line worth showing to the user (a failed point, a resumed run).
    fn note(&self, line: &str);
    /// The phase is over.
    fn finish(&self);
}

/// Shows nothing (tests, benchmarks).
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _total: u64, _what: &str) {}
    fn advance(&self, _done: u64, _message: &str) {}
    fn note(&self, _line: &str) {}
    fn finish(&self) {}
}
