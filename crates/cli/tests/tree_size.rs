//! The repository travels to a GPU machine as its tracked files plus the GPU binaries, 64 MiB
//! in all (docs/backends.md): the tracked tree stays at most 24 MiB. Reports keep large raw
//! tables as Parquet, figures as SVG, and a sharded run's rows once (docs/ARCHITECTURE.md).

use std::{fs, path::Path, process::Command};

const LIMIT: u64 = 24 << 20;

#[test]
fn the_tracked_tree_stays_within_24_mib() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("git runs in the checkout");
    assert!(listed.status.success(), "git ls-files failed: {listed:?}");
    let mut sizes: Vec<(u64, String)> = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .filter_map(|name| {
            let name = String::from_utf8_lossy(name).into_owned();
            // A tracked file deleted in the working tree does not travel.
            fs::metadata(root.join(&name)).ok().map(|m| (m.len(), name))
        })
        .collect();
    let total: u64 = sizes.iter().map(|(size, _)| size).sum();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    assert!(
        total <= LIMIT,
        "the tracked tree holds {total} bytes, over {LIMIT} (24 MiB); the largest files: {:?}",
        &sizes[..sizes.len().min(10)]
    );
    assert!(
        sizes.len() > 100,
        "only {} tracked files: not the checkout",
        sizes.len()
    );
}
