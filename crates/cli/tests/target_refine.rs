//! The two-stage steps-to-target search end to end: every (workload, batch size) draws its own
//! points, each refining trial lies in the box around its cell's best first-stage trial, and
//! shards running at once (one waiting for the other's first stage) plan the same trials as
//! one process.

mod common;

use std::{
    collections::{BTreeMap, HashMap},
    fs,
    path::{Path, PathBuf},
};

use common::{run_command, TARGET};

const FIRST: u64 = 4;
const FACTOR: f64 = 2.0;

/// The crash tests' search with independent points per batch size and a refining stage of 3
/// trials per cell, a factor 2 either side.
fn refined_config() -> String {
    TARGET.replace(
        "trials = 4\n",
        "trials = 4\npoints = \"per-batch-size\"\nrefine = { trials = 3, factor = 2.0 }\n",
    )
}

fn last_line(output: &std::process::Output) -> PathBuf {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    PathBuf::from(stdout.lines().last().unwrap().trim())
}

/// The rows of a CSV file as maps from column name to value.
fn rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut reader = csv::Reader::from_reader(std::io::Cursor::new(common::table(path)));
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn number(row: &HashMap<String, String>, column: &str) -> f64 {
    row[column].parse().unwrap()
}

/// Per trial: (batch size, index, learning rate, 1 - momentum), from search.csv.
fn search(dir: &Path) -> BTreeMap<String, (u32, u64, f64, f64)> {
    rows(&dir.join("search.csv"))
        .iter()
        .map(|r| {
            let value = (
                number(r, "batch_size") as u32,
                number(r, "index") as u64,
                number(r, "learning_rate"),
                1.0 - number(r, "momentum"),
            );
            (r["trial"].clone(), value)
        })
        .collect()
}

/// The best first-stage trial of each batch size, by the refining stage's rule: the fewest
/// steps to the target among trials that trained without diverging (ties: the lower index),
/// else the lowest validation error.
fn best_first_stage(
    dir: &Path,
    search: &BTreeMap<String, (u32, u64, f64, f64)>,
) -> BTreeMap<u32, String> {
    let ok: Vec<String> = rows(&dir.join("trials.csv"))
        .into_iter()
        .filter(|r| r["status"] == "ok")
        .map(|r| r["trial"].clone())
        .collect();
    let mut key: HashMap<String, (u64, f64)> = HashMap::new();
    for r in rows(&dir.join("results.csv")) {
        let error = 1.0 - number(&r, "val_accuracy");
        let reached = if error <= 0.5 {
            number(&r, "step") as u64
        } else {
            u64::MAX
        };
        let entry = key
            .entry(r["trial"].clone())
            .or_insert((u64::MAX, f64::INFINITY));
        entry.0 = entry.0.min(reached);
        entry.1 = entry.1.min(error);
    }
    // Reached trials first, by steps; the others by their lowest error; then by index.
    let mut ranked: Vec<(u32, u64, f64, u64, &String)> = search
        .iter()
        .filter(|(trial, v)| v.1 < FIRST && ok.contains(trial) && key.contains_key(*trial))
        .map(|(trial, &(batch, index, _, _))| {
            let (reached, error) = key[trial];
            let error = if reached < u64::MAX { 0.0 } else { error };
            (batch, reached, error, index, trial)
        })
        .collect();
    ranked.sort_by(|a, b| {
        (a.0, a.1)
            .cmp(&(b.0, b.1))
            .then(a.2.total_cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    let mut best = BTreeMap::new();
    for (batch, _, _, _, trial) in ranked {
        best.entry(batch).or_insert_with(|| trial.clone());
    }
    best
}

#[test]
fn refining_trials_lie_around_the_best_first_stage_trial_of_their_cell() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("refined.toml");
    fs::write(&config, refined_config()).unwrap();
    let out = dir.path().join("reports");
    let run = last_line(&run_command(&config, &out, &[]).output().unwrap());
    let planned = search(&run);
    assert_eq!(planned.len(), 4 * (4 + 3), "4 batch sizes x (4 + 3) trials");

    // Independent points: the first point differs between batch sizes.
    let firsts: Vec<f64> = planned
        .values()
        .filter(|(_, index, _, _)| *index == 0)
        .map(|v| v.2)
        .collect();
    assert_eq!(firsts.len(), 4);
    assert!(firsts.windows(2).all(|w| w[0] != w[1]), "{firsts:?}");

    let best = best_first_stage(&run, &planned);
    assert_eq!(best.len(), 4, "every cell has a feasible first-stage trial");
    for (trial, &(batch, index, lr, one_minus)) in &planned {
        if index < FIRST {
            continue;
        }
        let (_, _, centre_lr, centre_one_minus) = planned[&best[&batch]];
        let inside = |x: f64, c: f64, [lo, hi]: [f64; 2]| {
            let slack = 1e-9;
            x >= (c / FACTOR).max(lo) * (1.0 - slack) && x <= (c * FACTOR).min(hi) * (1.0 + slack)
        };
        assert!(
            inside(lr, centre_lr, [0.01, 10.0]),
            "{trial}: lr {lr} around {centre_lr}"
        );
        assert!(
            inside(one_minus, centre_one_minus, [0.01, 0.5]),
            "{trial}: 1 - momentum {one_minus} around {centre_one_minus}"
        );
    }
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("refining trials"), "the protocol says so");

    // Two shards at once: one may reach a cell's refining trials while the other still runs
    // its first stage; it waits, and both plan every trial as one process does.
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| {
            run_command(&config, &out, &["--shard", "0/2"])
                .output()
                .unwrap()
        });
        let b = s.spawn(|| {
            run_command(&config, &out, &["--shard", "1/2"])
                .output()
                .unwrap()
        });
        (a.join().unwrap(), b.join().unwrap())
    });
    let (a, b) = (last_line(&a), last_line(&b));
    assert_eq!(a, b);
    let merge = std::process::Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(["report", a.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(merge.status.success());
    assert_eq!(search(&a), planned, "sharded = unsharded");
}
