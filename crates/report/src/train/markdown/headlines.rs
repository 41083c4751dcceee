//! What a training study says in a few lines: on the terminal, and in the report's run
//! table.

use super::reading::{steps_sentence, trend_sentences};
use crate::numbers::pct;
use crate::train::analysis::Analysis;
use batchlab_method::rows::train::Budget;

/// The lines [`crate::train::TrainFindings`] hands to the terminal.
pub(crate) fn headlines(analysis: &Analysis) -> Vec<String> {
    let mut lines = vec![recorded_line(analysis)];
    for best in analysis.best() {
        lines.push(format!(
            "best test accuracy, {} budget: {} at batch {}, {} ({} of {} seeds ok, range {}–{})",
            best.budget,
            pct(best.test_accuracy_mean),
            best.batch_size,
            best.series(analysis.with_variant),
            best.ok,
            best.trials,
            pct(best.test_accuracy_min),
            pct(best.test_accuracy_max)
        ));
    }
    if let Some(steps) = steps_sentence(analysis) {
        lines.push(steps);
    }
    if analysis.budgets.contains(&Budget::Epochs) && analysis.budgets.contains(&Budget::Steps) {
        if let Some(last) = trend_sentences(analysis).pop() {
            lines.push(last);
        }
    }
    lines
}

/// "28 of 30 trials recorded (27 ok, 1 failed); 2 missing".
pub(crate) fn recorded_line(analysis: &Analysis) -> String {
    let recorded = analysis.records.len();
    let ok = analysis.records.iter().filter(|r| r.is_ok()).count();
    let mut line = format!(
        "{recorded} of {} trials recorded ({ok} ok, {} failed)",
        recorded + analysis.missing.len(),
        recorded - ok
    );
    if !analysis.missing.is_empty() {
        line.push_str(&format!("; {} missing", analysis.missing.len()));
        if analysis.unfinished > 0 {
            line.push_str(&format!(
                " ({} started but unfinished)",
                analysis.unfinished
            ));
        }
    }
    line
}
