use super::*;
use crate::predict::check::CheckBudget;
use batchlab_method::rows::train::Budget;

fn cells(errors: &[f64]) -> Vec<PredictionCheck> {
    errors
        .iter()
        .enumerate()
        .map(|(i, e)| PredictionCheck {
            optimizer: "adam".into(),
            batch_size: 100 + i as u32,
            budget: CheckBudget::Trained(Budget::Epochs),
            measured: 10.0,
            predicted: (10.0 * (1.0 + e), 9.0, 11.0),
        })
        .collect()
}

fn verdict(errors: &[f64]) -> batchlab_method::findings::Verdict {
    let cells = cells(errors);
    let refs: Vec<&PredictionCheck> = cells.iter().collect();
    time_predicted(&refs, 0.1).map_or(batchlab_method::findings::Verdict::CannotTest, |p| {
        p.decided.verdict()
    })
}

#[test]
fn a_prediction_is_judged_by_its_mean_error_size_against_the_tolerance() {
    use batchlab_method::findings::Verdict::*;
    assert_eq!(verdict(&[0.02, -0.01, 0.03, 0.0, 0.01, -0.02]), Reproduces);
    assert_eq!(
        verdict(&[0.30, 0.28, 0.33, 0.31, 0.29, 0.32]),
        DoesNotReproduce
    );
    // Off by 14-15% in every cell, alternately up and down: a signed mean near zero, but
    // no cell within 10%.
    assert_eq!(
        verdict(&[0.15, -0.14, 0.15, -0.14, 0.15, -0.14, 0.15, -0.14]),
        DoesNotReproduce
    );
    assert_eq!(
        verdict(&[0.05, -0.12, 0.15, -0.08, 0.11, -0.14]),
        Inconclusive
    );
    assert_eq!(verdict(&[0.02]), CannotTest);
}

#[test]
fn one_comparison_bounded_beyond_the_margin_refutes_sameness() {
    let tally = |decisions: &[Option<Decision>]| {
        let mut t = Tally::default();
        decisions.iter().for_each(|d| t.add(*d));
        t.decided()
    };
    use Decision::*;
    // Three pairs open and one bounded beyond the margin: refuted, not "partly".
    assert_eq!(
        tally(&[Some(Open), Some(Open), Some(Open), Some(Refuted)]),
        Sameness::Refuted {
            refuted: 1,
            compared: 4
        }
    );
    assert_eq!(
        tally(&[Some(Shown), Some(Refuted)]),
        Sameness::Refuted {
            refuted: 1,
            compared: 2
        }
    );
    assert_eq!(tally(&[Some(Shown), Some(Shown)]), Sameness::Shown);
    assert_eq!(tally(&[Some(Shown), Some(Open)]), Sameness::Open);
    assert_eq!(tally(&[Some(Shown), None]), Sameness::Open);
    // No seed spread anywhere: no interval, no test.
    assert_eq!(tally(&[None, None]), Sameness::Untestable);
}
