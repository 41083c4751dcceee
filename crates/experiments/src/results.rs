//! Results published from the reports (docs/ARCHITECTURE.md, "Verdicts"): every registered
//! claim beside the verdicts every committed run that judges it gave it (`batchlab claims`),
//! and the same as `docs/results.md` (`batchlab results`), which CI regenerates and compares,
//! so that no verdict is copied by hand.
//!
//! The verdict of record is chosen by one declared rule ([`RECORD_RULE`]), never by recency
//! alone: per machine (backend, device, threads, kernels) the newest run is that machine's
//! verdict of record, and of those the one on the most faithful backend
//! ([`BackendKind::faithfulness`]) is the claim's, a machine that could not test the claim after
//! every machine that could. A verdict is marked post hoc where a
//! parameter of its rule was fixed after its run started ([`RegisteredClaim::fixed_after`]).

use std::{
    fs,
    path::{Path, PathBuf},
};

use batchlab_method::findings::{Finding, FindingsFile, Verdict};
use batchlab_method::machine::{FastPaths, Machine};
use batchlab_report::markdown::table;
use batchlab_report::verdict::words;

use crate::{
    claim_registry::{RegisteredClaim, Registry, REGISTRY_PATH},
    config::BackendKind,
    error::RunError,
    run_dir::{Meta, RunStatus},
};

/// How the verdict of record is chosen, in the words docs/results.md states it.
pub const RECORD_RULE: &str = "Every committed run that judges a claim is listed: runs of its test of record, of the same study elsewhere (the registry's `judged_by`: the GPU configs) and of the same rule on other models or kernels (`see_also`, listed last and never of record). Of the first two, per machine (backend, device, threads, kernels) the newest run is that machine's verdict of record; of those, the one on the most faithful backend is the claim's (LibTorch on a GPU, then burn-cuda, then LibTorch on a CPU, then flex, then wgpu, which runs on a software rasteriser here: the articles measured on NVIDIA GPUs through cuDNN), a machine whose verdict is \"cannot be tested here\" after every machine that gave one. So a run on another backend or machine never silently replaces a verdict. A run stopped before its end, or made with the backend's fast paths turned off (burn's own ops where its usual step is another), is listed and marked, never of record. A verdict is marked *post hoc* where a parameter of its rule was fixed (`[claim.fixed]` in the registry, a commit a test checks against git) after its run started";

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
    /// The machine, as data: runs on the same hardware ([`Machine::same_hardware`]) are
    /// compared, never pooled across two.
    pub key: Machine,
    /// Whether it can stand for the claim's verdict (a run of its test of record or of the
    /// same study elsewhere, not of another model).
    pub of_record_kind: bool,
    /// A run of its test of record or the same study elsewhere that is set aside: stopped
    /// before its end, or with its backend's fast paths turned off (the machine's words say
    /// which).
    pub set_aside: bool,
    /// Whether it is its machine's newest such run (that machine's verdict of record).
    pub newest_on_machine: bool,
    /// The rule's parameters fixed after the run started (a post hoc verdict), if any.
    pub post_hoc: Vec<String>,
    /// The finding.
    pub finding: Finding,
}

/// A registered claim and every committed verdict on it, the verdict of record first.
#[derive(Debug, Clone)]
pub struct ClaimResult<'a> {
    /// The claim.
    pub claim: &'a RegisteredClaim,
    /// Verdicts from every run that judges it, in [`RECORD_RULE`]'s order: machines by the
    /// faithfulness of their backend, each machine's runs newest first.
    pub runs: Vec<RunVerdict>,
}

impl ClaimResult<'_> {
    /// The verdict of record ([`RECORD_RULE`]), if a run of its test of record or of the same
    /// study elsewhere judged the claim.
    pub fn of_record(&self) -> Option<&RunVerdict> {
        self.runs.first().filter(|v| v.of_record_kind)
    }
}

/// A backend's place in [`RECORD_RULE`]'s order (an unknown name last).
fn faithfulness(machine: &Machine) -> u8 {
    BackendKind::parse(&machine.backend).map_or(u8::MAX, BackendKind::faithfulness)
}

/// Whether a run is whole (complete, or a sharded run's directory) and ran its backend's usual
/// step (its fast paths not turned off): a run that is not is listed, never of record.
fn whole_and_usual(meta: &Meta) -> (bool, bool) {
    let whole = matches!(meta.status, RunStatus::Complete | RunStatus::Sharded);
    (whole, !FastPaths::read(&meta.fast_paths).turned_off())
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
        // Findings a runner judged without an id get the claim their experiment judges
        // under the same rule, as a report rendered now would give them.
        let mut findings = file.findings.clone();
        registry.assign_ids(&file.experiment, &mut findings);
        for f in findings {
            let Some(result) = results
                .iter_mut()
                .find(|r| f.id.as_deref() == Some(r.claim.id.as_str()))
            else {
                continue;
            };
            let post_hoc = result
                .claim
                .fixed_after(&meta.started)
                .into_iter()
                .map(str::to_string)
                .collect();
            let (whole, usual) = whole_and_usual(meta);
            result.runs.push(RunVerdict {
                experiment: file.experiment.clone(),
                run: file.run.clone(),
                started: meta.started.clone(),
                machine: format!(
                    "{}, {} thread{}, {}{}{}{}",
                    file.machine.backend,
                    file.machine.threads,
                    if file.machine.threads == 1 { "" } else { "s" },
                    file.machine.device,
                    if file.machine.kernels.is_empty() {
                        String::new()
                    } else {
                        format!(", {} kernels", file.machine.kernels)
                    },
                    if usual {
                        ""
                    } else {
                        ", fast paths off: burn's own ops"
                    },
                    if whole {
                        ""
                    } else {
                        ", stopped before its end"
                    },
                ),
                key: file.machine.clone(),
                of_record_kind: result.claim.of_record_in(&file.experiment) && whole && usual,
                set_aside: result.claim.of_record_in(&file.experiment) && !(whole && usual),
                newest_on_machine: false,
                post_hoc,
                finding: f,
            });
        }
    }
    for r in &mut results {
        // Runs that can be of record first; machines in order of faithfulness, then of their
        // newest run; a machine's runs together, newest first.
        let newest = |v: &RunVerdict, runs: &[RunVerdict]| {
            runs.iter()
                .filter(|w| w.key.same_hardware(&v.key) && w.of_record_kind == v.of_record_kind)
                .map(|w| w.started.clone())
                .max()
                .unwrap_or_default()
        };
        // A machine whose newest run could not test the claim (a reference it lacked, a GPU
        // the claim needs) gives no verdict: it comes after every machine that gave one.
        let untestable = |v: &RunVerdict, runs: &[RunVerdict]| {
            runs.iter()
                .filter(|w| w.key.same_hardware(&v.key) && w.of_record_kind == v.of_record_kind)
                .max_by(|a, b| a.started.cmp(&b.started))
                .is_some_and(|w| w.finding.outcome.verdict() == Verdict::CannotTest)
        };
        let mut runs: Vec<(bool, bool, u8, String, RunVerdict)> = r
            .runs
            .iter()
            .map(|v| {
                let rank = faithfulness(&v.key);
                let untested = untestable(v, &r.runs);
                (
                    !v.of_record_kind,
                    untested,
                    rank,
                    newest(v, &r.runs),
                    v.clone(),
                )
            })
            .collect();
        runs.sort_by(|(oa, ua, fa, na, a), (ob, ub, fb, nb, b)| {
            oa.cmp(ob)
                .then(ua.cmp(ub))
                .then(fa.cmp(fb))
                .then_with(|| nb.cmp(na))
                .then_with(|| b.started.cmp(&a.started))
        });
        r.runs = runs.into_iter().map(|(.., v)| v).collect();
        let mut seen: Vec<Machine> = vec![];
        for v in r.runs.iter_mut().filter(|v| v.of_record_kind) {
            v.newest_on_machine = !seen.iter().any(|m| m.same_hardware(&v.key));
            if v.newest_on_machine {
                seen.push(v.key.clone());
            }
        }
    }
    Ok(results)
}

/// The verdict of record in a word, or why there is none.
fn status(r: &ClaimResult) -> String {
    match (r.of_record(), &r.claim.untested) {
        (Some(v), _) if !v.post_hoc.is_empty() => format!(
            "{}, post hoc ({} fixed after its run started)",
            words(&v.finding.outcome),
            v.post_hoc.join(", ")
        ),
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
        "Written by `batchlab results` from `{REGISTRY_PATH}` (sha256 `{}`) and the `findings.json` of every committed run under `reports/`; do not edit by hand: `just test` fails when it differs from what they give, and `just batchlab results` writes it again. Each verdict holds for the machine named: rows are never pooled across machines. The seeds (000 to 004) are the five source articles, cited in full (author, title, year, address, as each text names itself) in [experiments.md](experiments.md#sources).\n\n{RECORD_RULE}.\n\n",
        registry.sha256
    ));
    let mut counts: Vec<(String, usize)> = vec![];
    for r in results {
        let v = record_word(r).to_string();
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
    md.push_str(&glance(results));
    for kind in crate::kind::Kind::ALL {
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

/// The table a reader scans first: each claim in a line, its statement cut short, the verdict
/// of record on each device that has one (the claim's own first), and its report; the quotes,
/// sources, rules and every other run follow per kind below it.
fn glance(results: &[ClaimResult]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            // Per device, its most faithful machine's verdict (the runs come in that order).
            let mut devices: Vec<&str> = vec![];
            let per_machine: Vec<String> = r
                .runs
                .iter()
                .filter(|v| v.newest_on_machine)
                .filter(|v| {
                    let device = device_short(&v.key);
                    let first = !devices.contains(&device);
                    devices.push(device);
                    first
                })
                .map(|v| {
                    let post_hoc = if v.post_hoc.is_empty() {
                        ""
                    } else {
                        ", post hoc"
                    };
                    format!(
                        "{}{post_hoc} on {} ({})",
                        v.finding.outcome.verdict().name(),
                        device_short(&v.key),
                        v.key.backend
                    )
                })
                .collect();
            let verdicts = if per_machine.is_empty() {
                record_word(r).to_string()
            } else {
                per_machine.join("; ")
            };
            let report = r.of_record().map_or("–".into(), |v| {
                format!(
                    "[{}](../reports/{}/{}/report.md)",
                    v.experiment, v.experiment, v.run
                )
            });
            vec![
                format!("[`{}`](#{})", r.claim.id, r.claim.kind),
                short(&r.claim.quote),
                verdicts,
                report,
            ]
        })
        .collect();
    format!(
        "\n## At a glance\n\nEvery claim in one line: what it says (cut short; the quote in full below), its verdict of record on each device that judged it (that device's most faithful backend, the claim's own verdict first), and the report of the claim's verdict of record.\n\n{}",
        table(
            &["claim", "says", "verdict of record, per device", "report"],
            &rows
        )
    )
}

/// The verdict of record in a word, or why there is none: what the counts tally and the glance
/// table shows for a claim no machine judged.
fn record_word(r: &ClaimResult) -> &'static str {
    match (r.of_record(), &r.claim.untested) {
        (Some(v), _) => v.finding.outcome.verdict().name(),
        (None, Some(why)) if why.starts_with("cannot be tested here") => Verdict::CannotTest.name(),
        _ => "not yet tested",
    }
}

/// "NVIDIA H200", "AMD EPYC": a device's first part, as meta.json names it.
fn device_short(m: &Machine) -> &str {
    m.device.split(',').next().unwrap_or(&m.device).trim()
}

/// A quote cut to about 90 characters, at a word.
fn short(quote: &str) -> String {
    const MOST: usize = 90;
    if quote.chars().count() <= MOST {
        return quote.to_string();
    }
    let mut cut = String::new();
    for word in quote.split(' ') {
        if cut.chars().count() + word.chars().count() + 1 > MOST {
            break;
        }
        if !cut.is_empty() {
            cut.push(' ');
        }
        cut.push_str(word);
    }
    format!("{cut} …")
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
            let first = |text: &str| {
                if i == 0 {
                    text.to_string()
                } else {
                    String::new()
                }
            };
            let standing = match (i, v.of_record_kind, v.newest_on_machine) {
                (_, false, _) if v.set_aside => ", set aside",
                (_, false, _) => ", another model or kernels",
                (0, true, _) => ", verdict of record",
                (_, true, true) => ", of record on its machine",
                _ => "",
            };
            let post_hoc = if v.post_hoc.is_empty() {
                String::new()
            } else {
                format!(
                    "; *post hoc*: {} fixed after this run started",
                    v.post_hoc.join(", ")
                )
            };
            vec![
                if i == 0 { claim.clone() } else { "″".into() },
                first(&r.claim.source),
                first(&r.claim.rule),
                format!(
                    "[{}/{}](../reports/{}/{}/report.md){standing} ({})",
                    v.experiment, v.run, v.experiment, v.run, v.machine
                ),
                format!("{}{post_hoc}", words(&v.finding.outcome)),
            ]
        })
        .collect()
}
