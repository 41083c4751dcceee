//! gradient-noise-falls: less data in a batch, a noisier gradient estimate. Each noise
//! measurement (`noise.csv`) took, at the same parameters, the mean gradient of half the batch
//! and of the whole batch; E|G_b|² = |G|² + tr(Σ)/b, so the half batch's squared norm exceeds
//! the whole batch's by the noise the smaller sample adds. Decided as a value here, worded in
//! `claims_words.rs`.

use std::collections::BTreeMap;

use batchlab_method::findings::reading;
use batchlab_method::rows::steps_to_target::NoiseRow;
use batchlab_method::stats::{mean, median};
use batchlab_method::tests_of_claims::{increase, Arm, Decision, Difference};
use serde::Serialize;

use super::Judged;

/// gradient-noise-falls, as values: per trial of the workload the mean log ratio
/// ln(|G_half|² / |G_whole|²) over its measurements; their one-sample difference from zero and
/// what that decided; and per batch size its trials and their median.
#[derive(Debug, Serialize)]
pub(super) struct NoiseFalls {
    /// Trials with a usable measurement.
    pub trials: usize,
    /// Measurements read (both squared norms finite and above zero).
    pub measurements: usize,
    /// Measurements left out: a squared norm not above zero or not finite.
    pub unusable: usize,
    pub d: Difference,
    pub decided: Decision,
    /// Per batch size: its trials and the median of their mean log ratios.
    pub by_batch: Vec<(u32, usize, f64)>,
}

/// Why the rule cannot judge the run.
pub(super) enum Unjudged {
    /// The run has no noise.csv (no `noise_every`).
    NoNoise,
    /// Fewer than two trials of the workload with a usable measurement.
    TooFewTrials(usize),
}

pub(super) fn noise_falls(workload: &str, noise: Option<&[NoiseRow]>) -> Judged {
    match decide(workload, noise) {
        Ok(decided) => (
            super::words::noise_falls(&decided, workload),
            reading(&decided),
        ),
        Err(why) => (super::words::noise_unjudged(&why, workload), None),
    }
}

fn decide(workload: &str, noise: Option<&[NoiseRow]>) -> Result<NoiseFalls, Unjudged> {
    let rows = noise.ok_or(Unjudged::NoNoise)?;
    let mut per_trial: BTreeMap<&str, (u32, Vec<f64>)> = BTreeMap::new();
    let mut unusable = 0;
    for r in rows.iter().filter(|r| r.workload == workload) {
        let ratio = (r.g_small_sq / r.g_big_sq).ln();
        if r.g_small_sq > 0.0 && r.g_big_sq > 0.0 && ratio.is_finite() {
            let trial = per_trial.entry(&r.trial).or_insert((r.batch_size, vec![]));
            trial.1.push(ratio);
        } else {
            unusable += 1;
        }
    }
    let trials: Vec<(u32, f64)> = per_trial.values().map(|(b, xs)| (*b, mean(xs))).collect();
    // The trials are the independent units: a trial's measurements follow one another along
    // its training, so they are averaged first.
    let means: Vec<f64> = trials.iter().map(|(_, m)| *m).collect();
    let d = Difference::one_sample(Arm::of(&means)).ok_or(Unjudged::TooFewTrials(means.len()))?;
    let mut by_batch: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (b, m) in &trials {
        by_batch.entry(*b).or_default().push(*m);
    }
    Ok(NoiseFalls {
        trials: trials.len(),
        measurements: per_trial.values().map(|(_, xs)| xs.len()).sum(),
        unusable,
        decided: increase(&d),
        d,
        by_batch: by_batch
            .into_iter()
            .map(|(b, ms)| (b, ms.len(), median(&ms)))
            .collect(),
    })
}
