use super::*;
use crate::registry::config_key;

fn parse(text: &str) -> Result<Registry, ConfigError> {
    Registry::parse(&Source {
        origin: "r.toml".into(),
        text: text.into(),
        overrides: Vec::new(),
    })
}

const ONE: &str = r#"
version = 1
[[claim]]
id = "a-claim"
quote = "q"
source = "seed 000"
kind = "step-time"
rule = "linear"
test_of_record = "vgg16-step-time-cpu"
[claim.params]
margin = 0.25
[claim.provenance]
margin = "a stated convention"
"#;

#[test]
fn the_committed_registry_parses_and_every_test_of_record_exists() {
    let registry = Registry::builtin().unwrap();
    assert!(registry.claims.len() >= 40, "{}", registry.claims.len());
    for c in &registry.claims {
        for exp in c
            .test_of_record
            .iter()
            .chain(&c.judged_by)
            .chain(&c.see_also)
        {
            // A GPU campaign's run names its experiment and backend.
            let exists =
                |e: &str| std::path::Path::new(&format!("../../experiments/{e}.toml")).exists();
            let file = campaign_run(exp).map_or(exp.as_str(), |(e, _)| e);
            assert!(
                exists(exp) || exists(file),
                "{}: no experiments/{exp}.toml, nor a campaign run of one",
                c.id
            );
        }
    }
}

#[test]
fn an_id_goes_to_a_finding_without_one_only_while_no_finding_names_it() {
    use batchlab_method::findings::{ClaimText, Outcome};
    let registry = parse(ONE).unwrap();
    let finding = |id: Option<&str>| {
        let claim = ClaimText::new("q", "s").with_id(id.map(str::to_string));
        Finding::new(claim, "linear", Outcome::reproduces(), "m", "t")
    };
    let mut alone = [finding(None)];
    registry.assign_ids("vgg16-step-time-cpu", &mut alone);
    assert_eq!(alone[0].id.as_deref(), Some("a-claim"));
    let mut beside = [finding(Some("a-claim")), finding(None)];
    registry.assign_ids("vgg16-step-time-cpu", &mut beside);
    assert_eq!(beside[1].id, None);
}

#[test]
fn a_parameter_without_provenance_is_refused_by_name() {
    assert!(parse(ONE).is_ok());
    let bad = ONE.replace("margin = \"a stated convention\"", "");
    let err = parse(&bad).unwrap_err().to_string();
    assert!(err.contains("\"margin\" has no provenance"), "{err}");
    let twice = format!("{ONE}{}", &ONE[ONE.find("[[claim]]").unwrap()..]);
    let err = parse(&twice).unwrap_err().to_string();
    assert!(err.contains("registered twice"), "{err}");
    let both = ONE.replace("rule = \"linear\"", "rule = \"linear\"\nuntested = \"x\"");
    let err = parse(&both).unwrap_err().to_string();
    assert!(err.contains("not both or neither"), "{err}");
}

#[test]
fn a_verdict_is_post_hoc_in_the_parameters_fixed_after_its_run() {
    let fixed = ONE.replace(
        "margin = \"a stated convention\"",
        "margin = \"a stated convention\"\n[claim.fixed]\nmargin = { commit = \"abc\", date = \"2026-11-25T19:02:55Z\" }",
    );
    let registry = parse(&fixed).unwrap();
    let c = registry.get("a-claim").unwrap();
    assert!(c.fixed_after("2026-11-26T00:00:00Z").is_empty());
    assert_eq!(c.fixed_after("2026-11-22T04:57:17Z"), ["margin"]);
    // Never recorded: after every run.
    let unrecorded = parse(ONE).unwrap();
    assert_eq!(
        unrecorded
            .get("a-claim")
            .unwrap()
            .fixed_after("2099-01-01T00:00:00Z"),
        ["margin"]
    );
    let stray = fixed.replace("margin = { commit", "positions = { commit");
    let err = parse(&stray).unwrap_err().to_string();
    assert!(
        err.contains("\"positions\" is not one of the claim's parameters"),
        "{err}"
    );
    let local = fixed.replace("19:02:55Z", "19:02:55+01:00");
    let err = parse(&local).unwrap_err().to_string();
    assert!(err.contains("is not a UTC timestamp"), "{err}");
}

#[test]
fn filling_adds_later_claims_and_missing_keys_but_never_changes_a_value() {
    let registry = parse(
        r#"
version = 1
[[claim]]
id = "jumps"
quote = "q"
source = "seed 000"
kind = "step-time"
rule = "no-jumps-at"
test_of_record = "sweep"
[claim.params]
positions = [16, 32]
margin = 0.02
[claim.provenance]
positions = "the seed's text"
margin = "a stated convention"
[[claim]]
id = "regimes"
quote = "q"
source = "seed 004"
kind = "steps-to-target"
rule = "three-regimes"
test_of_record = "study"
[claim.params]
workload = "mlp/wide"
[claim.provenance]
workload = "a label"
"#,
    )
    .unwrap();
    // A resolved sweep config: no positions named (`[]`), its own margin.
    let mut sweep: toml::Table =
        toml::from_str("[analysis]\nno_jumps_at = []\nno_jumps_margin = 0.05\n").unwrap();
    assert!(registry.fill_missing("sweep", &mut sweep, config_key));
    let analysis = sweep["analysis"].as_table().unwrap();
    assert_eq!(analysis["no_jumps_at"], toml::Value::from(vec![16, 32]));
    assert_eq!(analysis["no_jumps_margin"], toml::Value::from(0.05));
    // Nothing left to fill: unchanged, and another experiment's config is left alone.
    assert!(!registry.fill_missing("sweep", &mut sweep, config_key));
    let mut other: toml::Table = toml::from_str("[analysis]\nno_jumps_at = []\n").unwrap();
    assert!(!registry.fill_missing("other", &mut other, config_key));
    // A steps-to-target study that ran before the claim was registered gets its entry.
    let mut study: toml::Table = toml::from_str("[analysis]\n").unwrap();
    assert!(registry.fill_missing("study", &mut study, config_key));
    let entry = &study["analysis"]["claims"][0];
    assert_eq!(entry["id"].as_str(), Some("regimes"));
    assert_eq!(entry["workload"].as_str(), Some("mlp/wide"));
    assert_eq!(entry["rule"].as_str(), Some("three-regimes"));
    // Applying the registry instead overwrites the run's margin.
    registry.apply_to("sweep", &mut sweep, config_key);
    assert_eq!(
        sweep["analysis"]["no_jumps_margin"],
        toml::Value::from(0.02)
    );
}

#[test]
fn a_campaign_run_names_its_experiment_and_backend() {
    use crate::config::BackendKind;
    let tch = campaign_run("vgg16-step-time-tch-cuda");
    assert_eq!(tch, Some(("vgg16-step-time", BackendKind::TchCuda)));
    let cuda = campaign_run("vgg16-step-time-cuda");
    assert_eq!(cuda, Some(("vgg16-step-time", BackendKind::Cuda)));
    assert_eq!(campaign_run("vgg16-step-time-cpu"), None);
    assert_eq!(campaign_run("cuda"), None);
}
