//! Judged claims in words: the one place an [`Outcome`] becomes a sentence, the table every
//! report ends its claims with (the claim quoted with its source, what was measured, the
//! verdict and the test with what it could detect), and the line a report opens with. The
//! kinds decide ([`Finding`]s from their rows); this module only words what they decided.

pub use batchlab_method::findings::{ClaimText, Finding, Outcome, Verdict};

use crate::markdown::table;

/// The verdict with its reason, as a table cell or a sentence writes it.
pub fn words(outcome: &Outcome) -> String {
    let name = outcome.verdict().name();
    match (outcome, outcome.reason()) {
        (Outcome::Inconclusive { detectable }, _) => {
            format!("{name} (the smallest effect this test could have seen: {detectable})")
        }
        (_, Some(reason)) if !reason.is_empty() => format!("{name} ({reason})"),
        _ => name.to_string(),
    }
}

/// The claim as quoted in a table: `"quote" (source); scope`.
pub fn quoted(f: &Finding) -> String {
    let id =
        f.id.as_ref()
            .map(|id| format!(" [{id}]"))
            .unwrap_or_default();
    match &f.scope {
        Some(scope) => format!("\"{}\" ({}){id}; {scope}", f.claim, f.source),
        None => format!("\"{}\" ({}){id}", f.claim, f.source),
    }
}

/// The findings as a markdown table.
pub fn verdict_table(findings: &[Finding]) -> String {
    let rows: Vec<Vec<String>> = findings
        .iter()
        .map(|f| {
            vec![
                quoted(f),
                f.measured.clone(),
                format!("**{}**", words(&f.outcome)),
                f.test.clone(),
            ]
        })
        .collect();
    table(
        &[
            "claim",
            "measured",
            "verdict",
            "test and what it could detect",
        ],
        &rows,
    )
}

/// The verdicts counted, for the line under a report's claim: "2 reproduce, 1 partly, 1
/// inconclusive (table below)"; `None` without findings, so that no report announces a
/// verdict its table does not give.
pub fn tally(findings: &[Finding]) -> Option<String> {
    if findings.is_empty() {
        return None;
    }
    let mut counts: Vec<(Verdict, usize)> = Vec::new();
    for f in findings {
        let v = f.outcome.verdict();
        match counts.iter_mut().find(|(w, _)| *w == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v, 1)),
        }
    }
    counts.sort();
    let parts: Vec<String> = counts
        .iter()
        .map(|(v, n)| format!("{} {n} of {}", v.name(), findings.len()))
        .collect();
    Some(parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(outcome: Outcome) -> Finding {
        Finding::new(
            ClaimText::new("it holds", "seed 003").scoped("adam line"),
            "accuracy-holds",
            outcome,
            "-0.2 points",
            "two one-sided tests",
        )
    }

    #[test]
    fn every_outcome_is_worded_with_its_reason() {
        assert_eq!(words(&Outcome::reproduces()), "reproduces");
        assert_eq!(words(&Outcome::partly("1 of 4")), "partly (1 of 4)");
        assert_eq!(
            words(&Outcome::inconclusive("1.2 points")),
            "inconclusive (the smallest effect this test could have seen: 1.2 points)"
        );
        assert_eq!(
            words(&Outcome::cannot_test("needs a GPU")),
            "cannot be tested here (needs a GPU)"
        );
    }

    #[test]
    fn the_tally_counts_what_the_table_says() {
        let all = [
            finding(Outcome::reproduces()),
            finding(Outcome::does_not_reproduce("it falls")),
            finding(Outcome::reproduces()),
        ];
        assert_eq!(
            tally(&all).unwrap(),
            "reproduces 2 of 3, does not reproduce 1 of 3"
        );
        assert_eq!(tally(&[]), None);
        assert!(verdict_table(&all).contains("\"it holds\" (seed 003); adam line"));
    }
}

/// A local minimum's outcome (`tests_of_claims::local_minimum`), for a training's seeds and a
/// sweep's rounds alike: each side a neighbour's batch size and the log of its time over
/// `at`'s, `faster` the neighbours shown faster. `per` qualifies the time (" per example", or
/// nothing), and `verb` says how a faster neighbour is ("trains", "is").
pub(crate) fn local_minimum_outcome(
    at: u32,
    sides: &[(u32, batchlab_method::tests_of_claims::Difference)],
    faster: &[u32],
    decided: batchlab_method::tests_of_claims::Decision,
    [per, verb]: [&str; 2],
) -> Outcome {
    use batchlab_method::tests_of_claims::Decision;
    let pct = |x: f64| 100.0 * x.exp_m1();
    match decided {
        Decision::Shown => Outcome::reproduces_with(format!(
            "{} slower{per} than {at}",
            sides
                .iter()
                .map(|(b, d)| format!("{b} {:.1}%", pct(d.diff)))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Decision::Refuted => Outcome::does_not_reproduce(format!(
            "{} than {at}",
            sides
                .iter()
                .filter(|(b, _)| faster.contains(b))
                .map(|(b, d)| format!("batch {b} {verb} {:.1}% faster{per}", -pct(d.diff)))
                .collect::<Vec<_>>()
                .join(" and ")
        )),
        Decision::Open => Outcome::inconclusive(format!(
            "a slowdown of {:.1}%{per} at either neighbour (the wider one-sided 95% half-width)",
            sides
                .iter()
                .map(|(_, d)| pct(d.critical() * d.se))
                .fold(0.0, f64::max)
        )),
    }
}

/// A local minimum's numbers: each side's batch size and its log ratio with the ratio's
/// standard error, below then above.
pub(crate) fn local_minimum_quantities(
    sides: &[(u32, batchlab_method::tests_of_claims::Difference)],
) -> Vec<(&'static str, f64)> {
    let names = [
        ("below", "log_ratio_below", "log_ratio_below_se"),
        ("above", "log_ratio_above", "log_ratio_above_se"),
    ];
    sides
        .iter()
        .zip(names)
        .flat_map(|((b, d), (side, ratio, se))| {
            [(side, f64::from(*b)), (ratio, d.diff), (se, d.se)]
        })
        .collect()
}

/// The registered claim each rule of a kind judges on a run, by rule name: its quote and source
/// (`Registry::the_claim_of`, filled by the session from the registry it judges with).
pub type RegisteredClaims = std::collections::BTreeMap<String, (String, String)>;

/// Words each finding of a rule that stands for a registered claim with that claim's quote and
/// source, in place of the kind's own summary: a kind judges some claims from `[analysis]`
/// keys, with no claim text of the config's, and one rule may serve claims of several seeds
/// (step-time's `no-jumps-at`: seed 000's MobileNet, seed 002's powers of two).
pub fn quote_registered(findings: &mut [Finding], registered: &RegisteredClaims) {
    for f in findings {
        if let Some((quote, source)) = registered.get(&f.rule) {
            f.claim.clone_from(quote);
            f.source.clone_from(source);
        }
    }
}

/// What rendering any kind's run gives back: a few lines for the terminal, and the claims
/// judged, which the session writes to `findings.json` (docs/ARCHITECTURE.md, "Verdicts").
/// Every kind's findings convert into it (each kind's module says how).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rendered {
    /// Headline lines for the terminal.
    pub lines: Vec<String>,
    /// The claims judged, in the report's order.
    pub claims: Vec<Finding>,
}
