//! Bad batch-size finder configs: budgets, the curve, the search's range.

use super::{case, owned, repo, Case};

/// The batch-size finder: budgets, the curve, the search's range.
pub fn cases() -> Vec<Case> {
    let vgg = repo("experiments/vgg16-find-batch-cpu.toml");
    let find = |set: &str| vec!["check".to_string(), vgg.clone(), "--set".into(), set.into()];
    vec![
        owned(
            find("search.memory_budget=\"lots\""),
            "budget not a size",
            1,
            &["search.memory_budget", "expected a size such as \"4GiB\""],
        ),
        owned(
            find("search.memory_budget=\"100MiB\""),
            "budget below the model",
            1,
            &[
                "search.memory_budget",
                "below the model's own memory",
                "33638218 parameters",
            ],
        ),
        owned(
            find("curve.batch_sizes=[]"),
            "curve empty",
            1,
            &["curve.batch_sizes", "at least two batch sizes"],
        ),
        owned(
            find("search.max_batch=8"),
            "search start above its cap",
            1,
            &["search", "1 <= search.start <= search.max_batch"],
        ),
        owned(
            find("recommendation.headroom=1.5"),
            "headroom not a fraction",
            1,
            &["recommendation.headroom", "fraction in [0, 1)"],
        ),
        owned(
            find("analysis.memory_growth_margin=0.8"),
            "a memory-growth margin below 1",
            1,
            &["analysis.memory_growth_margin", "a ratio above 1"],
        ),
        owned(
            find("search.limit=\"ulimit\""),
            "unknown limit",
            1,
            &["search.limit", "unknown variant"],
        ),
        case(
            "find-batch unknown model",
            &["find-batch", "alexnet"],
            2,
            &["alexnet"],
        ),
        case(
            "find-batch budget below the model",
            &["find-batch", "vgg16", "--memory-budget", "1MiB"],
            1,
            &["search.memory_budget", "below the model's own memory"],
        ),
    ]
}
