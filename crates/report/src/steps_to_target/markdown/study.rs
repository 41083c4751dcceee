//! The findings about a steps-to-target study as a whole: best of N, evaluation
//! granularity, momentum, and the workloads side by side.

use super::reading::b_crit_text;
use crate::numbers::{and_list, batch, sig};
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::analysis::Study;
use crate::steps_to_target::TargetContext;

/// Findings about the study as a whole: best of N, evaluation granularity, the workloads
/// side by side.
pub(crate) fn study_sentences(ctx: &TargetContext, study: &Study) -> Vec<String> {
    let mut out = vec![];
    let recorded = match study.trials_range {
        Some((lo, hi)) if lo == hi => format!("{lo} recorded in every cell"),
        Some((lo, hi)) => format!("{lo} to {hi} recorded per cell"),
        None => "none recorded".into(),
    };
    out.push(format!(
        "Each steps to result is the best of N = {} trials per (workload, batch size) ({recorded}). The minimum over N draws is biased downward as N grows (more draws, a luckier best): a larger search would lower every value somewhat, and batch sizes compare fairly only when tuned with the same N. Likewise a best learning rate is one trial's draw, so it moves in steps as large as the gaps between the learning rates searched.",
        ctx.trials_text()
    ));
    // The coarsest relative resolution of any measured steps to result.
    let coarsest = study
        .workloads
        .iter()
        .flat_map(|w| w.points.iter())
        .map(|&(b, s)| {
            let previous = ctx.budget.previous_evaluation(b as u32, s as u64) as f64;
            ((s - previous) / s, s)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((share, s)) = coarsest {
        out.push(format!(
            "Validation error is {}, so a steps to result S says the target was first reached after the evaluation before S and at most at S. The widest such gap relative to its value here is at S = {}: up to {:.1}% of it, which bounds how finely neighbouring batch sizes can be told apart.",
            ctx.budget.evaluations_text(),
            sig(s),
            100.0 * share
        ));
    }
    let ends: Vec<String> = study
        .workloads
        .iter()
        .filter_map(|w| {
            let r = w.regimes.as_ref().ok()?;
            Some(match r.perfect_scaling {
                Some((_, hi)) => format!("{} at batch {}", w.label, batch(hi)),
                None => format!("{} nowhere", w.label),
            })
        })
        .collect();
    if ends.len() > 1 {
        let knees: Vec<String> = study
            .workloads
            .iter()
            .map(|w| format!("{} {}", w.label, b_crit_text(w)))
            .collect();
        out.push(format!(
            "Side by side: perfect scaling ends for {}; {}.",
            and_list(&ends),
            and_list(&knees)
        ));
    }
    out.extend(momentum_sentences(study));
    out.extend(model_sentence(study));
    out
}

/// Where perfect scaling ends on a workload's curve: `None` without regimes, `Some(None)`
/// when it does not scale perfectly even at its smallest batch sizes.
fn perfect_end(w: &Workload) -> Option<Option<f64>> {
    let r = w.regimes.as_ref().ok()?;
    Some(r.perfect_scaling.map(|(_, hi)| hi))
}

/// Per model with a plain SGD workload, where the regime bands end perfect scaling with momentum
/// and without (the extension itself is a claim, judged in the claims table).
fn momentum_sentences(study: &Study) -> Vec<String> {
    let mut out = vec![];
    for plain in study.workloads.iter().filter(|w| w.label.ends_with("/sgd")) {
        let model = &plain.label[..plain.label.len() - "/sgd".len()];
        let Some(plain_end) = perfect_end(plain) else {
            continue;
        };
        let others = study.workloads.iter().filter(|w| {
            w.label != plain.label && w.label.starts_with(&format!("{model}/")) && w.momentum
        });
        for w in others {
            let Some(end) = perfect_end(w) else { continue };
            let at = |e: Option<f64>| {
                e.map_or("nowhere".to_string(), |b| format!("to batch {}", batch(b)))
            };
            // A reading of the regime bands, not the verdict: the claim of the extension is
            // judged by the ratio of B_crit (the claims table), which can disagree with where
            // the bands happen to end, so the sentence says which it reads and names no result.
            let verdict = match (end, plain_end) {
                (Some(a), Some(b)) if a > b => "further",
                (Some(_), None) => "further",
                (a, b) if a == b => "as far",
                _ => "less far",
            };
            let optimizer = w.label.rsplit('/').next().unwrap_or(&w.label);
            // Ranges judged point by point describe the curve but do not know its noise: the
            // comparison is then a description, not a finding (the claims table says why).
            let caveat = if w.regimes_with_intervals() && plain.regimes_with_intervals() {
                String::new()
            } else {
                let rough: Vec<&str> = [plain, w]
                    .iter()
                    .filter(|x| !x.regimes_with_intervals())
                    .map(|x| x.label.as_str())
                    .collect();
                format!(
                    " (as the point-by-point ranges read; {} could not be judged with intervals, so this is no verdict)",
                    rough.join(" and ")
                )
            };
            out.push(format!(
                "{model}: by the regime bands {optimizer} scales perfectly {}, plain SGD {}: {verdict}{caveat}; whether {optimizer} extends perfect scaling, as Shallue et al. found, is judged by the ratio of B_crit in the claims table.",
                at(end),
                at(plain_end)
            ));
        }
    }
    out
}

/// Across models, how far apart the knees are (Shallue et al.: the largest useful batch
/// size differs greatly between workloads).
fn model_sentence(study: &Study) -> Option<String> {
    let knees: Vec<(&str, f64)> = study
        .workloads
        .iter()
        .filter_map(|w| {
            let f = w.fit.as_ref().ok()?;
            (f.b_crit_identified && f.b_crit > 0.0).then_some((w.label.as_str(), f.b_crit))
        })
        .collect();
    let models: std::collections::BTreeSet<&str> = knees
        .iter()
        .map(|(label, _)| label.split('/').next().unwrap_or(label))
        .collect();
    if models.len() < 2 {
        return None;
    }
    let low = knees.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let high = knees.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(format!(
        "Across models, B_crit ranges from {} ({}) to {} ({}), a factor of {}.",
        sig(low.1),
        low.0,
        sig(high.1),
        high.0,
        sig(high.1 / low.1)
    ))
}
