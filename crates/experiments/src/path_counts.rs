//! How often a run's layers took batchlab's fast paths and how often burn's own ops (meta.json
//! `path_counts`), summed over every process that ran its steps: a worker process announces its
//! running totals after each unit (`isolate`'s `@paths` line), the supervisor keeps each
//! worker's last announcement, and the session adds them to what its own process ran
//! (in-process runs). On LibTorch this is where a run shows whether its convolutions ran
//! libtorch's backward (cuDNN's on a GPU) or burn's composed one.

use std::sync::Mutex;

use batchlab_fast::{counts, Kind};
use serde::{Deserialize, Serialize};

/// One kind of operation: done by batchlab's fast path, or by burn's ops (another backend, the
/// switch off, a case the path does not cover). Each forward counts once with its backward.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    pub fast: u64,
    pub burn: u64,
}

/// Every kind of operation the fast paths cover.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathCounts {
    /// Convolutions, with or without their ReLU.
    pub convolutions: Split,
    /// Dense layers.
    pub dense: Split,
    /// Max-poolings.
    pub poolings: Split,
    /// Optimizer updates, one per parameter tensor.
    pub updates: Split,
}

const KINDS: [Kind; 4] = [Kind::Convolution, Kind::Dense, Kind::Pooling, Kind::Update];

impl PathCounts {
    const ZERO: Self = Self {
        convolutions: Split { fast: 0, burn: 0 },
        dense: Split { fast: 0, burn: 0 },
        poolings: Split { fast: 0, burn: 0 },
        updates: Split { fast: 0, burn: 0 },
    };

    fn splits(&self) -> [Split; 4] {
        [self.convolutions, self.dense, self.poolings, self.updates]
    }

    fn from_splits([convolutions, dense, poolings, updates]: [Split; 4]) -> Self {
        Self {
            convolutions,
            dense,
            poolings,
            updates,
        }
    }

    /// This process's totals since it started.
    pub fn of_this_process() -> Self {
        Self::from_splits(KINDS.map(|kind| {
            let c = counts(kind);
            Split {
                fast: c.fast,
                burn: c.fallback,
            }
        }))
    }

    /// The sum, kind by kind.
    pub fn plus(self, other: Self) -> Self {
        let (a, b) = (self.splits(), other.splits());
        Self::from_splits(std::array::from_fn(|i| Split {
            fast: a[i].fast + b[i].fast,
            burn: a[i].burn + b[i].burn,
        }))
    }

    /// What ran since `earlier` (a reading of the same process).
    pub fn since(self, earlier: Self) -> Self {
        let (a, b) = (self.splits(), earlier.splits());
        Self::from_splits(std::array::from_fn(|i| Split {
            fast: a[i].fast.saturating_sub(b[i].fast),
            burn: a[i].burn.saturating_sub(b[i].burn),
        }))
    }

    /// The eight numbers of a worker's announcement, fast then burn per kind.
    pub fn to_words(self) -> String {
        let numbers: Vec<String> = self
            .splits()
            .iter()
            .flat_map(|s| [s.fast, s.burn])
            .map(|n| n.to_string())
            .collect();
        numbers.join(" ")
    }

    /// An announcement read back; `None` unless it is eight numbers.
    pub fn from_words(words: &str) -> Option<Self> {
        let numbers: Vec<u64> = words
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        let numbers: [u64; 8] = numbers.try_into().ok()?;
        Some(Self::from_splits(std::array::from_fn(|i| Split {
            fast: numbers[2 * i],
            burn: numbers[2 * i + 1],
        })))
    }
}

/// The finished workers' totals, in this supervising process.
static WORKERS: Mutex<PathCounts> = Mutex::new(PathCounts::ZERO);

/// Adds a finished worker's last announcement.
pub fn add_worker(counts: PathCounts) {
    let mut total = WORKERS.lock().unwrap_or_else(|p| p.into_inner());
    *total = total.plus(counts);
}

/// The finished workers' totals plus this process's own.
pub fn total() -> PathCounts {
    let workers = *WORKERS.lock().unwrap_or_else(|p| p.into_inner());
    workers.plus(PathCounts::of_this_process())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announcement_reads_back_and_sums_kind_by_kind() {
        let a = PathCounts {
            convolutions: Split { fast: 13, burn: 2 },
            updates: Split { fast: 32, burn: 0 },
            ..PathCounts::default()
        };
        assert_eq!(a.to_words(), "13 2 0 0 0 0 32 0");
        assert_eq!(PathCounts::from_words(&a.to_words()), Some(a));
        assert_eq!(PathCounts::from_words("1 2 3"), None);
        assert_eq!(PathCounts::from_words("1 2 3 4 5 6 7 x"), None);
        let twice = a.plus(a);
        assert_eq!(twice.convolutions, Split { fast: 26, burn: 4 });
        assert_eq!(twice.since(a), a);
    }
}
