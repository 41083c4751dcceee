//! Every command runs on one of the threads of rayon's pool, not on the main thread. A flex
//! training step is a chain of parallel passes (the products, the bias and ReLU, the masks, the
//! updates). Started from outside the pool, each pass hands its work to the pool's threads and
//! puts the caller to sleep until they are done, then wakes it: a sleep and a wake-up per pass,
//! dozens per step. Started from one of the pool's threads, that thread does its share and the
//! others take the rest; nothing waits on the main thread. On a 2-core Zen 3, 8 alternating
//! runs of 100 MLP steps: a median of 29.2 ms a step against 30.8 from the main thread
//! (docs/flex-performance.md, "The step's passes"). What blocks the command on another thread
//! that needs the pool must run the pool's work while it waits (the data loader's
//! `receive`): with one thread, the pool would otherwise wait for itself.

/// Linux's stack for a main thread (8 MiB) for each of the pool's threads, which rayon would
/// start with Rust's 2 MiB: the commands ran on the main thread before.
const STACK_BYTES: usize = 8 << 20;

/// `command`, run on one of the threads of rayon's global pool (built here, with
/// `RAYON_NUM_THREADS` threads as before, or one per core).
pub fn on_the_pool<R: Send>(command: impl FnOnce() -> R + Send) -> R {
    // Building fails only where the global pool exists already (nothing before `main` builds
    // it); the command then runs on that pool's threads as they are.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_BYTES)
        .build_global();
    rayon::scope(|_| command())
}
