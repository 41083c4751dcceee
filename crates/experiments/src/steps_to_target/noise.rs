//! The gradient noise scale of a steps-to-target study: each trial's measurements as noise.csv
//! rows, and the report's section setting B_simple beside the fitted B_crit.

use std::{collections::BTreeMap, collections::BTreeSet, path::Path};

use batchlab_report::{
    stats::median,
    steps_to_target::{
        classify, trials_from_train, NoiseRow, NoiseScale, TrialOutcome, WorkloadFindings,
    },
    train::{read_evals, read_trials},
};

use super::{SearchTrial, Workload};
use crate::{error::RunError, run_dir::write_atomically, trial::train_loop::GradientNorms};

/// Weight of the newest measurement in B_simple's moving averages is 1 - DECAY: a trial has
/// tens of measurements, and McCandlish et al. average because single ones are noisy.
const DECAY: f64 = 0.8;

/// A trial's gradient-norm measurements with the moving-average B_simple after each.
pub fn rows(t: &SearchTrial, w: &Workload, norms: &[GradientNorms]) -> Vec<NoiseRow> {
    let Some(first) = norms.first() else {
        return Vec::new();
    };
    let Ok(mut scale) = NoiseScale::new(first.b_small, first.b_big, DECAY) else {
        return Vec::new();
    };
    norms
        .iter()
        .map(|n| {
            let b_simple = scale
                .update(n.small_sq, n.big_sq)
                .ok()
                .and_then(|r| r.b_simple)
                .unwrap_or(f64::NAN);
            NoiseRow {
                trial: t.id.clone(),
                workload: w.label(),
                batch_size: t.batch_size,
                step: n.step,
                b_small: n.b_small,
                b_big: n.b_big,
                g_small_sq: n.small_sq,
                g_big_sq: n.big_sq,
                b_simple,
            }
        })
        .collect()
}

/// The trials that reached `target` (by the report's rules), from trials.csv and results.csv.
fn reached(dir: &Path, target: f64) -> Result<BTreeSet<String>, RunError> {
    let (trials, results) = (dir.join("trials.csv"), dir.join("results.csv"));
    if !trials.exists() || !results.exists() {
        return Ok(BTreeSet::new());
    }
    let trials = trials_from_train(&read_trials(&trials)?, &read_evals(&results)?)
        .map_err(|e| RunError::Other(e.to_string()))?;
    Ok(trials
        .into_iter()
        .filter(|t| matches!(classify(t, target), TrialOutcome::Reached(_)))
        .map(|t| t.id)
        .collect())
}

/// "median (min – max)" of `values`, sorted in place; "–" when empty.
fn spread(values: &mut [f64]) -> String {
    if values.is_empty() {
        return "–".into();
    }
    values.sort_by(f64::total_cmp);
    format!(
        "{:.1} ({:.1} – {:.1})",
        median(values),
        values[0],
        values[values.len() - 1]
    )
}

/// Appends the gradient noise scale beside B_crit to report.md (when noise.csv exists) and
/// returns its headline lines. Each trial contributes its last moving-average B_simple; the
/// comparison with B_crit uses the trials that reached the target, whose last estimate was
/// taken where training ended, at the target's loss, as McCandlish et al.'s prediction needs.
pub fn section(
    dir: &Path,
    workloads: &[WorkloadFindings],
    target: f64,
) -> Result<Vec<String>, RunError> {
    let path = dir.join("noise.csv");
    if !path.exists() {
        return Ok(Vec::new());
    }
    let rows = batchlab_report::steps_to_target::read_noise(&path)?;
    let mut last: BTreeMap<&str, &NoiseRow> = BTreeMap::new();
    for row in &rows {
        last.insert(&row.trial, row);
    }
    let reached = reached(dir, target)?;
    let mut md = String::from(
        "\n## Gradient noise scale\n\nB_simple = tr(Σ) / |G|² (McCandlish et al. 2018), estimated during training from the squared norms of the half-batch and whole-batch mean gradients (their Appendix A), as a moving average over each trial's measurements. McCandlish et al. predict B_crit ≈ B_simple measured where training ends; here that is the last estimate of each trial that reached the target (taken within one measurement interval of reaching it). The table gives the median (and range) of those, beside the B_crit fitted to the steps-to-result curve, and, for reference, the same over every trial (including trials that stopped early, missed or diverged, whose last estimates come from other points of training).\n\n| workload | trials that reached the target | B_simple at the target: median (range) | B_crit (fit) | all trials | B_simple, all trials: median (range) |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    let mut lines = Vec::new();
    for w in workloads {
        let of_workload: Vec<&&NoiseRow> = last
            .values()
            .filter(|r| r.workload == w.workload && r.b_simple.is_finite())
            .collect();
        if of_workload.is_empty() {
            continue;
        }
        let mut all: Vec<f64> = of_workload.iter().map(|r| r.b_simple).collect();
        let mut at_target: Vec<f64> = of_workload
            .iter()
            .filter(|r| reached.contains(&r.trial))
            .map(|r| r.b_simple)
            .collect();
        let b_crit = w.fit.as_ref().map_or("not fitted".to_string(), |f| {
            format!(
                "{:.1} ({:.1} – {:.1})",
                f.b_crit, f.b_crit_interval.0, f.b_crit_interval.1
            )
        });
        let (n_target, n_all) = (at_target.len(), all.len());
        let target_spread = spread(&mut at_target);
        md.push_str(&format!(
            "| {} | {n_target} | {target_spread} | {b_crit} | {n_all} | {} |\n",
            w.workload,
            spread(&mut all)
        ));
        lines.push(format!(
            "{}: gradient noise scale B_simple {target_spread} over {n_target} trials at the target; B_crit {b_crit}",
            w.workload
        ));
    }
    let report = dir.join("report.md");
    let text = std::fs::read_to_string(&report).map_err(|e| RunError::io(&report, e))?;
    write_atomically(&report, &(text + &md))?;
    Ok(lines)
}
