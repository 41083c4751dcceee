//! The training study (runner kind `train`): a grid of training runs, batch size x
//! optimizer x data variant x budget x seed, each evaluated on the validation split as it
//! trains and on the test split at the end.
//!
//! While a run goes, the runner appends each evaluation to `results.csv` and each finished
//! (or failed) trial to `trials.csv` (rows of [`batchlab_method::rows::train`]). Once the run
//! ends (or from `batchlab report <dir>`), [`render_train`] reads both files (`rows`),
//! analyses them (`analysis`), then draws (`figures`) and writes `report.md` (`markdown`):
//! the rest of the directory, [`OUTPUT_FILES`].
//!
//! Budgets: `epochs` is the source's epoch-matched setup (a larger batch takes fewer steps);
//! `steps` the control in which every batch size takes the same number of optimizer steps.
//! Figures with one panel per budget put the panels side by side in one image (one file per
//! figure, whatever the number of budgets).

mod analysis;
mod claims;
mod figures;
mod markdown;
mod protocol;
pub(crate) mod rows;
mod summary;

pub use crate::predict::check::{PredictionInputs, StepTimes};
pub use analysis::TrainFindings;
pub use protocol::{Evaluations, TrainProtocol};
pub use summary::{summarize, write_summary, TrainCell};

use std::path::Path;

use crate::ReportError;

/// The files [`render_train`] writes into a run directory, besides reading `results.csv`
/// and `trials.csv`.
pub const OUTPUT_FILES: [&str; 5] = [
    "summary.csv",
    "accuracy_vs_batch.svg",
    "learning_curves.svg",
    "train_time.svg",
    "report.md",
];

/// What a published number measures, each in the unit the sources publish it in; spelled
/// `test_accuracy`, `train_minutes`, `inference_minutes` in configs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Test accuracy, in percent.
    TestAccuracy,
    /// Training time, in minutes.
    TrainMinutes,
    /// Inference time on the test split, in minutes.
    InferenceMinutes,
}

impl Metric {
    /// The word configs and report.md use.
    pub fn name(self) -> &'static str {
        match self {
            Metric::TestAccuracy => "test_accuracy",
            Metric::TrainMinutes => "train_minutes",
            Metric::InferenceMinutes => "inference_minutes",
        }
    }
}

/// A number published by the study's source, set beside the measured one in `report.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// The batch size it was measured at.
    pub batch_size: u32,
    /// Which line it belongs to: an optimizer label (`adam`), a variant (`augmented`), or
    /// both as `optimizer/variant`.
    pub series: String,
    /// What it measures.
    pub metric: Metric,
    /// The published value, in the metric's unit.
    pub value: f64,
    /// Where it was published, e.g. "seed 003 text: 'about 58%'".
    pub source: String,
}

/// A published claim the report judges, with the rule it is judged by.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainClaim {
    /// The claim's id in the claims registry, if registered.
    pub id: Option<String>,
    /// The claim in the source's words.
    pub claim: String,
    /// Where it was made, e.g. "seed 003".
    pub source: String,
    /// The line it is about: an optimizer label, a variant, or `optimizer/variant`.
    pub series: String,
    /// The budget whose cells judge it (epochs: the source's own setup).
    pub budget: batchlab_method::rows::train::Budget,
    /// The rule.
    pub rule: ClaimRule,
}

/// How a [`TrainClaim`] is judged from the cells of its line (each rule is stated in full in
/// the report's verdict table; the tests are `batchlab_method::tests_of_claims`).
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimRule {
    /// A directional claim: the mean test accuracy at batch `to` is lower than at `from`
    /// (one-sided Welch test at 5%).
    AccuracyFalls {
        /// The batch size it falls from.
        from: u32,
        /// The batch size it falls to.
        to: u32,
        /// The fall (points) the claim states ("sharply"): it reproduces only beyond it; 0
        /// for a bare direction.
        margin: f64,
    },
    /// A directional claim: the mean test accuracy at batch `to` is higher than at `from`
    /// (one-sided Welch test at 5%).
    AccuracyRises {
        /// The batch size it rises from.
        from: u32,
        /// The batch size it rises to.
        to: u32,
    },
    /// An equivalence claim: the mean test accuracy at `to` is within `margin` points of that
    /// at `from` (two one-sided tests).
    AccuracyHolds {
        /// The first batch size.
        from: u32,
        /// The batch size it holds to.
        to: u32,
        /// The equivalence margin, in accuracy points.
        margin: f64,
    },
    /// A non-inferiority claim: the mean test accuracy at `to` is not lower than at `from` by
    /// `margin` points or more (it may rise).
    AccuracyDoesNotFall {
        /// The first batch size.
        from: u32,
        /// The batch size it does not fall to.
        to: u32,
        /// The non-inferiority margin, in accuracy points.
        margin: f64,
    },
    /// An equivalence claim: no power-of-two batch size trains slower or faster than its
    /// neighbours one below and above by more than `tolerance` (a fraction of the time).
    PowersOfTwoFlat {
        /// The largest relative difference that is not noticeable.
        tolerance: f64,
    },
    /// The same equivalence on the time of the test pass (inference over the test split),
    /// meaningful when evaluations run at the training batch size.
    InferencePowersOfTwoFlat {
        /// The largest relative difference that is not noticeable.
        tolerance: f64,
    },
    /// A contrast between two lines: the claim's line loses less accuracy from `from` to `to`
    /// than `versus` does (one-sided test of the difference of the two changes).
    FallsLessThan {
        /// The first batch size.
        from: u32,
        /// The batch size both lines move to.
        to: u32,
        /// The line compared with.
        versus: String,
    },
    /// A superiority between two lines: the claim's line is more accurate than `versus` at
    /// batch `at` (one-sided).
    AccuracyHigherThan {
        /// The batch size compared at.
        at: u32,
        /// The line compared with.
        versus: String,
    },
    /// "The best batch size is `best`": the batch sizes the seeds cannot tell from the most
    /// accurate one (multiple comparisons with the best) are `best` alone.
    BestBatch {
        /// The batch size claimed best.
        best: u32,
    },
    /// A claim of a local minimum: the whole budget trains slower at `below` and at `above`
    /// than at `at` (one-sided tests on the seeds' log training times, both needed).
    LocalMinimumAt {
        /// The neighbour below.
        below: u32,
        /// The batch size claimed fastest of the three.
        at: u32,
        /// The neighbour above.
        above: u32,
    },
    /// A directional claim: the whole budget trains faster at `to` than at `from`.
    EpochTimeFalls {
        /// The smaller batch size.
        from: u32,
        /// The larger batch size, claimed faster.
        to: u32,
    },
    /// A mechanism claim: training time follows the number of steps because the time per step
    /// is the same at every batch size, within `tolerance` of the time per step at
    /// `reference`.
    TimeFollowsSteps {
        /// The batch size the others are compared with (Raschka's 128).
        reference: u32,
        /// The largest relative difference of the time per step that counts as the same.
        tolerance: f64,
    },
    /// An equivalence claim (seed 000's Training Cost Calculator): the training time the same
    /// model's step-time sweep predicts for each cell's steps is its measured time, within
    /// `tolerance` on average (two one-sided tests on the cells' log errors).
    TimePredicted {
        /// The largest relative error of the prediction that counts as computing the time.
        tolerance: f64,
    },
}

/// What a report says about the run beyond the measurements. The runner fills it from the
/// resolved config, the data it loaded and the device it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainContext {
    /// The run: experiment, description, source, backend, device, protocol.
    pub about: crate::About,
    /// One line: architecture, input, classes, parameters.
    pub model: String,
    /// Lines about the data: name and location, split sizes per variant, notes such as
    /// skipped corrupt files.
    pub dataset: Vec<String>,
    /// Examples in the test split (0 if unknown): one example is 1 / this of accuracy.
    pub test_examples: usize,
    /// The source's numbers to compare with.
    pub published: Vec<Published>,
    /// The source's claims to judge.
    pub claims: Vec<TrainClaim>,
    /// The step-time sweeps the training times are checked against.
    pub prediction: PredictionInputs,
}

/// Reads `dir/results.csv` and `dir/trials.csv` (either may be absent, not both; each CSV or
/// Parquet) and writes `summary.csv`, the figures `accuracy_vs_batch.svg`,
/// `learning_curves.svg` and `train_time.svg` and `report.md` (see [`OUTPUT_FILES`]).
/// Rerunnable at any time: each file is replaced atomically.
pub fn render_train(dir: &Path, ctx: &TrainContext) -> Result<TrainFindings, ReportError> {
    let (evals, records) = rows::read(dir, "training")?;
    let analysis = analysis::Analysis::new(evals, &records);
    write_summary(&dir.join("summary.csv"), &analysis.cells)?;
    figures::draw_accuracy(dir, ctx, &analysis)?;
    figures::draw_learning_curves(dir, ctx, &analysis)?;
    figures::draw_train_time(dir, ctx, &analysis)?;
    let judged = markdown::Judged {
        verdicts: claims::judge(ctx, &analysis),
        relative_tables: claims::relative_tables(ctx, &analysis),
        predictions: crate::predict::check::checks(&ctx.prediction, &analysis.measured_cells()),
    };
    crate::predict::check::write_rows(dir, &ctx.prediction, &judged.predictions)?;
    let report = markdown::report_markdown(ctx, &analysis, &judged);
    batchlab_method::files::write_atomic(&dir.join("report.md"), report.as_bytes())?;
    let mut findings = analysis.findings(markdown::headlines::headlines(&analysis));
    findings.claims = judged.verdicts;
    Ok(findings)
}

#[cfg(test)]
mod tests;
