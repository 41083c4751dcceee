//! The analysis of a step-time sweep: per batch size the summary, the least-squares line,
//! the jumps, the best throughput, and how the source's claimed jumps compare.

use batchlab_method::rows::Status;
use std::collections::BTreeMap;

use super::StepPoint;
use crate::jumps::{detect_jumps, gap_statistics, relative_offsets, Gap, Jump, JumpOptions};
use batchlab_method::findings::Finding;
use batchlab_method::rows::step_time::StepSample;
use batchlab_method::stats::{linear_fit, median, LinearFit};

/// What [`super::render_step_time`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTimeFindings {
    /// Least-squares line of median step time (ms) on batch size over the ok batch sizes.
    pub fit: Option<LinearFit>,
    /// Jumps detected with [`JumpOptions::default`].
    pub jumps: Vec<Jump>,
    /// The ok batch size with the most examples per second.
    pub best_batch_size: Option<u32>,
    /// The per-batch-size summary (also in `summary.csv`).
    pub points: Vec<StepPoint>,
    /// The claims judged (filled once the verdicts are in).
    pub claims: Vec<Finding>,
    /// The batch sizes taken apart with their neighbours (`stages.csv`; filled once read).
    pub anatomies: Vec<super::anatomy::Anatomy>,
}

impl StepTimeFindings {
    /// The ok points, in increasing batch size.
    pub fn ok_points(&self) -> impl Iterator<Item = &StepPoint> {
        self.points.iter().filter(|p| p.is_ok())
    }

    /// The headline for the terminal: the line, the jumps, the best throughput.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(fit) = &self.fit {
            lines.push(format!(
                "linear fit: {:.2} ms + {:.3} ms per example (R^2 {:.3})",
                fit.intercept, fit.slope, fit.r_squared
            ));
        }
        if self.jumps.is_empty() {
            lines.push("no jumps stand out of the noise".into());
        } else {
            let jumps: Vec<String> = self
                .jumps
                .iter()
                .map(|j| {
                    format!(
                        "{} ({:+.1} ms, {:+.0}%)",
                        j.batch_size,
                        j.height_ms,
                        j.relative * 100.0
                    )
                })
                .collect();
            lines.push(format!("jumps at batch size {}", jumps.join(", ")));
        }
        if let Some(best) = self.best_batch_size {
            lines.push(format!("highest throughput at batch size {best}"));
        }
        lines
    }
}

/// Findings plus what the figures and report need beyond them.
pub(super) struct Analysis {
    pub findings: StepTimeFindings,
    /// Every tested gap's statistic (for claims that were not detected).
    pub gaps: Vec<Jump>,
    /// How far each interior median lies off its neighbours' line, relative to the step time
    /// (the curve's fluctuation, see [`crate::jumps::scatter`]).
    pub scatter_values: Vec<f64>,
    /// Per batch size, per round, the median of that visit's ok samples (ms): the rounds are
    /// a sweep's independent units.
    pub round_medians: BTreeMap<u32, BTreeMap<u32, f64>>,
}

pub(super) fn analyse(samples: &[StepSample], points: Vec<StepPoint>) -> Analysis {
    let mut times: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let mut visits: BTreeMap<u32, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.status == Status::Ok) {
        if let Some(t) = s.step_ms.filter(|t| t.is_finite()) {
            times.entry(s.batch_size).or_default().push(t);
            let visit = visits.entry(s.batch_size).or_default();
            visit.entry(s.round).or_default().push(t);
        }
    }
    let round_medians = visits
        .into_iter()
        .map(|(b, rounds)| {
            (
                b,
                rounds.into_iter().map(|(r, t)| (r, median(&t))).collect(),
            )
        })
        .collect();
    let ok: Vec<&StepPoint> = points.iter().filter(|p| p.is_ok()).collect();
    let curve: Vec<(u32, f64, &[f64])> = ok
        .iter()
        .map(|p| {
            (
                p.batch_size,
                p.median_ms,
                times.get(&p.batch_size).map_or(&[][..], |v| v.as_slice()),
            )
        })
        .collect();
    let opts = JumpOptions::default();
    let x: Vec<f64> = ok.iter().map(|p| f64::from(p.batch_size)).collect();
    let y: Vec<f64> = ok.iter().map(|p| p.median_ms).collect();
    let best_batch_size = ok
        .iter()
        .max_by(|a, b| a.examples_per_s.total_cmp(&b.examples_per_s))
        .map(|p| p.batch_size);
    Analysis {
        gaps: gap_statistics(&curve, &opts),
        scatter_values: relative_offsets(&curve),
        round_medians,
        findings: StepTimeFindings {
            fit: linear_fit(&x, &y),
            jumps: detect_jumps(&curve, &opts),
            best_batch_size,
            points,
            claims: Vec::new(),
            anatomies: Vec::new(),
        },
    }
}

/// Throughput within this fraction of the best counts as "as good" in the report.
pub(super) const NEAR_BEST: f64 = 0.95;

/// Why the least-squares line meets the axis below zero. No step takes negative time, so
/// such a line is no cost model; the report says which of these tilted it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum NegativeIntercept {
    /// A larger batch costs more per example: (batch size, ms per example) at the first and
    /// the last ok batch size, so the step time grows faster than the batch size.
    CostlierPerExample { first: (u32, f64), last: (u32, f64) },
    /// The curve bends upwards over the larger sizes.
    BendsUpwards,
}

impl Analysis {
    /// Why the line's intercept is negative; `None` where it is not (or there is no line).
    pub(super) fn negative_intercept(&self) -> Option<NegativeIntercept> {
        let f = &self.findings;
        let (first, last) = (f.ok_points().next()?, f.ok_points().last()?);
        if f.fit?.intercept >= 0.0 {
            return None;
        }
        let per_example = |p: &StepPoint| (p.batch_size, p.median_ms / f64::from(p.batch_size));
        let (first, last) = (per_example(first), per_example(last));
        Some(if last.1 > first.1 {
            NegativeIntercept::CostlierPerExample { first, last }
        } else {
            NegativeIntercept::BendsUpwards
        })
    }

    /// The best-throughput point and the ok batch sizes within [`NEAR_BEST`] of it.
    pub(super) fn near_best(&self) -> Option<(&StepPoint, Vec<u32>)> {
        let f = &self.findings;
        let best = f
            .ok_points()
            .find(|p| Some(p.batch_size) == f.best_batch_size)?;
        let near = f
            .ok_points()
            .filter(|p| p.examples_per_s >= NEAR_BEST * best.examples_per_s)
            .map(|p| p.batch_size)
            .collect();
        Some((best, near))
    }
}

/// How a claimed jump position compares with the measurement.
pub(super) enum ClaimCheck<'a> {
    /// The detector reported a jump on the gap the position means.
    Detected(&'a Jump),
    /// Tested, no jump reported there: the gap the position means.
    NotDetected(&'a Jump),
    /// The gap the position means was not tested: outside the ok batch sizes, or within two
    /// points of either end of the sweep.
    NotTested,
}

/// Compares one claimed jump position with the analysis, on the one gap it means.
pub(super) fn check_claim(analysis: &Analysis, claimed: u32, gap: Gap) -> ClaimCheck<'_> {
    if let Some(j) = analysis
        .findings
        .jumps
        .iter()
        .find(|j| gap.means(j, claimed))
    {
        return ClaimCheck::Detected(j);
    }
    let named = analysis.gaps.iter().find(|g| gap.means(g, claimed));
    named.map_or(ClaimCheck::NotTested, ClaimCheck::NotDetected)
}

/// Whether a detected jump lies on the gap a claimed position means.
pub(super) fn is_claimed(jump: &Jump, claimed: &[u32], gap: Gap) -> bool {
    claimed.iter().any(|&c| gap.means(jump, c))
}

impl From<StepTimeFindings> for crate::verdict::Rendered {
    fn from(findings: StepTimeFindings) -> Self {
        crate::verdict::Rendered {
            lines: findings.lines(),
            claims: findings.claims,
        }
    }
}
