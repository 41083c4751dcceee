//! batchlab's experiments: one runner per kind of study, the configs they read, and the report
//! directory every run writes. Layers import only downward (docs/ARCHITECTURE.md, "Layers"):
//!
//! 1. Foundations: [`error`], [`config`] (strict TOML, `--set`, located errors, the shared
//!    tables), [`kind`] and [`words`] (the kinds of study, and how a word-spelled enum is
//!    read), [`claim_registry`] (claims/registry.toml, compiled in), [`backend`] (flex or
//!    CUDA at run time), [`optim`], [`progress`], [`sysinfo`] (where a run ran is
//!    `batchlab_method::machine::Machine`, read from meta.json by `run_dir::Meta::machine`).
//! 2. Processes and the run directory: [`isolate`] (child workers that keep a crashing unit from
//!    ending the run), [`lock`] (one writer per run directory), [`context`] (what the CLI decided, carried down), [`run_dir`]
//!    (`meta.json`, write-once run directories, `latest`), [`shard`] (slices of a study's trials,
//!    their claims and status), [`slurm`] (the sbatch script of a job array and its submission).
//! 3. [`study`]: the [`Study`] the session runs; [`drive`]: the one driver, which makes a
//!    kind's plan and units a [`Study`].
//! 4. [`trial`]: the trial layer every kind that trains shares (supervisor, worker loop, the
//!    training loop, evaluation, data, result rows).
//! 5. The kinds: [`step_time`] (seeds 000/001), [`train`] (seeds 002/003), [`steps_to_target`]
//!    (seed 004), [`find_batch`] (seed 003's "right batch size"). Below them, [`timed_step`]:
//!    the timed training step the measuring kinds share.
//! 6. [`registry`]: the table of kinds; [`results`]: the registered claims beside the
//!    committed verdicts (`batchlab claims`, `batchlab results`); [`session`]: a run's life; [`cluster`]: a study
//!    submitted to Slurm and watched from its files; [`bench`], [`epoch_bench`],
//!    [`loader_bench`]: the benchmarks behind `batchlab bench`.

pub mod backend;
pub mod bench;
pub mod claim_registry;
pub mod cluster;
pub mod compact;
pub mod config;
pub mod context;
pub mod drive;
pub mod epoch_bench;
pub mod error;
pub mod estimate;
pub mod fast_check;
pub mod find_batch;
pub mod isolate;
pub mod kind;
pub mod loader_bench;
pub mod lock;
pub mod optim;
pub mod path_counts;
pub mod predict;
pub mod products_bench;
pub mod progress;
pub mod registry;
pub mod results;
pub mod run_dir;
pub mod session;
pub mod shard;
pub mod slurm;
pub mod step_time;
pub mod steps_to_target;
pub mod study;
pub mod sweeps;
pub mod sysinfo;
pub mod timed_step;
pub mod train;
pub mod trial;
pub mod words;

pub use config::{ConfigError, Source};
pub use context::RunContext;
pub use error::RunError;
pub use isolate::{Isolation, WorkerExit};
pub use progress::{Progress, Silent};
pub use registry::{load_study, RUNNERS};
pub use session::{render_report, render_report_with, run_study, run_worker, Finished, RunOptions};
pub use study::Study;
