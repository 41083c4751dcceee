//! The gradient noise scale of a steps-to-target study: each trial's measurements as noise.csv
//! rows (the report sets B_simple beside the fitted B_crit).

use batchlab_method::{noise::NoiseScale, rows::steps_to_target::NoiseRow};

use super::{SearchTrial, Workload};
use crate::trial::train_loop::GradientNorms;

/// Weight of the newest measurement in B_simple's moving averages is 1 - DECAY: a trial has
/// tens of measurements, and McCandlish et al. average because single ones are noisy.
const DECAY: f64 = 0.8;

/// A trial's gradient-norm measurements with the moving-average B_simple after each.
pub fn rows(t: &SearchTrial, w: &Workload, norms: &[GradientNorms]) -> Vec<NoiseRow> {
    let Some(first) = norms.first() else {
        return Vec::new();
    };
    let Ok(mut scale) = NoiseScale::new(first.b_small, first.b_big, DECAY) else {
        return Vec::new();
    };
    norms
        .iter()
        .map(|n| {
            let b_simple = scale
                .update(n.small_sq, n.big_sq)
                .ok()
                .and_then(|r| r.b_simple)
                .unwrap_or(f64::NAN);
            NoiseRow {
                trial: t.id.clone(),
                workload: w.label(),
                batch_size: t.batch_size,
                step: n.step,
                b_small: n.b_small,
                b_big: n.b_big,
                g_small_sq: n.small_sq,
                g_big_sq: n.big_sq,
                b_simple,
            }
        })
        .collect()
}
