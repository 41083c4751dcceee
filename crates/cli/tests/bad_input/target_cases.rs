//! Bad steps-to-target configs: the search, workloads and the claims' rules and margins.

use super::{case, Case};

fn target(set: &str) -> [&str; 4] {
    ["check", "target.toml", "--set", set]
}

/// Steps-to-target searches: batch sizes, trials, workloads, claims.
pub fn cases() -> Vec<Case> {
    vec![
        case(
            "search batch size repeated",
            &target("search.batch_sizes=[8,8]"),
            1,
            &["search.batch_sizes", "8 is listed twice"],
        ),
        case(
            "search zero trials",
            &target("search.trials=0"),
            1,
            &["search.trials", "expected at least 1"],
        ),
        case(
            "search beyond any run",
            &target("search.trials=1000000"),
            1,
            &["4000000 trials", "at most 1000000"],
        ),
        case(
            "search no workloads",
            &target("workloads=[]"),
            1,
            &["at least one [[workloads]]"],
        ),
        case(
            "refine factor not above 1",
            &target("search.refine={trials=4,factor=0.5}"),
            1,
            &["search.refine.factor", "above 1"],
        ),
        case(
            "refine trials without a refining stage",
            &target(
                r#"workloads=[{model={architecture="mlp",input=[1,8,8],classes=4,hidden=[32]},optimizer={name="sgd"},refine_trials=4}]"#,
            ),
            1,
            &["workloads[0].refine_trials", "needs [search.refine]"],
        ),
        case(
            "beaten trials stopped before the best",
            &target("budget.beaten_factor=0.5"),
            1,
            &["budget.beaten_factor", ">= 1"],
        ),
        case(
            "step floor above the step cap",
            &target("budget.min_steps=100000000"),
            1,
            &["budget", "min_steps", "at most max_steps"],
        ),
        case(
            "regime bands out of order",
            &target("analysis.plateau_slope_from=-2.0"),
            1,
            &[
                "analysis.perfect_slope_to",
                "perfect_slope_from < perfect_slope_to < plateau_slope_from",
            ],
        ),
        case(
            "points neither shared nor per batch size",
            &target("search.points=\"each\""),
            1,
            &["unknown variant `each`", "per-batch-size"],
        ),
        case(
            "workload name unfit for ids",
            &target(
                r#"workloads=[{model={architecture="mlp",input=[1,8,8],classes=4,hidden=[32]},optimizer={name="sgd"},name="two stage"}]"#,
            ),
            1,
            &["workloads[0].name", "letters, digits and dashes"],
        ),
        case(
            "a workload on no training examples",
            &target(
                r#"workloads=[{model={architecture="mlp",input=[1,8,8],classes=4,hidden=[32]},optimizer={name="sgd"},train_examples=0}]"#,
            ),
            1,
            &["workloads[0].train_examples", "at least 1"],
        ),
        case(
            "claim about no workload",
            &target(
                r#"analysis.claims=[{claim="x",source="s",workload="mlp/adam",rule="three-regimes"}]"#,
            ),
            1,
            &[
                "analysis.claims[0].workload",
                "names no workload",
                "mlp/sgd",
            ],
        ),
        case(
            "step times for no workload",
            &target(r#"analysis.step_times=[{workload="cnn",report="reports/x/latest"}]"#),
            1,
            &[
                "analysis.step_times[0].workload",
                "names no workload",
                "mlp/sgd",
            ],
        ),
        case(
            "comparison without a second workload",
            &target(
                r#"analysis.claims=[{claim="x",source="s",workload="mlp/sgd-nesterov",rule="extends-perfect-scaling"}]"#,
            ),
            1,
            &["analysis.claims[0].versus", "name the second"],
        ),
        case(
            "a maximum-useful-batch claim without its margin",
            &target(
                r#"analysis.claims=[{claim="x",source="s",workload="mlp/sgd-nesterov",rule="max-useful-batch-equal",versus="mlp/sgd"}]"#,
            ),
            1,
            &["analysis.claims[0].margin", "e.g. margin = 2.0"],
        ),
        case(
            "a margin of 1 or less",
            &target(
                r#"analysis.claims=[{claim="x",source="s",workload="mlp/sgd-nesterov",rule="max-useful-batch-differs",versus="mlp/sgd",margin=0.5}]"#,
            ),
            1,
            &["analysis.claims[0].margin", "a factor above 1, got 0.5"],
        ),
        case(
            "an error margin beyond 100 points",
            &target(
                r#"analysis.claims=[{claim="x",source="s",workload="mlp/sgd-nesterov",rule="best-error-equal",margin=150.0}]"#,
            ),
            1,
            &[
                "analysis.claims[0].margin",
                "points of validation error between 0 and 100, got 150",
            ],
        ),
        case(
            "a margin on a rule that takes none",
            &target(
                r#"analysis.claims=[{claim="x",source="s",workload="mlp/sgd-nesterov",rule="three-regimes",margin=2.0}]"#,
            ),
            1,
            &["analysis.claims[0].margin", "remove it"],
        ),
    ]
}
