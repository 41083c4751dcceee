//! A registered claim's parameters are the ones its test of record judges it with: every
//! parameter in claims/registry.toml equals the key of the experiment's TOML that carries it
//! (`registry::config_key`, which each kind's runner answers), so a margin changed in one place and not the other fails
//! here, and a registered parameter no rule reads cannot stand unnoticed.

use std::path::Path;

use batchlab_experiments::claim_registry::{campaign_run, ConfigKey, RegisteredClaim, Registry};
use batchlab_experiments::kind::Kind;
use batchlab_experiments::registry::config_key;

/// experiments/NAME.toml, or for a GPU campaign's run name the experiment it ran.
fn experiment(name: &str) -> toml::Table {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments"));
    let mut path = dir.join(format!("{name}.toml"));
    if let (false, Some((file, _))) = (path.exists(), campaign_run(name)) {
        path = dir.join(format!("{file}.toml"));
    }
    toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Numbers compare as numbers (0.25 and a TOML integer alike), the rest as values.
fn same(a: &toml::Value, b: &toml::Value) -> bool {
    let number = |v: &toml::Value| v.as_float().or(v.as_integer().map(|i| i as f64));
    match (number(a), number(b)) {
        (Some(x), Some(y)) => (x - y).abs() < 1e-12,
        _ => a == b,
    }
}

/// The config's value for `key`, for the claim `c` (its `[[analysis.claims]]` entry by id).
fn value_in(config: &toml::Table, c: &RegisteredClaim, key: ConfigKey) -> Option<toml::Value> {
    let config_table = |name: &str| config.get(name).and_then(|t| t.as_table());
    let empty = toml::Table::new();
    let analysis = config_table("analysis").unwrap_or(&empty);
    let entry = || {
        analysis
            .get("claims")?
            .as_array()?
            .iter()
            .filter_map(|v| v.as_table())
            .find(|t| t.get("id").and_then(|v| v.as_str()) == Some(c.id.as_str()))
            .cloned()
    };
    match key {
        // A config without `budget` judges the seed's own epoch budget.
        ConfigKey::Entry("budget") => Some(
            entry()?
                .get("budget")
                .cloned()
                .unwrap_or_else(|| "epochs".into()),
        ),
        ConfigKey::Entry(name) => entry()?.get(name).cloned(),
        ConfigKey::EntryBatch(i) => entry()?.get("batch_sizes")?.as_array()?.get(i).cloned(),
        ConfigKey::Analysis(name, default) => analysis
            .get(name)
            .cloned()
            .or(default.map(toml::Value::from)),
        ConfigKey::Table(table, name, default) => Some(
            config_table(table)
                .and_then(|t| t.get(name).cloned())
                .unwrap_or_else(|| default.into()),
        ),
        ConfigKey::AnalysisText(name, default) => Some(
            analysis
                .get(name)
                .cloned()
                .unwrap_or_else(|| default.into()),
        ),
    }
}

fn mismatches(c: &RegisteredClaim, exp: &str) -> Vec<String> {
    let config = experiment(exp);
    let mut out = vec![];
    if matches!(c.kind, Kind::Train | Kind::StepsToTarget) {
        let rule = value_in(&config, c, ConfigKey::Entry("rule"));
        if rule.as_ref().and_then(|r| r.as_str()) != Some(c.rule.as_str()) {
            out.push(format!(
                "{}: experiments/{exp}.toml has no [[analysis.claims]] with this id and rule {:?}",
                c.id, c.rule
            ));
        }
    }
    for (param, value) in &c.params {
        let Some(key) = config_key(c.kind, &c.rule, param) else {
            out.push(format!(
                "{}: {param} is registered but no rule reads it",
                c.id
            ));
            continue;
        };
        match value_in(&config, c, key) {
            Some(v) if same(&v, value) => {}
            Some(v) => out.push(format!(
                "{}: {param} = {value} in the registry, {v} in experiments/{exp}.toml",
                c.id
            )),
            None => out.push(format!(
                "{}: {param} is registered but experiments/{exp}.toml does not set it",
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
        for exp in c.test_of_record.iter().chain(&c.judged_by) {
            problems.extend(mismatches(c, exp));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_registry_applied_to_a_config_carries_its_parameters_into_it() {
    let registry = Registry::builtin().unwrap();
    let mut config = experiment("sgd-vs-adam-fmnist");
    registry.apply_to("sgd-vs-adam-fmnist", &mut config, config_key);
    let holds = registry.get("adam-holds-up-to-64").unwrap();
    assert_eq!(
        value_in(&config, holds, ConfigKey::Entry("margin")),
        Some(toml::Value::from(2.5))
    );
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../claims/registry.toml"
    ))
    .unwrap();
    // A registry with another margin for adam-holds-up-to-64 moves it into the config.
    let other = text.replacen(
        "[claim.params]\nseries = \"adam\"\nbudget = \"epochs\"\nfrom = 16\nto = 64\nmargin = 2.5",
        "[claim.params]\nseries = \"adam\"\nbudget = \"epochs\"\nfrom = 16\nto = 64\nmargin = 0.5",
        1,
    );
    assert_ne!(
        other, text,
        "the registry's adam-holds-up-to-64 block moved"
    );
    let other = Registry::parse(&batchlab_experiments::Source {
        origin: "other.toml".into(),
        text: other,
        overrides: vec![],
    })
    .unwrap();
    other.apply_to("sgd-vs-adam-fmnist", &mut config, config_key);
    let c = other.get("adam-holds-up-to-64").unwrap();
    assert_eq!(
        value_in(&config, c, ConfigKey::Entry("margin")),
        Some(toml::Value::from(0.5))
    );
}
