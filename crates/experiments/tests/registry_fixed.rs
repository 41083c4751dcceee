//! Pre-registration you can check: every parameter's `[claim.fixed]` record in
//! claims/registry.toml names a commit that exists in this repository's history, with its
//! committer date, at which the registry already gave the parameter its present value.

use std::path::Path;
use std::process::Command;

use batchlab_experiments::claim_registry::Registry;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(ROOT)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether the full history is here: a copy without .git, or a shallow clone, cannot show it.
fn history_here() -> bool {
    Path::new(ROOT).join(".git").exists()
        && git(&["rev-parse", "--is-shallow-repository"]).as_deref() == Some("false")
}

#[test]
fn every_recorded_fixing_commit_exists_and_held_the_value() {
    if !history_here() {
        eprintln!("no full git history here: the fixing commits cannot be checked");
        return;
    }
    let registry = Registry::builtin().unwrap();
    let mut problems = vec![];
    let mut checked = 0;
    for c in &registry.claims {
        for (param, fixed) in &c.fixed {
            let spec = format!("{}^{{commit}}", fixed.commit);
            if git(&["rev-parse", "--verify", "--quiet", &spec]).is_none() {
                problems.push(format!("{}.{param}: no commit {}", c.id, fixed.commit));
                continue;
            }
            let date = git(&["show", "-s", "--format=%cI", &fixed.commit]).unwrap_or_default();
            if date != fixed.date {
                problems.push(format!(
                    "{}.{param}: commit {} is dated {date}, the registry says {}",
                    c.id, fixed.commit, fixed.date
                ));
            }
            let then = git(&["show", &format!("{}:claims/registry.toml", fixed.commit)])
                .and_then(|text| text.parse::<toml::Table>().ok());
            let value = then.as_ref().and_then(|t| {
                t.get("claim")?
                    .as_array()?
                    .iter()
                    .find(|x| x.get("id").and_then(|v| v.as_str()) == Some(c.id.as_str()))?
                    .get("params")?
                    .get(param)
                    .cloned()
            });
            if value.as_ref() != c.params.get(param) {
                problems.push(format!(
                    "{}.{param}: at {} the registry gave {value:?}, now {:?}",
                    c.id,
                    fixed.commit,
                    c.params.get(param)
                ));
            }
            checked += 1;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked > 100, "only {checked} fixing records");
}
