//! A verdict on a published claim, and the table every report ends its claims with: the claim
//! (quoted, with its source), what was measured, the verdict (reproduces / does not reproduce /
//! partly / cannot be tested here, and why) and the test behind it with what it could detect.
//! Each kind derives its verdicts from its data by a rule stated in the `test` column.

use crate::markdown::table;

/// A claim, what was measured, the verdict and the rule behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The claim, with its source.
    pub claim: String,
    /// What this run measured.
    pub measured: String,
    /// reproduces / does not reproduce / partly / cannot be tested here (with the reason).
    pub verdict: String,
    /// The rule and what it could detect.
    pub test: String,
}

/// The verdicts as a markdown table.
pub fn verdict_table(verdicts: &[Verdict]) -> String {
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| {
            vec![
                v.claim.clone(),
                v.measured.clone(),
                format!("**{}**", v.verdict),
                v.test.clone(),
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
