//! One workload of a steps-to-target study, analysed: its trials, per batch size the summary
//! cell and steps to result, the S(B) fit, the regimes, how the best learning rate scales,
//! and the time to result.

use std::collections::{BTreeMap, BTreeSet};

use batchlab_method::rows::steps_to_target::SearchRow;
use batchlab_method::stats::linear_fit;

use super::time::{self, StepTime, TimeToResult};
use crate::steps_to_target::{
    curve_intervals, fit_scaling, regimes, steps_to_result, BandRegimes, CellTrials,
    CurveIntervals, Draw, Reading, Regime, RegimeOptions, Regimes, ScalingFit, ScalingFitOptions,
    StepsToResult, TargetCell, TargetContext, Trial, TrialOutcome, MIN_FIT_POINTS,
};

/// What the study found for one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadFindings {
    /// `<model>/<optimizer>`.
    pub workload: String,
    /// Steps to result per batch size, in increasing batch size (batch sizes whose every
    /// trial lacks evaluations are left out).
    pub steps: Vec<StepsToResult>,
    /// S(B) = S_min (1 + B_crit / B) fitted to the batch sizes with a result; `None` with
    /// fewer than 3 of them.
    pub fit: Option<ScalingFit>,
    /// The three regimes; `None` with fewer than 2 batch sizes with a result. Their ranges are
    /// judged with the bootstrap intervals (`scaling::interval`) whenever those can judge them.
    pub regimes: Option<Regimes>,
    /// Steps to result with bootstrap intervals, per batch size with a trial.
    pub intervals: CurveIntervals,
    /// How the best trial's learning rate scales with batch size.
    pub learning_rate: Option<LearningRateScaling>,
    /// How the best trial's effective learning rate lr / (1 - momentum) scales (momentum
    /// workloads only).
    pub effective_learning_rate: Option<LearningRateScaling>,
    /// Steps to result times step time, when step times were given.
    pub time_to_result: Option<TimeToResult>,
}

/// A straight line fitted to log(best rate) against log(batch size): a slope of 1 is the
/// linear scaling rule (Goyal et al. 2017), 0.5 the square-root rule (Krizhevsky 2014).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearningRateScaling {
    /// d log(rate) / d log(batch size).
    pub slope: f64,
    /// 95% interval of the slope (Student t with n - 2 degrees of freedom); `None` with two
    /// points, which a line fits exactly.
    pub interval: Option<(f64, f64)>,
    /// The smallest batch size fitted.
    pub from: u32,
    /// The largest batch size fitted.
    pub to: u32,
    /// Batch sizes fitted.
    pub points: usize,
    /// Whether those are the perfect-scaling range, where the rules are meant to hold;
    /// false when that range has fewer than two batch sizes with a known best rate, and
    /// every batch size with one was fitted instead.
    pub perfect_scaling_range: bool,
}

/// One trial as the figures and the report see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrialPoint {
    pub id: String,
    pub batch_size: u32,
    /// `None`: an ok trial without evaluations, whose outcome cannot be known.
    pub outcome: Option<TrialOutcome>,
    /// Steps the trial took (where it reached the target, gave up, diverged or failed).
    pub stopped_at: u64,
    pub search: Option<SearchRow>,
    /// Validation error at its last evaluation (an `ok` trial with evaluations only).
    pub final_error: Option<f64>,
    /// Test error of its final model, where the run evaluated the test split.
    pub test_error: Option<f64>,
}

/// One workload, analysed.
pub(crate) struct Workload {
    pub label: String,
    /// Its own random stream, its place in the study: no other workload's draws move with its.
    pub stream: u64,
    /// Whether momentum was searched (any trial with a momentum above 0).
    pub momentum: bool,
    pub trials: Vec<TrialPoint>,
    pub cells: Vec<TargetCell>,
    pub steps: Vec<StepsToResult>,
    /// (batch size, steps to result) where some trial reached the target.
    pub points: Vec<(f64, f64)>,
    pub fit: Result<ScalingFit, String>,
    pub regimes: Result<Regimes, String>,
    /// Steps to result with bootstrap intervals, per batch size with an evaluated trial,
    /// censored trials read by Kaplan-Meier.
    pub intervals: CurveIntervals,
    /// The same with censored trials read as reaching at their stop, and as never reaching:
    /// the bounds a verdict must hold between.
    pub bounds: [CurveIntervals; 2],
    /// The regimes by positive tests on `intervals`' slope windows.
    pub bands: BandRegimes,
    pub learning_rate: Option<LearningRateScaling>,
    pub effective: Option<LearningRateScaling>,
    pub time: Option<TimeToResult>,
    /// Whether S(B) fits within the cells' own noise.
    pub lack_of_fit: Option<LackOfFit>,
}

/// A chi-square test of the S(B) fit against each cell's noise, taken from the width of its
/// bootstrap interval (log scale, the width of a 95% interval read as 2 x 1.96 standard
/// deviations: rough, since a best-of-N interval is lopsided).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LackOfFit {
    /// Sum of squared log residuals over their noise.
    pub chi_square: f64,
    /// Cells used minus the fit's two parameters.
    pub df: usize,
    /// P(chi-square >= the statistic) if S(B) were the curve.
    pub p: f64,
}

fn lack_of_fit(fit: &ScalingFit, intervals: &CurveIntervals) -> Option<LackOfFit> {
    let terms: Vec<f64> = (0..intervals.batch_sizes.len())
        .filter_map(|k| {
            let (lo, hi) = intervals.intervals[k];
            let s = intervals.steps[k];
            let sd = (hi / lo).ln() / (2.0 * 1.96);
            (s.is_finite() && lo > 0.0 && hi.is_finite() && sd > 0.0).then(|| {
                let r = s.ln() - fit.predict(intervals.batch_sizes[k]).ln();
                (r / sd).powi(2)
            })
        })
        .collect();
    let df = terms.len().checked_sub(2).filter(|&d| d >= 1)?;
    let chi_square: f64 = terms.iter().sum();
    Some(LackOfFit {
        chi_square,
        df,
        p: batchlab_method::tests_of_claims::chi_square_upper(chi_square, df as f64),
    })
}

impl Workload {
    /// Whether `regimes`' ranges were judged by `bands` (else point by point: fewer than
    /// three batch sizes, so no slope window).
    pub fn regimes_with_intervals(&self) -> bool {
        !self.bands.windows.is_empty()
    }

    /// Its curve with censored trials read by `reading`.
    pub fn curve(&self, reading: Reading) -> &CurveIntervals {
        match reading {
            Reading::KaplanMeier => &self.intervals,
            Reading::Optimistic => &self.bounds[0],
            Reading::Pessimistic => &self.bounds[1],
        }
    }

    /// The ids of the best trials (one per batch size with a result).
    pub fn best_ids(&self) -> BTreeSet<&str> {
        self.cells
            .iter()
            .filter_map(|c| c.best_trial.as_deref())
            .collect()
    }

    pub(super) fn findings(&self) -> WorkloadFindings {
        WorkloadFindings {
            workload: self.label.clone(),
            steps: self.steps.clone(),
            fit: self.fit.as_ref().ok().cloned(),
            regimes: self.regimes.as_ref().ok().cloned(),
            intervals: self.intervals.clone(),
            learning_rate: self.learning_rate,
            effective_learning_rate: self.effective,
            time_to_result: self.time.clone(),
        }
    }
}

/// Analyses one workload's trials.
pub(super) fn workload(
    label: String,
    trials: Vec<(Trial, TrialPoint)>,
    ctx: &TargetContext,
    step_times: &[StepTime],
    stream: u64,
) -> Result<Workload, String> {
    // Only trials with an outcome enter steps to result; the others are counted apart.
    let evaluated: Vec<Trial> = trials
        .iter()
        .filter(|(_, p)| p.outcome.is_some())
        .map(|(t, _)| t.clone())
        .collect();
    let points: Vec<TrialPoint> = trials.into_iter().map(|(_, p)| p).collect();
    // Cannot fail: the target is checked finite and trials_from_train keeps one row per id.
    let steps = steps_to_result(&evaluated, ctx.target_error).map_err(|e| e.to_string())?;
    let cells = cells(&label, &points, &steps);
    let momentum = if points.iter().any(|p| p.search.is_some()) {
        points
            .iter()
            .any(|p| p.search.as_ref().is_some_and(SearchRow::has_momentum))
    } else {
        // No metaparameters recorded: the optimizer's label is all there is to go by.
        label.ends_with("momentum") || label.ends_with("nesterov")
    };
    let curve: Vec<(f64, f64)> = cells
        .iter()
        .filter_map(|c| Some((f64::from(c.batch_size), c.steps_to_result? as f64)))
        .collect();
    // The defaults' 1000 resamples cost a fraction of a second per workload.
    let fit = if curve.len() < MIN_FIT_POINTS {
        Err(format!(
            "{} batch sizes reached the target: B_crit is fitted from at least {MIN_FIT_POINTS}",
            curve.len()
        ))
    } else {
        fit_scaling(&curve, &ScalingFitOptions::default()).map_err(|e| e.to_string())
    };
    let trials_by_cell = cell_trials(&points);
    // `stream` is this workload's own (no other workload's resamples move with its own). Its
    // three readings share it: they read the same trials, so they differ by the censored
    // trials' reading alone, not by resampling noise (a paired design where the data are).
    let intervals = curve_intervals(&trials_by_cell, Reading::KaplanMeier, stream);
    let bounds = [Reading::Optimistic, Reading::Pessimistic]
        .map(|reading| curve_intervals(&trials_by_cell, reading, stream));
    let bands = BandRegimes::new(&intervals, ctx.bands);
    let mut regimes = regimes(&curve, &RegimeOptions::default()).map_err(|e| e.to_string());
    if let (Ok(r), false) = (regimes.as_mut(), bands.windows.is_empty()) {
        let range = |regime| {
            bands
                .range(regime)
                .map(|(a, b)| (intervals.batch_sizes[a], intervals.batch_sizes[b]))
        };
        r.perfect_scaling = range(Regime::PerfectScaling);
        r.diminishing_returns = range(Regime::DiminishingReturns);
        r.maximal_data_parallelism = range(Regime::MaximalDataParallelism);
    }
    let lack_of_fit = fit.as_ref().ok().and_then(|f| lack_of_fit(f, &intervals));
    let learning_rate = rate_scaling(&cells, regimes.as_ref().ok(), |c| c.learning_rate);
    let effective = if momentum {
        rate_scaling(&cells, regimes.as_ref().ok(), |c| c.effective_learning_rate)
    } else {
        None
    };
    let model = label.split('/').next().unwrap_or(&label).to_string();
    let time = time::time_to_result(&label, &model, &cells, step_times);
    Ok(Workload {
        label,
        stream,
        momentum,
        trials: points,
        cells,
        steps,
        points: curve,
        fit,
        regimes,
        intervals,
        bounds,
        bands,
        learning_rate,
        effective,
        time,
        lack_of_fit,
    })
}

/// Each batch size's evaluated trials for the bootstrap: steps to the target; right-censored
/// where a trial stopped without reaching it (its budget spent, or beaten by a sibling); never
/// for a trial that diverged. Failed and unevaluated trials are left out.
fn cell_trials(points: &[TrialPoint]) -> Vec<CellTrials> {
    let mut cells: BTreeMap<u32, Vec<Draw>> = BTreeMap::new();
    for p in points {
        let draw = match p.outcome {
            Some(TrialOutcome::Reached(steps)) => Draw::Reached(steps),
            Some(TrialOutcome::Missed) => Draw::Censored(p.stopped_at),
            Some(TrialOutcome::Infeasible) => Draw::Never,
            Some(TrialOutcome::Failed) | None => continue,
        };
        cells.entry(p.batch_size).or_default().push(draw);
    }
    cells
        .into_iter()
        .map(|(b, trials)| CellTrials {
            batch_size: f64::from(b),
            trials,
        })
        .collect()
}

/// One summary row per batch size with a recorded trial.
fn cells(label: &str, points: &[TrialPoint], steps: &[StepsToResult]) -> Vec<TargetCell> {
    let mut batch_sizes: BTreeMap<u32, usize> = BTreeMap::new();
    for p in points {
        *batch_sizes.entry(p.batch_size).or_default() += usize::from(p.outcome.is_none());
    }
    batch_sizes
        .into_iter()
        .map(|(b, unevaluated)| {
            let s = steps.iter().find(|s| s.batch_size == b);
            let best = s.and_then(|s| s.best_trial.clone());
            let row = best
                .as_deref()
                .and_then(|id| points.iter().find(|p| p.id == id))
                .and_then(|p| p.search.as_ref());
            let count = |f: fn(&StepsToResult) -> usize| s.map_or(0, f);
            TargetCell {
                workload: label.to_string(),
                batch_size: b,
                trials: count(|s| s.trials) + unevaluated,
                reached: count(|s| s.reached),
                missed: count(|s| s.missed),
                infeasible: count(|s| s.infeasible),
                failed: count(|s| s.failed),
                unevaluated,
                steps_to_result: s.and_then(|s| s.steps),
                best_trial: best,
                learning_rate: row.map(|r| r.learning_rate),
                momentum: row.map(|r| r.momentum),
                effective_learning_rate: row.map(|r| r.effective_learning_rate),
            }
        })
        .collect()
}

/// The log-log slope of a best rate against batch size, over the perfect-scaling range
/// when it has two batch sizes with a known rate, else over every batch size with one.
/// `None` with fewer than two such batch sizes.
fn rate_scaling(
    cells: &[TargetCell],
    regimes: Option<&Regimes>,
    rate: fn(&TargetCell) -> Option<f64>,
) -> Option<LearningRateScaling> {
    let known: Vec<(u32, f64)> = cells
        .iter()
        .filter(|c| c.steps_to_result.is_some())
        .filter_map(|c| {
            let r = rate(c).filter(|r| r.is_finite() && *r > 0.0)?;
            Some((c.batch_size, r))
        })
        .collect();
    let perfect: Vec<(u32, f64)> = match regimes.and_then(|r| r.perfect_scaling) {
        Some((lo, hi)) => known
            .iter()
            .filter(|(b, _)| (lo..=hi).contains(&f64::from(*b)))
            .copied()
            .collect(),
        None => vec![],
    };
    let (used, perfect_scaling_range) = if perfect.len() >= 2 {
        (perfect, true)
    } else {
        (known, false)
    };
    let x: Vec<f64> = used.iter().map(|(b, _)| f64::from(*b).ln()).collect();
    let y: Vec<f64> = used.iter().map(|(_, r)| r.ln()).collect();
    let fit = linear_fit(&x, &y)?;
    let interval = (used.len() >= 3 && fit.slope_se.is_finite()).then(|| {
        let half = t_975(used.len() - 2) * fit.slope_se;
        (fit.slope - half, fit.slope + half)
    });
    Some(LearningRateScaling {
        slope: fit.slope,
        interval,
        from: used.first()?.0,
        to: used.last()?.0,
        points: used.len(),
        perfect_scaling_range,
    })
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (standard tables), for a
/// two-sided 95% interval; the normal 1.96 beyond 30. With the handful of batch sizes of a
/// perfect-scaling range, 2 standard errors would be far too narrow (t = 4.3 at 2).
fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        d if d <= TABLE.len() => TABLE[d - 1],
        _ => 1.96,
    }
}
