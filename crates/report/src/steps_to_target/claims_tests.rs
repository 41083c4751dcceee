//! The interval of a ratio between two workloads' B_crit, by simulation: two searches of the
//! same true curve, whose ratio is 1, resampled from independent streams (as the analysis
//! does) and from one shared stream (as it did).

use batchlab_method::refine::cell_seed;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::b_crit_ratio;
use crate::steps_to_target::scaling::{curve_intervals, CellTrials, Draw, Reading};

/// One search: 16 trials per batch size 16..8192 of S(B) = 1000 (1 + 256 / B) steps, each
/// trial's steps spread log-normally by 10% (the metaparameters a search draws).
fn search(rng: &mut StdRng) -> Vec<CellTrials> {
    (4..=13)
        .map(|k| {
            let b = 2f64.powi(k);
            let trials = (0..16)
                .map(|_| {
                    let u: f64 = 1.0 - rng.random::<f64>();
                    let v: f64 = rng.random();
                    let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                    Draw::Reached((1000.0 * (1.0 + 256.0 / b) * (0.1 * z).exp()).round() as u64)
                })
                .collect();
            CellTrials {
                batch_size: b,
                trials,
            }
        })
        .collect()
}

/// Over `n` pairs of searches: how often the ratio's 95% interval held 1, and its median width
/// (on the log scale).
fn coverage(n: u64, independent: bool) -> (usize, f64) {
    let (mut held, mut widths) = (0, vec![]);
    for k in 0..n {
        let mut rng = StdRng::seed_from_u64(1000 + k);
        let (w, v) = (search(&mut rng), search(&mut rng));
        let (sw, sv) = if independent {
            (cell_seed(0, "w", 0), cell_seed(0, "v", 0))
        } else {
            (0, 0)
        };
        let (lo, hi) = b_crit_ratio(
            &curve_intervals(&w, Reading::KaplanMeier, sw),
            &curve_intervals(&v, Reading::KaplanMeier, sv),
        );
        held += usize::from(lo <= 1.0 && 1.0 <= hi);
        widths.push((hi / lo).ln());
    }
    widths.sort_by(f64::total_cmp);
    (held, widths[widths.len() / 2])
}

#[test]
fn independent_streams_cover_a_ratio_of_equal_workloads_and_a_shared_one_is_too_narrow() {
    let n = 20;
    let (held, width) = coverage(n, true);
    let (shared_held, shared_width) = coverage(n, false);
    eprintln!("independent: {held}/{n}, width {width:.3}; shared: {shared_held}/{n}, width {shared_width:.3}");
    assert!(held >= 18, "independent streams held 1 in {held} of {n}");
    // One stream pairs each replicate of w with the same draws of v, so their errors cancel
    // in the ratio and its interval shrinks (20 pairs here: width 0.46 on the log scale with
    // independent streams, 0.21 with one).
    assert!(
        shared_width * 1.5 < width,
        "one stream should make the interval narrower: {shared_width} against {width}"
    );
}

/// One standard for the three regimes: a regime no window shows counts against the claim only
/// where every window's interval lies outside its band; otherwise it is open.
#[test]
fn a_regime_counts_as_missing_only_where_every_window_rules_it_out() {
    use crate::steps_to_target::scaling::{BandRegimes, RegimeBands, SlopeWindow};
    use batchlab_method::findings::Verdict;
    let bands = RegimeBands::default();
    let judged = |intervals: &[(f64, f64)]| {
        let windows = intervals
            .iter()
            .enumerate()
            .map(|(i, &interval)| {
                let w = SlopeWindow {
                    first: i,
                    last: i + 2,
                    slope: (interval.0 + interval.1) / 2.0,
                    interval,
                };
                (w, bands.classify(interval))
            })
            .collect();
        super::judge_regimes(&BandRegimes { windows, bands }).verdict()
    };
    // Diminishing returns everywhere: perfect scaling and the plateau ruled out.
    assert_eq!(judged(&[(-0.6, -0.4), (-0.55, -0.35)]), Verdict::Partly);
    // Perfect scaling, then a window that could be diminishing returns or a plateau: open.
    assert_eq!(judged(&[(-1.1, -0.9), (-0.9, -0.1)]), Verdict::Inconclusive);
    // Steeper than perfect scaling everywhere: all three ruled out.
    assert_eq!(
        judged(&[(-2.0, -1.6), (-1.9, -1.5)]),
        Verdict::DoesNotReproduce
    );
    // All three, in order.
    assert_eq!(
        judged(&[(-1.1, -0.9), (-0.6, -0.4), (-0.1, 0.1)]),
        Verdict::Reproduces
    );
}
