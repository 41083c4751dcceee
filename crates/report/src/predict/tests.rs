use super::*;

fn point(batch_size: u32, median: f64) -> CurvePoint {
    CurvePoint {
        batch_size,
        median,
        low: 0.9 * median,
        high: 1.1 * median,
    }
}

/// 1 s per step up to batch 4, then a jump to 2 s at 5 and 6 (a discontinuity), measured at
/// 1, 2, 4, 5, 6, 8.
fn curve() -> StepCurve {
    StepCurve::new(
        "a sweep",
        vec![
            point(8, 2.5),
            point(1, 1.0),
            point(2, 1.0),
            point(4, 1.0),
            point(5, 2.0),
            point(6, 2.0),
        ],
    )
    .unwrap()
}

#[test]
fn measured_points_are_kept_and_gaps_are_bridged_by_their_neighbours_only() {
    let c = curve();
    let at4 = c.at(4).unwrap();
    assert_eq!((at4.seconds, at4.origin), (1.0, Origin::Measured));
    // The jump between 4 and 5 stays a jump: 3 is between 2 and 4 (both 1 s).
    assert_eq!(c.at(3).unwrap().seconds, 1.0);
    let at7 = c.at(7).unwrap();
    assert_eq!(at7.seconds, 2.25);
    assert_eq!(at7.origin, Origin::Interpolated { below: 6, above: 8 });
    assert!((at7.low - 0.9 * 2.25).abs() < 1e-12);
    assert!(c.at(0).is_none());
    assert!(StepCurve::new("empty", vec![]).is_none());
    assert!(StepCurve::new("twice", vec![point(2, 1.0), point(2, 1.1)]).is_none());
}

#[test]
fn beyond_the_sweep_the_line_of_its_last_points_says_it_extrapolates() {
    let c = StepCurve::new(
        "line",
        (1..=10)
            .map(|b| point(b, 0.5 + 0.1 * f64::from(b)))
            .collect(),
    )
    .unwrap();
    let far = c.at(20).unwrap();
    assert!((far.seconds - 2.5).abs() < 1e-9, "{far:?}");
    assert_eq!(far.origin, Origin::Extrapolated);
}

#[test]
fn an_epoch_is_its_full_steps_plus_the_partial_batch_at_its_own_size() {
    let c = curve();
    // 21 examples at batch 4: 5 full steps of 1 s and one of 1 example (1 s).
    let keep = TrainingPlan {
        batch_size: 4,
        examples: 21,
        epochs: 2.0,
        drop_last: false,
    };
    let p = predict(&keep, |b| c.at(b)).unwrap();
    assert_eq!(p.steps_per_epoch, 6);
    assert_eq!(p.epoch.0, 6.0);
    assert_eq!(p.total.0, 12.0);
    assert!((p.total.1 - 0.9 * 12.0).abs() < 1e-9);
    // 23 examples at batch 6: 3 full steps of 2 s and one of 5 examples (2 s); dropped, 3.
    let six = TrainingPlan {
        batch_size: 6,
        examples: 23,
        epochs: 1.0,
        drop_last: false,
    };
    assert_eq!(predict(&six, |b| c.at(b)).unwrap().epoch.0, 8.0);
    let dropped = TrainingPlan {
        drop_last: true,
        ..six
    };
    let p = predict(&dropped, |b| c.at(b)).unwrap();
    assert_eq!((p.steps_per_epoch, p.epoch.0), (3, 6.0));
}
