//! The linear, comparison and local-minimum claims in words: each reading the rules decided
//! (`linearity`, `versus`, `minimum`), worded as a `Finding`.

use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::tests_of_claims::Decision;

use super::autotune::{Speedup, SpeedupDecision};
use super::minimum::Minimum;
use super::versus::{Fluctuation, Reference, Slowdown, SlowerDecision};
use super::{Linearity, MarginalCost, MIN_HALF, SEEDS};
use crate::verdict::{local_minimum_outcome, local_minimum_quantities};

/// "Its step time fluctuates more (than the reference)".
pub(super) fn fluctuates_more(reading: &Fluctuation, reference: &Reference) -> Finding {
    let claim = ClaimText::new(
        format!(
            "Its step time fluctuates more (than {})",
            reference.experiment
        ),
        SEEDS,
    );
    let test = "Fluctuation = the robust scale (1.4826 x median) of |median - the line through its two neighbours| / (its standard deviation under pure noise) / step time, over the interior batch sizes: the typical noise of one median as a fraction of the step time, blind to the trend and to a few jumps. The ratio of this curve's fluctuation to the reference's with its 95% bootstrap interval (2000 resamples, each curve's batch sizes resampled from its own stream). Reproduces if the interval lies above 1, does not reproduce if it lies below 1, inconclusive otherwise";
    let there = match &reading.there {
        Ok(there) => *there,
        Err(why) => {
            return Finding::new(
                claim,
                "fluctuates-more",
                Outcome::cannot_test(why.clone()),
                format!("here {}", percent(reading.here)),
                test,
            )
        }
    };
    let outcome = match (reading.ratio, reading.decided) {
        (None, _) => Outcome::cannot_test("fewer than three interior batch sizes"),
        (Some(_), Decision::Shown) => Outcome::reproduces(),
        (Some(_), Decision::Refuted) => Outcome::does_not_reproduce(format!(
            "it fluctuates less than {}",
            reference.experiment
        )),
        (Some((_, lo, hi)), Decision::Open) => Outcome::inconclusive(format!(
            "a ratio of the fluctuations beyond {:.2}x either way (the interval's half-width on the log scale)",
            ((hi / lo).ln() / 2.0).exp()
        )),
    };
    let measured = format!(
        "here {}; {} {}{}",
        percent(reading.here),
        named(reference),
        percent(there),
        reading.ratio.map_or(String::new(), |(r, lo, hi)| format!(
            "; ratio {r:.2} (95% interval {lo:.2}–{hi:.2})"
        ))
    );
    let values = |v: Option<(f64, f64, f64)>, prefix: &'static [&'static str; 3]| {
        v.map(|(s, l, h)| [(prefix[0], s), (prefix[1], l), (prefix[2], h)])
            .into_iter()
            .flatten()
    };
    Finding::new(claim, "fluctuates-more", outcome, measured, test).with_quantities(
        values(
            reading.here,
            &["scatter", "scatter_low95", "scatter_high95"],
        )
        .chain(values(
            there,
            &["reference_scatter", "reference_low95", "reference_high95"],
        ))
        .chain(values(
            reading.ratio,
            &["ratio", "ratio_low95", "ratio_high95"],
        )),
    )
}

fn percent(v: Option<(f64, f64, f64)>) -> String {
    v.map_or("not measured".into(), |(s, l, h)| {
        format!(
            "{:.2}% of the step time (95% interval {:.2}–{:.2}%)",
            100.0 * s,
            100.0 * l,
            100.0 * h
        )
    })
}

/// "Its step time is slightly longer (than the reference)", by the stated `max_ratio`.
pub(super) fn slower_than(reading: &Slowdown, reference: &Reference, max_ratio: f64) -> Finding {
    let claim = ClaimText::new(
        format!(
            "Its step time is slightly longer (than {})",
            reference.experiment
        ),
        SEEDS,
    );
    let test = format!(
        "Ratio of the step times: at each batch size both sweeps measured (ok), the log of this median over the reference's; their mean (a geometric-mean ratio) with a 90% t interval over the batch sizes. Slower: the interval lies above 1 (one one-sided test at 5%); slightly: it lies below {max_ratio:.2} (a stated convention: less than half again as long). Reproduces when both hold, does not reproduce when the interval lies wholly below 1 or wholly above {max_ratio:.2}, inconclusive otherwise. Both curves come from back-to-back runs on one machine; a drift of the machine between them is read as a difference of the models"
    );
    match *reading {
        Slowdown::NoReference(ref why) => {
            let outcome = Outcome::cannot_test(why.clone());
            Finding::new(claim, "slower-than", outcome, "no reference", test)
        }
        Slowdown::TooFewCommon(n) => {
            let outcome = Outcome::cannot_test(format!(
                "{n} batch sizes measured by both sweeps; the rule needs 2"
            ));
            Finding::new(
                claim,
                "slower-than",
                outcome,
                "too few common batch sizes",
                test,
            )
        }
        Slowdown::Measured {
            ratio,
            low,
            high,
            min,
            max,
            common,
            first,
            last,
            decided,
        } => {
            let measured = format!(
                "{ratio:.3}x {} (90% interval {low:.3}–{high:.3}) over {common} common batch sizes {first}–{last}; per batch size {min:.3}–{max:.3}x",
                named(reference),
            );
            let outcome = match decided {
                SlowerDecision::Slightly => Outcome::reproduces(),
                SlowerDecision::Faster => Outcome::does_not_reproduce(format!(
                    "it is faster than {}",
                    reference.experiment
                )),
                SlowerDecision::TooSlow => Outcome::does_not_reproduce(format!(
                    "it is more than {max_ratio:.2}x as slow: not slightly"
                )),
                SlowerDecision::Open { factor } => Outcome::inconclusive(format!(
                    "a ratio within a factor of {factor:.3} of the one measured"
                )),
            };
            Finding::new(claim, "slower-than", outcome, measured, test).with_quantities([
                ("ratio", ratio),
                ("ratio_low90", low),
                ("ratio_high90", high),
                ("max_ratio", max_ratio),
                ("common_batch_sizes", common as f64),
            ])
        }
    }
}

/// "The step time grows linearly with batch size", within the relative `margin`.
pub(super) fn linear(reading: &Linearity, margin: f64) -> Finding {
    let claim = ClaimText::new("The step time grows linearly with batch size", SEEDS);
    let test = format!(
        "Constant marginal cost: least-squares lines through the medians of the lower and the upper half of the ok batch sizes (at least {MIN_HALF} each); the step time grows linearly when the upper half's cost per extra example is within ±{:.0}% of the lower half's. Two one-sided tests on the log of their ratio (90% interval, delta method, t with the halves' residual degrees of freedom): reproduces when the interval lies inside the margin, does not reproduce when it lies wholly outside, inconclusive otherwise. Jumps inflate the halves' residuals and so widen the interval; R² is not used (it grows with the range of batch sizes)",
        100.0 * margin
    );
    let (low, high, spans, whole, decided) = match *reading {
        Linearity::TooFew { ok } => {
            return Finding::new(
                claim,
                "linear",
                Outcome::cannot_test(format!(
                    "{ok} ok batch sizes; the rule needs {} ({MIN_HALF} per half)",
                    2 * MIN_HALF
                )),
                "too few batch sizes for two lines",
                test,
            )
        }
        Linearity::NoLines => {
            return Finding::new(
                claim,
                "linear",
                Outcome::cannot_test("a half of the sweep has no line with a standard error"),
                "no lines",
                test,
            )
        }
        Linearity::Measured {
            low,
            high,
            spans,
            whole,
            decided,
        } => (low, high, spans, whole, decided),
    };
    let measured = format!(
        "{:.3} ms per example over {}–{}, {:.3} over {}–{}; the whole line {:.1} ms + {:.3} ms per example (R² {:.4})",
        low.slope,
        spans[0].0,
        spans[0].1,
        high.slope,
        spans[1].0,
        spans[1].1,
        whole.map_or(f64::NAN, |f| f.intercept),
        whole.map_or(f64::NAN, |f| f.slope),
        whole.map_or(f64::NAN, |f| f.r_squared),
    );
    let quantities = [
        ("slope_low_ms_per_example", low.slope),
        ("slope_high_ms_per_example", high.slope),
        ("slope_low_se", low.slope_se),
        ("slope_high_se", high.slope_se),
        ("margin", margin),
    ];
    match decided {
        MarginalCost::NotPositive { refuted, bound } => {
            let outcome = if refuted {
                Outcome::does_not_reproduce("the step time does not grow over a half of the sweep")
            } else {
                Outcome::inconclusive(format!(
                    "a half's cost per example bounded within ±{bound:.3} ms"
                ))
            };
            Finding::new(claim, "linear", outcome, measured, test).with_quantities(quantities)
        }
        MarginalCost::Ratio {
            ratio,
            low: lo,
            high: hi,
            half_width,
            decided,
        } => {
            let interval = format!("ratio {ratio:.2} (90% interval {lo:.2}–{hi:.2})");
            let outcome = match decided {
                Decision::Shown => {
                    Outcome::reproduces_with(format!("{interval}, within ±{:.0}%", 100.0 * margin))
                }
                Decision::Refuted => Outcome::does_not_reproduce(format!(
                    "the marginal cost {} across the sweep: {interval}",
                    if ratio > 1.0 { "grows" } else { "falls" }
                )),
                Decision::Open => Outcome::inconclusive(format!(
                    "a change of the marginal cost by a factor of {:.2} either way",
                    half_width.exp()
                )),
            };
            Finding::new(
                claim,
                "linear",
                outcome,
                format!("{measured}; {interval}"),
                test,
            )
            .with_quantities(quantities)
            .with_quantities([
                ("ratio", ratio),
                ("ratio_low90", lo),
                ("ratio_high90", hi),
            ])
        }
    }
}

/// "vgg16-step-time-cpu (run 2026..., this machine)".
fn named(reference: &Reference) -> String {
    match &reference.run {
        Some(run) => format!("{} (run {run}, this machine)", reference.experiment),
        None => reference.experiment.clone(),
    }
}

/// "One below or one above `at` is slower": the time per example of `below` and `above`
/// against `at`'s (`analysis.local_minimum_at`).
pub(super) fn local_minimum(reading: &Minimum, [below, at, above]: [u32; 3]) -> Finding {
    let claim = ClaimText::new(
        format!("A batch of {below} or of {above} takes longer per example than one of {at}"),
        "analysis.local_minimum_at",
    );
    let test = format!(
        "Time per example (a visit's median step time over its batch size) at {below} and at {above} against {at}'s, paired by round (each round visits every batch size once, in a shuffled order): per round, ln of the neighbour's over {at}'s; their mean over the rounds with a one-sample t. Reproduces when both neighbours are slower (each one-sided 95% lower bound above zero: both must hold, an intersection-union test at 5%), does not reproduce when a neighbour is faster (its upper bound at 2.5% below zero: the 5% shared between the two sides), inconclusive otherwise"
    );
    let rule = "local-minimum-at";
    let (at_ms, sides, decided, faster) = match reading {
        Minimum::NotMeasured(missing) => {
            let why = format!(
                "batch size {} not measured (no ok visit in the sweep)",
                crate::markdown::and_list(&missing.iter().map(u32::to_string).collect::<Vec<_>>())
            );
            return Finding::new(claim, rule, Outcome::cannot_test(why), "not measured", test);
        }
        Minimum::TooFewRounds { batch_size, rounds } => {
            let why = format!(
                "{batch_size} and {at} share {rounds} ok rounds; the rule needs 2 (a spread between rounds)"
            );
            return Finding::new(
                claim,
                rule,
                Outcome::cannot_test(why),
                "too few rounds",
                test,
            );
        }
        Minimum::Measured {
            at_ms,
            sides,
            decided,
            faster,
            ..
        } => (*at_ms, sides, *decided, faster),
    };
    let pct = |x: f64| 100.0 * x.exp_m1();
    let per_side: Vec<String> = sides
        .iter()
        .map(|s| {
            let (low, high) = s.difference.interval90();
            format!(
                "{} ({:.2} ms a step): {:+.1}% per example against {at} (90% interval {:+.1}% to {:+.1}%, {} rounds)",
                s.batch_size,
                s.median_ms,
                pct(s.difference.diff),
                pct(low),
                pct(high),
                s.rounds
            )
        })
        .collect();
    let measured = format!("{at}: {at_ms:.2} ms a step; {}", per_side.join("; "));
    let numbers: Vec<_> = sides.iter().map(|s| (s.batch_size, s.difference)).collect();
    let words = [" per example", "is"];
    let outcome = local_minimum_outcome(at, &numbers, faster, decided, words);
    let quantities = local_minimum_quantities(&numbers);
    Finding::new(claim, rule, outcome, measured, test)
        .with_quantities([("at", f64::from(at)), ("at_ms", at_ms)])
        .with_quantities(quantities)
}

/// "Training is slightly faster in cuDNN's benchmark mode" (seed 002), by the stated `margin`
/// and largest slight gain.
pub(super) fn autotune_faster(reading: &Speedup, margin: f64, max_gain: f64) -> Finding {
    let claim = ClaimText::new(
        "Training can be slightly faster with torch.backends.cudnn.benchmark = True",
        "seed 002",
    );
    let test = format!(
        "The same go's PyTorch references of this sweep on the same card, cuDNN's defaults (pytorch.csv) against its benchmark mode (pytorch-cudnn-benchmark.csv): at each batch size both measured (ok), the log of the default median over the benchmark mode's; their mean with a 90% t interval over the batch sizes, read as the gain 1 - benchmark / default. Faster: the gain's lower bound reaches {:.0}%; slightly: its upper bound stays below {:.0}% (stated conventions, claims/registry.toml). Reproduces when both hold, does not reproduce when the gain is bounded below {:.0}% or above {:.0}%, inconclusive otherwise. The two references ran one after the other, not interleaved: a drift of the card between them is read as the setting's",
        100.0 * margin,
        100.0 * max_gain,
        100.0 * margin,
        100.0 * max_gain
    );
    let rule = "autotune-faster";
    match *reading {
        Speedup::Missing(ref why) => Finding::new(
            claim,
            rule,
            Outcome::cannot_test(why.clone()),
            "no pair",
            test,
        ),
        Speedup::TooFewCommon(n) => {
            let outcome = Outcome::cannot_test(format!(
                "{n} batch sizes measured by both references; the rule needs 2"
            ));
            Finding::new(claim, rule, outcome, "too few common batch sizes", test)
        }
        Speedup::Measured {
            gain,
            low,
            high,
            common,
            first,
            last,
            decided,
        } => {
            let measured = format!(
                "benchmark mode {:+.1}% faster (90% interval {:+.1}% to {:+.1}%) over {common} common batch sizes {first}–{last}",
                100.0 * gain,
                100.0 * low,
                100.0 * high
            );
            let outcome = match decided {
                SpeedupDecision::Slightly => Outcome::reproduces(),
                SpeedupDecision::NoGain => Outcome::does_not_reproduce(format!(
                    "the gain is bounded below {:.0}%",
                    100.0 * margin
                )),
                SpeedupDecision::TooLarge => Outcome::does_not_reproduce(format!(
                    "the gain is bounded above {:.0}%: not slight",
                    100.0 * max_gain
                )),
                SpeedupDecision::Open { detectable } => {
                    Outcome::inconclusive(format!("a gain of {:.1}%", 100.0 * detectable))
                }
            };
            Finding::new(claim, rule, outcome, measured, test).with_quantities([
                ("gain", gain),
                ("gain_low90", low),
                ("gain_high90", high),
                ("margin", margin),
                ("max_gain", max_gain),
                ("common_batch_sizes", common as f64),
            ])
        }
    }
}
