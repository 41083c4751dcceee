//! The claims that compare this curve with another model's, measured on the same machine:
//! "fluctuates more than" and "slightly slower than".

use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::stats::{bootstrap_median_ci, bootstrap_median_ratio_ci, MAD_TO_SD};
use batchlab_method::tests_of_claims::{increase, non_inferiority, Arm, Decision, Difference};

use super::super::analysis::Analysis;
use super::SEEDS;
use crate::jumps::scatter;

/// The reference curve of a comparison claim: its experiment and, if a report of it was found,
/// what the rules compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The reference experiment, e.g. `vgg16-step-time-cpu`.
    pub experiment: String,
    /// The run of it compared against (its directory name), if one was found.
    pub run: Option<String>,
    /// Its curve, or why there is none.
    pub curve: Result<ReferenceCurve, String>,
}

/// What the comparison rules read of the reference curve, analysed from its own raw rows
/// exactly as its report analyses them.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceCurve {
    /// Its [`crate::jumps::relative_offsets`].
    pub scatter_values: Vec<f64>,
    /// (batch size, median ms) at its ok batch sizes.
    pub medians: Vec<(u32, f64)>,
}

impl Reference {
    /// "vgg16-step-time-cpu (run 2026..., this machine)".
    fn named(&self) -> String {
        match &self.run {
            Some(run) => format!("{} (run {run}, this machine)", self.experiment),
            None => self.experiment.clone(),
        }
    }
}

pub(super) fn fluctuates_more(a: &Analysis, reference: &Reference, seed: u64) -> Finding {
    let claim = ClaimText::new(
        format!(
            "Its step time fluctuates more (than {})",
            reference.experiment
        ),
        SEEDS,
    );
    let test = "Fluctuation = the robust scale (1.4826 x median) of |median - the line through its two neighbours| / (its standard deviation under pure noise) / step time, over the interior batch sizes: the typical noise of one median as a fraction of the step time, blind to the trend and to a few jumps. The ratio of this curve's fluctuation to the reference's with its 95% bootstrap interval (2000 resamples, each curve's batch sizes resampled from its own stream). Reproduces if the interval lies above 1, does not reproduce if it lies below 1, inconclusive otherwise";
    let here = interval(&a.scatter_values, seed);
    let there = match &reference.curve {
        Ok(curve) => interval(&curve.scatter_values, seed),
        Err(why) => {
            return Finding::new(
                claim,
                "fluctuates-more",
                Outcome::cannot_test(why.clone()),
                format!("here {}", percent(here)),
                test,
            )
        }
    };
    let reference_values = reference
        .curve
        .as_ref()
        .map(|c| c.scatter_values.as_slice())
        .unwrap_or_default();
    let ratio = match (here, there) {
        (Some(h), Some(t)) => {
            let (lo, hi) =
                bootstrap_median_ratio_ci(&a.scatter_values, reference_values, 2000, 0.95, seed);
            Some((h.0 / t.0, lo, hi))
        }
        _ => None,
    };
    let outcome = match ratio {
        Some((_, lo, _)) if lo > 1.0 => Outcome::reproduces(),
        Some((_, _, hi)) if hi < 1.0 => Outcome::does_not_reproduce(format!(
            "it fluctuates less than {}",
            reference.experiment
        )),
        Some((_, lo, hi)) => Outcome::inconclusive(format!(
            "a ratio of the fluctuations beyond {:.2}x either way (the interval's half-width on the log scale)",
            ((hi / lo).ln() / 2.0).exp()
        )),
        None => Outcome::cannot_test("fewer than three interior batch sizes"),
    };
    let measured = format!(
        "here {}; {} {}{}",
        percent(here),
        reference.named(),
        percent(there),
        ratio.map_or(String::new(), |(r, lo, hi)| format!(
            "; ratio {r:.2} (95% interval {lo:.2}–{hi:.2})"
        ))
    );
    let values = |v: Option<(f64, f64, f64)>, prefix: &'static [&'static str; 3]| {
        v.map(|(s, l, h)| [(prefix[0], s), (prefix[1], l), (prefix[2], h)])
            .into_iter()
            .flatten()
    };
    Finding::new(claim, "fluctuates-more", outcome, measured, test).with_quantities(
        values(here, &["scatter", "scatter_low95", "scatter_high95"])
            .chain(values(
                there,
                &["reference_scatter", "reference_low95", "reference_high95"],
            ))
            .chain(values(ratio, &["ratio", "ratio_low95", "ratio_high95"])),
    )
}

/// (scatter, low, high) of the 95% bootstrap interval, as fractions.
fn interval(values: &[f64], seed: u64) -> Option<(f64, f64, f64)> {
    let s = scatter(values);
    if !s.is_finite() {
        return None;
    }
    let (low, high) = bootstrap_median_ci(values, 2000, 0.95, seed);
    Some((s, MAD_TO_SD * low, MAD_TO_SD * high))
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

/// "Slightly slower": the log of this curve's median over the reference's at each batch size
/// both swept, averaged (a geometric mean ratio) with a t interval over the batch sizes.
pub(super) fn slower_than(a: &Analysis, reference: &Reference, max_ratio: f64) -> Finding {
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
    let common = match &reference.curve {
        Ok(curve) => log_ratios(a, &curve.medians),
        Err(why) => {
            let outcome = Outcome::cannot_test(why.clone());
            return Finding::new(claim, "slower-than", outcome, "no reference", test);
        }
    };
    let Some(d) = Difference::one_sample(Arm::of(&common.iter().map(|c| c.1).collect::<Vec<_>>()))
    else {
        let outcome = Outcome::cannot_test(format!(
            "{} batch sizes measured by both sweeps; the rule needs 2",
            common.len()
        ));
        return Finding::new(
            claim,
            "slower-than",
            outcome,
            "too few common batch sizes",
            test,
        );
    };
    let (low, high) = d.interval90();
    let (ratio, lo, hi) = (d.diff.exp(), low.exp(), high.exp());
    let (min, max) = common
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(m, x), c| {
            (m.min(c.1.exp()), x.max(c.1.exp()))
        });
    let measured = format!(
        "{ratio:.3}x {} (90% interval {lo:.3}–{hi:.3}) over {} common batch sizes {}–{}; per batch size {min:.3}–{max:.3}x",
        reference.named(),
        common.len(),
        common[0].0,
        common[common.len() - 1].0,
    );
    // Slightly: the ratio stays below max_ratio, i.e. the reference's log is not more than
    // ln(max_ratio) below this one's (a non-inferiority test of -log ratio).
    let slightly = non_inferiority(&Difference { diff: -d.diff, ..d }, max_ratio.ln());
    let outcome = match (increase(&d), slightly) {
        (Decision::Shown, Decision::Shown) => Outcome::reproduces(),
        (Decision::Refuted, _) => {
            Outcome::does_not_reproduce(format!("it is faster than {}", reference.experiment))
        }
        (_, Decision::Refuted) => Outcome::does_not_reproduce(format!(
            "it is more than {max_ratio:.2}x as slow: not slightly"
        )),
        _ => Outcome::inconclusive(format!(
            "a ratio within a factor of {:.3} of the one measured",
            (high - d.diff).exp()
        )),
    };
    Finding::new(claim, "slower-than", outcome, measured, test).with_quantities([
        ("ratio", ratio),
        ("ratio_low90", lo),
        ("ratio_high90", hi),
        ("max_ratio", max_ratio),
        ("common_batch_sizes", common.len() as f64),
    ])
}

/// (batch size, ln(this median / the reference's)) at the ok batch sizes both curves have.
fn log_ratios(a: &Analysis, reference: &[(u32, f64)]) -> Vec<(u32, f64)> {
    a.findings
        .ok_points()
        .filter_map(|p| {
            let (_, there) = reference.iter().find(|(b, _)| *b == p.batch_size)?;
            let r = (p.median_ms / there).ln();
            r.is_finite().then_some((p.batch_size, r))
        })
        .collect()
}
