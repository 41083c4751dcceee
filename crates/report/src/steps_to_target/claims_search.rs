//! matches-search: one search's steps to result against another's, per batch size both ran,
//! by the interval of their ratio against the registry's factor; decided as a value
//! (`search_match`), then worded (`claims_words.rs`).

use serde::Serialize;

use super::Judged;
use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::scaling::bounded_interval;

/// One batch size both searches ran: their steps-to-result ratio and its 95% interval.
#[derive(Serialize)]
pub(super) struct Compared {
    pub batch: u32,
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

/// matches-search, as values: every compared batch size, and which are bounded within the
/// margin (`shown`), beyond it (`refuted`) or neither (`open`, with the widest interval's top).
#[derive(Serialize)]
pub(super) struct SearchMatch {
    pub compared: Vec<Compared>,
    pub shown: usize,
    pub refuted: usize,
    pub open: usize,
    pub widest: f64,
}

pub(super) fn matches(w: &Workload, v: &Workload, margin: f64) -> Judged {
    let decided = search_match(w, v, margin);
    (
        super::words::search_match(&decided, w, v, margin),
        batchlab_method::findings::reading(&decided),
    )
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
