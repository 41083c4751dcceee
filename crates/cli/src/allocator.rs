//! mimalloc, set to keep what it frees. By default (mimalloc 3, as libmimalloc-sys builds it)
//! mimalloc hands memory that stayed free for a second back to the kernel, so a CPU training
//! step whose large tensors are freed and allocated again page-faults and zeroes some of them
//! afresh. Kept, the pages are reused: `just bench-allocator` on the Zen 5 EPYC, 5 alternating rounds, VGG16's
//! step 458.2 ms against 502.9 ms, the small CNN's and the MLP's unchanged
//! (docs/bench/20261128-0123-amd-epyc-f26-m2-allocator.log). mimalloc reads its options from
//! the environment as the process starts, before `main`, and setting them in-process takes
//! unsafe code, so `main` starts the binary again with the variable set where it is missing;
//! child processes inherit it.
//!
//! libtorch allocates its tensors with the C library's malloc, not Rust's allocator, and glibc
//! hands large blocks back too (each one mapped afresh past its mmap threshold, the heap's top
//! trimmed past its trim threshold): a tch VGG16 step page-faulted 85,637 times, none to speak
//! of with both raised (docs/bench/20261128-1926-amd-epyc-f25-m1-page-faults-vgg16.log,
//! `scripts/page-faults.sh`). With LibTorch built in, the restart also raises both thresholds
//! ([`GLIBC_KEEP_FREED`], glibc's tunables, which it too reads only as the process starts).
//! `just bench-allocator 3 10 tch` times it against glibc's defaults.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// The option and its value: never purge (return) freed memory.
const KEEP_FREED: (&str, &str) = ("MIMALLOC_PURGE_DELAY", "-1");

/// glibc's malloc keeping what it frees: blocks up to 256 MiB from the heap, whose top is
/// trimmed only past 1 GiB free, and one arena, the main one, for every thread (with LibTorch
/// built in; a variable the user set wins). The commands run on a thread of rayon's pool
/// (`threads`), and a thread other than the main one gets an arena of its own whose heaps hold
/// at most 64 MiB: every larger block, whatever the thresholds, was mapped afresh and handed
/// back, and tch's small-CNN step took 1041 ms against 490 with one arena (2026-11-29, Zen 3).
/// These are the tunables' own variables: glibc 2.36 cuts `GLIBC_TUNABLES` down to its first
/// tunable in the environment children inherit.
#[cfg(feature = "tch")]
const GLIBC_KEEP_FREED: &[(&str, &str)] = &[
    ("MALLOC_MMAP_THRESHOLD_", "268435456"),
    ("MALLOC_TRIM_THRESHOLD_", "1073741824"),
    ("MALLOC_ARENA_MAX", "1"),
];
#[cfg(not(feature = "tch"))]
const GLIBC_KEEP_FREED: &[(&str, &str)] = &[];

/// Starts this binary again with [`KEEP_FREED`] (and [`GLIBC_KEEP_FREED`]) set, unless the
/// environment names a purge delay already (a worker, a restarted process, or a user's own
/// choice). Returns only when it did not restart (or could not, which leaves mimalloc's default
/// and says so in meta.json).
pub fn keep_freed_memory() {
    if std::env::var_os(KEEP_FREED.0).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = Command::new(exe);
    command
        .args(std::env::args_os().skip(1))
        .env(KEEP_FREED.0, KEEP_FREED.1);
    for (name, value) in GLIBC_KEEP_FREED {
        if std::env::var_os(name).is_none() {
            command.env(name, value);
        }
    }
    let failed = command.exec();
    eprintln!(
        "note: could not restart with {}={} ({failed}); mimalloc returns freed memory to the kernel",
        KEEP_FREED.0, KEEP_FREED.1
    );
}

/// The allocators in meta.json's words: mimalloc and its purge delay where one is set, and with
/// LibTorch built in, glibc's malloc (libtorch's) and its tunables.
pub fn words() -> &'static str {
    let mimalloc = mimalloc_words();
    if GLIBC_KEEP_FREED.is_empty() {
        return mimalloc;
    }
    let set: Vec<(&str, String)> = GLIBC_KEEP_FREED
        .iter()
        .filter_map(|(name, _)| std::env::var(name).ok().map(|value| (*name, value)))
        .collect();
    let kept = GLIBC_KEEP_FREED
        .iter()
        .all(|(name, value)| set.iter().any(|(n, v)| n == name && v == value));
    let glibc = match (kept, set.is_empty()) {
        (true, _) => "glibc's malloc for libtorch, freed memory kept".to_string(),
        (false, true) => "glibc's malloc for libtorch".to_string(),
        (false, false) => {
            let named: Vec<String> = set.iter().map(|(n, v)| format!("{n}={v}")).collect();
            format!("glibc's malloc for libtorch ({})", named.join(", "))
        }
    };
    Box::leak(format!("{mimalloc}; {glibc}").into_boxed_str())
}

/// mimalloc and its purge delay where one is set.
fn mimalloc_words() -> &'static str {
    match std::env::var(KEEP_FREED.0) {
        Ok(delay) if delay == KEEP_FREED.1 => {
            "mimalloc, freed memory kept (MIMALLOC_PURGE_DELAY=-1)"
        }
        Ok(delay) => Box::leak(format!("mimalloc (MIMALLOC_PURGE_DELAY={delay})").into_boxed_str()),
        Err(_) => "mimalloc",
    }
}
