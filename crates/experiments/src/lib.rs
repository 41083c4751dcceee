//! batchlab's experiments: one runner per kind of study, the configs they read, and the report
//! directory every run writes.
//!
//! - [`config`]: strict TOML parsing, `--set` overrides, located errors, the shared tables.
//! - [`registry`]: the table of runners (`kind` -> runner) and the [`registry::Study`] trait.
//! - [`session`]: creating or resuming a report directory, `meta.json`, `latest`, running a study.
//! - [`shard`]: one slice of a study's trials per process (Slurm arrays), merged into one report.
//! - [`isolate`]: child processes that keep a crashing sweep point from ending the run.
//! - [`backend`]: choosing flex or CUDA at run time and checking the device exists.
//! - [`optim`]: the optimizers a config can name, with the defaults of the frameworks the seeds used.
//! - [`step_time`]: the step-time sweep (seeds 000/001).
//! - [`steps_to_target`]: steps to a target error per batch size (seed 004) with a quasi-random search.
//! - [`train`]: the training grid (seeds 002/003): accuracy and time per batch size.
//! - [`bench`]: the fixed benchmarks behind `batchlab bench`.
//! - [`loader_bench`]: the data loader's throughput beside a training step's consumption.
//! - [`progress`]: the narrow interface through which runners report progress.
//! - [`sysinfo`]: CPU, OS, git and memory readings recorded with every measurement.

pub mod backend;
pub mod bench;
pub mod config;
pub mod isolate;
pub mod loader_bench;
pub mod optim;
pub mod progress;
pub mod registry;
pub mod session;
pub mod shard;
pub mod step_time;
pub mod steps_to_target;
pub mod sysinfo;
pub mod train;

pub use config::{ConfigError, Source};
pub use isolate::WorkerExit;
pub use progress::{Progress, Silent};
pub use registry::{load_study, Study, RUNNERS};
pub use session::{
    render_report, run_study, run_worker, Finished, Isolation, RunError, RunOptions,
};
