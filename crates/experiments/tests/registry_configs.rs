//! A registered claim's parameters are the ones its test of record judges it with: every
//! parameter in claims/registry.toml equals the key of the experiment's TOML that carries it,
//! so a margin changed in one place and not the other fails here, and a registered parameter no
//! rule reads cannot stand unnoticed.

use std::path::Path;

use batchlab_experiments::claim_registry::{RegisteredClaim, Registry};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn experiment(name: &str) -> toml::Table {
    let path = root().join("experiments").join(format!("{name}.toml"));
    toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The config's value for a registered parameter of a `[[analysis.claims]]` entry.
fn claim_key(entry: &toml::Table, param: &str) -> Option<toml::Value> {
    let pair = |i: usize| {
        entry
            .get("batch_sizes")
            .and_then(|v| v.as_array())
            .and_then(|a| a.get(i).cloned())
    };
    match param {
        "from" => pair(0),
        "to" => pair(1),
        // The config's default budget is the seed's own setup.
        "budget" => Some(
            entry
                .get("budget")
                .cloned()
                .unwrap_or_else(|| "epochs".into()),
        ),
        other => entry.get(other).cloned(),
    }
}

/// The `[analysis]` key of a step-time sweep that carries a registered parameter, with the
/// default a config without it gets.
fn step_time_key(analysis: &toml::Table, rule: &str, param: &str) -> Option<toml::Value> {
    let (key, default): (&str, Option<toml::Value>) = match (rule, param) {
        ("jumps-at", "positions") => ("claimed_jumps", None),
        ("no-jumps-at", "positions") => ("no_jumps_at", None),
        ("no-jumps-at", "margin") => ("no_jumps_margin", Some(0.02.into())),
        ("linear", "margin") => ("linear_margin", Some(0.25.into())),
        ("fluctuates-more", "than") => ("fluctuates_more_than", None),
        _ => return None,
    };
    analysis.get(key).cloned().or(default)
}

/// Where a kind's config keeps a registered parameter's value.
type Lookup = Box<dyn Fn(&str) -> Option<toml::Value>>;

fn same(a: &toml::Value, b: &toml::Value) -> bool {
    match (
        a.as_float().or(a.as_integer().map(|i| i as f64)),
        b.as_float().or(b.as_integer().map(|i| i as f64)),
    ) {
        (Some(x), Some(y)) => (x - y).abs() < 1e-12,
        _ => a == b,
    }
}

fn mismatches(c: &RegisteredClaim, exp: &str) -> Vec<String> {
    let config = experiment(exp);
    let analysis = config
        .get("analysis")
        .and_then(|a| a.as_table())
        .cloned()
        .unwrap_or_default();
    let mut out = vec![];
    let lookup: Lookup = match c.kind.as_str() {
        "train" | "steps-to-target" => {
            let entry = analysis
                .get("claims")
                .and_then(|v| v.as_array())
                .and_then(|claims| {
                    claims
                        .iter()
                        .filter_map(|v| v.as_table())
                        .find(|t| t.get("id").and_then(|v| v.as_str()) == Some(c.id.as_str()))
                        .cloned()
                });
            let Some(entry) = entry else {
                return vec![format!(
                    "{}: no [[analysis.claims]] with this id in {exp}",
                    c.id
                )];
            };
            if entry.get("rule").and_then(|v| v.as_str()) != Some(c.rule.as_str()) {
                out.push(format!("{}: rule differs in {exp}", c.id));
            }
            Box::new(move |p| claim_key(&entry, p))
        }
        "step-time" => {
            let rule = c.rule.clone();
            Box::new(move |p| step_time_key(&analysis, &rule, p))
        }
        _ => Box::new(|_| None),
    };
    for (param, value) in &c.params {
        match lookup(param) {
            Some(v) if same(&v, value) => {}
            Some(v) => out.push(format!(
                "{}: {param} = {value} in the registry, {v} in experiments/{exp}.toml",
                c.id
            )),
            None => out.push(format!(
                "{}: {param} is registered but experiments/{exp}.toml has no key that carries it",
                c.id
            )),
        }
    }
    out
}

#[test]
fn every_registered_parameter_is_the_one_its_test_of_record_uses() {
    let registry = Registry::builtin().unwrap();
    let mut problems = vec![];
    for c in &registry.claims {
        if let Some(exp) = &c.test_of_record {
            problems.extend(mismatches(c, exp));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
