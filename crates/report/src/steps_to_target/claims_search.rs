//! matches-search: one search's steps to result against another's, per batch size both ran,
//! by the interval of their ratio against the registry's factor.

use batchlab_method::findings::Outcome;

use super::Parts;
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::scaling::bounded_interval;

pub(super) fn matches(w: &Workload, v: &Workload, margin: f64) -> Parts {
    let (cw, cv) = (&w.intervals, &v.intervals);
    let n = cw.replicate_count().min(cv.replicate_count());
    let mut parts = vec![];
    let (mut shown, mut refuted, mut open) = (vec![], vec![], vec![]);
    let mut widest: f64 = 0.0;
    for (k, &b) in cv.batch_sizes.iter().enumerate() {
        let Some(j) = cw.batch_sizes.iter().position(|&x| x == b) else {
            continue;
        };
        let (sw, sv) = (cw.steps[j], cv.steps[k]);
        if !sv.is_finite() && !sw.is_finite() {
            continue;
        }
        // Replicates of the two searches are independent draws (each workload resamples
        // from its own stream): their ratio's interval is that of a ratio of two estimates.
        let (lo, hi) = bounded_interval((0..n).map(|r| {
            let ((wl, wh), (vl, vh)) = (cw.replicate_steps(r, j), cv.replicate_steps(r, k));
            (wl / vh, wh / vl)
        }));
        let batch = b as u32;
        if hi <= margin {
            shown.push(batch);
        } else if lo > margin {
            refuted.push(batch);
        } else {
            open.push(batch);
            widest = widest.max(hi);
        }
        parts.push(format!(
            "batch {batch}: {}x (95% interval {}–{})",
            ratio_text(sw / sv),
            ratio_text(lo),
            ratio_text(hi)
        ));
    }
    let all = shown.len() + refuted.len() + open.len();
    let verdict = if all == 0 {
        Outcome::cannot_test("no batch size where either reached the target")
    } else if shown.len() == all {
        Outcome::reproduces_with(format!("within x{margin} at all {all} batch sizes"))
    } else if refuted.len() == all {
        Outcome::does_not_reproduce(format!(
            "more than x{margin} the steps at all {all} batch sizes"
        ))
    } else if !shown.is_empty() && !refuted.is_empty() {
        Outcome::partly(format!(
            "within x{margin} at {} of {all} batch sizes, beyond it at {}",
            shown.len(),
            refuted.len()
        ))
    } else {
        Outcome::inconclusive(format!(
            "the ratio's interval reaches past x{margin} (up to {}) at {} of {all} batch sizes",
            ratio_text(widest),
            open.len()
        ))
    };
    let test = format!(
        "A non-inferiority claim per batch size both searches ran: the ratio of {}'s steps to result to {}'s, with the nominally 95% interval of that ratio over the two searches' bootstrap replicates (drawn from the cells' intervals, measured at 83% on fresh replicates) (independent draws: where another search of as many trials would find its best); as low as within x{margin} (the registry's margin: steps to result are read on evaluations spaced by a factor of budget.evaluate_growth, so closer searches cannot be told apart) when the interval's top is at most x{margin}, worse when its bottom lies above it. Reproduces if every batch size is as low, does not reproduce if every one is worse, partly if some of each, inconclusive otherwise",
        w.label, v.label
    );
    let measured = format!(
        "steps to result, {} over {}: {}",
        w.label,
        v.label,
        parts.join("; ")
    );
    (measured, verdict, test)
}

/// A ratio to two decimals, or "unbounded".
fn ratio_text(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "unbounded".into()
    }
}
