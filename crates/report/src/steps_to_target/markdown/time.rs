//! Time to result in words: the batch size that reaches the target soonest in wall-clock
//! time, and which others its interval cannot tell apart.

use crate::numbers::{seconds, sig};
use crate::steps_to_target::TimeToResult;

/// "batch 256 reaches the target soonest: 12.3 s (11.0–13.9 s); 512 overlaps it".
pub(crate) fn time_sentence(label: &str, t: &TimeToResult) -> String {
    let p = &t.soonest;
    let mut s = format!(
        "{label} reaches the target soonest at batch {}: {} steps x step time = {} (interval {}–{} from the step-time spread)",
        p.batch_size,
        p.steps,
        seconds(p.seconds),
        seconds(p.low),
        seconds(p.high)
    );
    if let (Some(first), Some(last)) = (t.points.first(), t.points.last()) {
        if t.points.len() > 1 {
            s.push_str(&format!(
                ", against {} at batch {} and {} at batch {}",
                seconds(first.seconds),
                first.batch_size,
                seconds(last.seconds),
                last.batch_size
            ));
        }
    }
    if t.overlapping.is_empty() {
        s.push_str("; no other batch size's interval overlaps it.");
    } else {
        let list: Vec<String> = t.overlapping.iter().map(u32::to_string).collect();
        s.push_str(&format!(
            "; batch size(s) {} overlap its interval: not distinguishable from it by these step times.",
            list.join(", ")
        ));
    }
    let fastest_steps = t.points.iter().min_by_key(|p| p.steps);
    if let Some(f) = fastest_steps.filter(|f| f.batch_size != p.batch_size) {
        s.push_str(&format!(
            " The fewest steps (batch {}, {} steps) is not the soonest: its steps cost {}x as long each.",
            f.batch_size,
            f.steps,
            sig((f.seconds / f.steps as f64) / (p.seconds / p.steps as f64))
        ));
    }
    s
}
