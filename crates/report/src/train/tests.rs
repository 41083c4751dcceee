//! The generated sentences of "Reading the result" on small hand-made grids.

use super::analysis::matches;
use super::analysis::Analysis;
use super::markdown::reading::{
    comparison, pooled_std, spread_sentence, steps_sentence, trends, BudgetComparison, Trend,
};
use super::markdown::timing::{data_sentence, powers_of_two_sentence, time_sentence};
use super::rows::tests::{record, Key};
use batchlab_method::rows::train::Budget;
use batchlab_method::rows::train::TrialRecord;

/// Three seeds per cell at `spread` around each mean.
fn grid(cells: &[(Key, f64, u64)], spread: f64) -> Vec<TrialRecord> {
    cells
        .iter()
        .flat_map(|&(key, accuracy, steps)| {
            (0..3u64).map(move |seed| {
                record(
                    key,
                    seed,
                    accuracy + spread * (seed as f64 - 1.0),
                    10.0,
                    steps,
                )
            })
        })
        .collect()
}

#[test]
fn published_series_match_optimizer_variant_or_both() {
    assert!(matches("adam", "adam", "standard"));
    assert!(matches("augmented", "adam", "augmented"));
    assert!(matches("adam/augmented", "adam", "augmented"));
    assert!(!matches("adam/standard", "adam", "augmented"));
    assert!(!matches("sgd", "adam", "standard"));
}

#[test]
fn pooled_std_weights_cells_by_their_degrees_of_freedom() {
    // Two cells of three seeds with sd 0.01 and 0.03: sqrt((2 * 1e-4 + 2 * 9e-4) / 4).
    let records = [
        grid(&[((16, "adam", "standard", "epochs"), 0.6, 100)], 0.01),
        grid(&[((32, "adam", "standard", "epochs"), 0.6, 50)], 0.03),
    ]
    .concat();
    let analysis = Analysis::new(vec![], &records);
    assert!((pooled_std(&analysis.cells) - 5e-4f64.sqrt()).abs() < 1e-12);
}

#[test]
fn steps_and_trends_are_read_from_the_data() {
    let records = grid(
        &[
            ((16, "sgd", "standard", "epochs"), 0.62, 375),
            ((256, "sgd", "standard", "epochs"), 0.50, 20),
            ((16, "sgd", "standard", "steps"), 0.62, 375),
            ((256, "sgd", "standard", "steps"), 0.615, 375),
        ],
        0.005,
    );
    let analysis = Analysis::new(vec![], &records);
    let steps = steps_sentence(&analysis).unwrap();
    assert!(
        steps.starts_with("Under the epochs budget, at batch 16 a trial takes 375 steps and at 256 only 20 (18.8x fewer updates than at batch 16)."),
        "{steps}"
    );
    assert!(
        steps.contains(
            "every trial takes 375 steps, so batch 256 sees 16x as many examples as batch 16"
        ),
        "{steps}"
    );
    let read = trends(&analysis);
    let of = |budget: Budget| {
        read.iter()
            .find(|((b, _), _)| *b == budget)
            .map(|(_, t)| *t)
            .unwrap()
    };
    assert_eq!(
        (of(Budget::Epochs), of(Budget::Steps)),
        (Trend::Falls, Trend::Flat)
    );
    assert_eq!(
        comparison(&analysis, &read),
        Some(BudgetComparison::OnlyUnderEpochs(vec!["sgd".into()]))
    );
    let spread = spread_sentence(&analysis).unwrap();
    assert!(
        spread.contains("spread by 1.00 points on average"),
        "{spread}"
    );
    assert!(spread.contains("0 of 1 differences"), "{spread}");
    assert!(spread.contains("1 of 1 differences between neighbouring batch sizes of a line are within the seed spread"), "{spread}");
}

#[test]
fn one_seed_per_cell_cannot_be_judged() {
    let records = vec![
        record((16, "adam", "standard", "epochs"), 0, 0.6, 1.0, 375),
        record((32, "adam", "standard", "epochs"), 0, 0.5, 1.0, 185),
    ];
    let analysis = Analysis::new(vec![], &records);
    let read = trends(&analysis);
    assert!(read.values().all(|t| *t == Trend::Unknown), "{read:?}");
    assert!(spread_sentence(&analysis)
        .unwrap()
        .contains("seed spread is unknown"));
}

#[test]
fn powers_of_two_are_set_beside_their_neighbours() {
    // Training seconds per seed: 127 slower and apart from 128; 129 overlapping with it.
    let times = [
        (100, [10.5, 10.6]),
        (127, [9.9, 10.0]),
        (128, [9.7, 9.8]),
        (129, [9.8, 9.9]),
    ];
    let records: Vec<TrialRecord> = times
        .iter()
        .flat_map(|&(b, t)| {
            (0..2u64).map(move |seed| {
                let mut r = record(
                    (b, "adam", "standard", "epochs"),
                    seed,
                    0.7,
                    t[seed as usize],
                    900 / u64::from(b) * 10,
                );
                r.data_seconds = 0.5 * r.train_seconds;
                r
            })
        })
        .collect();
    let analysis = Analysis::new(vec![], &records);
    let p2 = powers_of_two_sentence(&analysis).unwrap();
    assert!(
        p2.contains("adam: batch 128 9.75 s, -2.0% vs 127 (9.95 s, seed ranges apart), -1.0% vs 129 (9.85 s, seed ranges overlap)"),
        "{p2}"
    );
    let time = time_sentence(&analysis).unwrap();
    assert!(
        time.contains(
            "adam trained for 10.6 s at batch 100 and 9.9 s at 129 (117.2 and 164.2 ms per step)"
        ),
        "{time}"
    );
    let data = data_sentence(&analysis);
    assert!(
        data.contains("median 50.0%") && data.contains("large share"),
        "{data}"
    );
}
