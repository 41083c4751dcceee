//! Results published from the reports (docs/ARCHITECTURE.md, "Verdicts"): every registered
//! claim beside the verdicts the committed runs of its test of record gave it (`batchlab
//! claims`), and the same as `docs/results.md` (`batchlab results`), which CI regenerates and
//! compares, so that no verdict is copied by hand.

use std::{
    fs,
    path::{Path, PathBuf},
};

use batchlab_method::findings::{Finding, FindingsFile, Verdict};
use batchlab_report::markdown::table;
use batchlab_report::verdict::words;

use crate::{
    claim_registry::{RegisteredClaim, Registry, REGISTRY_PATH},
    error::RunError,
    run_dir::Meta,
};

/// One run's verdict on one claim.
#[derive(Debug, Clone)]
pub struct RunVerdict {
    /// The experiment the run belongs to.
    pub experiment: String,
    /// The run directory's name.
    pub run: String,
    /// When it started (meta.json), for ordering.
    pub started: String,
    /// Backend, device and threads, in words.
    pub machine: String,
    /// The finding.
    pub finding: Finding,
}

/// A registered claim and every committed verdict on it, newest run first.
#[derive(Debug, Clone)]
pub struct ClaimResult<'a> {
    /// The claim.
    pub claim: &'a RegisteredClaim,
    /// Verdicts from the runs of its test of record (and of any other experiment that judged
    /// it by id).
    pub runs: Vec<RunVerdict>,
}

impl ClaimResult<'_> {
    /// The verdict of the newest run of the test of record, if any run judged the claim.
    pub fn of_record(&self) -> Option<&RunVerdict> {
        let record = self.claim.test_of_record.as_deref();
        self.runs
            .iter()
            .find(|r| Some(r.experiment.as_str()) == record)
    }
}

/// Every `findings.json` under `root/<experiment>/<run>/` (the `latest` links skipped), with its
/// run's meta.json.
fn findings_files(root: &Path) -> Result<Vec<(FindingsFile, Meta)>, RunError> {
    let mut out = vec![];
    let experiments = fs::read_dir(root).map_err(|e| RunError::io(root, e))?;
    let mut dirs: Vec<PathBuf> = experiments
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for experiment in dirs {
        let mut runs: Vec<PathBuf> = fs::read_dir(&experiment)
            .map_err(|e| RunError::io(&experiment, e))?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        runs.sort();
        for run in runs {
            let path = run.join("findings.json");
            if !path.exists() {
                continue;
            }
            let text = fs::read_to_string(&path).map_err(|e| RunError::io(&path, e))?;
            let file: FindingsFile = serde_json::from_str(&text)
                .map_err(|e| RunError::io(&path, format!("not a batchlab findings.json: {e}")))?;
            out.push((file, Meta::read(&run)?));
        }
    }
    Ok(out)
}

/// Every registered claim with the verdicts the runs under `root` gave it.
pub fn collect<'a>(registry: &'a Registry, root: &Path) -> Result<Vec<ClaimResult<'a>>, RunError> {
    let files = findings_files(root)?;
    let mut results: Vec<ClaimResult<'a>> = registry
        .claims
        .iter()
        .map(|claim| ClaimResult {
            claim,
            runs: vec![],
        })
        .collect();
    for (file, meta) in &files {
        for f in &file.findings {
            let Some(result) = results
                .iter_mut()
                .find(|r| f.id.as_deref() == Some(r.claim.id.as_str()))
            else {
                continue;
            };
            result.runs.push(RunVerdict {
                experiment: file.experiment.clone(),
                run: file.run.clone(),
                started: meta.started.clone(),
                machine: format!(
                    "{}, {} thread{}, {}",
                    file.machine.backend,
                    file.machine.threads,
                    if file.machine.threads == 1 { "" } else { "s" },
                    file.machine.device
                ),
                finding: f.clone(),
            });
        }
    }
    for r in &mut results {
        let record = r.claim.test_of_record.clone();
        // The test of record first, newest run first within an experiment.
        r.runs.sort_by(|a, b| {
            (Some(&a.experiment) != record.as_ref())
                .cmp(&(Some(&b.experiment) != record.as_ref()))
                .then_with(|| b.started.cmp(&a.started))
        });
    }
    Ok(results)
}

/// The verdict of record in a word, or why there is none.
fn status(r: &ClaimResult) -> String {
    match (r.of_record(), &r.claim.untested) {
        (Some(v), _) => words(&v.finding.outcome),
        (None, Some(why)) => match why.strip_prefix("cannot be tested here: ") {
            Some(why) => format!("{} ({why})", Verdict::CannotTest.name()),
            None => format!("not yet tested ({why})"),
        },
        (None, None) => format!(
            "not yet judged: no committed run of {} names this claim",
            r.claim
                .test_of_record
                .as_deref()
                .unwrap_or("its test of record")
        ),
    }
}

/// One line per claim, for the terminal: id, verdict of record, and how many runs judged it.
pub fn claims_lines(results: &[ClaimResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| {
            let others = r.runs.len().saturating_sub(1);
            format!(
                "{}: {}{}",
                r.claim.id,
                status(r),
                if r.runs.is_empty() || others == 0 {
                    String::new()
                } else {
                    format!(
                        " [+{others} other run{}]",
                        if others == 1 { "" } else { "s" }
                    )
                }
            )
        })
        .collect()
}

/// `docs/results.md`: a count of the verdicts of record, then per kind of study a table of
/// every claim with every committed run's verdict.
pub fn results_markdown(registry: &Registry, results: &[ClaimResult]) -> String {
    let mut md = String::from("# Results: every registered claim and its verdict\n\n");
    md.push_str(&format!(
        "Written by `batchlab results` from `{REGISTRY_PATH}` (sha256 `{}`) and the `findings.json` of every committed run under `reports/`; do not edit by hand: `just test` fails when it differs from what they give, and `just batchlab results` writes it again. A claim's verdict of record is the newest committed run of its test of record; other runs (other backends, machines, or experiments that judge it) are listed beside it. Each verdict holds for the machine named: rows are never pooled across machines.\n\n",
        registry.sha256
    ));
    let mut counts: Vec<(String, usize)> = vec![];
    for r in results {
        let v = match (r.of_record(), &r.claim.untested) {
            (Some(v), _) => v.finding.outcome.verdict().name(),
            (None, Some(why)) if why.starts_with("cannot be tested here") => {
                Verdict::CannotTest.name()
            }
            _ => "not yet tested",
        }
        .to_string();
        match counts.iter_mut().find(|(k, _)| *k == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v, 1)),
        }
    }
    counts.sort();
    md.push_str(&format!(
        "{} claims registered. Verdicts of record: ",
        results.len()
    ));
    md.push_str(
        &counts
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    md.push_str(".\n");
    for kind in ["step-time", "train", "find-batch", "steps-to-target"] {
        let rows: Vec<Vec<String>> = results
            .iter()
            .filter(|r| r.claim.kind == kind)
            .flat_map(rows_of)
            .collect();
        md.push_str(&format!("\n## {kind}\n\n"));
        md.push_str(&table(
            &["claim", "source", "rule", "run", "verdict"],
            &rows,
        ));
    }
    md
}

/// A claim's rows: one per run that judged it, or one saying why none did.
fn rows_of(r: &ClaimResult) -> Vec<Vec<String>> {
    let claim = format!("`{}`: \"{}\"", r.claim.id, r.claim.quote);
    if r.runs.is_empty() {
        return vec![vec![
            claim,
            r.claim.source.clone(),
            r.claim.rule.clone(),
            "–".into(),
            status(r),
        ]];
    }
    r.runs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let record = Some(v.experiment.as_str()) == r.claim.test_of_record.as_deref();
            vec![
                if i == 0 { claim.clone() } else { "″".into() },
                if i == 0 {
                    r.claim.source.clone()
                } else {
                    String::new()
                },
                if i == 0 {
                    r.claim.rule.clone()
                } else {
                    String::new()
                },
                format!(
                    "[{}/{}](../reports/{}/{}/report.md){} ({})",
                    v.experiment,
                    v.run,
                    v.experiment,
                    v.run,
                    if record && i == 0 { ", of record" } else { "" },
                    v.machine
                ),
                words(&v.finding.outcome),
            ]
        })
        .collect()
}
