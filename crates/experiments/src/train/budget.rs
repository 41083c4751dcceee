//! How long a trial trains, a word in configs (a claim's `budget`) and in results files: its own
//! module, below the config, the claims and the plan that all name it.

/// How long a trial trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// `grid.epochs` passes over the training set (the seeds' setup).
    Epochs,
    /// The same number of steps for every batch size (the control).
    Steps,
}

impl Budget {
    /// `epochs` or `steps`, as in results files.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Epochs => "epochs",
            Self::Steps => "steps",
        }
    }
}

// A claim's `budget` key: an unknown name is an error at its value.
crate::word_serde!(
    Budget,
    as_str,
    [Budget::Epochs, Budget::Steps],
    |word| format!("expected \"epochs\" or \"steps\", got {word:?}")
);
