//! The report's "Gradient noise scale" section: B_simple beside the fitted B_crit.

use batchlab_method::stats::median;

use crate::steps_to_target::analysis::noise::NoiseCell;

/// "median (min – max)" of sorted `values`; "–" when empty.
fn spread(values: &[f64]) -> String {
    match (values.first(), values.last()) {
        (Some(lo), Some(hi)) => format!("{:.1} ({lo:.1} – {hi:.1})", median(values)),
        _ => "–".into(),
    }
}

/// The report's "Gradient noise scale" section and its headline lines for the terminal.
pub(crate) fn noise_section(cells: &[NoiseCell]) -> (String, Vec<String>) {
    let mut md = String::from(
        "\n## Gradient noise scale\n\nB_simple = tr(Σ) / |G|² (McCandlish et al. 2018), estimated during training from the squared norms of the half-batch and whole-batch mean gradients (their Appendix A), as a moving average over each trial's measurements. McCandlish et al. predict B_crit ≈ B_simple measured where training ends; here that is the last estimate of each trial that reached the target (taken within one measurement interval of reaching it). The table gives the median (and range) of those, beside the B_crit fitted to the steps-to-result curve, and, for reference, the same over every trial (including trials that stopped early, missed or diverged, whose last estimates come from other points of training).\n\nA trial whose last estimate is not finite (the estimated squared gradient norm at or below zero, when the noise swamps it) has no noise scale; such trials are counted in the last column, not used.\n\n| workload | trials that reached the target | B_simple at the target: median (range) | B_crit (fit) | all trials | B_simple, all trials: median (range) | trials without a finite estimate |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let mut lines = Vec::new();
    for c in cells {
        let b_crit = c.b_crit.map_or("not fitted".to_string(), |(b, (lo, hi))| {
            format!("{b:.1} ({lo:.1} – {hi:.1})")
        });
        let (n_target, n_all) = (c.at_target.len(), c.all.len());
        let target_spread = spread(&c.at_target);
        md.push_str(&format!(
            "| {} | {n_target} | {target_spread} | {b_crit} | {n_all} | {} | {} |\n",
            c.workload,
            spread(&c.all),
            c.non_finite
        ));
        lines.push(format!(
            "{}: gradient noise scale B_simple {target_spread} over {n_target} trials at the target; B_crit {b_crit}",
            c.workload
        ));
    }
    (md, lines)
}
