//! From probes to findings: per-batch-size points, the memory model and its prediction, how
//! the search ended, the recommendation, and a verdict on each claim by a stated rule.

use batchlab_method::batch_search::{BatchSearch, Next, ProbeOutcome};
use batchlab_method::rows::find_batch::ProbePhase;
use batchlab_method::rows::Status;
use batchlab_method::stats::{linear_fit, median, LinearFit};

use super::rows::ProbeRecord;
use super::{FindBatchContext, FindBatchFindings};

/// z of a two-sided 95% normal interval.
pub(super) const Z95: f64 = 1.96;

/// Every batch size measured, in either phase.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchPoint {
    /// The batch size.
    pub batch_size: u32,
    /// Probes that fitted.
    pub ok: usize,
    /// Probes that failed, by status.
    pub failed: Vec<Status>,
    /// Whether the curve phase measured it.
    pub in_curve: bool,
    /// Median peak of what the limit binds over the fitting probes, MiB.
    pub limited_peak_mb: f64,
    /// Median peak RSS, MiB.
    pub peak_rss_mb: f64,
    /// Median of every timed step, ms.
    pub step_ms: f64,
    /// Examples per second at the median step.
    pub examples_per_s: f64,
    /// Median utilization.
    pub utilization: f64,
    /// Every timed step's utilization, for the claims' intervals.
    pub utilization_samples: Vec<f64>,
    /// Every timed step, ms, for the claims' intervals.
    pub step_samples: Vec<f64>,
}

/// How the search ended, replayed from its probes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SearchEnd {
    /// `largest` fits and `largest + 1` does not.
    Found(u32),
    /// Nothing fits, not even a batch of one.
    NothingFits,
    /// The cap fits: the budget does not bind below it.
    Capped(u32),
    /// A probe failed for a reason other than memory.
    Stopped(u32),
    /// The run ended before the search did.
    Unfinished,
}

impl SearchEnd {
    /// The end in one sentence.
    pub fn sentence(&self) -> String {
        match self {
            Self::Found(b) => format!("largest batch size that fits: {b} ({} does not)", b + 1),
            Self::NothingFits => "nothing fits: even a batch of one ran out of memory".into(),
            Self::Capped(b) => format!("the budget does not bind up to the search's cap: {b} fits"),
            Self::Stopped(b) => format!(
                "the search stopped: the probe of {b} failed for a reason other than memory"
            ),
            Self::Unfinished => "the search has not finished".into(),
        }
    }

    /// The largest batch size known to fit.
    pub fn largest(&self) -> Option<u32> {
        match self {
            Self::Found(b) | Self::Capped(b) => Some(*b),
            _ => None,
        }
    }
}

/// Everything the figures and report.md show.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// Every probe, in file order.
    pub probes: Vec<ProbeRecord>,
    /// Every batch size measured.
    pub points: Vec<BatchPoint>,
    /// Least squares over the curve's fitting probes: limited peak (MiB) = fixed + per-example x batch.
    pub model: Option<LinearFit>,
    /// Curve probes the model was fitted to.
    pub model_points: usize,
    /// How the search ended.
    pub end: SearchEnd,
    /// The model's largest batch size under the budget, with a 95% range.
    pub predicted_max: Option<(u32, u32, u32)>,
    /// The largest batch size leaving the headroom free.
    pub largest_with_headroom: Option<u32>,
    /// The curve's batch size of the best throughput.
    pub best_throughput: Option<u32>,
    /// The curve's smallest batch size within the tolerance of the best throughput.
    pub fastest_smallest: Option<u32>,
    /// The curve's largest batch size that fitted.
    pub largest_curve: Option<u32>,
    /// How the budget was enforced (from the rows).
    pub limit: String,
}

impl Analysis {
    /// The headline.
    pub fn findings(&self) -> FindBatchFindings {
        FindBatchFindings {
            end: self.end,
            predicted_max: self.predicted_max.map(|(p, _, _)| p),
            largest_with_headroom: self.largest_with_headroom,
            fastest_smallest: self.fastest_smallest,
            search_probes: self.search_probes().count(),
            claims: Vec::new(),
        }
    }

    /// The search's probes, in order.
    pub fn search_probes(&self) -> impl Iterator<Item = &ProbeRecord> {
        self.probes.iter().filter(|p| p.phase == ProbePhase::Search)
    }
}

/// The memory model: the least-squares line of the curve's ok probes' peak memory (MiB) on
/// their batch size, and how many probes it went through.
pub(super) fn memory_fit(probes: &[ProbeRecord]) -> (Option<LinearFit>, usize) {
    let curve: Vec<&ProbeRecord> = probes
        .iter()
        .filter(|p| p.phase == ProbePhase::Curve && p.is_ok())
        .filter(|p| p.limited_peak_mb.is_some())
        .collect();
    let (x, y): (Vec<f64>, Vec<f64>) = curve
        .iter()
        .map(|p| {
            (
                f64::from(p.batch_size),
                p.limited_peak_mb.unwrap_or(f64::NAN),
            )
        })
        .unzip();
    let model = linear_fit(&x, &y).filter(|f| f.slope.is_finite());
    (model, curve.len())
}

pub(super) fn analyse(probes: &[ProbeRecord], ctx: &FindBatchContext) -> Analysis {
    let points = batch_points(probes);
    let (model, model_points) = memory_fit(probes);
    let end = replay_search(probes, ctx);
    let predicted_max = match (model, ctx.budget_mb) {
        (Some(fit), Some(budget)) => predict_max(&fit, budget),
        _ => None,
    };
    let largest_with_headroom = largest_with_headroom(model, &points, end, ctx);
    let (best_throughput, fastest_smallest) = throughput_choice(&points, ctx.throughput_tolerance);
    let limit = probes
        .iter()
        .map(|p| p.limit.clone())
        .find(|l| !l.is_empty())
        .unwrap_or_else(|| "none".into());
    Analysis {
        probes: probes.to_vec(),
        points,
        model,
        model_points,
        end,
        predicted_max,
        largest_with_headroom,
        best_throughput,
        fastest_smallest,
        largest_curve: probes
            .iter()
            .filter(|p| p.phase == ProbePhase::Curve && p.is_ok())
            .map(|p| p.batch_size)
            .max(),
        limit,
    }
}

fn batch_points(probes: &[ProbeRecord]) -> Vec<BatchPoint> {
    let mut sizes: Vec<u32> = probes.iter().map(|p| p.batch_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|b| {
            let of_b: Vec<&ProbeRecord> = probes.iter().filter(|p| p.batch_size == b).collect();
            let ok: Vec<&&ProbeRecord> = of_b.iter().filter(|p| p.is_ok()).collect();
            let med = |f: fn(&ProbeRecord) -> Option<f64>| {
                let v: Vec<f64> = ok.iter().filter_map(|p| f(p)).collect();
                median(&v)
            };
            let steps: Vec<f64> = ok.iter().flat_map(|p| p.step_ms.iter().copied()).collect();
            let utilization: Vec<f64> = ok
                .iter()
                .flat_map(|p| p.utilization.iter().copied())
                .collect();
            let step_ms = median(&steps);
            BatchPoint {
                batch_size: b,
                ok: ok.len(),
                failed: of_b
                    .iter()
                    .filter(|p| !p.is_ok())
                    .map(|p| p.status)
                    .collect(),
                in_curve: of_b.iter().any(|p| p.phase == ProbePhase::Curve),
                limited_peak_mb: med(|p| p.limited_peak_mb),
                peak_rss_mb: med(|p| p.peak_rss_mb),
                step_ms,
                examples_per_s: 1000.0 * f64::from(b) / step_ms,
                utilization: median(&utilization),
                utilization_samples: utilization,
                step_samples: steps,
            }
        })
        .collect()
}

/// The search's end, replayed with the same rule the runner followed.
fn replay_search(probes: &[ProbeRecord], ctx: &FindBatchContext) -> SearchEnd {
    let outcomes: Vec<(u32, ProbeOutcome)> = probes
        .iter()
        .filter(|p| p.phase == ProbePhase::Search)
        .map(|p| {
            let outcome = match p.status {
                Status::Ok => ProbeOutcome::Fits,
                Status::Oom => ProbeOutcome::OutOfMemory,
                _ => ProbeOutcome::Failed,
            };
            (p.batch_size, outcome)
        })
        .collect();
    let search = BatchSearch {
        start: ctx.search_start,
        cap: ctx.search_cap,
    };
    match search.next(&outcomes) {
        Next::Probe(_) => SearchEnd::Unfinished,
        Next::Found { largest } => SearchEnd::Found(largest),
        Next::NothingFits => SearchEnd::NothingFits,
        Next::Capped { largest } => SearchEnd::Capped(largest),
        Next::Stopped { at } => SearchEnd::Stopped(at),
    }
}

/// The largest batch size whose predicted memory is within `budget` MiB, and the range the
/// fit's 95% intervals allow (fixed part and per-example cost each at their bounds).
pub(super) fn predict_max(fit: &LinearFit, budget: f64) -> Option<(u32, u32, u32)> {
    let at = |intercept: f64, slope: f64| -> Option<u32> {
        (slope > 0.0 && budget > intercept).then(|| {
            ((budget - intercept) / slope)
                .floor()
                .min(f64::from(u32::MAX)) as u32
        })
    };
    let point = at(fit.intercept, fit.slope)?;
    let (ise, sse) = (
        if fit.intercept_se.is_finite() {
            fit.intercept_se
        } else {
            0.0
        },
        if fit.slope_se.is_finite() {
            fit.slope_se
        } else {
            0.0
        },
    );
    let low = at(fit.intercept + Z95 * ise, fit.slope + Z95 * sse).unwrap_or(0);
    let high = at(fit.intercept - Z95 * ise, fit.slope - Z95 * sse).unwrap_or(u32::MAX);
    Some((point, low, high))
}

/// The largest batch size that leaves `headroom` of the budget free: from the model where there
/// is one, never above what the search found to fit; else the largest fitting probe whose
/// reading leaves the headroom.
fn largest_with_headroom(
    model: Option<LinearFit>,
    points: &[BatchPoint],
    end: SearchEnd,
    ctx: &FindBatchContext,
) -> Option<u32> {
    let budget = ctx.budget_mb? * (1.0 - ctx.headroom);
    let measured = points
        .iter()
        .filter(|p| p.ok > 0 && p.limited_peak_mb <= budget)
        .map(|p| p.batch_size)
        .max();
    let modelled = model
        .and_then(|fit| predict_max(&fit, budget))
        .map(|(p, _, _)| p);
    match (modelled, end.largest()) {
        (Some(m), Some(fits)) => Some(m.min(fits).max(measured.unwrap_or(0))),
        (Some(m), None) => Some(m.max(measured.unwrap_or(0))),
        (None, _) => measured,
    }
    .filter(|&b| b > 0)
}

/// The batch size of the best throughput, and the smallest whose throughput is within
/// `tolerance` of it, among the curve's batch sizes: their repeated probes in shuffled order
/// rank speeds; the search's single probes are too few to.
fn throughput_choice(points: &[BatchPoint], tolerance: f64) -> (Option<u32>, Option<u32>) {
    let timed: Vec<&BatchPoint> = points
        .iter()
        .filter(|p| p.in_curve && p.ok > 0 && p.examples_per_s.is_finite())
        .collect();
    let Some(best) = timed
        .iter()
        .max_by(|a, b| a.examples_per_s.total_cmp(&b.examples_per_s))
    else {
        return (None, None);
    };
    let smallest = timed
        .iter()
        .filter(|p| p.examples_per_s >= (1.0 - tolerance) * best.examples_per_s)
        .map(|p| p.batch_size)
        .min();
    (Some(best.batch_size), smallest)
}
