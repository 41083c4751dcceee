//! The trial layer: what every kind of study that trains shares (docs/ARCHITECTURE.md,
//! "Layers"). Below the runners, above the study trait.
//!
//! - [`supervise`]: the supervisor and worker loop of a study made of training trials.
//! - [`train_loop`]: the one training loop (`train`): batches, forward, loss, backward, update.
//! - [`evaluate`]: validation and test passes, timed apart from training.
//! - [`data`]: a dataset loaded once per worker and shared by its trials.
//! - [`rows`]: the result rows every trial writes, named through [`TrialLabels`].
//! - [`schedule`]: the learning-rate schedule.

pub mod data;
mod evaluate;
pub mod rows;
pub mod schedule;
pub mod supervise;
pub mod train_loop;

pub use data::{load_variant, VariantData};
pub use rows::{eval_row, record, TrialLabels};
pub use schedule::{ScheduleConfig, ScheduleKind};
pub use supervise::{append_failure, drop_unfinished, TrialStudy, TrialWorker};
pub use train_loop::{train, Evaluation, Next, Outcome, TrialPlan};
