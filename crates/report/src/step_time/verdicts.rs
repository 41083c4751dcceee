//! The verdict on each of seeds 000/001's claims that a step-time sweep can test, by a rule
//! that fits the claim: "grows linearly" by a constant marginal cost (the two halves of the
//! sweep cost the same per extra example, within a margin); "jumps at 16, 32, 48 and 64" by a
//! one-sided test at each position named in advance, beside the named gaps' rank among all
//! gaps; "no jumps at ..." as a claim of absence, within a margin; "fluctuates more" against a
//! reference curve measured on the same machine.

use batchlab_method::findings::{ClaimText, Finding, Outcome};
use batchlab_method::stats::{bootstrap_median_ci, linear_fit, LinearFit, MAD_TO_SD};
use batchlab_method::tests_of_claims::{critical, named_position_z, named_rank_p, ALPHA};

use super::analysis::Analysis;
use super::StepTimeContext;
use crate::jumps::{scatter, Jump, JumpOptions};
use crate::markdown::and_list;

/// The source every step-time claim comes from.
const SEEDS: &str = "seeds 000/001";

/// Fewest ok batch sizes in each half of the sweep for the marginal-cost test: a line through
/// four points has two residual degrees of freedom.
const MIN_HALF: usize = 4;

/// Random sets of gaps the named positions' rank is compared with.
const RANK_RESAMPLES: usize = 10_000;

/// The rules' parameters a config (or the claims registry) sets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTimeRules {
    /// "Grows linearly": the largest relative change of the marginal cost (ms per extra
    /// example) between the lower and the upper half of the sweep that still counts as linear.
    pub linear_margin: f64,
    /// "No jumps at ...": the largest step, relative to the step time, that still counts as
    /// no jump.
    pub no_jumps_margin: f64,
}

impl Default for StepTimeRules {
    /// The parameters claims/registry.toml gives the seeds' claims, with their provenance.
    fn default() -> Self {
        StepTimeRules {
            linear_margin: 0.25,
            no_jumps_margin: JumpOptions::default().min_relative,
        }
    }
}

/// The reference curve of a fluctuation claim: its experiment and its scatter values, if a
/// report of it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct FluctuationReference {
    /// The reference experiment, e.g. `vgg16-step-time-cpu`.
    pub experiment: String,
    /// The run of it compared against (its directory name), if one was found.
    pub run: Option<String>,
    /// Its curve's [`crate::jumps::relative_offsets`], or why there are none.
    pub scatter_values: Result<Vec<f64>, String>,
}

/// Every claim the config names, judged.
pub(super) fn judge(
    ctx: &StepTimeContext,
    a: &Analysis,
    reference: Option<&FluctuationReference>,
) -> Vec<Finding> {
    let opts = JumpOptions::default();
    // The seeds' first claim is about step time in general: every sweep can judge it.
    let mut findings = vec![linear(a, ctx.rules.linear_margin)];
    if !ctx.claimed_jumps.is_empty() {
        findings.push(jumps_at(a, &ctx.claimed_jumps, &opts, ctx.seed));
    }
    if !ctx.no_jumps_at.is_empty() {
        findings.push(no_jumps_at(a, &ctx.no_jumps_at, ctx.rules.no_jumps_margin));
    }
    if let Some(reference) = reference {
        findings.push(fluctuates_more(a, reference, ctx.seed));
    }
    findings
}

/// The line through one half of the ok medians.
fn half_fit(x: &[f64], y: &[f64]) -> Option<LinearFit> {
    linear_fit(x, y).filter(|f| f.slope_se.is_finite())
}

fn linear(a: &Analysis, margin: f64) -> Finding {
    let claim = ClaimText::new("The step time grows linearly with batch size", SEEDS);
    let test = format!(
        "Constant marginal cost: least-squares lines through the medians of the lower and the upper half of the ok batch sizes (at least {MIN_HALF} each); the step time grows linearly when the upper half's cost per extra example is within ±{:.0}% of the lower half's. Two one-sided tests on the log of their ratio (90% interval, delta method, t with the halves' residual degrees of freedom): reproduces when the interval lies inside the margin, does not reproduce when it lies wholly outside, inconclusive otherwise. Jumps inflate the halves' residuals and so widen the interval; R² is not used (it grows with the range of batch sizes)",
        100.0 * margin
    );
    let ok: Vec<_> = a.findings.ok_points().collect();
    let half = ok.len() / 2;
    if half < MIN_HALF {
        return Finding::new(
            claim,
            "linear",
            Outcome::cannot_test(format!(
                "{} ok batch sizes; the rule needs {} ({MIN_HALF} per half)",
                ok.len(),
                2 * MIN_HALF
            )),
            "too few batch sizes for two lines",
            test,
        );
    }
    let x: Vec<f64> = ok.iter().map(|p| f64::from(p.batch_size)).collect();
    let y: Vec<f64> = ok.iter().map(|p| p.median_ms).collect();
    let (Some(low), Some(high)) = (
        half_fit(&x[..half], &y[..half]),
        half_fit(&x[half..], &y[half..]),
    ) else {
        return Finding::new(
            claim,
            "linear",
            Outcome::cannot_test("a half of the sweep has no line with a standard error"),
            "no lines",
            test,
        );
    };
    let measured = format!(
        "{:.3} ms per example over {}–{}, {:.3} over {}–{}; the whole line {:.1} ms + {:.3} ms per example (R² {:.4})",
        low.slope,
        ok[0].batch_size,
        ok[half - 1].batch_size,
        high.slope,
        ok[half].batch_size,
        ok[ok.len() - 1].batch_size,
        a.findings.fit.map_or(f64::NAN, |f| f.intercept),
        a.findings.fit.map_or(f64::NAN, |f| f.slope),
        a.findings.fit.map_or(f64::NAN, |f| f.r_squared),
    );
    let quantities = [
        ("slope_low_ms_per_example", low.slope),
        ("slope_high_ms_per_example", high.slope),
        ("slope_low_se", low.slope_se),
        ("slope_high_se", high.slope_se),
        ("margin", margin),
    ];
    if low.slope <= 0.0 || high.slope <= 0.0 {
        let outcome =
            Outcome::does_not_reproduce("the step time does not grow over a half of the sweep");
        return Finding::new(claim, "linear", outcome, measured, test).with_quantities(quantities);
    }
    let ratio = high.slope / low.slope;
    let se = ((low.slope_se / low.slope).powi(2) + (high.slope_se / high.slope).powi(2)).sqrt();
    let df = (half - 2).min(ok.len() - half - 2) as f64;
    let half_width = critical(ALPHA, df) * se;
    let (lo, hi) = (
        (ratio.ln() - half_width).exp(),
        (ratio.ln() + half_width).exp(),
    );
    let bound = (1.0 + margin).ln();
    let interval = format!("ratio {ratio:.2} (90% interval {lo:.2}–{hi:.2})");
    let outcome = if lo.ln() > -bound && hi.ln() < bound {
        Outcome::reproduces_with(format!("{interval}, within ±{:.0}%", 100.0 * margin))
    } else if hi.ln() < -bound || lo.ln() > bound {
        Outcome::does_not_reproduce(format!(
            "the marginal cost {} across the sweep: {interval}",
            if ratio > 1.0 { "grows" } else { "falls" }
        ))
    } else {
        Outcome::inconclusive(format!(
            "a change of the marginal cost by a factor of {:.2} either way",
            half_width.exp()
        ))
    };
    Finding::new(
        claim,
        "linear",
        outcome,
        format!("{measured}; {interval}"),
        test,
    )
    .with_quantities(quantities)
    .with_quantities([("ratio", ratio), ("ratio_low90", lo), ("ratio_high90", hi)])
}

/// The gap that tests a named position: of the tested gaps touching it, the one with the
/// larger z (a jump "at 16" may be 15 -> 16 or 16 -> 17), and its index among all gaps.
fn gap_at(a: &Analysis, b: u32) -> Option<(usize, &Jump)> {
    a.gaps
        .iter()
        .enumerate()
        .filter(|(_, g)| g.previous_batch_size <= b && b <= g.batch_size)
        .max_by(|x, y| x.1.z.total_cmp(&y.1.z))
}

/// Whether the rise at gap `i` is a spike rather than a step: the next gap falls back by at
/// least half of it, itself clearly (one slow batch size, not a change of level).
fn is_spike(a: &Analysis, i: usize, z_needed: f64) -> bool {
    let (rise, next) = (&a.gaps[i], a.gaps.get(i + 1));
    next.is_some_and(|n| {
        n.previous_batch_size == rise.batch_size
            && n.z <= -z_needed
            && -n.height_ms >= rise.height_ms / 2.0
    })
}

fn jumps_at(a: &Analysis, claimed: &[u32], opts: &JumpOptions, seed: u64) -> Finding {
    let claim = ClaimText::new(
        format!("The step time jumps at {}", list(claimed)),
        format!("{SEEDS}, on GPUs"),
    );
    // Each position is looked at through up to two gaps: the family is all of them.
    let z_needed = named_position_z(2 * claimed.len());
    let mut measured = vec![];
    let (mut passed, mut tested, mut indices) = (vec![], vec![], vec![]);
    let mut detectable: f64 = 0.0;
    for &b in claimed {
        let Some((i, g)) = gap_at(a, b) else {
            measured.push(format!(
                "{b}: not tested (outside the ok batch sizes or at an end)"
            ));
            continue;
        };
        tested.push(b);
        indices.push(i);
        let per_z = if g.z != 0.0 {
            (g.relative / g.z).abs()
        } else {
            0.0
        };
        detectable = detectable.max((z_needed * per_z).max(opts.min_relative));
        let spike = is_spike(a, i, z_needed);
        let passes = g.z >= z_needed && g.relative >= opts.min_relative && !spike;
        if passes {
            passed.push(b);
        }
        measured.push(format!(
            "{b}: {} → {} {:+.1}% (z {:.1}){}{}",
            g.previous_batch_size,
            g.batch_size,
            100.0 * g.relative,
            g.z,
            if passes { ", a jump" } else { "" },
            if spike {
                ", a spike (the next gap falls back)"
            } else {
                ""
            }
        ));
    }
    let z_all: Vec<f64> = a.gaps.iter().map(|g| g.z).collect();
    let rank_p = named_rank_p(&z_all, &indices, RANK_RESAMPLES, seed);
    if let Some(p) = rank_p {
        measured.push(format!(
            "the named gaps' z summed against {RANK_RESAMPLES} random sets of {} of the {} gaps: p = {p:.4}",
            indices.len(),
            z_all.len()
        ));
    }
    let outcome = if tested.is_empty() {
        Outcome::cannot_test("no claimed position inside the sweep")
    } else if passed.len() == tested.len() {
        Outcome::reproduces_with(format!(
            "a jump at each of the {} named positions",
            tested.len()
        ))
    } else if passed.is_empty() {
        Outcome::does_not_reproduce(format!(
            "no jump at any named position; jumps above {:.1}% would have been seen",
            100.0 * detectable
        ))
    } else {
        Outcome::partly(format!(
            "a jump at {} of {} named positions",
            passed.len(),
            tested.len()
        ))
    };
    let test = format!(
        "A one-sided test at each position named in advance: of the gaps touching it, the one with the larger z (the detector's step statistic, method below) must reach z >= {z_needed:.2} (5% over the {} gaps looked at, Bonferroni; not the search-wide 5 meant for every gap) and at least {:.0}% of the step time (the detector's size floor), and not be a spike (the next gap falling back by half of it, clearly). Reproduces if every tested position passes, partly if some, does not reproduce if none. At this noise steps above {:.1}% could pass. Beside it, a permutation test of how the named gaps rank among all gaps. This judges the jumps, not the seed's explanation of them (PCIe lanes)",
        2 * claimed.len(),
        100.0 * opts.min_relative,
        100.0 * detectable
    );
    Finding::new(claim, "jumps-at", outcome, measured.join("; "), test).with_quantities(
        [("z_needed", z_needed), ("detectable_relative", detectable)]
            .into_iter()
            .chain(rank_p.map(|p| ("rank_p", p))),
    )
}

fn no_jumps_at(a: &Analysis, positions: &[u32], margin: f64) -> Finding {
    let claim = ClaimText::new(
        format!("No jumps at {} (unlike VGG)", list(positions)),
        SEEDS,
    );
    // Absence at every position is an intersection of one-sided tests: no correction needed.
    let z = named_position_z(1);
    let mut measured = vec![];
    let (mut shown, mut refuted, mut tested) = (0, 0, 0);
    let mut widest: f64 = 0.0;
    for &b in positions {
        let Some((_, g)) = gap_at(a, b) else {
            measured.push(format!("{b}: not tested"));
            continue;
        };
        tested += 1;
        let se = if g.z != 0.0 {
            (g.relative / g.z).abs()
        } else {
            0.0
        };
        let (lo, hi) = (g.relative - z * se, g.relative + z * se);
        widest = widest.max(z * se);
        if hi < margin && lo > -margin {
            shown += 1;
        } else if lo > margin {
            refuted += 1;
        }
        measured.push(format!(
            "{b}: {} → {} {:+.1}% (90% interval {:+.1}% to {:+.1}%)",
            g.previous_batch_size,
            g.batch_size,
            100.0 * g.relative,
            100.0 * lo,
            100.0 * hi
        ));
    }
    let outcome = if tested == 0 {
        Outcome::cannot_test("no named position inside the sweep")
    } else if refuted > 0 {
        Outcome::does_not_reproduce(format!(
            "a step above {:.0}% at {refuted} of {tested} positions",
            100.0 * margin
        ))
    } else if shown == tested {
        Outcome::reproduces_with(format!("every step within ±{:.0}%", 100.0 * margin))
    } else {
        Outcome::inconclusive(format!(
            "a step's 90% interval is ±{:.1}% of the step time; the margin is ±{:.0}%",
            100.0 * widest,
            100.0 * margin
        ))
    };
    let test = format!(
        "A claim of absence, with a margin: at each named position the step statistic of the gap touching it with the larger z (method below), as a fraction of the step time; no jump where its 90% interval lies inside ±{:.0}% (two one-sided tests). Reproduces if every tested position shows no jump, does not reproduce if a step's interval lies wholly above the margin anywhere, inconclusive otherwise",
        100.0 * margin
    );
    Finding::new(claim, "no-jumps-at", outcome, measured.join("; "), test)
        .with_quantities([("margin", margin), ("widest_half_interval", widest)])
}

fn fluctuates_more(a: &Analysis, reference: &FluctuationReference, seed: u64) -> Finding {
    let claim = ClaimText::new(
        format!(
            "Its step time fluctuates more (than {})",
            reference.experiment
        ),
        SEEDS,
    );
    let test = "Fluctuation = the robust scale (1.4826 x median) of |median - the line through its two neighbours| / (its standard deviation under pure noise) / step time, over the interior batch sizes: the typical noise of one median as a fraction of the step time, blind to the trend and to a few jumps. 95% bootstrap interval over the batch sizes (2000 resamples). Reproduces if this curve's interval lies above the reference's, does not reproduce if it lies below, inconclusive if they overlap";
    let here = interval(&a.scatter_values, seed);
    let there = match &reference.scatter_values {
        Ok(values) => interval(values, seed),
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
    let outcome = match (here, there) {
        (Some(h), Some(t)) if h.1 > t.2 => Outcome::reproduces(),
        (Some(h), Some(t)) if h.2 < t.1 => Outcome::does_not_reproduce(format!(
            "it fluctuates less than {}",
            reference.experiment
        )),
        (Some(h), Some(t)) => Outcome::inconclusive(format!(
            "a difference of about {:.2} points of the step time (the two intervals' half-widths together)",
            100.0 * ((h.2 - h.1) + (t.2 - t.1)) / 2.0
        )),
        _ => Outcome::cannot_test("fewer than three interior batch sizes"),
    };
    let measured = format!(
        "here {}; {}{} {}",
        percent(here),
        reference.experiment,
        reference
            .run
            .as_ref()
            .map(|run| format!(" (run {run}, this machine)"))
            .unwrap_or_default(),
        percent(there)
    );
    let values = |v: Option<(f64, f64, f64)>, prefix: &'static [&'static str; 3]| {
        v.map(|(s, l, h)| [(prefix[0], s), (prefix[1], l), (prefix[2], h)])
            .into_iter()
            .flatten()
    };
    Finding::new(claim, "fluctuates-more", outcome, measured, test).with_quantities(
        values(here, &["scatter", "scatter_low95", "scatter_high95"]).chain(values(
            there,
            &["reference_scatter", "reference_low95", "reference_high95"],
        )),
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

/// "16, 32 and 48".
fn list(values: &[u32]) -> String {
    let text: Vec<String> = values.iter().map(u32::to_string).collect();
    and_list(&text)
}
