//! The time rules' values (`time`) in words: the outcome with its reason, what was measured and
//! the numbers beside it (the rules themselves are worded in `words::rule`).

use batchlab_method::findings::Outcome;
use batchlab_method::tests_of_claims::Decision;

use super::time::{
    Clock, FollowsSteps, LocalMinimum, Mechanism, PowersOfTwo, Predicted, Sameness, TimeFalls,
};
use super::Judged;
use crate::numbers::fixed;
use crate::verdict::{local_minimum_outcome, local_minimum_quantities};

/// Training (the whole budget) faster at `to` than at `from`.
pub(super) fn time_falls(t: &TimeFalls, from: u32, to: u32) -> Judged {
    let d = &t.d;
    let (low, high) = d.interval90();
    let outcome = match t.decided {
        Decision::Shown => {
            Outcome::reproduces_with(format!("{:.1}% faster", -100.0 * d.diff.exp_m1()))
        }
        Decision::Refuted => Outcome::does_not_reproduce(format!(
            "batch {to} trains {:.1}% slower than {from}",
            100.0 * d.diff.exp_m1()
        )),
        Decision::Open => Outcome::inconclusive(format!(
            "a difference of {:.1}% of the training time",
            100.0 * (d.critical() * d.se).exp_m1()
        )),
    };
    Judged {
        outcome,
        measured: format!(
            "{} s at {from}, {} s at {to} (medians over the seeds): {:+.1}% (90% interval {:+.1}% to {:+.1}%, Welch on the log times)",
            fixed(t.cells.0.train_seconds_median, 2),
            fixed(t.cells.1.train_seconds_median, 2),
            100.0 * d.diff.exp_m1(),
            100.0 * low.exp_m1(),
            100.0 * high.exp_m1()
        ),
        quantities: vec![("log_ratio", d.diff), ("log_ratio_se", d.se), ("df", d.df)],
        reading: None,
    }
}

/// A local minimum: both neighbours slower than the named batch size.
pub(super) fn local_minimum(m: &LocalMinimum) -> Judged {
    let at = m.at.batch_size;
    let pct = |x: f64| 100.0 * x.exp_m1();
    let sides: Vec<String> = m
        .sides
        .iter()
        .map(|(cell, d)| {
            let (low, high) = d.interval90();
            format!(
                "{} ({} s): {:+.1}% against {at} (90% interval {:+.1}% to {:+.1}%)",
                cell.batch_size,
                fixed(cell.train_seconds_median, 2),
                pct(d.diff),
                pct(low),
                pct(high)
            )
        })
        .collect();
    let numbers: Vec<_> = m.sides.iter().map(|(c, d)| (c.batch_size, *d)).collect();
    let faster: Vec<u32> = m.faster.iter().map(|c| c.batch_size).collect();
    let outcome = local_minimum_outcome(at, &numbers, &faster, m.decided, ["", "trains"]);
    let quantities = local_minimum_quantities(&numbers);
    Judged {
        outcome,
        measured: format!(
            "{at}: {} s (median over the seeds); {}",
            fixed(m.at.train_seconds_median, 2),
            sides.join("; ")
        ),
        quantities,
        reading: None,
    }
}

/// A claim of sameness at every comparison, worded: `what` names a comparison bounded beyond
/// the margin, `detectable` what an open test could have seen.
fn sameness(decided: Sameness, what: &str, detectable: String) -> Outcome {
    match decided {
        Sameness::Shown => Outcome::reproduces(),
        Sameness::Untestable => Outcome::cannot_test(
            "fewer than two ok seeds in the cells compared: no seed spread, so no interval",
        ),
        Sameness::Open => Outcome::inconclusive(detectable),
        Sameness::Refuted { refuted, compared } => {
            Outcome::does_not_reproduce(format!("{what} in {refuted} of {compared} comparisons"))
        }
    }
}

/// Powers of two against their neighbours, on `clock`.
pub(super) fn powers_of_two(p: &PowersOfTwo, tolerance: f64, clock: Clock) -> Judged {
    let parts: Vec<String> = p
        .pairs
        .iter()
        .map(|(cell, sides)| {
            let sides: Vec<String> = sides
                .iter()
                .map(|(n, d)| match d {
                    None => "no seed spread".to_string(),
                    Some(d) => {
                        let (lo, hi) = d.interval90();
                        format!(
                            "{:+.1}% vs {n} (90% interval {:+.1}% to {:+.1}%)",
                            100.0 * d.diff.exp_m1(),
                            100.0 * lo.exp_m1(),
                            100.0 * hi.exp_m1()
                        )
                    }
                })
                .collect();
            format!(
                "{} ({} s): {}",
                cell.batch_size,
                fixed(
                    match clock {
                        Clock::Training => cell.train_seconds_median,
                        Clock::Test => cell.test_seconds_median,
                    },
                    2
                ),
                sides.join(", ")
            )
        })
        .collect();
    Judged {
        outcome: sameness(
            p.tally.decided(),
            "a noticeable difference",
            format!(
                "a difference of ±{:.1}% (the widest 90% interval's half-width) against a margin of ±{:.0}%",
                100.0 * p.widest.exp_m1(),
                100.0 * tolerance
            ),
        ),
        measured: parts.join("; "),
        quantities: vec![("tolerance", tolerance), ("pairs", p.tally.compared as f64)],
        reading: None,
    }
}

/// Training time following the steps (the mechanism).
pub(super) fn follows_steps(f: &FollowsSteps, tolerance: f64) -> Judged {
    let parts: Vec<String> = f
        .offsets
        .iter()
        .map(|(cell, off)| {
            format!(
                "{}: {} steps, {} s ({:+.1}% off the line of the others)",
                cell.batch_size,
                fixed(cell.steps_median, 0),
                fixed(cell.train_seconds_median, 2),
                100.0 * off.exp_m1()
            )
        })
        .collect();
    let measured = format!(
        "time = {} s + {} ms per step (95% one-sided bounds {} to {} ms); {}",
        fixed(f.fit.intercept, 2),
        fixed(1000.0 * f.fit.slope, 3),
        fixed(1000.0 * f.low, 3),
        fixed(1000.0 * f.high, 3),
        parts.join("; ")
    );
    let outcome = match f.decided() {
        Mechanism::NoOverhead => Outcome::does_not_reproduce(
            "more steps do not take more time: the time per step's overhead is not above zero",
        ),
        Mechanism::OverheadOpen => Outcome::inconclusive(format!(
            "a per-step overhead of {} ms",
            fixed(1000.0 * f.t * f.fit.slope_se, 3)
        )),
        Mechanism::Overhead(decided) => match sameness(
            decided,
            "the time lies off the steps line",
            format!(
                "a departure from the steps line of ±{:.1}% against a margin of ±{:.0}%",
                100.0 * f.widest.exp_m1(),
                100.0 * tolerance
            ),
        ) {
            Outcome::DoesNotReproduce { why } => Outcome::partly(format!(
                "more steps take more time, but {why}: the steps explain only part of it"
            )),
            other => other,
        },
    };
    Judged {
        outcome,
        measured: format!("relative to the line through every seed: {measured}"),
        quantities: vec![
            ("seconds_per_step", f.fit.slope),
            ("seconds_per_step_low95", f.low),
            ("seconds_per_step_high95", f.high),
            ("tolerance", tolerance),
        ],
        reading: None,
    }
}

/// Training time predicted from the step time.
pub(super) fn predicted(p: &Predicted, tolerance: f64) -> Judged {
    let (low, high) = p.size.interval90();
    let pct = |x: f64| format!("{:.1}%", 100.0 * (x.exp() - 1.0));
    let signed_pct = |x: f64| format!("{:+.1}%", 100.0 * (x.exp() - 1.0));
    let measured = format!(
        "mean size of the error {} (90% interval {} to {}) over {} cells; mean signed error {}; the largest {}",
        pct(p.size.diff),
        pct(low),
        pct(high),
        p.cells,
        signed_pct(p.signed.diff),
        fixed(100.0 * (p.largest.exp() - 1.0), 1) + "%"
    );
    let within = format!("{:.0}%", 100.0 * tolerance);
    let outcome = match p.decided {
        Decision::Shown => {
            Outcome::reproduces_with(format!("off by less than {within} on average"))
        }
        Decision::Refuted => Outcome::does_not_reproduce(format!(
            "the prediction is off by more than {within} on average"
        )),
        Decision::Open => Outcome::inconclusive(format!(
            "a mean error of {within} either way lies inside the interval ({} to {})",
            pct(low),
            pct(high)
        )),
    };
    Judged {
        outcome,
        measured,
        quantities: vec![
            ("mean_abs_log_error", p.size.diff),
            ("abs_log_error_low90", low),
            ("abs_log_error_high90", high),
            ("mean_log_error", p.signed.diff),
            ("tolerance", tolerance),
            ("cells", p.cells as f64),
        ],
        reading: None,
    }
}
