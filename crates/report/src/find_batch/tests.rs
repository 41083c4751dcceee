//! The finder's report on synthetic probes: the memory model, the replayed search, the
//! recommendation and the verdicts.

use crate::About;
use batchlab_method::findings::Verdict;
use batchlab_method::rows::find_batch::ProbePhase;
use batchlab_method::rows::Status;
use batchlab_method::rows::{append_rows, find_batch::ProbeSample};

use super::analysis::{predict_max, SearchEnd};
use super::*;

/// Memory 100 MiB + 2 MiB per example (plus `noise`), a step of 10 ms + 1 ms per example on
/// two threads, utilization rising to a plateau.
fn probe(
    phase: ProbePhase,
    index: u32,
    batch: u32,
    fits_up_to: u32,
    noise: f64,
) -> Vec<ProbeSample> {
    let ok = batch <= fits_up_to;
    let step = 10.0 + f64::from(batch);
    let utilization = (0.3 + 0.1 * f64::from(batch).log2()).min(0.9);
    let base = ProbeSample {
        phase,
        probe: index,
        batch_size: batch,
        repeat: 0,
        sample: None,
        step_ms: None,
        cpu_ms: None,
        status: if ok { Status::Ok } else { Status::Oom },
        peak_rss_mb: ok.then_some(90.0 + 2.0 * f64::from(batch)),
        limited_peak_mb: ok.then_some(100.0 + 2.0 * f64::from(batch) + noise),
        limit: "cgroup-v1".into(),
        budget_mb: 1024.0,
        threads: 2,
        backend: "flex".into(),
        device: "cpu".into(),
        message: String::new(),
    };
    if !ok {
        return vec![base];
    }
    (0..3)
        .map(|i| ProbeSample {
            sample: Some(i),
            step_ms: Some(step),
            cpu_ms: Some(step * 2.0 * utilization),
            ..base.clone()
        })
        .collect()
}

fn context() -> FindBatchContext {
    FindBatchContext {
        utilization_step: 0.05,
        about: About {
            experiment: "t".into(),
            description: "test".into(),
            reproduces: None,
            claim: None,
            backend: "flex".into(),
            device: "cpu".into(),
            protocol: "p".into(),
        },
        model: "mlp".into(),
        budget_mb: Some(1024.0),
        budget: "1 GiB".into(),
        fixed_estimate_mb: 50.0,
        fixed_estimate: "by hand".into(),
        activations_mb_per_example: 1.0,
        search_start: 1,
        search_cap: 4096,
        headroom: 0.1,
        throughput_tolerance: 0.05,
        utilization_measured: true,
        memory_references: vec![],
        memory_margin: 1.5,
        registered_claims: Default::default(),
    }
}

/// Renders a study whose curve visits `curve` ((batch size, noise) in visiting order) and
/// whose search finds that 462 fits and 463 does not: (1024 - 100) / 2 = 462.
fn render_study(curve: &[(u32, f64)]) -> (tempfile::TempDir, FindBatchFindings, String) {
    let rows = curve
        .iter()
        .enumerate()
        .flat_map(|(i, &(b, noise))| probe(ProbePhase::Curve, i as u32, b, FITS, noise))
        .collect();
    render_with_search(rows)
}

/// The largest batch size the synthetic studies' search finds: (1024 - 100) / 2.
const FITS: u32 = 462;

/// Renders `curve` rows followed by the search that finds [`FITS`] fits and one more does not.
fn render_with_search(
    mut rows: Vec<ProbeSample>,
) -> (tempfile::TempDir, FindBatchFindings, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probes.csv");
    let search = BatchSearch {
        start: 1,
        cap: 4096,
    };
    let mut outcomes = Vec::new();
    while let Next::Probe(b) = search.next(&outcomes) {
        rows.extend(probe(
            ProbePhase::Search,
            outcomes.len() as u32,
            b,
            FITS,
            0.0,
        ));
        outcomes.push((
            b,
            if b <= FITS {
                ProbeOutcome::Fits
            } else {
                ProbeOutcome::OutOfMemory
            },
        ));
    }
    append_rows(&path, &rows).unwrap();
    let findings = render_find_batch(&path, dir.path(), &context()).unwrap();
    let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    (dir, findings, report)
}

const SHORT_CURVE: [(u32, f64); 6] = [
    (1, 0.5),
    (8, -0.5),
    (32, 0.3),
    (64, -0.3),
    (1, -0.2),
    (64, 0.1),
];

#[test]
fn the_report_finds_predicts_and_judges() {
    let mut curve = SHORT_CURVE.to_vec();
    curve.extend([(128, 0.2), (256, -0.1)]);
    let (dir, findings, report) = render_study(&curve);
    insta::assert_snapshot!("find_batch_report", report);
    assert_eq!(findings.end, SearchEnd::Found(462));
    let predicted = findings.predicted_max.unwrap();
    assert!((460..=464).contains(&predicted), "{predicted}");
    // 90% of 1024 = 921.6 MiB: (921.6 - 100) / 2 = 410.
    assert_eq!(findings.largest_with_headroom, Some(410));
    for file in OUTPUT_FILES {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    // Memory grows; utilization rises to 90% at 64 and stays there (128, 256); throughput
    // b / (10 + b) ms is within 5% of its best from 128, below the 410 that fits with headroom.
    assert_eq!(verdicts(&findings), [Verdict::Reproduces; 3]);
    assert_eq!(findings.fastest_smallest, Some(128));
}

fn verdicts(findings: &FindBatchFindings) -> Vec<Verdict> {
    findings
        .claims
        .iter()
        .map(|c| c.outcome.verdict())
        .collect()
}

#[test]
fn a_curve_that_stops_while_throughput_rises_cannot_judge_the_largest_batch() {
    let (_dir, findings, _) = render_study(&SHORT_CURVE);
    // Memory grows; utilization goes 80% -> 90% over the last step (32 -> 64): not yet
    // saturated, and the throughput has not levelled off.
    assert_eq!(
        verdicts(&findings),
        [Verdict::Reproduces, Verdict::Partly, Verdict::CannotTest],
        "{:#?}",
        findings.claims
    );
}

#[test]
fn a_flat_memory_line_leaves_the_growth_claim_inconclusive_with_what_it_could_see() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probes.csv");
    let mut rows = Vec::new();
    for (i, (b, noise)) in [(1, 5.0), (2, -5.0), (4, 4.0), (8, -4.0)]
        .into_iter()
        .enumerate()
    {
        let mut probe = probe(ProbePhase::Curve, i as u32, b, 100, noise);
        for r in &mut probe {
            // Memory that does not depend on the batch size, within its noise.
            r.limited_peak_mb = Some(300.0 + noise);
        }
        rows.extend(probe);
    }
    append_rows(&path, &rows).unwrap();
    let findings = render_find_batch(&path, dir.path(), &context()).unwrap();
    assert_eq!(findings.end, SearchEnd::Unfinished);
    // A directional claim not seen is not refuted: the verdict says how small a growth
    // would have been seen.
    let growth = &findings.claims[0];
    assert!(growth.claim.starts_with("Memory grows"), "{growth:?}");
    assert_eq!(
        growth.outcome.verdict(),
        Verdict::Inconclusive,
        "{growth:?}"
    );
    assert!(
        growth.outcome.reason().unwrap().contains("growth above"),
        "{growth:?}"
    );
}

/// The converse: memory that clearly falls with the batch size refutes the growth claim.
#[test]
fn memory_that_falls_with_the_batch_size_refutes_the_growth_claim() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probes.csv");
    let mut rows = Vec::new();
    for (i, (b, noise)) in [(1, 1.0), (2, -1.0), (4, 0.5), (8, -0.5)]
        .into_iter()
        .enumerate()
    {
        let mut probe = probe(ProbePhase::Curve, i as u32, b, 100, noise);
        for r in &mut probe {
            r.limited_peak_mb = Some(400.0 - 10.0 * f64::from(b) + noise);
        }
        rows.extend(probe);
    }
    append_rows(&path, &rows).unwrap();
    let findings = render_find_batch(&path, dir.path(), &context()).unwrap();
    let growth = &findings.claims[0];
    assert_eq!(
        growth.outcome.verdict(),
        Verdict::DoesNotReproduce,
        "{growth:?}"
    );
}

/// Utilization whose timed steps scatter widely cannot show a rise of 5 points or its absence:
/// inconclusive, not refuted.
#[test]
fn utilization_that_scatters_leaves_its_claim_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probes.csv");
    let mut rows = Vec::new();
    for (i, b) in [1, 2, 4, 8].into_iter().enumerate() {
        let mut probe = probe(ProbePhase::Curve, i as u32, b, 100, 0.0);
        for (k, r) in probe.iter_mut().enumerate() {
            // 0.5x, 1x and 1.5x the steady CPU time: a spread of about 40 points.
            r.cpu_ms = r.cpu_ms.map(|c| c * (0.5 + 0.5 * k as f64));
        }
        rows.extend(probe);
    }
    append_rows(&path, &rows).unwrap();
    let findings = render_find_batch(&path, dir.path(), &context()).unwrap();
    let utilization = &findings.claims[1];
    assert_eq!(utilization.rule, "utilization-saturates");
    assert_eq!(
        utilization.outcome.verdict(),
        Verdict::Inconclusive,
        "{utilization:?}"
    );
}

/// The plateau by medians is not a plateau by bounds: steps that scatter by ±50% leave the
/// smaller batch size's place within 5% of the best open.
#[test]
fn a_plateau_the_step_times_cannot_bound_leaves_the_largest_batch_claim_open() {
    let mut rows = Vec::new();
    for (i, b) in [1, 8, 32, 64, 128, 256].into_iter().enumerate() {
        let mut probe = probe(ProbePhase::Curve, i as u32, b, FITS, 0.0);
        for (k, r) in probe.iter_mut().enumerate() {
            r.step_ms = r.step_ms.map(|ms| ms * (0.5 + 0.5 * k as f64));
        }
        rows.extend(probe);
    }
    let (_dir, findings, _) = render_with_search(rows);
    let largest = &findings.claims[2];
    assert_eq!(largest.rule, "largest-is-not-right");
    assert_eq!(
        largest.outcome.verdict(),
        Verdict::Inconclusive,
        "{largest:?}"
    );
}

#[test]
fn the_prediction_range_covers_the_fit_and_refuses_a_budget_below_the_fixed_part() {
    let fit =
        batchlab_method::stats::linear_fit(&[1.0, 2.0, 4.0, 8.0], &[102.0, 104.5, 107.5, 116.0])
            .unwrap();
    let (point, low, high) = predict_max(&fit, 1000.0).unwrap();
    assert!(low <= point && point <= high, "{low} {point} {high}");
    assert_eq!(predict_max(&fit, 50.0), None);
}

use batchlab_method::batch_search::{BatchSearch, Next, ProbeOutcome};

/// This run's memory line (the synthetic curve: 2 MiB per example) against references with
/// the given memory models (slope, its standard error, probes), judged and worded.
fn memory_differs(references: &[Result<(f64, f64, usize), String>], margin: f64) -> Verdict {
    let (dir, _, _) = render_study(&SHORT_CURVE);
    let records = rows::read(&dir.path().join("probes.csv")).unwrap();
    let a = analysis::analyse(&records, &context());
    let references: Vec<verdicts::MemoryReference> = references
        .iter()
        .enumerate()
        .map(|(i, fit)| verdicts::MemoryReference {
            experiment: format!("model-{i}"),
            run: None,
            fit: fit.clone(),
        })
        .collect();
    let reading = verdicts::memory_differs(&a, "t", &references, margin);
    words::memory_differs(&reading, margin).outcome.verdict()
}

#[test]
fn memory_growth_differs_when_a_pair_of_models_is_beyond_the_margin() {
    // Twice this run's cost: beyond 1.5x.
    assert_eq!(
        memory_differs(&[Ok((4.0, 0.02, 8))], 1.5),
        Verdict::Reproduces
    );
    // Two references within 5% of it and of each other: every pair inside 1.5x.
    let close = [Ok((2.1, 0.02, 8)), Ok((1.95, 0.02, 8))];
    assert_eq!(memory_differs(&close, 1.5), Verdict::DoesNotReproduce);
    // The references 1.8x apart, each close to this run: the pair of them reproduces it.
    let apart = [Ok((2.6, 0.01, 8)), Ok((1.45, 0.01, 8))];
    assert_eq!(memory_differs(&apart, 1.5), Verdict::Reproduces);
    // A reference known only within a factor of several: open.
    assert_eq!(
        memory_differs(&[Ok((2.9, 2.0, 3))], 1.5),
        Verdict::Inconclusive
    );
    // No reference run on this machine.
    let none = [Err("no complete run made on this machine".to_string())];
    assert_eq!(memory_differs(&none, 1.5), Verdict::CannotTest);
}
