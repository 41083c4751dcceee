//! From a finished sweep directory to its findings, figures and report.

use std::collections::BTreeMap;
use std::path::Path;

use super::{summarize, write_summary, StepPoint, StepSample};
use crate::jumps::{detect_jumps, gap_statistics, Jump, JumpOptions};
use crate::stats::{linear_fit, LinearFit};
use crate::ReportError;

/// What a report says about the run, beyond the measurements themselves. The runner fills
/// it from the resolved config and the device it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTimeContext {
    /// Experiment name, e.g. `vgg16-step-time`.
    pub experiment: String,
    /// The config's one-paragraph description.
    pub description: String,
    /// The figure or table reproduced, if any.
    pub reproduces: Option<String>,
    /// The seed's claim in words, if any.
    pub claim: Option<String>,
    /// Batch sizes at which the seed claims a jump (may be empty).
    pub claimed_jumps: Vec<u32>,
    /// One line, e.g. "vgg16, 3x64x64, 1000 classes, 138.4 M trainable parameters, 30.9
    /// GFLOPs per sample".
    pub model: String,
    /// burn backend, e.g. `flex`.
    pub backend: String,
    /// Device name.
    pub device: String,
    /// What `peak_mem_mb` measures, e.g. "process peak resident set size".
    pub memory_kind: String,
    /// One line: warm-up steps, samples per visit, rounds, synchronised clock.
    pub protocol: String,
    /// Bootstrap resamples per batch size.
    pub bootstrap_resamples: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
}

/// What [`render_step_time`] found.
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
}

impl StepTimeFindings {
    /// The ok points, in increasing batch size.
    pub fn ok_points(&self) -> impl Iterator<Item = &StepPoint> {
        self.points.iter().filter(|p| p.is_ok())
    }
}

/// Reads `dir/results.csv` and writes `dir/results.parquet` (the same rows),
/// `dir/summary.csv`, `dir/step_time.{svg,png}`, `dir/throughput.{svg,png}` and
/// `dir/report.md` (see [`super::OUTPUT_FILES`]). Can be rerun at any time (each file is
/// replaced atomically); a sweep with no successful point still gets its report.
pub fn render_step_time(
    dir: &Path,
    ctx: &StepTimeContext,
) -> Result<StepTimeFindings, ReportError> {
    let results = dir.join("results.csv");
    let mut frame = super::results::read_results_frame(&results)?;
    let samples = super::results::frame_to_samples(&results, &frame)?;
    crate::io::write_parquet(&dir.join("results.parquet"), &mut frame)?;
    let points = summarize(&samples, ctx.bootstrap_resamples, ctx.seed);
    write_summary(&dir.join("summary.csv"), &points)?;
    let analysis = analyse(&samples, points);
    super::figures::draw_step_time(dir, ctx, &analysis)?;
    super::figures::draw_throughput(dir, ctx, &analysis)?;
    let markdown = super::report::report_markdown(ctx, &analysis, &samples);
    crate::io::write_atomic(&dir.join("report.md"), markdown.as_bytes())?;
    Ok(analysis.findings)
}

/// Findings plus what the figures and report need beyond them.
pub(super) struct Analysis {
    pub findings: StepTimeFindings,
    /// Every tested gap's statistic (for claims that were not detected).
    pub gaps: Vec<Jump>,
}

pub(super) fn analyse(samples: &[StepSample], points: Vec<StepPoint>) -> Analysis {
    let mut times: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.status == "ok") {
        if let Some(t) = s.step_ms.filter(|t| t.is_finite()) {
            times.entry(s.batch_size).or_default().push(t);
        }
    }
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
        findings: StepTimeFindings {
            fit: linear_fit(&x, &y),
            jumps: detect_jumps(&curve, &opts),
            best_batch_size,
            points,
        },
    }
}

/// How a claimed jump position compares with the measurement.
pub(super) enum ClaimCheck<'a> {
    /// A detected jump's gap contains the claimed batch size.
    Detected(&'a Jump),
    /// Tested, no jump there: the gap touching the claim with the larger |z|.
    NotDetected(&'a Jump),
    /// No tested gap touches the claim: outside the ok batch sizes, or within two points of
    /// either end of the sweep.
    NotTested,
}

/// Compares one claimed jump position with the analysis. A claim at b is matched by a jump
/// whose gap [previous, batch_size] contains b: "a jump at 16" may mean 15 -> 16 or 16 -> 17.
pub(super) fn check_claim(analysis: &Analysis, claimed: u32) -> ClaimCheck<'_> {
    let contains = |j: &&Jump| j.previous_batch_size <= claimed && claimed <= j.batch_size;
    if let Some(j) = analysis.findings.jumps.iter().find(contains) {
        return ClaimCheck::Detected(j);
    }
    let nearest = analysis
        .gaps
        .iter()
        .filter(contains)
        .max_by(|a, b| a.z.abs().total_cmp(&b.z.abs()));
    nearest.map_or(ClaimCheck::NotTested, ClaimCheck::NotDetected)
}

/// Whether a detected jump matches any claim.
pub(super) fn is_claimed(jump: &Jump, claimed: &[u32]) -> bool {
    claimed
        .iter()
        .any(|&c| jump.previous_batch_size <= c && c <= jump.batch_size)
}
