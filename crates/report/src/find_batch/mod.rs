//! The batch-size finder: memory, time and utilization per batch size from probes run in fresh
//! processes under a memory budget. [`render_find_batch`] reads `probes.csv` (`rows`), fits the
//! memory model, replays the search and derives the recommendation (`analysis`), judges the
//! seed's claims (`verdicts`, decisions as values) and words them as findings (`words`), draws
//! (`figures`) and writes `summary.csv` and `report.md` (`markdown`).

mod analysis;
mod figures;
mod markdown;
mod rows;
mod summary;
mod verdicts;
mod words;

pub use analysis::{Analysis, BatchPoint, SearchEnd};
use verdicts::MemoryReference;

use std::path::{Path, PathBuf};

use crate::ReportError;

/// The files [`render_find_batch`] writes into a report directory.
pub const OUTPUT_FILES: [&str; 5] = [
    "summary.csv",
    "memory.svg",
    "utilization.svg",
    "probes.svg",
    "report.md",
];

/// What a report says about the run beyond its rows; the runner fills it from the resolved
/// config and the device.
#[derive(Debug, Clone, PartialEq)]
pub struct FindBatchContext {
    /// The run: experiment, description, source, backend, device, protocol.
    pub about: crate::About,
    /// One line on the model and optimizer.
    pub model: String,
    /// The budget in MiB; `None` where the device's own memory is the limit.
    pub budget_mb: Option<f64>,
    /// The budget in words, e.g. "2 GiB".
    pub budget: String,
    /// Weights + gradients + optimizer state, analytic, MiB.
    pub fixed_estimate_mb: f64,
    /// How `fixed_estimate_mb` is counted.
    pub fixed_estimate: String,
    /// Layer outputs kept for backward per example, analytic (4 bytes each), MiB.
    pub activations_mb_per_example: f64,
    /// The search's first batch size.
    pub search_start: u32,
    /// The search's largest batch size.
    pub search_cap: u32,
    /// Fraction of the budget the recommended largest batch size leaves free.
    pub headroom: f64,
    /// The recommended batch size for speed is the smallest within this fraction of the best
    /// throughput.
    pub throughput_tolerance: f64,
    /// The change of utilization (absolute) that counts as rising, and within which it counts
    /// as saturated.
    pub utilization_step: f64,
    /// Whether utilization (CPU time / (wall time x threads)) means what it says on this
    /// backend: on a GPU the host's CPU time says nothing about the device.
    pub utilization_measured: bool,
    /// Other models' finders that "memory growth depends on the model" compares this run with:
    /// each experiment and its newest complete run on this machine, if one (empty: not judged).
    pub memory_references: Vec<(String, Option<PathBuf>)>,
    /// "Largely": a ratio of the per-example costs beyond this, either way.
    pub memory_margin: f64,
    /// The registered claim each rule judges on this run, which words its finding
    /// ([`crate::verdict::quote_registered`]; empty: every finding in the kind's words).
    pub registered_claims: crate::verdict::RegisteredClaims,
}

/// How a finder probed, as numbers; [`ProbeProtocol::words`] is the report's protocol line.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeProtocol {
    /// Training steps run and dropped per probe.
    pub warmup_steps: usize,
    /// Timed steps kept per probe.
    pub samples: usize,
    /// The curve's probes (batch sizes x repeats).
    pub curve_probes: u32,
    /// Seeds the curve's order.
    pub seed: u64,
}

impl ProbeProtocol {
    /// The protocol in one line.
    pub fn words(&self) -> String {
        format!(
            "every probe in a fresh process under the budget's limit: the model and optimizer built, {} warm-up training step(s) dropped, then {} timed steps (forward + loss + backward + update, the device synchronised before each clock read) on synthetic data made before timing; the curve's {} probes in one shuffled order (seed {}), then the search",
            self.warmup_steps, self.samples, self.curve_probes, self.seed
        )
    }
}

/// The headline of a finder's report.
#[derive(Debug, Clone, PartialEq)]
pub struct FindBatchFindings {
    /// How the search ended.
    pub end: SearchEnd,
    /// The memory model's prediction of the largest batch size under the budget.
    pub predicted_max: Option<u32>,
    /// The recommended largest batch size (the budget less the headroom).
    pub largest_with_headroom: Option<u32>,
    /// The smallest batch size within the tolerance of the best throughput.
    pub fastest_smallest: Option<u32>,
    /// Probes the search made.
    pub search_probes: usize,
    /// The claims judged.
    pub claims: Vec<batchlab_method::findings::Finding>,
}

impl FindBatchFindings {
    /// A few lines for the terminal.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![self.end.sentence()];
        match (self.predicted_max, self.end.largest()) {
            (Some(p), Some(found)) => lines.push(format!(
                "the memory model predicted {p} ({:+.1}% against the {found} found)",
                100.0 * (f64::from(p) - f64::from(found)) / f64::from(found)
            )),
            (Some(p), None) => lines.push(format!("the memory model predicted {p}")),
            _ => {}
        }
        if let Some(found) = self.end.largest() {
            lines.push(format!(
                "the search made {} probes (doubling then bisection from 1 needs at most 2 log2({found}) + 2 = {})",
                self.search_probes,
                2 * found.ilog2() + 2
            ));
        }
        if let Some(b) = self.largest_with_headroom {
            lines.push(format!("largest batch size with headroom: {b}"));
        }
        if let Some(b) = self.fastest_smallest {
            lines.push(format!("smallest batch size at full throughput: {b}"));
        }
        lines
    }
}

/// Reads `probes` (the run's `probes.csv`) and writes `dir/summary.csv`, the figures and
/// `dir/report.md` (see [`OUTPUT_FILES`]). Can be rerun at any time; a run where nothing fitted
/// still gets its report.
pub fn render_find_batch(
    probes: &Path,
    dir: &Path,
    ctx: &FindBatchContext,
) -> Result<FindBatchFindings, ReportError> {
    let records = rows::read(probes)?;
    let analysis = analysis::analyse(&records, ctx);
    summary::write(&dir.join("summary.csv"), &analysis.points)?;
    figures::draw_memory(dir, ctx, &analysis)?;
    figures::draw_utilization(dir, ctx, &analysis)?;
    figures::draw_probes(dir, ctx, &analysis)?;
    let references: Vec<MemoryReference> = ctx
        .memory_references
        .iter()
        .map(|(name, dir)| memory_reference(name, dir.as_deref()))
        .collect();
    let verdicts = judge(&analysis, ctx, &references);
    let report = markdown::report(ctx, &analysis, &verdicts);
    batchlab_method::files::write_atomic(&dir.join("report.md"), report.as_bytes())?;
    let mut findings = analysis.findings();
    findings.claims = verdicts;
    Ok(findings)
}

impl From<FindBatchFindings> for crate::verdict::Rendered {
    fn from(findings: FindBatchFindings) -> Self {
        crate::verdict::Rendered {
            lines: findings.lines(),
            claims: findings.claims,
        }
    }
}

#[cfg(test)]
mod tests;

/// The claims of seed 003 (and the Ohio State thesis it cites), each decided by a stated rule
/// in [`verdicts`] and worded by [`words`].
fn judge(
    a: &analysis::Analysis,
    ctx: &FindBatchContext,
    references: &[MemoryReference],
) -> Vec<batchlab_method::findings::Finding> {
    let (growth, utilization) = (
        verdicts::memory_grows(a),
        verdicts::utilization_saturates(a, ctx),
    );
    let largest = verdicts::largest_is_not_right(a, ctx.throughput_tolerance);
    let mut findings = vec![
        words::memory_grows(&growth, a.model_points).with_reading(&growth),
        words::utilization_saturates(&utilization, ctx.utilization_step).with_reading(&utilization),
        words::largest_is_not_right(&largest, a, ctx.throughput_tolerance).with_reading(&largest),
    ];
    if !ctx.memory_references.is_empty() {
        let experiment = &ctx.about.experiment;
        let differs = verdicts::memory_differs(a, experiment, references, ctx.memory_margin);
        findings.push(words::memory_differs(&differs, ctx.memory_margin).with_reading(&differs));
    }
    crate::verdict::quote_registered(&mut findings, &ctx.registered_claims);
    findings
}

/// Another model's finder run, its memory model fitted from its own probes as its report fits
/// it.
fn memory_reference(name: &str, dir: Option<&Path>) -> MemoryReference {
    let fit = match dir {
        None => Err(
            "no complete run made on this machine (backend, device, threads and kernels) in this report root"
                .to_string(),
        ),
        Some(dir) => rows::read(&dir.join(PROBES))
            .map_err(|e| format!("its probes cannot be read: {e}"))
            .and_then(|probes| match analysis::memory_fit(&probes) {
                (Some(fit), n) => Ok((fit.slope, fit.slope_se, n)),
                (None, _) => Err("no memory line fitted".to_string()),
            }),
    };
    MemoryReference {
        experiment: name.to_string(),
        run: dir
            .and_then(Path::file_name)
            .map(|run| run.to_string_lossy().into_owned()),
        fit,
    }
}

/// A finder's raw probes in its run directory.
pub const PROBES: &str = "probes.csv";
