//! The coverage section: how often the replicates' intervals held each other's values.

use std::fmt::Write;

use crate::steps_to_target::analysis::coverage::Coverage;

fn steps(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.0}")
    } else {
        "none reached".into()
    }
}

fn interval((lo, hi): (f64, f64)) -> String {
    if hi.is_finite() {
        format!("{lo:.0}–{hi:.0}")
    } else {
        format!("{lo:.0}–(open)")
    }
}

/// The section, from its heading.
pub(crate) fn coverage_section(c: &Coverage) -> String {
    let n = c.checks.len();
    let covered = c.covered();
    let (lo, hi) = c.rate_interval();
    let mut md = format!(
        "\n## Coverage of the intervals\n\nThe replicates {} repeat one search with other quasi-random points. For every batch size and every ordered pair, one replicate's 95% interval of steps to result is checked against the other's value: {covered} of {n} checks held it ({:.0}%, Wilson 95% interval {:.0}–{:.0}%; the checks share values, so the true uncertainty is wider). Intervals that fitted the search would hold about 95%: each is where another search of as many trials would find its best.\n\n",
        c.replicates.join(", "),
        if n > 0 { 100.0 * covered as f64 / n as f64 } else { f64::NAN },
        100.0 * lo,
        100.0 * hi
    );
    let misses: Vec<_> = c.checks.iter().filter(|k| !k.covered).collect();
    if !misses.is_empty() {
        md.push_str("| batch | interval of | interval | value of | value |\n| --- | --- | --- | --- | --- |\n");
        for m in misses {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                m.batch_size,
                m.interval_of,
                interval(m.interval),
                m.value_of,
                steps(m.value)
            );
        }
    }
    md
}
