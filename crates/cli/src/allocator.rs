//! mimalloc, set to keep what it frees. By default (mimalloc 3, as libmimalloc-sys builds it)
//! mimalloc hands memory that stayed free for a second back to the kernel, so a CPU training
//! step whose large tensors are freed and allocated again page-faults and zeroes some of them
//! afresh. Kept, the pages are reused: `just bench-allocator` on the Zen 5 EPYC, 5 alternating rounds, VGG16's
//! step 458.2 ms against 502.9 ms, the small CNN's and the MLP's unchanged
//! (docs/bench/20261128-0123-amd-epyc-f26-m2-allocator.log). mimalloc reads its options from
//! the environment as the process starts, before `main`, and setting them in-process takes
//! unsafe code, so `main` starts the binary again with the variable set where it is missing;
//! child processes inherit it.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// The option and its value: never purge (return) freed memory.
const KEEP_FREED: (&str, &str) = ("MIMALLOC_PURGE_DELAY", "-1");

/// Starts this binary again with [`KEEP_FREED`] set, unless the environment names a purge delay
/// already (a worker, a restarted process, or a user's own choice). Returns only when it did not
/// restart (or could not, which leaves mimalloc's default and says so in meta.json).
pub fn keep_freed_memory() {
    if std::env::var_os(KEEP_FREED.0).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let failed = Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(KEEP_FREED.0, KEEP_FREED.1)
        .exec();
    eprintln!(
        "note: could not restart with {}={} ({failed}); mimalloc returns freed memory to the kernel",
        KEEP_FREED.0, KEEP_FREED.1
    );
}

/// The allocator in meta.json's words: mimalloc and its purge delay where one is set.
pub fn words() -> &'static str {
    match std::env::var(KEEP_FREED.0) {
        Ok(delay) if delay == KEEP_FREED.1 => {
            "mimalloc, freed memory kept (MIMALLOC_PURGE_DELAY=-1)"
        }
        Ok(delay) => Box::leak(format!("mimalloc (MIMALLOC_PURGE_DELAY={delay})").into_boxed_str()),
        Err(_) => "mimalloc",
    }
}
