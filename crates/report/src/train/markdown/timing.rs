//! "Reading the result", the time half: training time per trial and per step, powers of two
//! beside their neighbours (the power-of-two study's question), and the share of training time spent
//! waiting for data, which says whether the times measure the model or the loader.

use crate::numbers::fixed;
use crate::train::analysis::Analysis;
use crate::train::TrainCell;
use batchlab_method::stats::median;

/// The share of training time spent waiting for data.
pub(crate) fn data_sentence(analysis: &Analysis) -> String {
    let shares: Vec<f64> = analysis
        .records
        .iter()
        .filter(|r| r.is_ok() && r.train_seconds > 0.0 && r.data_seconds.is_finite())
        .map(|r| 100.0 * r.data_seconds / r.train_seconds)
        .collect();
    if shares.is_empty() {
        return "No ok trial recorded its data-loading time.".into();
    }
    let lo = shares.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = shares.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let m = median(&shares);
    let worst = analysis
        .cells
        .iter()
        .filter(|c| c.data_share_median.is_finite())
        .max_by(|a, b| a.data_share_median.total_cmp(&b.data_share_median));
    let mut out = format!(
        "The training loop waited for data for a median {m:.1}% of training time (from {lo:.1}% to {hi:.1}% across ok trials"
    );
    if let Some(w) = worst {
        out.push_str(&format!(
            "; highest at batch {}, {} budget, {:.1}%",
            w.batch_size, w.budget, w.data_share_median
        ));
    }
    out.push_str(").");
    out.push_str(if m > 25.0 {
        " That is a large share: the training times here partly measure data loading, not the model's steps."
    } else {
        " Training times mostly measure the model's steps."
    });
    out
}

/// Training time and time per step at the ends of each line under the source's budget.
pub(crate) fn time_sentence(analysis: &Analysis) -> Option<String> {
    let budget = analysis.seed_budget()?;
    let parts: Vec<String> = analysis
        .series
        .iter()
        .filter_map(|s| {
            let cells: Vec<&TrainCell> = analysis
                .cells_of(budget, s)
                .filter(|c| c.train_seconds_median.is_finite() && c.steps_median > 0.0)
                .collect();
            let (a, b) = (cells.first()?, cells.last()?);
            let per_step = |c: &TrainCell| 1000.0 * c.train_seconds_median / c.steps_median;
            Some(if a.batch_size == b.batch_size {
                format!(
                    "{} trained for {} s at batch {} ({} ms per step)",
                    analysis.label(&s.optimizer, &s.variant),
                    fixed(a.train_seconds_median, 1),
                    a.batch_size,
                    fixed(per_step(a), 1)
                )
            } else {
                format!(
                    "{} trained for {} s at batch {} and {} s at {} ({} and {} ms per step)",
                    analysis.label(&s.optimizer, &s.variant),
                    fixed(a.train_seconds_median, 1),
                    a.batch_size,
                    fixed(b.train_seconds_median, 1),
                    b.batch_size,
                    fixed(per_step(a), 1),
                    fixed(per_step(b), 1)
                )
            })
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "Training time per trial under the {budget} budget (median over seeds): {}.",
        parts.join("; ")
    ))
}

/// For each power-of-two batch size with a neighbour one below or above it, the training
/// times side by side, and whether their seed ranges overlap.
pub(crate) fn powers_of_two_sentence(analysis: &Analysis) -> Option<String> {
    let budget = analysis.seed_budget()?;
    let mut parts = vec![];
    for s in &analysis.series {
        for (cell, neighbours) in
            Analysis::powers_of_two_with_neighbours(analysis.cells_of(budget, s))
        {
            let p = cell.batch_size;
            let others: Vec<String> = neighbours
                .iter()
                .map(|n| {
                    let verdict = if analysis.times_apart(cell, n) {
                        "seed ranges apart"
                    } else {
                        "seed ranges overlap"
                    };
                    // The power of two against its neighbour, as the claims table states it.
                    format!(
                        "{:+.1}% vs {} ({} s, {verdict})",
                        100.0 * (cell.train_seconds_median / n.train_seconds_median - 1.0),
                        n.batch_size,
                        fixed(n.train_seconds_median, 2),
                    )
                })
                .collect();
            parts.push(format!(
                "{}: batch {p} {} s, {}",
                analysis.label(&s.optimizer, &s.variant),
                fixed(cell.train_seconds_median, 2),
                others.join(", ")
            ));
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "Powers of two beside their neighbours (training time, {budget} budget): {}.",
        parts.join("; ")
    ))
}
