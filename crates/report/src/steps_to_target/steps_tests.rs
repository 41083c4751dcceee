use super::*;
use batchlab_method::rows::train::Budget;

fn trial(id: &str, batch_size: u32, status: Status, evals: &[(u64, f64)]) -> Trial {
    Trial {
        id: id.into(),
        batch_size,
        status,
        evaluations: evals
            .iter()
            .map(|&(step, error)| Evaluation { step, error })
            .collect(),
    }
}

/// Planted study, target 0.1; the answer is worked out beside each trial.
fn planted() -> Vec<Trial> {
    use Status::*;
    vec![
        // Batch 32. t0 reaches 0.1 exactly at 300 (equality counts).
        trial(
            "t0",
            32,
            Ok,
            &[(100, 0.3), (200, 0.12), (300, 0.1), (400, 0.08)],
        ),
        // t1 reaches at 200 and gets worse afterwards: still 200.
        trial("t1", 32, Ok, &[(100, 0.2), (200, 0.09), (300, 0.11)]),
        // t2 touched the target at 100, then diverged: infeasible, not 100.
        trial("t2", 32, Diverged, &[(100, 0.05), (200, f64::NAN)]),
        // t3 reaches at 200 too (evaluations out of order): a tie, t1 came first.
        trial("t3", 32, Ok, &[(300, 0.05), (200, 0.095), (100, 0.5)]),
        // t4 ran out of memory before any evaluation: set aside.
        trial("t4", 32, Oom, &[]),
        // Batch 64: nothing reaches the target.
        trial("t5", 64, Ok, &[(50, 0.2), (100, 0.15)]),
        trial("t6", 64, Diverged, &[(50, 0.09)]),
        // An errored trial's evaluations do not count, even below the target.
        trial("t7", 64, Error, &[(50, 0.01)]),
        // Batch 16, listed last: the output is still in increasing batch size.
        trial("t8", 16, Ok, &[(400, 0.1), (800, 0.05)]),
        trial("t9", 16, Ok, &[(400, 0.2), (600, 0.1)]),
    ]
}

#[test]
fn planted_study_gives_the_hand_computed_answer() {
    let result = steps_to_result(&planted(), 0.1).unwrap();
    let expected = vec![
        StepsToResult {
            batch_size: 16,
            steps: Some(400),
            best_trial: Some("t8".into()),
            trials: 2,
            reached: 2,
            missed: 0,
            infeasible: 0,
            failed: 0,
        },
        StepsToResult {
            batch_size: 32,
            steps: Some(200),
            best_trial: Some("t1".into()),
            trials: 5,
            reached: 3,
            missed: 0,
            infeasible: 1,
            failed: 1,
        },
        StepsToResult {
            batch_size: 64,
            steps: None,
            best_trial: None,
            trials: 3,
            reached: 0,
            missed: 1,
            infeasible: 1,
            failed: 1,
        },
    ];
    assert_eq!(result, expected);
}

#[test]
fn a_tie_goes_to_the_first_trial_in_the_input() {
    let mut trials = planted();
    // Put t3 (also 200 steps at batch 32) before t1: now t3 is best.
    trials.swap(1, 3);
    let result = steps_to_result(&trials, 0.1).unwrap();
    assert_eq!(result[1].best_trial.as_deref(), Some("t3"));
    assert_eq!(result[1].steps, Some(200));
}

#[test]
fn each_trial_is_classified_by_the_rules() {
    let trials = planted();
    let outcomes: Vec<TrialOutcome> = trials.iter().map(|t| classify(t, 0.1)).collect();
    use TrialOutcome::*;
    assert_eq!(
        outcomes,
        vec![
            Reached(300),
            Reached(200),
            Infeasible,
            Reached(200),
            Failed,
            Missed,
            Infeasible,
            Failed,
            Reached(400),
            Reached(600),
        ]
    );
}

#[test]
fn rounding_of_one_minus_accuracy_does_not_decide() {
    // 1 - 0.7 is 0.30000000000000004: exactly 30% error reaches a 0.3 target.
    let accuracy = std::hint::black_box(0.7);
    let at = trial("a", 8, Status::Ok, &[(10, 1.0 - accuracy)]);
    assert!(1.0 - accuracy > 0.3);
    assert_eq!(classify(&at, 0.3), TrialOutcome::Reached(10));
    // One example in a million above the target is a miss.
    let above = trial("b", 8, Status::Ok, &[(10, 0.3 + 1e-6)]);
    assert_eq!(classify(&above, 0.3), TrialOutcome::Missed);
    let nan = trial("c", 8, Status::Ok, &[(10, f64::NAN)]);
    assert_eq!(classify(&nan, 0.3), TrialOutcome::Missed);
}

#[test]
fn bad_input_is_an_error() {
    assert!(steps_to_result(&planted(), f64::NAN).is_err());
    assert!(steps_to_result(&planted(), f64::INFINITY).is_err());
    let mut trials = planted();
    trials.push(trial("t0", 128, Status::Ok, &[]));
    let err = steps_to_result(&trials, 0.1).unwrap_err();
    assert!(err.to_string().contains("\"t0\""), "{err}");
    assert!(steps_to_result(&[], 0.1).unwrap().is_empty());
}

#[test]
fn statuses_parse_and_print_as_in_trials_csv() {
    for s in [Status::Ok, Status::Diverged, Status::Error, Status::Oom] {
        assert_eq!(s.as_str().parse::<Status>().unwrap(), s);
        assert_eq!(s.to_string(), s.as_str());
    }
    assert!("OK".parse::<Status>().is_err());
    assert!("".parse::<Status>().is_err());
}

fn record(trial: &str, batch_size: u32, status: &str) -> TrialRecord {
    TrialRecord {
        trial: trial.into(),
        seed: 0,
        batch_size,
        optimizer: "sgd".into(),
        variant: "standard".into(),
        budget: Budget::Steps,
        status: status.parse().unwrap(),
        epochs: 1.0,
        steps: 30,
        examples: 30 * u64::from(batch_size),
        train_seconds: 1.0,
        data_seconds: 0.1,
        eval_seconds: 0.1,
        test_seconds: 0.1,
        test_loss: 0.5,
        test_accuracy: 0.9,
        message: String::new(),
    }
}

fn eval(trial: &str, batch_size: u32, step: u64, accuracy: f64) -> TrainEval {
    TrainEval {
        trial: trial.into(),
        seed: 0,
        batch_size,
        optimizer: "sgd".into(),
        variant: "standard".into(),
        budget: Budget::Steps,
        epoch: 0.1,
        step,
        examples: step * u64::from(batch_size),
        train_loss: 0.5,
        val_loss: 0.5,
        val_accuracy: accuracy,
        train_seconds: 1.0,
        data_seconds: 0.1,
        eval_seconds: 0.1,
    }
}

#[test]
fn training_records_become_trials_like_the_training_report_reads_them() {
    let records = vec![
        record("a", 32, "error"),
        record("b", 64, "ok"),
        // "a" was rerun: its last row counts, in that row's place.
        record("a", 32, "ok"),
    ];
    let evals = vec![
        // a's first attempt reached 0.05 error at step 20, then was interrupted.
        eval("a", 32, 10, 0.5),
        eval("a", 32, 20, 0.95),
        eval("b", 64, 10, 0.7),
        eval("a", 32, 10, 0.6),
        eval("a", 32, 20, 0.85),
        eval("a", 32, 30, 0.9),
        // No record yet: left out.
        eval("c", 32, 10, 0.99),
    ];
    let trials = trials_from_train(&records, &evals);
    assert_eq!(
        trials.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["b", "a"]
    );
    let a = &trials[1];
    assert_eq!(a.status, Status::Ok);
    assert_eq!(
        a.evaluations.iter().map(|e| e.step).collect::<Vec<_>>(),
        [10, 20, 30]
    );
    assert!((a.evaluations[1].error - 0.15).abs() < 1e-12);
    // The latest attempt reaches 0.1 error at step 30, not the earlier one's 20.
    let result = steps_to_result(&trials, 0.1).unwrap();
    assert_eq!(result[0].batch_size, 32);
    assert_eq!(result[0].steps, Some(30));
    assert_eq!(result[1].steps, None);
    assert_eq!(result[1].missed, 1);
}
