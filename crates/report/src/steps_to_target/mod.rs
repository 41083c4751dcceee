//! A steps-to-target study (runner kind `steps-to-target`; Shallue et al. 2018, "Measuring
//! the Effects of Data Parallelism on Neural Network Training", arXiv 1811.03600), and its
//! companion measurement, the gradient noise scale (McCandlish et al. 2018, "An Empirical
//! Model of Large-Batch Training", arXiv 1812.06162): from a run directory's raw files to
//! `summary.csv`, the figures and `report.md`.
//!
//! The run directory holds the training runner's `results.csv` (one row per validation
//! evaluation; `variant` is the model, `optimizer` the optimizer, `budget` is `steps`) and
//! `trials.csv` (one row per finished or failed trial; a trial stopped early because it
//! reached the target is `ok` with fewer steps than the budget), plus this study's
//! `search.csv` (each trial's learning rate and momentum) and `noise.csv` (the gradient
//! noise scale measured during each trial). A workload is a (model, optimizer) pair,
//! labelled `<model>/<optimizer>` as in `search.csv`.
//!
//! [`render_target`] reads the files (`rows`), analyses them (`analysis`, built on the pure
//! [`steps`] and [`scaling`]), then draws (`figures`) and writes `report.md` (`markdown`):
//! [`OUTPUT_FILES`] and, given step times, [`TIME_FILES`]. Partial results
//! (a study still running, interrupted, or one shard of several) render with notes saying
//! what is missing rather than failing.
//!
//! - [`steps`]: steps to result per batch size, from every trial's validation curve.
//! - [`scaling`]: the fit S(B) = S_min (1 + B_crit / B) and the three regimes of the curve.

mod analysis;
mod claims;
mod figures;
pub mod lr_rule;
mod markdown;
pub mod max_useful;
mod protocol;
pub mod quality;
mod rows;
pub mod scaling;
pub mod steps;
mod summary;

use std::path::Path;

use batchlab_method::budget::StepBudget;
use batchlab_method::files::write_atomic;

use crate::ReportError;
pub use analysis::rate_rule::RateRule;
pub use analysis::time::{TimePoint, TimeToResult};
pub use analysis::workload::{LearningRateScaling, WorkloadFindings};
pub use claims::{TargetClaim, TargetClaimRule};
pub use lr_rule::SearchSpace;
pub use max_useful::RatioClaim;
pub use protocol::{TargetProtocol, WorkloadProtocol};
pub use scaling::{
    curve_intervals, fit_scaling, perfect_scaling_line, regimes, BandRegimes, CellTrials,
    CurveIntervals, Draw, Reading, Regime, RegimeBands, RegimeOptions, Regimes, ScalingFit,
    ScalingFitOptions, Segment, SlopeWindow, MIN_FIT_POINTS,
};
pub use steps::{
    classify, steps_to_result, trials_from_train, Evaluation, StepsToResult, Trial, TrialOutcome,
};
pub use summary::{write_summary, NoResult, TargetCell};

/// The files [`render_target`] always writes into a run directory.
pub const OUTPUT_FILES: [&str; 6] = [
    "summary.csv",
    "steps_to_result.svg",
    "regimes.svg",
    "best_learning_rate.svg",
    "search_space.svg",
    "report.md",
];

/// The files [`render_target`] writes only when it is given step times
/// ([`TargetContext::step_times`]).
pub const TIME_FILES: [&str; 1] = ["time_to_result.svg"];

/// What a report says about the run beyond the measurements. The runner fills it from the
/// resolved config, the data it loaded and the device it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetContext {
    /// The run: experiment, description, source, backend, device, protocol.
    pub about: crate::About,
    /// Lines about the data: name and location, split sizes.
    pub dataset: Vec<String>,
    /// The validation error to reach (error = 1 - validation accuracy).
    pub target_error: f64,
    /// When trials are evaluated and how many steps they may train.
    pub budget: StepBudget,
    /// Workloads with a budget of their own: (label, budget).
    pub budgets_by_workload: Vec<(String, StepBudget)>,
    /// Trials the search runs per (workload, batch size): the N of "best of N".
    pub trials_per_batch: usize,
    /// Workloads searched with another N than `trials_per_batch`: (label, N).
    pub trials_by_workload: Vec<(String, usize)>,
    /// The batch sizes each workload was planned at: (label, batch sizes). A workload not
    /// listed was planned at every batch size recorded.
    pub batch_sizes_by_workload: Vec<(String, Vec<u32>)>,
    /// Optional step times for time to result: (workload, batch size, median seconds per
    /// step, low, high), where low..high is the spread to propagate (e.g. a 95% interval of
    /// the median). The workload is a `<model>/<optimizer>` label, or a model alone to
    /// apply to every optimizer of that model (a step of SGD and of momentum cost nearly the
    /// same); an exact label wins over a model. Empty: no time to result.
    pub step_times: Vec<(String, u32, f64, f64, f64)>,
    /// The claims the report judges, each by its rule (empty: no claims section).
    pub claims: Vec<TargetClaim>,
    /// The slope bands of the three regimes (`[analysis]` of the config).
    pub bands: RegimeBands,
    /// Workloads that repeat one search with other points, for the coverage check (empty:
    /// none).
    pub replicates: Vec<String>,
    /// Each workload's searched space: (label, space); a workload not listed has no edges.
    pub search_spaces: Vec<(String, SearchSpace)>,
    /// The step-time sweeps the trials' training times are checked against.
    pub prediction: crate::predict::check::PredictionInputs,
}

impl TargetContext {
    /// The budget of `workload`.
    pub fn budget_of(&self, workload: &str) -> &StepBudget {
        self.budgets_by_workload
            .iter()
            .find(|(label, _)| label == workload)
            .map_or(&self.budget, |(_, b)| b)
    }

    /// The N of "best of N" for `workload`.
    pub fn planned_trials(&self, workload: &str) -> usize {
        self.trials_by_workload
            .iter()
            .find(|(label, _)| label == workload)
            .map_or(self.trials_per_batch, |(_, n)| *n)
    }

    /// Whether `workload` was planned at batch size `b`.
    pub fn planned_at(&self, workload: &str, b: u32) -> bool {
        self.batch_sizes_by_workload
            .iter()
            .find(|(label, _)| label == workload)
            .is_none_or(|(_, sizes)| sizes.contains(&b))
    }

    /// "N" or "N (label: M, ...)" when workloads differ.
    pub fn trials_text(&self) -> String {
        let others: Vec<String> = self
            .trials_by_workload
            .iter()
            .filter(|(_, n)| *n != self.trials_per_batch)
            .map(|(label, n)| format!("{label}: {n}"))
            .collect();
        if others.is_empty() {
            self.trials_per_batch.to_string()
        } else {
            format!("{} ({})", self.trials_per_batch, others.join(", "))
        }
    }
}

/// What [`render_target`] found: headline lines for the terminal and the data behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetFindings {
    /// A few lines for the terminal: what was recorded, then per workload its
    /// steps-to-result curve in one line and B_crit.
    pub lines: Vec<String>,
    /// The per-(workload, batch size) summary (also in `summary.csv`).
    pub cells: Vec<TargetCell>,
    /// Per workload: steps to result, the S(B) fit, the regimes, the learning-rate scaling
    /// and the time to result.
    pub workloads: Vec<WorkloadFindings>,
    /// What is missing or inconsistent in the run directory (also in `report.md`); empty
    /// when the study is complete.
    pub notes: Vec<String>,
    /// The claims judged.
    pub claims: Vec<batchlab_method::findings::Finding>,
}

/// Reads `dir/results.csv`, `dir/trials.csv`, `dir/search.csv` and `dir/noise.csv` (any may
/// be absent, but not both of the first two) and writes `summary.csv`, the figures `steps_to_result`,
/// `best_learning_rate` and `search_space` (SVG; PNG on demand), `time_to_result` when
/// `ctx.step_times` is not empty, and `report.md` ([`OUTPUT_FILES`], [`TIME_FILES`]).
/// Rerunnable at any time: each file is replaced atomically, and a `time_to_result` figure
/// left by an earlier rendering with step times is removed when there are none now, so that
/// the directory never holds a figure its report does not describe.
///
/// Errors: a file that cannot be read or parsed (naming it, with line and column), an
/// unknown trial status (naming `trials.csv`), a non-finite target, or a file that cannot
/// be written.
pub fn render_target(dir: &Path, ctx: &TargetContext) -> Result<TargetFindings, ReportError> {
    let rows = rows::read(dir)?;
    let study = analysis::Study::new(dir, ctx, &rows.records, &rows.evals, rows.search)?;
    let noise_cells = rows
        .noise
        .as_deref()
        .map(|noise| analysis::noise::noise_cells(noise, &study));
    let cells: Vec<TargetCell> = study.cells().cloned().collect();
    summary::write_summary(&dir.join("summary.csv"), &cells)?;
    figures::draw_steps(dir, ctx, &study)?;
    figures::panels::draw_regimes(dir, ctx, &study)?;
    figures::draw_learning_rates(dir, ctx, &study)?;
    figures::search::draw_search_space(dir, ctx, &study)?;
    if study.has_step_times() {
        figures::time::draw_time_to_result(dir, ctx, &study)?;
    } else {
        // Its PNG copy too, if one was drawn on demand.
        for path in TIME_FILES
            .map(|f| dir.join(f))
            .into_iter()
            .flat_map(|p| [p.with_extension("png"), p])
        {
            if path.exists() {
                std::fs::remove_file(&path)
                    .map_err(ReportError::io("remove the stale figure", &path))?;
            }
        }
    }
    let verdicts = claims::verdicts(
        &ctx.claims,
        &study,
        &ctx.search_spaces,
        rows.noise.as_deref(),
    );
    let mut report = markdown::report_markdown(ctx, &study, &verdicts);
    let checks = crate::predict::check::checks(&ctx.prediction, &measured_cells(&rows.records));
    report.push_str(&crate::predict::check::section(&ctx.prediction, &checks));
    crate::predict::check::write_rows(dir, &ctx.prediction, &checks)?;
    let mut lines = markdown::reading::headlines(ctx, &study);
    if let Some(noise) = &noise_cells {
        let (section, noise_lines) = markdown::noise::noise_section(noise);
        report.push_str(&section);
        lines.extend(noise_lines);
    }
    write_atomic(&dir.join("report.md"), report.as_bytes())?;
    let mut findings = study.findings(lines);
    findings.claims = verdicts;
    Ok(findings)
}

/// Per (workload, batch size), the training seconds and steps summed over its trials that
/// trained (ok or diverged): trials stop at very different steps, so sums compare like with
/// like where medians of each would not.
fn measured_cells(
    records: &[batchlab_method::rows::train::TrialRecord],
) -> Vec<crate::predict::check::MeasuredCell> {
    let mut sums: std::collections::BTreeMap<(String, u32), (f64, f64)> = Default::default();
    for r in records.iter().filter(|r| {
        matches!(
            r.status,
            batchlab_method::rows::Status::Ok | batchlab_method::rows::Status::Diverged
        ) && r.train_seconds.is_finite()
            && r.steps > 0
    }) {
        let sum = sums
            .entry((format!("{}/{}", r.variant, r.optimizer), r.batch_size))
            .or_default();
        sum.0 += r.train_seconds;
        sum.1 += r.steps as f64;
    }
    sums.into_iter()
        .map(
            |((series, batch_size), (seconds, steps))| crate::predict::check::MeasuredCell {
                series,
                budget: crate::predict::check::CheckBudget::AllTrials,
                batch_size,
                seconds,
                steps,
            },
        )
        .collect()
}

impl From<TargetFindings> for crate::verdict::Rendered {
    fn from(findings: TargetFindings) -> Self {
        crate::verdict::Rendered {
            lines: findings.lines,
            claims: findings.claims,
        }
    }
}

#[cfg(test)]
mod tests;
