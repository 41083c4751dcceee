//! The same go's PyTorch references: the GPU campaign (scripts/gpu-campaign.sh) writes PyTorch's
//! own training step of the same network, sweep and protocol on the same card into a tch-cuda
//! run's directory, in the columns of `results.csv`. Each is read as one more sweep, analysed as
//! the run's own rows are, and judged by the same rules the config names. They are listed in
//! `report.md` beside the run, never in `findings.json`: the claims registry declares that a jump
//! the run shows and its reference does not is a finding about the run's backend, not a reading
//! of the seeds' claim, so the reader needs both readings side by side. The one claim about
//! PyTorch's own setting, seed 002's cuDNN benchmark mode, is judged from two references
//! ([`speedup`]) and recorded as the run's finding.

use std::path::Path;

use batchlab_method::findings::Finding;
use batchlab_method::rows::{read_rows, stored};
use batchlab_method::stats::median;

use super::analysis::{analyse, Analysis};
use super::markdown::in_short;
use super::{summarize, verdicts, StepTimeContext};
use crate::markdown::table;
use crate::verdict::words;
use crate::ReportError;

/// The reference tables a run directory may hold (scripts/pytorch_steps.py `sweep`), stored as
/// CSV or, once the run is compacted, as Parquet.
pub const REFERENCE_TABLES: [&str; 3] = [
    "pytorch.csv",
    "pytorch-cudnn-benchmark.csv",
    "pytorch-amp.csv",
];

/// What each of [`REFERENCE_TABLES`] measured.
const MEASURED: [&str; 3] = [
    "PyTorch, cuDNN's defaults",
    "PyTorch, cuDNN's benchmark mode (`torch.backends.cudnn.benchmark = True`)",
    "PyTorch under automatic mixed precision (`torch.autocast`, float16, a GradScaler)",
];

/// The rules a reference is read by: the claims about the shape of the curve.
const RULES: [&str; 3] = ["linear", "jumps-at", "no-jumps-at"];

/// One reference sweep, analysed and judged.
pub(super) struct ReferenceSweep {
    file: &'static str,
    what: &'static str,
    analysis: Analysis,
    verdicts: Vec<Finding>,
}

/// Every reference file in `dir`, read and judged by the rules of `ctx`.
pub(super) fn read(dir: &Path, ctx: &StepTimeContext) -> Result<Vec<ReferenceSweep>, ReportError> {
    let mut out = vec![];
    for (file, what) in REFERENCE_TABLES.into_iter().zip(MEASURED) {
        let path = dir.join(file);
        if !stored::exists(&path) {
            continue;
        }
        let samples = read_rows(&path)?;
        let points = summarize(&samples, ctx.bootstrap_resamples, ctx.seed);
        let analysis = analyse(&samples, points);
        let verdicts = verdicts::judge(ctx, &analysis, None, None, None)
            .into_iter()
            .filter(|f| RULES.contains(&f.rule.as_str()))
            .collect();
        out.push(ReferenceSweep {
            file,
            what,
            analysis,
            verdicts,
        });
    }
    Ok(out)
}

/// cuDNN's defaults against its benchmark mode, from the references in `refs`.
pub(super) fn speedup(
    refs: &[ReferenceSweep],
    (margin, max_gain): (f64, f64),
) -> verdicts::Speedup {
    let medians = |file: &str| {
        let sweep = refs.iter().find(|r| r.file == file)?;
        let points = sweep.analysis.findings.ok_points();
        Some(
            points
                .map(|p| (p.batch_size, p.median_ms))
                .collect::<Vec<_>>(),
        )
    };
    let [default, tuned] = [REFERENCE_TABLES[0], REFERENCE_TABLES[1]];
    match (medians(default), medians(tuned)) {
        (Some(d), Some(t)) => verdicts::speedup(&d, &t, margin, max_gain),
        (d, _) => verdicts::Speedup::Missing(format!(
            "no {} in this run's directory (the GPU campaign writes the PyTorch references)",
            if d.is_none() { default } else { tuned }
        )),
    }
}

/// The section on the references, or nothing without one.
pub(super) fn section(run: &Analysis, run_verdicts: &[Finding], refs: &[ReferenceSweep]) -> String {
    if refs.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "## The same go's PyTorch references\n\n\
         PyTorch's own training step of the same network and sweep on the same card, in the same \
         go (scripts/pytorch_steps.py: the batch sizes in rounds of a new shuffled order, 2 \
         dropped warm-up steps then the same timed steps per visit, the device synchronised \
         before every clock read; one model for the whole sweep), analysed as this run's rows \
         are and judged by the same rules. A jump this run shows and its reference does not is \
         a finding about this run's backend, not a reading of the seeds' claim \
         (claims/registry.toml).\n\n",
    );
    let rows: Vec<Vec<String>> = refs
        .iter()
        .map(|r| {
            let ok = r.analysis.findings.ok_points().count();
            vec![
                format!("`{}`: {}", r.file, r.what),
                format!("{ok} ok"),
                in_short(&r.analysis),
                ratio(run, &r.analysis),
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "reference",
            "batch sizes",
            "in short",
            "this run's median step over the reference's (median over the common batch sizes, range)",
        ],
        &rows,
    ));
    md.push_str("\nThe claims about the curve's shape, this run beside each reference:\n\n");
    let mut headers = vec!["claim".to_string(), "this run".to_string()];
    headers.extend(refs.iter().map(|r| format!("`{}`", r.file)));
    let rows: Vec<Vec<String>> = run_verdicts
        .iter()
        .filter(|f| RULES.contains(&f.rule.as_str()))
        .map(|f| {
            let mut row = vec![format!("\"{}\"", f.claim), words(&f.outcome)];
            row.extend(refs.iter().map(|r| {
                r.verdicts
                    .iter()
                    .find(|g| g.rule == f.rule && g.claim == f.claim)
                    .map_or("not judged".into(), |g| {
                        format!("{}: {}", words(&g.outcome), g.measured)
                    })
            }));
            row
        })
        .collect();
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    md.push_str(&table(&headers, &rows));
    md.push('\n');
    md
}

/// This run's median step time over the reference's, per common ok batch size: the median
/// ratio and the range, in words.
fn ratio(run: &Analysis, reference: &Analysis) -> String {
    let theirs: Vec<(u32, f64)> = reference
        .findings
        .ok_points()
        .map(|p| (p.batch_size, p.median_ms))
        .collect();
    let mut ratios: Vec<f64> = run
        .findings
        .ok_points()
        .filter_map(|p| {
            let (_, t) = theirs.iter().find(|(b, _)| *b == p.batch_size)?;
            Some(p.median_ms / t)
        })
        .collect();
    if ratios.is_empty() {
        return "no batch size in common".into();
    }
    ratios.sort_by(f64::total_cmp);
    format!(
        "x{:.3} (x{:.3} to x{:.3}, {} batch sizes)",
        median(&ratios),
        ratios[0],
        ratios[ratios.len() - 1],
        ratios.len()
    )
}
