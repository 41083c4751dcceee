//! The trials of a steps-to-target search and the metaparameters each is given.
//!
//! Every trial is planned when the study loads (ids, order, and its point in the unit square),
//! so shards, claims and resume see one fixed list. A first-stage trial's metaparameters
//! follow from its point alone. A refining trial's box is centred on the best first-stage
//! trial of its cell (`batchlab_method::refine`), so it is resolved when it starts, from the
//! rows of the run (every shard's), and it may start only once every first-stage trial of
//! its cell has finished ([`ready`]). The metaparameters it was given are recorded in
//! search.csv like any trial's.

use std::{
    collections::{BTreeSet, HashMap},
    path::Path,
};

use batchlab_method::rows::Status;
use batchlab_method::{
    quasi::{log_uniform, reverse_log_uniform, QuasiRandom},
    reaching::reaches,
    refine::{best_explored, cell_seed, refined_range, Explored},
    rows::{
        read_rows_so_far,
        train::{done_trials, TrainEval, TrialRecord},
    },
};
use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};

use super::{config::Points, SearchTrial, Stage, TargetConfig, TargetStudy, Workload};
use crate::{error::RunError, shard::run_dirs};

/// The learning rate and momentum a trial trains with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metaparameters {
    /// The learning rate.
    pub learning_rate: f64,
    /// The momentum (0 for plain SGD).
    pub momentum: f64,
}

/// Every trial: the first stage of every cell in one shuffled order, then the refining stage
/// in another (so that a cell's refining trials come after its first stage). With `points =
/// "shared"` and no refining stage, this is the plan of studies before either existed.
pub(super) fn search_trials(config: &TargetConfig) -> Result<Vec<SearchTrial>, String> {
    let s = &config.search;
    let mut explore = Vec::new();
    let mut refine = Vec::new();
    for (w, workload) in config.workloads.iter().enumerate() {
        let dims = if workload.searches_momentum() { 2 } else { 1 };
        for &batch_size in workload.batch_sizes(s) {
            let prefix = workload.cell_prefix(batch_size);
            let seed = match s.points {
                Points::Shared => s.seed,
                Points::PerBatchSize => cell_seed(s.seed, &prefix, 0),
            };
            let first = QuasiRandom::new(dims, seed).map_err(|e| e.to_string())?;
            let second =
                QuasiRandom::new(dims, cell_seed(s.seed, &prefix, 1)).map_err(|e| e.to_string())?;
            let n = workload.trials(s) as u64;
            let trial = |index: u64, stage: Stage, point: Vec<f64>| SearchTrial {
                id: format!("{prefix}{index}"),
                workload: w,
                batch_size,
                index,
                stage,
                point,
            };
            explore.extend((0..n).map(|i| trial(i, Stage::Explore, first.point(i))));
            let m = workload.refine_trials(s) as u64;
            refine.extend((0..m).map(|i| trial(n + i, Stage::Refine, second.point(i))));
        }
    }
    explore.shuffle(&mut StdRng::seed_from_u64(s.seed));
    refine.shuffle(&mut StdRng::seed_from_u64(s.seed.wrapping_add(1)));
    explore.extend(refine);
    Ok(explore)
}

/// The metaparameters of `point` drawn log-uniformly over `learning_rate` and, for a momentum
/// workload, on the reverse-log scale over `one_minus_momentum`.
fn draw(
    workload: &Workload,
    point: &[f64],
    learning_rate: [f64; 2],
    one_minus_momentum: [f64; 2],
) -> Result<Metaparameters, String> {
    let [lo, hi] = learning_rate;
    let learning_rate = log_uniform(point[0], lo, hi).map_err(|e| e.to_string())?;
    let momentum = if workload.searches_momentum() {
        let [lo, hi] = one_minus_momentum;
        reverse_log_uniform(point[1], lo, hi).map_err(|e| e.to_string())?
    } else {
        0.0
    };
    Ok(Metaparameters {
        learning_rate,
        momentum,
    })
}

impl TargetStudy {
    /// The first-stage metaparameters of `t`'s point over its workload's search space.
    fn explored_metaparameters(&self, t: &SearchTrial) -> Result<Metaparameters, String> {
        let s = &self.config.search;
        let w = &self.config.workloads[t.workload];
        draw(w, &t.point, w.learning_rate(s), w.one_minus_momentum(s))
    }

    /// The metaparameters `t` trains with: from its point, and for a refining trial from the
    /// first stage of its cell as recorded in the run containing `dir` (call once [`ready`]).
    pub(super) fn metaparameters(
        &self,
        dir: &Path,
        t: &SearchTrial,
    ) -> Result<Metaparameters, RunError> {
        if t.stage == Stage::Explore {
            return self.explored_metaparameters(t).map_err(RunError::Other);
        }
        let s = &self.config.search;
        let w = &self.config.workloads[t.workload];
        let factor = s.refine.map_or(1.0, |r| r.factor);
        let centre = self.refine_centre(dir, t)?;
        let learning_rate =
            refined_range(centre.map(|c| c.learning_rate), factor, w.learning_rate(s));
        let one_minus_momentum = refined_range(
            centre.map(|c| 1.0 - c.momentum),
            factor,
            w.one_minus_momentum(s),
        );
        draw(w, &t.point, learning_rate, one_minus_momentum).map_err(RunError::Other)
    }

    /// The first-stage trials of `t`'s cell.
    fn explored_in_cell<'a>(&'a self, t: &'a SearchTrial) -> impl Iterator<Item = &'a SearchTrial> {
        self.trials.iter().filter(move |o| {
            o.stage == Stage::Explore && o.workload == t.workload && o.batch_size == t.batch_size
        })
    }

    /// The metaparameters of the best first-stage trial of `t`'s cell, read from every
    /// directory of the run; `None` when none trained without diverging or failing.
    fn refine_centre(
        &self,
        dir: &Path,
        t: &SearchTrial,
    ) -> Result<Option<Metaparameters>, RunError> {
        let cell: Vec<&SearchTrial> = self.explored_in_cell(t).collect();
        let ids: BTreeSet<&str> = cell.iter().map(|o| o.id.as_str()).collect();
        let mut status: HashMap<String, Status> = HashMap::new();
        let mut curves: HashMap<String, Vec<TrainEval>> = HashMap::new();
        for d in run_dirs(dir) {
            let finished = done_trials(&d)?;
            let records = d.join("trials.csv");
            if batchlab_method::rows::stored::exists(&records) {
                for r in read_rows_so_far::<TrialRecord>(&records)? {
                    if ids.contains(r.trial.as_str()) {
                        status.insert(r.trial.clone(), r.status);
                    }
                }
            }
            let results = d.join("results.csv");
            if batchlab_method::rows::stored::exists(&results) {
                for e in read_rows_so_far::<TrainEval>(&results)? {
                    // Only the attempt this directory finished (a stopped attempt's rows may
                    // remain in another shard's file).
                    if ids.contains(e.trial.as_str()) && finished.contains(&e.trial) {
                        curves.entry(e.trial.clone()).or_default().push(e);
                    }
                }
            }
        }
        let target = self.config.budget.target_error;
        let explored: Vec<Explored> = cell
            .iter()
            .map(|o| {
                let evaluations = curves.get(&o.id).map_or(&[][..], Vec::as_slice);
                let errors = || evaluations.iter().map(|e| (e.step, 1.0 - e.val_accuracy));
                Explored {
                    index: o.index,
                    feasible: status.get(&o.id).is_some_and(|s| s.is_ok()),
                    reached_at: errors()
                        .filter(|&(_, e)| reaches(e, target))
                        .map(|(s, _)| s)
                        .min(),
                    lowest_error: errors().map(|(_, e)| e).fold(f64::NAN, f64::min),
                }
            })
            .collect();
        best_explored(&explored)
            .map(|k| {
                self.explored_metaparameters(cell[k])
                    .map_err(RunError::Other)
            })
            .transpose()
    }
}

/// Whether `t` may start: a first-stage trial always; a refining trial once every first-stage
/// trial of its cell is in `done_in_run` (finished in some directory of the run).
pub(super) fn ready(study: &TargetStudy, t: &SearchTrial, done_in_run: &BTreeSet<String>) -> bool {
    t.stage == Stage::Explore
        || study
            .explored_in_cell(t)
            .all(|o| done_in_run.contains(&o.id))
}
