//! The search for the largest batch size that fits a memory budget, the way PyTorch
//! Lightning's `BatchSizeFinder` (mode `binsearch`) does it: double from a starting size until a
//! probe runs out of memory, then bisect between the largest size that fitted and the smallest
//! that did not.
//!
//! The search is a pure function of the probes made so far ([`BatchSearch::next`]), so a run
//! that resumes after a crash continues exactly where it stopped, and the tests drive it with a
//! fake probe.

/// What one probe of a batch size found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The training steps ran within the budget.
    Fits,
    /// The probe ran out of memory under the budget's limit.
    OutOfMemory,
    /// The probe failed for another reason (a bug, a backend error): not evidence about
    /// memory, so the search stops rather than bisect on it.
    Failed,
}

/// What the search does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Probe this batch size.
    Probe(u32),
    /// The largest batch size that fits: `largest` fitted and `largest + 1` did not.
    Found {
        /// The largest batch size that fitted.
        largest: u32,
    },
    /// Even a batch of one ran out of memory.
    NothingFits,
    /// The cap was reached without running out of memory: the budget does not bind below it.
    Capped {
        /// The largest batch size probed (the cap), which fitted.
        largest: u32,
    },
    /// A probe failed for a reason other than memory; the search cannot go on.
    Stopped {
        /// The batch size whose probe failed.
        at: u32,
    },
}

/// The search's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchSearch {
    /// The first batch size probed (at least 1).
    pub start: u32,
    /// The largest batch size the search may probe.
    pub cap: u32,
}

impl BatchSearch {
    /// The next step, given every probe made so far as (batch size, outcome), in any order.
    ///
    /// Memory is assumed to grow with the batch size: the boundary lies between the largest
    /// size that fitted below the smallest that ran out of memory and that smallest size. A
    /// fitting size above an out-of-memory one (memory that is not monotone, a noisy limit) is
    /// kept in the record but does not move the boundary.
    pub fn next(&self, probes: &[(u32, ProbeOutcome)]) -> Next {
        let start = self.start.clamp(1, self.cap.max(1));
        if let Some(&(at, _)) = probes.iter().find(|(_, o)| *o == ProbeOutcome::Failed) {
            return Next::Stopped { at };
        }
        let smallest_oom = probes
            .iter()
            .filter(|(_, o)| *o == ProbeOutcome::OutOfMemory)
            .map(|&(b, _)| b)
            .min();
        let largest_fit = probes
            .iter()
            .filter(|&&(b, o)| o == ProbeOutcome::Fits && smallest_oom.is_none_or(|h| b < h))
            .map(|&(b, _)| b)
            .max();
        match (largest_fit, smallest_oom) {
            (None, None) => Next::Probe(start),
            // Growing: double the last size that fitted, up to the cap.
            (Some(low), None) if low >= self.cap => Next::Capped { largest: low },
            (Some(low), None) => Next::Probe(low.saturating_mul(2).min(self.cap)),
            // Bisecting between what fitted (0 when nothing has) and what did not.
            (low, Some(high)) => {
                let low = low.unwrap_or(0);
                if high - low <= 1 {
                    if low == 0 {
                        Next::NothingFits
                    } else {
                        Next::Found { largest: low }
                    }
                } else {
                    Next::Probe(low + (high - low) / 2)
                }
            }
        }
    }

    /// An upper bound on the probes the search makes: the start, doubling up to the cap, and a
    /// bisection no wider than the cap. (Starting at 1, a search that ends at `max` makes at
    /// most 2 log2(max) + 2.)
    pub fn max_probes(&self) -> u32 {
        let cap = self.cap.max(1);
        let start = self.start.clamp(1, cap);
        let ceil_log2 = |x: u32| u32::BITS - (x - 1).leading_zeros();
        2 + ceil_log2(cap.div_ceil(start)) + ceil_log2(cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a device where batch sizes up to `fits` fit; returns the end
    /// and the sizes probed.
    fn search(search: BatchSearch, probe: impl Fn(u32) -> ProbeOutcome) -> (Next, Vec<u32>) {
        let mut probes = Vec::new();
        loop {
            match search.next(&probes) {
                Next::Probe(b) => {
                    assert!(
                        probes.iter().all(|&(p, _)| p != b),
                        "{b} probed twice: {probes:?}"
                    );
                    assert!(probes.len() < 100, "the search does not end");
                    probes.push((b, probe(b)));
                }
                end => return (end, probes.iter().map(|&(b, _)| b).collect()),
            }
        }
    }

    fn fits_up_to(max: u32) -> impl Fn(u32) -> ProbeOutcome {
        move |b| {
            if b <= max {
                ProbeOutcome::Fits
            } else {
                ProbeOutcome::OutOfMemory
            }
        }
    }

    #[test]
    fn finds_the_exact_boundary_within_the_probe_bound() {
        let settings = BatchSearch {
            start: 1,
            cap: 1 << 20,
        };
        for max in [
            1u32, 2, 3, 4, 5, 7, 8, 9, 100, 127, 128, 129, 511, 512, 513, 1000, 65_535,
        ] {
            let (end, probed) = search(settings, fits_up_to(max));
            assert_eq!(end, Next::Found { largest: max }, "max {max}");
            // Both sides of the boundary were probed: no off-by-one.
            assert!(
                probed.contains(&max) && probed.contains(&(max + 1)),
                "{probed:?}"
            );
            let bound = 2 * max.ilog2() + 2;
            assert!(
                probed.len() as u32 <= bound,
                "max {max}: {} probes > 2 log2(max) + 2 = {bound}: {probed:?}",
                probed.len()
            );
        }
    }

    #[test]
    fn doubles_then_bisects_like_lightning() {
        let (end, probed) = search(
            BatchSearch {
                start: 2,
                cap: 4096,
            },
            fits_up_to(40),
        );
        assert_eq!(end, Next::Found { largest: 40 });
        assert_eq!(probed, vec![2, 4, 8, 16, 32, 64, 48, 40, 44, 42, 41]);
    }

    #[test]
    fn a_start_that_does_not_fit_bisects_down() {
        let (end, probed) = search(
            BatchSearch {
                start: 64,
                cap: 4096,
            },
            fits_up_to(5),
        );
        assert_eq!(end, Next::Found { largest: 5 });
        assert_eq!(probed[0], 64);
        let (end, _) = search(
            BatchSearch {
                start: 8,
                cap: 4096,
            },
            fits_up_to(0),
        );
        assert_eq!(end, Next::NothingFits);
    }

    #[test]
    fn the_cap_ends_a_search_the_budget_does_not_bind() {
        let (end, probed) = search(BatchSearch { start: 1, cap: 100 }, fits_up_to(1000));
        assert_eq!(end, Next::Capped { largest: 100 });
        assert_eq!(probed, vec![1, 2, 4, 8, 16, 32, 64, 100]);
    }

    #[test]
    fn a_failure_that_is_not_memory_stops_the_search() {
        let probe = |b| {
            if b == 16 {
                ProbeOutcome::Failed
            } else {
                ProbeOutcome::Fits
            }
        };
        let (end, probed) = search(
            BatchSearch {
                start: 1,
                cap: 1024,
            },
            probe,
        );
        assert_eq!(end, Next::Stopped { at: 16 });
        assert_eq!(probed, vec![1, 2, 4, 8, 16]);
    }

    #[test]
    fn a_fit_above_an_oom_does_not_move_the_boundary() {
        let s = BatchSearch {
            start: 1,
            cap: 1024,
        };
        let probes = [
            (8, ProbeOutcome::Fits),
            (16, ProbeOutcome::OutOfMemory),
            (32, ProbeOutcome::Fits),
        ];
        assert_eq!(s.next(&probes), Next::Probe(12));
    }

    #[test]
    fn the_probe_bound_covers_the_worst_case() {
        let s = BatchSearch {
            start: 1,
            cap: 1 << 16,
        };
        for max in [1u32, 3, 1000, (1 << 16) - 1] {
            let (_, probed) = search(s, fits_up_to(max));
            assert!(probed.len() as u32 <= s.max_probes());
        }
    }
}
