//! The verdicts of a steps-to-target report: each claim its config names, judged from the
//! steps-to-result curves by the rule stated in its row (see `crate::verdict`).

use batchlab_method::findings::{ClaimText, Finding, Outcome};

use crate::steps_to_target::analysis::workload::Workload;
use crate::steps_to_target::analysis::Study;

/// How a claim is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetClaimRule {
    /// Perfect scaling, then diminishing returns, then a plateau, in that order.
    ThreeRegimes,
    /// The workload's perfect scaling reaches a larger batch size than `versus`'s.
    ExtendsPerfectScaling,
    /// The workload's steps to result is as low as `versus`'s at every batch size both have.
    MatchesSearch,
}

/// A claim the report judges.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetClaim {
    /// The claim's id in the claims registry, if registered.
    pub id: Option<String>,
    /// The claim in the source's words.
    pub claim: String,
    /// Where it was made.
    pub source: String,
    /// The workload it is about.
    pub workload: String,
    /// The rule.
    pub rule: TargetClaimRule,
    /// The workload it is compared with.
    pub versus: Option<String>,
}

/// The verdict of each claim, in order.
pub(super) fn verdicts(claims: &[TargetClaim], study: &Study) -> Vec<Finding> {
    claims.iter().map(|c| verdict(c, study)).collect()
}

fn find<'a>(study: &'a Study, label: &str) -> Option<&'a Workload> {
    study.workloads.iter().find(|w| w.label == label)
}

fn verdict(c: &TargetClaim, study: &Study) -> Finding {
    let claim = ClaimText::new(c.claim.clone(), c.source.clone())
        .with_id(c.id.clone())
        .scoped(c.workload.clone());
    let rule = match c.rule {
        TargetClaimRule::ThreeRegimes => "three-regimes",
        TargetClaimRule::ExtendsPerfectScaling => "extends-perfect-scaling",
        TargetClaimRule::MatchesSearch => "matches-search",
    };
    let versus = c.versus.as_deref().and_then(|v| find(study, v));
    let (measured, verdict, test) = match (find(study, &c.workload), c.rule, versus) {
        (None, _, _) => missing(&c.workload),
        (
            Some(_),
            TargetClaimRule::ExtendsPerfectScaling | TargetClaimRule::MatchesSearch,
            None,
        ) => missing(c.versus.as_deref().unwrap_or("(none named)")),
        (Some(w), TargetClaimRule::ThreeRegimes, _) => three_regimes(w),
        (Some(w), TargetClaimRule::ExtendsPerfectScaling, Some(v)) => extends(w, v),
        (Some(w), TargetClaimRule::MatchesSearch, Some(v)) => matches(w, v),
    };
    Finding::new(claim, rule, verdict, measured, test)
}

/// What a rule found: measured, outcome, test.
type Parts = (String, Outcome, String);

fn missing(label: &str) -> Parts {
    (
        format!("no trial of {label} recorded"),
        Outcome::cannot_test(format!("no data for {label}")),
        "–".into(),
    )
}

fn range_text(name: &str, range: Option<(f64, f64)>) -> String {
    match range {
        Some((a, b)) => format!("{name} {a}–{b}"),
        None => format!("no {name}"),
    }
}

/// The rule of the interval-judged regimes, for the test column.
const INTERVAL_RULE: &str = "regimes judged with 95% bootstrap intervals of steps to result (perfect scaling while the interval of S(B) reaches the line S(B0) B0 / B from the top of S(B0)'s interval; plateau over the trailing segments whose slope interval includes zero)";

/// Why the regimes of `w` cannot judge a claim: they were not judged with intervals (the
/// point-by-point ranges in the report describe the curve, but a verdict needs the rule
/// that knows the noise).
fn unjudgeable(w: &Workload) -> Option<Outcome> {
    (!w.regimes_with_intervals).then(|| {
        Outcome::cannot_test(format!(
            "{}'s steps to result at its smallest batch size rest on too few trials that reached the target (its 95% interval has no upper end), so no batch size can be told apart from perfect scaling",
            w.label
        ))
    })
}

/// How far above S(B0) the top of its interval lies: the slack the perfect-scaling test
/// gives every later batch size.
fn first_slack(w: &Workload) -> String {
    match (w.intervals.steps.first(), w.intervals.intervals.first()) {
        (Some(&s), Some(&(_, hi))) if s.is_finite() && hi.is_finite() => format!(
            "it tells a batch size apart from perfect scaling once its steps lie more than {:.0}% above the line (the top of S(B0)'s interval)",
            100.0 * (hi / s - 1.0)
        ),
        _ => "S(B0)'s interval has no upper end, so no departure from perfect scaling can be detected with intervals".into(),
    }
}

fn three_regimes(w: &Workload) -> Parts {
    let Ok(r) = &w.regimes else {
        return (
            "fewer than two batch sizes reached the target".into(),
            Outcome::cannot_test("no curve"),
            "–".into(),
        );
    };
    let measured = format!(
        "{}; {}; {}",
        range_text("perfect scaling", r.perfect_scaling),
        range_text("diminishing returns", r.diminishing_returns),
        range_text("maximal data parallelism", r.maximal_data_parallelism)
    );
    let present = [
        r.perfect_scaling.is_some(),
        r.diminishing_returns.is_some(),
        r.maximal_data_parallelism.is_some(),
    ];
    let verdict = match (unjudgeable(w), present) {
        (Some(why), _) => why,
        (None, [true, true, true]) => Outcome::reproduces(),
        (None, [true, false, true]) => Outcome::partly("perfect scaling, then a plateau, with no batch size of diminishing returns between them on this grid"),
        (None, [true, true, false]) => Outcome::partly("no plateau up to the largest batch size measured"),
        (None, [false, true, true]) => Outcome::partly("no perfect scaling from the smallest batch size measured"),
        _ => Outcome::does_not_reproduce("fewer than two of the three regimes appear in order"),
    };
    let test = format!(
        "{INTERVAL_RULE}; reproduces when all three regimes appear in this order; {}",
        first_slack(w)
    );
    (measured, verdict, test)
}

/// The last batch size of perfect scaling (the smallest batch size when there is none) and
/// whether it is the largest measured.
fn perfect_end(w: &Workload) -> Option<(f64, bool)> {
    let r = w.regimes.as_ref().ok()?;
    let largest = *w.intervals.batch_sizes.last()?;
    let end = r
        .perfect_scaling
        .map_or(*w.intervals.batch_sizes.first()?, |(_, b)| b);
    Some((end, end >= largest))
}

fn extends(w: &Workload, v: &Workload) -> Parts {
    let (Some((end_w, top_w)), Some((end_v, top_v))) = (perfect_end(w), perfect_end(v)) else {
        return (
            "a curve is missing".into(),
            Outcome::cannot_test(
                "fewer than two batch sizes reached the target in one of the workloads",
            ),
            "–".into(),
        );
    };
    let measured = format!(
        "perfect scaling up to batch {end_w} for {}, up to {end_v} for {}",
        w.label, v.label
    );
    let verdict = if let Some(why) = unjudgeable(w).or_else(|| unjudgeable(v)) {
        why
    } else if top_w && top_v {
        Outcome::cannot_test("both scale perfectly to the largest batch size measured")
    } else if end_w > end_v {
        Outcome::reproduces()
    } else if top_v {
        Outcome::cannot_test(format!(
            "{} scales perfectly to the largest batch size measured",
            v.label
        ))
    } else {
        Outcome::does_not_reproduce(format!(
            "{}'s perfect scaling ends no later than {}'s",
            w.label, v.label
        ))
    };
    let test = format!(
        "the ends of the two perfect-scaling ranges compared; {INTERVAL_RULE}; resolution: one step of the batch-size grid; {}",
        first_slack(v)
    );
    (measured, verdict, test)
}

fn matches(w: &Workload, v: &Workload) -> Parts {
    let mut parts = vec![];
    let (mut compared, mut as_good) = (0, 0);
    let mut widths = vec![];
    for (k, &b) in v.intervals.batch_sizes.iter().enumerate() {
        let Some(j) = w.intervals.batch_sizes.iter().position(|&x| x == b) else {
            continue;
        };
        let (sv, (_, hi)) = (v.intervals.steps[k], v.intervals.intervals[k]);
        let sw = w.intervals.steps[j];
        if !sv.is_finite() {
            continue;
        }
        compared += 1;
        let good = sw.is_finite() && sw <= hi;
        as_good += usize::from(good);
        let steps = |x: f64| {
            if x.is_finite() {
                format!("{x:.0}")
            } else {
                "none".into()
            }
        };
        parts.push(format!(
            "batch {b}: {} against {} (interval {}–{})",
            steps(sw),
            steps(sv),
            steps(sv),
            steps(hi)
        ));
        if hi.is_finite() {
            widths.push(format!("{:.0}% at {b}", 100.0 * (hi / sv - 1.0)));
        }
    }
    let verdict = match (compared, as_good) {
        (0, _) => Outcome::cannot_test("no batch size where both reached the target"),
        (n, g) if g == n => Outcome::reproduces(),
        (n, 0) => Outcome::does_not_reproduce(format!("higher at all {n} batch sizes")),
        (n, g) => Outcome::partly(format!("as low at {g} of {n} batch sizes")),
    };
    let test = format!(
        "{} counts as finding steps to result as low as {} where its value is at most the top of the 95% bootstrap interval of {}'s; it detects a search that does worse by more than that interval's width ({})",
        w.label,
        v.label,
        v.label,
        if widths.is_empty() {
            "no interval with an upper end".to_string()
        } else {
            widths.join(", ")
        }
    );
    let measured = format!(
        "steps to result, {} against {}: {}",
        w.label,
        v.label,
        parts.join("; ")
    );
    (measured, verdict, test)
}
