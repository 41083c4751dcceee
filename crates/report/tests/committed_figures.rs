//! The figures of every committed report hide nothing: no legend box over data or a label, no
//! overprinted tick labels (the checks of `figures::svg_problems`). A report rendered with older
//! code, or a figure generator that regresses, fails here.

use std::fs;
use std::path::{Path, PathBuf};

use batchlab_report::figures::svg_problems;

/// The newest report of each experiment under `reports/`: what `latest` points at, else each
/// sharded run.
fn committed_reports() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let mut out = vec![];
    for experiment in fs::read_dir(&root).unwrap().flatten() {
        let path = experiment.path();
        if !path.is_dir() {
            continue;
        }
        match fs::canonicalize(path.join("latest")) {
            Ok(latest) => out.push(latest),
            Err(_) => out.extend(
                fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("sharded-"))
                    }),
            ),
        }
    }
    out.sort();
    out
}

#[test]
fn committed_figures_hide_nothing() {
    let reports = committed_reports();
    assert!(reports.len() >= 10, "{reports:?}");
    let mut problems = vec![];
    for dir in &reports {
        for file in fs::read_dir(dir).unwrap().flatten() {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "svg") {
                let svg = fs::read_to_string(&path).unwrap();
                problems.extend(
                    svg_problems(&svg)
                        .into_iter()
                        .map(|p| format!("{}: {p}", path.display())),
                );
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
