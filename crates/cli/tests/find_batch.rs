//! The batch-size finder end to end, with real out-of-memory failures under an enforced limit:
//! `batchlab find-batch` under the machine's preferred limit (a cgroup where this process may
//! make one, else an rlimit), and a study under an address-space rlimit.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn batchlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_batchlab"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The report directory (the last line printed).
fn report_dir(output: &Output) -> PathBuf {
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    PathBuf::from(text(&output.stdout).lines().last().unwrap().trim())
}

/// (batch size, status, limit, message) of every probe's first row.
fn probes(dir: &Path) -> Vec<(u32, String, String, String)> {
    let mut reader =
        csv::Reader::from_reader(std::io::Cursor::new(common::table(&dir.join("probes.csv"))));
    let mut seen = std::collections::HashSet::new();
    reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| seen.insert((r[0].to_string(), r[1].to_string())))
        .map(|r| {
            (
                r[2].parse().unwrap(),
                r[7].into(),
                r[10].into(),
                r[15].into(),
            )
        })
        .collect()
}

/// The search ended at a boundary the probes show: `largest` fitted, `largest + 1` ran out of
/// memory, and report.md says so.
fn ends_at_a_proven_boundary(dir: &Path) -> u32 {
    let report = fs::read_to_string(dir.join("report.md")).unwrap();
    let found = report
        .split("largest batch size that fits: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no boundary in the report:\n{report}"));
    let probes = probes(dir);
    assert!(
        probes.iter().any(|(b, s, _, _)| *b == found && s == "ok"),
        "{found} fitted: {probes:?}"
    );
    assert!(
        probes
            .iter()
            .any(|(b, s, _, _)| *b == found + 1 && s == "oom"),
        "{} ran out of memory: {probes:?}",
        found + 1
    );
    for file in ["summary.csv", "memory.svg", "utilization.svg", "probes.svg"] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    found
}

/// Where this process's memory cgroups are (v1 and v2), in which the probes made theirs.
fn memory_cgroup_dirs() -> Vec<PathBuf> {
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    own.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let path = path.trim_start_matches('/');
            match controllers {
                "" => Some(vec![
                    Path::new("/sys/fs/cgroup").join(path),
                    Path::new("/sys/fs/cgroup/unified").join(path),
                ]),
                c if c.split(',').any(|c| c == "memory") => {
                    Some(vec![Path::new("/sys/fs/cgroup/memory").join(path)])
                }
                _ => None,
            }
        })
        .flatten()
        .collect()
}

#[test]
fn find_batch_finds_the_boundary_under_the_preferred_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reports");
    let output = batchlab(&[
        "find-batch",
        "mlp",
        "--input",
        "1,28,28",
        "--memory-budget",
        "64MiB",
        "--curve",
        "1,256",
        "--out",
        out.to_str().unwrap(),
    ]);
    let dir = report_dir(&output);
    let found = ends_at_a_proven_boundary(&dir);
    let probes = probes(&dir);
    let limit = &probes[0].2;
    assert!(
        ["cgroup-v2", "cgroup-v1", "rlimit-as"].contains(&limit.as_str()),
        "{limit}"
    );
    if limit.starts_with("cgroup") {
        // The kernel's count of oom kills in the probe's cgroup, not a guess from the signal.
        let oom = probes.iter().find(|p| p.1 == "oom").unwrap();
        assert!(oom.3.contains("memory limit"), "{oom:?}");
        // Every probe's cgroup is gone.
        let left: Vec<PathBuf> = memory_cgroup_dirs()
            .iter()
            .filter_map(|d| fs::read_dir(d).ok())
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("batchlab-")
            })
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
    eprintln!("find-batch under {limit}: largest batch {found}");
}

#[test]
fn an_address_space_rlimit_refuses_the_allocation_and_the_probe_is_oom() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("rlimit.toml");
    fs::write(
        &config,
        r#"
[experiment]
name = "rlimit"
kind = "find-batch"
description = "an MLP under a 400 MiB address-space limit"

[model]
architecture = "mlp"
input = [1, 28, 28]
classes = 10

[curve]
batch_sizes = [1, 256]
repeats = 1

[search]
memory_budget = "400MiB"
limit = "rlimit"
start = 2048
max_batch = 1000000

[probe]
warmup_steps = 1
samples = 1
"#,
    )
    .unwrap();
    let out = tmp.path().join("reports");
    let output = batchlab(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let dir = report_dir(&output);
    ends_at_a_proven_boundary(&dir);
    let probes = probes(&dir);
    assert!(probes.iter().all(|p| p.2 == "rlimit-as"), "{probes:?}");
    let oom = probes.iter().find(|p| p.1 == "oom").unwrap();
    assert!(oom.3.contains("memory allocation"), "{oom:?}");
}

#[test]
fn a_budget_below_the_model_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reports");
    let output = batchlab(&[
        "find-batch",
        "vgg16",
        "--memory-budget",
        "100MiB",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("search.memory_budget") && stderr.contains("below the model's own memory"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is created");
}
