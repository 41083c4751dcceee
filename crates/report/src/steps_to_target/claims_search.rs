//! matches-search: one search's steps to result against another's, per batch size both ran,
//! by the interval of their ratio against the registry's factor; decided as a value
//! (`search_match`), then worded (`words`).

use batchlab_method::findings::Outcome;

use super::Parts;
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::scaling::bounded_interval;

/// One batch size both searches ran: their steps-to-result ratio and its 95% interval.
struct Compared {
    batch: u32,
    ratio: f64,
    low: f64,
    high: f64,
}

/// matches-search, as values: every compared batch size, and which are bounded within the
/// margin (`shown`), beyond it (`refuted`) or neither (`open`, with the widest interval's top).
struct SearchMatch {
    compared: Vec<Compared>,
    shown: usize,
    refuted: usize,
    open: usize,
    widest: f64,
}

pub(super) fn matches(w: &Workload, v: &Workload, margin: f64) -> Parts {
    words(&search_match(w, v, margin), w, v, margin)
}

fn search_match(w: &Workload, v: &Workload, margin: f64) -> SearchMatch {
    let (cw, cv) = (&w.intervals, &v.intervals);
    let n = cw.replicate_count().min(cv.replicate_count());
    let mut reading = SearchMatch {
        compared: vec![],
        shown: 0,
        refuted: 0,
        open: 0,
        widest: 0.0,
    };
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
        if hi <= margin {
            reading.shown += 1;
        } else if lo > margin {
            reading.refuted += 1;
        } else {
            reading.open += 1;
            reading.widest = reading.widest.max(hi);
        }
        reading.compared.push(Compared {
            batch: b as u32,
            ratio: sw / sv,
            low: lo,
            high: hi,
        });
    }
    reading
}

/// matches-search in words: what was measured, the outcome, the test.
fn words(reading: &SearchMatch, w: &Workload, v: &Workload, margin: f64) -> Parts {
    let parts: Vec<String> = reading
        .compared
        .iter()
        .map(|c| {
            format!(
                "batch {}: {}x (95% interval {}–{})",
                c.batch,
                ratio_text(c.ratio),
                ratio_text(c.low),
                ratio_text(c.high)
            )
        })
        .collect();
    let SearchMatch {
        shown,
        refuted,
        open,
        widest,
        ..
    } = *reading;
    let all = shown + refuted + open;
    let verdict = if all == 0 {
        Outcome::cannot_test("no batch size where either reached the target")
    } else if shown == all {
        Outcome::reproduces_with(format!("within x{margin} at all {all} batch sizes"))
    } else if refuted == all {
        Outcome::does_not_reproduce(format!(
            "more than x{margin} the steps at all {all} batch sizes"
        ))
    } else if shown > 0 && refuted > 0 {
        Outcome::partly(format!(
            "within x{margin} at {shown} of {all} batch sizes, beyond it at {refuted}"
        ))
    } else {
        Outcome::inconclusive(format!(
            "the ratio's interval reaches past x{margin} (up to {}) at {open} of {all} batch sizes",
            ratio_text(widest)
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
