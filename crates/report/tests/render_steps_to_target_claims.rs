//! The claims table of a steps-to-target report, judged from the synthetic study's curves
//! (`synthetic_target`).

mod synthetic_target;

use batchlab_report::steps_to_target::{render_target, TargetClaim, TargetClaimRule};
use synthetic_target::{context, out_dir, write_study};

fn claim(workload: &str, rule: TargetClaimRule, versus: Option<&str>) -> TargetClaim {
    TargetClaim {
        id: None,
        claim: format!("{rule:?}"),
        source: "a test".into(),
        workload: workload.into(),
        rule,
        versus: versus.map(str::to_string),
    }
}

/// The verdict cell of the claims table's row whose claim cell starts with `start`.
fn verdict_of<'a>(report: &'a str, start: &str) -> &'a str {
    let table = &report[report.find("## Claims").expect("a claims section")..];
    let row = table
        .lines()
        .find(|l| l.starts_with(&format!("| \"{start}")))
        .unwrap_or_else(|| panic!("no row {start}:\n{table}"));
    row.split(" | ").nth(2).unwrap()
}

#[test]
fn each_claim_is_judged_from_the_curves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = out_dir(&tmp, "target-claims");
    write_study(&dir, |_| true);
    let mut ctx = context(vec![]);
    use TargetClaimRule::*;
    ctx.claims = vec![
        claim("mlp/sgd", ThreeRegimes, None),
        claim("mlp/sgd-momentum", ExtendsPerfectScaling, Some("mlp/sgd")),
        claim("mlp/sgd", MatchesSearch, Some("mlp/sgd-momentum")),
        claim("mlp/adam", ThreeRegimes, None),
    ];
    render_target(&dir, &ctx).unwrap();
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // Perfect 4-16, diminishing 128-512, plateau 512-4096 (see the regimes test).
    assert_eq!(
        verdict_of(&report, "ThreeRegimes\" (a test); mlp/sgd"),
        "**reproduces**"
    );
    // B_crit 256 against 128: the ratio's bootstrap interval lies above 1.
    assert_eq!(
        verdict_of(&report, "ExtendsPerfectScaling"),
        "**reproduces**"
    );
    // Swapped, the ratio lies below 1.
    let mut swapped = ctx.clone();
    swapped.claims = vec![claim(
        "mlp/sgd",
        ExtendsPerfectScaling,
        Some("mlp/sgd-momentum"),
    )];
    render_target(&dir, &swapped).unwrap();
    let report_swapped = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let refuted = verdict_of(&report_swapped, "ExtendsPerfectScaling");
    assert!(
        refuted.starts_with("**does not reproduce (its critical batch size is smaller"),
        "{refuted}"
    );
    // S_sgd = 500 + 64000 / B against S_momentum = 300 + 76800 / B: plain SGD needs fewer
    // steps below batch 64 and more above it.
    let matched = verdict_of(&report, "MatchesSearch");
    assert!(matched.starts_with("**partly (as low at "), "{matched}");
    assert!(verdict_of(&report, "ThreeRegimes\" (a test); mlp/adam")
        .contains("cannot be tested here (no data for mlp/adam)"));
}
