//! The step-time sweep: time of one training step per batch size. Runners append raw
//! samples ([`batchlab_method::rows::step_time::StepSample`]) as they are measured; once a
//! run ends (or from `batchlab report <dir>`), [`render_step_time`] turns the directory's
//! `results.csv` into `summary.csv`, figures and `report.md`: it reads the rows (`rows`),
//! analyses them (`analysis`, with [`summarize`]), then draws (`figures`) and writes
//! `report.md` (`markdown`).

mod analysis;
pub mod anatomy;
mod anatomy_view;
mod figures;
mod markdown;
mod protocol;
mod references;
mod rows;
mod summary;
mod verdicts;
mod warmup_view;

pub use analysis::StepTimeFindings;
pub use protocol::{AnatomyProtocol, SweepProtocol};
pub use references::REFERENCE_TABLES;
pub use summary::{summarize, write_summary, StepPoint, CI_LEVEL};
pub use verdicts::{Gap, StepTimeRules};

use std::path::{Path, PathBuf};

use crate::ReportError;

/// The files [`render_step_time`] writes into a report directory, besides reading
/// `results.csv`.
pub const OUTPUT_FILES: [&str; 4] = [
    "summary.csv",
    "step_time.svg",
    "throughput.svg",
    "report.md",
];

/// What a report says about the run, beyond the measurements themselves. The runner fills
/// it from the resolved config and the device it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTimeContext {
    /// The run: experiment, description, source, backend, device, protocol.
    pub about: crate::About,
    /// Batch sizes at which the seed claims a jump (may be empty).
    pub claimed_jumps: Vec<u32>,
    /// Batch sizes at which the seed claims this model has no jump (may be empty).
    pub no_jumps_at: Vec<u32>,
    /// `[below, at, above]`: a batch size claimed faster per example than both its
    /// neighbours (seed 002's off-by-one), if one is.
    pub local_minimum_at: Option<[u32; 3]>,
    /// A model the seed claims this one fluctuates more than: its experiment name and the
    /// report directory of its newest complete run (`None` if there is none).
    pub fluctuates_more_than: Option<(String, Option<PathBuf>)>,
    /// A model the seed claims this one is slightly slower than, found the same way.
    pub slower_than: Option<(String, Option<PathBuf>)>,
    /// The parameters of the rules that judge the claims.
    pub rules: StepTimeRules,
    /// The registered claim each rule judges on this run, by rule name: its quote and source,
    /// which word that rule's finding in place of the kind's own summary of seeds 000/001
    /// (empty: every finding in the kind's words).
    pub registered_claims: crate::verdict::RegisteredClaims,
    /// One line, e.g. "vgg16, 3x64x64, 1000 classes, 138.4 M trainable parameters, 30.9
    /// GFLOPs per sample".
    pub model: String,
    /// What `peak_mem_mb` measures, e.g. "process peak resident set size".
    pub memory_kind: String,
    /// Bootstrap resamples per batch size.
    pub bootstrap_resamples: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
}

/// Reads `dir/results.csv` (or its Parquet form) and writes `dir/summary.csv`,
/// `dir/step_time.svg`, `dir/throughput.svg` and `dir/report.md` (see [`OUTPUT_FILES`]); when
/// the run took steps apart (`dir/stages.csv`), also `dir/anatomy.svg` and a section on them;
/// where a GPU campaign left PyTorch references (`dir/pytorch*.csv`), a section judging them
/// beside the run (`references`). Can be rerun at any time (each file is
/// replaced atomically); a sweep with no successful point still gets its report.
pub fn render_step_time(
    dir: &Path,
    ctx: &StepTimeContext,
) -> Result<StepTimeFindings, ReportError> {
    let samples = rows::read(dir)?;
    let points = summarize(&samples, ctx.bootstrap_resamples, ctx.seed);
    write_summary(&dir.join("summary.csv"), &points)?;
    let analysis = analysis::analyse(&samples, points);
    figures::draw_step_time(dir, ctx, &analysis)?;
    figures::draw_throughput(dir, ctx, &analysis)?;
    let found = |named: &Option<(String, Option<PathBuf>)>| {
        named
            .as_ref()
            .map(|(name, dir)| reference(name, dir.as_deref(), ctx))
    };
    let refs = references::read(dir, ctx)?;
    let tuned = ctx
        .rules
        .autotune
        .map(|rule| references::speedup(&refs, rule));
    let verdicts = verdicts::judge(
        ctx,
        &analysis,
        found(&ctx.fluctuates_more_than).as_ref(),
        found(&ctx.slower_than).as_ref(),
        tuned.as_ref(),
    );
    let anatomies = anatomy_view::read(dir, ctx.seed)?;
    anatomy_view::draw(dir, &ctx.about.experiment, &anatomies)?;
    let sections = markdown::Sections {
        anatomy: anatomy_view::section(&anatomies),
        warmup: warmup_view::section(&warmup_view::read(dir)?, &samples),
        references: references::section(&analysis, &verdicts, &refs),
    };
    let report = markdown::report_markdown(ctx, &analysis, &samples, &verdicts, &sections);
    batchlab_method::files::write_atomic(&dir.join("report.md"), report.as_bytes())?;
    let mut findings = analysis.findings;
    findings.claims = verdicts;
    findings.anatomies = anatomies;
    Ok(findings)
}

/// The reference curve of a comparison claim, analysed from its own raw rows exactly as its
/// report analyses them.
fn reference(name: &str, dir: Option<&Path>, ctx: &StepTimeContext) -> verdicts::Reference {
    let curve = match dir {
        None => Err(format!(
            "no complete run of {name} (nor of its GPU config or that config's campaign runs) made on this machine (backend, device, threads and kernels) in this report root"
        )),
        Some(dir) => rows::read(dir)
            .map(|samples| {
                let points = summarize(&samples, ctx.bootstrap_resamples.min(200), ctx.seed);
                let analysis = analysis::analyse(&samples, points);
                verdicts::ReferenceCurve {
                    medians: analysis
                        .findings
                        .ok_points()
                        .map(|p| (p.batch_size, p.median_ms))
                        .collect(),
                    scatter_values: analysis.scatter_values,
                }
            })
            .map_err(|e| format!("{name}'s results cannot be read: {e}")),
    };
    verdicts::Reference {
        experiment: name.to_string(),
        run: dir
            .and_then(Path::file_name)
            .map(|run| run.to_string_lossy().into_owned()),
        curve,
    }
}
