//! The repository travels to a GPU machine as its tracked files plus the GPU binaries, 64 MiB
//! in all (docs/backends.md): the tracked tree stays at most 24 MiB. Reports keep large raw
//! tables as Parquet, figures as SVG, and a sharded run's rows once (docs/ARCHITECTURE.md).

mod common;

use std::fs;

const LIMIT: u64 = 24 << 20;

#[test]
fn the_tracked_tree_stays_within_24_mib() {
    let (root, names) = common::tracked_files();
    let mut sizes: Vec<(u64, String)> = names
        .into_iter()
        // A tracked file deleted in the working tree does not travel; a symbolic link (a run
        // directory's `latest`) travels as the link, not as the directory it names.
        .filter_map(|name| {
            fs::symlink_metadata(root.join(&name))
                .ok()
                .map(|m| (m.len(), name))
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
