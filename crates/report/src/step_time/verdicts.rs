//! The verdict on each of seeds 000/001's claims that a step-time sweep can test, by a rule
//! stated beside it: the linear trend, jumps at the claimed batch sizes (with the smallest jump
//! the detector could have found there, and isolated slow points kept apart from persistent
//! steps), no jumps where a model is claimed to have none, and more fluctuation than a
//! reference model.

use batchlab_method::stats::{bootstrap_median_ci, MAD_TO_SD};

use super::analysis::{check_claim, Analysis, ClaimCheck};
use super::StepTimeContext;
use crate::jumps::{detectable_relative, scatter, JumpOptions};
use crate::markdown::and_list;
use crate::verdict::Verdict;

/// The source every step-time claim comes from.
const SEEDS: &str = "seeds 000/001";

/// R² of the line through the medians at or above which the step time counts as linear;
/// below [`PARTLY_LINEAR`] it does not.
const LINEAR: f64 = 0.99;
const PARTLY_LINEAR: f64 = 0.95;

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
) -> Vec<Verdict> {
    let opts = JumpOptions::default();
    // The seeds' first claim is about step time in general: every sweep can judge it.
    let mut verdicts = vec![linear(a)];
    if !ctx.claimed_jumps.is_empty() {
        verdicts.push(jumps_at(a, &ctx.claimed_jumps, &opts));
    }
    if !ctx.no_jumps_at.is_empty() {
        verdicts.push(no_jumps_at(a, &ctx.no_jumps_at, &opts));
    }
    if let Some(reference) = reference {
        verdicts.push(fluctuates_more(a, reference, ctx.seed));
    }
    verdicts
}

fn linear(a: &Analysis) -> Verdict {
    let claim = format!("\"The step time grows linearly with batch size\" ({SEEDS})");
    let test = format!("R² of the least-squares line through the medians of every ok batch size: reproduces at R² >= {LINEAR}, partly from {PARTLY_LINEAR}, else does not. Jumps of a few percent lower R² only slightly: this tests the trend, not the absence of steps");
    match &a.findings.fit {
        Some(fit) => Verdict {
            claim,
            measured: format!(
                "{:.1} ms + {:.3} ms per example, R² {:.4}",
                fit.intercept, fit.slope, fit.r_squared
            ),
            verdict: if fit.r_squared >= LINEAR {
                "reproduces"
            } else if fit.r_squared >= PARTLY_LINEAR {
                "partly (the line explains most but not all of the curve)"
            } else {
                "does not reproduce"
            }
            .into(),
            test,
        },
        None => Verdict {
            claim,
            measured: "fewer than two ok batch sizes".into(),
            verdict: "cannot be tested here (no line)".into(),
            test,
        },
    }
}

/// What the detector saw at each position: detected, or not with the smallest detectable step
/// there, or an isolated slow point; and the positions it could not test.
struct AtPositions {
    detected: Vec<String>,
    missed: Vec<String>,
    isolated: Vec<String>,
    untested: Vec<u32>,
    /// The smallest detectable relative step at each tested position.
    power: Vec<f64>,
}

fn look_at(a: &Analysis, positions: &[u32], opts: &JumpOptions) -> AtPositions {
    let mut at = AtPositions {
        detected: Vec::new(),
        missed: Vec::new(),
        isolated: Vec::new(),
        untested: Vec::new(),
        power: Vec::new(),
    };
    for &b in positions {
        match check_claim(a, b) {
            ClaimCheck::Detected(j) => at.detected.push(format!(
                "{b}: jump {} → {} of {:+.1}% (z {:.1})",
                j.previous_batch_size,
                j.batch_size,
                100.0 * j.relative,
                j.z
            )),
            ClaimCheck::NotDetected(g) => {
                let power = detectable_relative(g, opts);
                at.power.push(power);
                at.missed.push(format!(
                    "{b}: none (largest step {:+.1}%, z {:.1}; detectable above {:.1}%)",
                    100.0 * g.relative,
                    g.z,
                    100.0 * power
                ));
            }
            ClaimCheck::NotTested => at.untested.push(b),
        }
        let slow = a
            .offsets
            .iter()
            .find(|o| o.batch_size == b && o.stands_out(opts) && o.relative > 0.0);
        if let Some(o) = slow {
            at.isolated.push(format!(
                "{b} ({:+.1}% off its neighbours' line, z {:.1})",
                100.0 * o.relative,
                o.z
            ));
        }
    }
    at
}

impl AtPositions {
    /// "at this noise only jumps above X% (to Y%) pass"
    fn power_sentence(&self, opts: &JumpOptions) -> String {
        let (low, high) = self
            .power
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), &p| (l.min(p), h.max(p)));
        let range = if self.power.is_empty() {
            "no position was tested".to_string()
        } else if (high - low) < 0.0005 {
            format!(
                "at this noise only steps above {:.1}% could pass",
                100.0 * low
            )
        } else {
            format!(
                "at this noise only steps above {:.1}% to {:.1}% (by position) could pass",
                100.0 * low,
                100.0 * high
            )
        };
        format!(
            "The jump detector (method below) at each position: a persistent step with |z| >= {} and at least {:.0}% of the step time; {range}. A single slow batch size is no jump (the step must persist on both sides): such isolated points are listed apart",
            opts.z_threshold,
            100.0 * opts.min_relative
        )
    }

    fn measured(&self) -> String {
        let mut parts: Vec<String> = self.detected.iter().chain(&self.missed).cloned().collect();
        if !self.untested.is_empty() {
            parts.push(format!(
                "not tested at {} (outside the ok batch sizes or at an end)",
                list(&self.untested)
            ));
        }
        parts.push(format!(
            "isolated slow points at these sizes: {}",
            if self.isolated.is_empty() {
                "none".into()
            } else {
                self.isolated.join(", ")
            }
        ));
        parts.join("; ")
    }
}

fn jumps_at(a: &Analysis, claimed: &[u32], opts: &JumpOptions) -> Verdict {
    let at = look_at(a, claimed, opts);
    let tested = at.detected.len() + at.missed.len();
    Verdict {
        claim: format!(
            "\"The step time jumps at {}\" ({SEEDS}, on GPUs)",
            list(claimed)
        ),
        measured: at.measured(),
        verdict: if tested == 0 {
            "cannot be tested here (no claimed position inside the sweep)".into()
        } else if at.missed.is_empty() {
            "reproduces".into()
        } else if at.detected.is_empty() {
            "does not reproduce (no jump at any claimed size)".into()
        } else {
            format!(
                "partly ({} of {tested} tested positions)",
                at.detected.len()
            )
        },
        test: format!(
            "{}. Reproduces if a jump is detected at every claimed size, partly at some, does not reproduce at none",
            at.power_sentence(opts)
        ),
    }
}

fn no_jumps_at(a: &Analysis, positions: &[u32], opts: &JumpOptions) -> Verdict {
    let at = look_at(a, positions, opts);
    let tested = at.detected.len() + at.missed.len();
    Verdict {
        claim: format!(
            "\"No jumps at {} (unlike VGG)\" ({SEEDS})",
            list(positions)
        ),
        measured: at.measured(),
        verdict: if tested == 0 {
            "cannot be tested here (no position inside the sweep)".into()
        } else if at.detected.is_empty() {
            let largest = at.power.iter().copied().fold(0.0, f64::max);
            format!(
                "reproduces, as far as this noise lets one see (no jump above {:.1}% at these sizes)",
                100.0 * largest
            )
        } else {
            format!(
                "does not reproduce (jumps at {} of {tested} positions)",
                at.detected.len()
            )
        },
        test: format!(
            "{}. Reproduces if no jump is detected at any of these sizes; a jump smaller than the detectable step would go unseen",
            at.power_sentence(opts)
        ),
    }
}

fn fluctuates_more(a: &Analysis, reference: &FluctuationReference, seed: u64) -> Verdict {
    let claim = format!(
        "\"Its step time fluctuates more\" (than {}; {SEEDS})",
        reference.experiment
    );
    let test = "Fluctuation = the robust scale (1.4826 x median) of |median - the line through its two neighbours| / (its standard deviation under pure noise) / step time, over the interior batch sizes: the typical noise of one median as a fraction of the step time, blind to the trend and to a few jumps. 95% bootstrap interval over the batch sizes (2000 resamples). Reproduces if this curve's interval lies above the reference's, does not reproduce if it lies below or the intervals overlap (no difference this test can see)".to_string();
    let here = interval(&a.scatter_values, seed);
    let there = match &reference.scatter_values {
        Ok(values) => interval(values, seed),
        Err(why) => {
            return Verdict {
                claim,
                measured: format!("here {}", percent(here)),
                verdict: format!("cannot be tested here ({why})"),
                test,
            }
        }
    };
    let verdict = match (here, there) {
        (Some(h), Some(t)) if h.1 > t.2 => "reproduces".to_string(),
        (Some(h), Some(t)) if h.2 < t.1 => format!(
            "does not reproduce (it fluctuates less than {})",
            reference.experiment
        ),
        (Some(_), Some(_)) => "does not reproduce (no difference: the intervals overlap)".into(),
        _ => "cannot be tested here (fewer than three interior batch sizes)".into(),
    };
    Verdict {
        claim,
        measured: format!(
            "here {}; {}{} {}",
            percent(here),
            reference.experiment,
            reference
                .run
                .as_ref()
                .map(|run| format!(" (run {run}, this machine)"))
                .unwrap_or_default(),
            percent(there)
        ),
        verdict,
        test,
    }
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
