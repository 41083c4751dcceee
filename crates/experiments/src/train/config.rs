//! The TOML of a training study.

use std::collections::BTreeMap;

use batchlab_datasets::DataConfig;
use batchlab_models::ModelSpec;
use serde::{Deserialize, Serialize};

use super::claims::{ClaimConfig, GridAxes};
use super::eval_batch::EvalBatchSize;

use crate::{
    config::{
        check_batch_sizes, check_count, check_list, BackendConfig, ConfigError, ExperimentHeader,
        OutputConfig, Source, MAX_UNITS,
    },
    optim::{label, OptimizerConfig},
    trial::ScheduleConfig,
};

/// A training experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    /// `[experiment]`.
    pub experiment: ExperimentHeader,
    /// `[model]`.
    #[serde(default)]
    pub model: ModelSpec,
    /// `[data]`: the dataset and its preprocessing (see the datasets crate's `DataConfig`).
    pub data: DataConfig,
    /// `[[optimizers]]`: one grid axis; each is an `[optimizer]` table.
    #[serde(default = "default_optimizers")]
    pub optimizers: Vec<OptimizerConfig>,
    /// `[variants.LABEL]`: one grid axis; each variant is `[data]` with these keys replaced
    /// (`[variants.augmented] augment = true`). Default: one variant, `standard`, = `[data]`.
    #[serde(default = "default_variants")]
    pub variants: BTreeMap<String, toml::Table>,
    /// `[grid]`.
    pub grid: GridConfig,
    /// `[schedule]`: the learning rate over a trial.
    #[serde(default)]
    pub schedule: ScheduleConfig,
    /// `[analysis]`.
    #[serde(default)]
    pub analysis: TrainAnalysis,
    /// `[backend]`.
    #[serde(default)]
    pub backend: BackendConfig,
    /// `[output]`.
    #[serde(default)]
    pub output: OutputConfig,
}

crate::study_config!(TrainConfig);

fn default_optimizers() -> Vec<OptimizerConfig> {
    vec![OptimizerConfig::default()]
}

fn default_variants() -> BTreeMap<String, toml::Table> {
    BTreeMap::from([("standard".to_string(), toml::Table::new())])
}

/// `[grid]`: the trials and their budgets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridConfig {
    /// Batch sizes.
    pub batch_sizes: Vec<u32>,
    /// Seeds: each seeds a trial's initialisation, shuffles and random augmentation.
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// Epochs of the epoch budget.
    pub epochs: usize,
    /// Also run the steps-matched control (budget `steps`).
    #[serde(default)]
    pub steps_matched: bool,
    /// Steps of the steps budget; default: the steps the smallest batch size takes in `epochs`
    /// epochs of the variant's training set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// Validation evaluations per trial, evenly spaced in steps; default: after every epoch of
    /// the epoch budget (and as many, evenly spaced, under the steps budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluations: Option<usize>,
    /// Evaluate on the validation split every this many steps (and at the end) instead of
    /// `evaluations` evenly spaced times: the learning curves of the steps-to-target studies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluate_every: Option<u64>,
    /// Leave out the last partial batch of every epoch (Raschka's setup did).
    #[serde(default)]
    pub drop_last: bool,
    /// Batch size of evaluation passes: a number of examples (256 by default; it changes no
    /// accuracy, only the speed), or `"train"`, each trial's training batch size, so that the
    /// test time measures inference at that batch size (seed 002's loaders).
    #[serde(default)]
    pub eval_batch_size: EvalBatchSize,
    /// A trial diverged when its loss is non-finite or above this multiple of its first loss.
    #[serde(default = "default_divergence")]
    pub divergence_factor: f64,
    /// Batches the loader keeps ready ahead of the training step.
    #[serde(default = "default_prefetch")]
    pub prefetch: usize,
    /// Seed of the order the trials run in (shuffled so drift does not follow the grid).
    #[serde(default)]
    pub order_seed: u64,
}

fn default_seeds() -> Vec<u64> {
    vec![0]
}
fn default_divergence() -> f64 {
    100.0
}
fn default_prefetch() -> usize {
    4
}

/// `[analysis]`: the source's numbers to set beside the measured ones.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainAnalysis {
    /// `[[analysis.published]]` points.
    pub published: Vec<PublishedPoint>,
    /// `[[analysis.claims]]`: the claims the report judges.
    pub claims: Vec<ClaimConfig>,
}

/// One published number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedPoint {
    /// The batch size.
    pub batch_size: u32,
    /// The optimizer label, the variant, or `optimizer/variant`.
    pub series: String,
    /// `test_accuracy` (percent), `train_minutes` or `inference_minutes` (any other word is an
    /// error at its value).
    pub metric: batchlab_report::train::Metric,
    /// The value.
    pub value: f64,
    /// Where it was published.
    pub source: String,
}

impl TrainConfig {
    /// Each variant's `[data]`: the base table with the variant's keys replaced (sub-tables
    /// `train` and `eval` are merged key by key), validated.
    pub fn resolve_variants(
        &self,
        source: &Source,
    ) -> Result<Vec<(String, DataConfig)>, ConfigError> {
        let base = toml::Table::try_from(&self.data).expect("a parsed [data] serializes");
        let check = |key: String, data: &DataConfig| {
            data.validate()
                .map_err(|(k, message)| source.error(&format!("{key}.{k}"), message))
        };
        check("data".into(), &self.data)?;
        let mut variants = Vec::new();
        for (label, overrides) in &self.variants {
            if label.is_empty() || !label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Err(source.error(
                    &format!("variants.{label}"),
                    "variant labels are letters, digits and '-'",
                ));
            }
            let mut table = base.clone();
            for (key, value) in overrides {
                match (table.get_mut(key), value) {
                    (Some(toml::Value::Table(into)), toml::Value::Table(from)) => {
                        into.extend(from.clone());
                    }
                    _ => {
                        table.insert(key.clone(), value.clone());
                    }
                }
            }
            let key = format!("variants.{label}");
            let data: DataConfig = toml::Value::Table(table)
                .try_into()
                .map_err(|e| source.error(&key, format!("{e}")))?;
            check(key, &data)?;
            variants.push((label.clone(), data));
        }
        Ok(variants)
    }

    /// The names a claim's series may take, and whether the steps budget runs.
    fn grid_axes(&self) -> GridAxes {
        let labels: Vec<String> = self.optimizers.iter().map(label).collect();
        let mut series: Vec<String> = labels.clone();
        series.extend(self.variants.keys().cloned());
        for label in &labels {
            series.extend(self.variants.keys().map(|v| format!("{label}/{v}")));
        }
        GridAxes {
            steps_matched: self.grid.steps_matched,
            series,
            eval_at_train: self.grid.eval_batch_size == EvalBatchSize::Train,
        }
    }

    /// Range and cross-table checks, each error pointing at its key.
    pub fn check(&self, source: &Source, spec: &ModelSpec) -> Result<(), ConfigError> {
        let g = &self.grid;
        if g.batch_sizes.is_empty() || g.batch_sizes.contains(&0) {
            return Err(source.error("grid.batch_sizes", "expected one or more batch sizes >= 1"));
        }
        check_batch_sizes(source, "grid.batch_sizes", &g.batch_sizes)?;
        if g.seeds.is_empty() {
            return Err(source.error("grid.seeds", "expected at least one seed"));
        }
        check_list(source, "grid.seeds", &g.seeds)?;
        if g.epochs == 0 {
            return Err(source.error("grid.epochs", "expected at least 1"));
        }
        if g.steps == Some(0) || g.evaluations == Some(0) || g.eval_batch_size.is_zero() {
            return Err(source.error(
                "grid",
                "steps, evaluations and eval_batch_size must be at least 1",
            ));
        }
        if g.evaluate_every == Some(0) {
            return Err(source.error("grid.evaluate_every", "expected at least 1"));
        }
        if g.evaluate_every.is_some() && g.evaluations.is_some() {
            return Err(source.error(
                "grid.evaluate_every",
                "give either evaluate_every or evaluations, not both",
            ));
        }
        if g.steps.is_some() && !g.steps_matched {
            return Err(source.error("grid.steps", "only used with steps_matched = true"));
        }
        if g.divergence_factor.is_nan() || g.divergence_factor <= 1.0 {
            return Err(source.error("grid.divergence_factor", "expected a number above 1"));
        }
        if self.optimizers.is_empty() {
            return Err(source.error("optimizers", "expected at least one [[optimizers]] table"));
        }
        let trials = [
            g.batch_sizes.len(),
            g.seeds.len(),
            self.optimizers.len(),
            self.variants.len().max(1),
            1 + usize::from(g.steps_matched),
        ]
        .iter()
        .map(|&n| n as u128)
        .product();
        check_count(
            source,
            "grid",
            "trials (batch sizes x seeds x optimizers x variants x budgets)",
            trials,
            MAX_UNITS,
        )?;
        let mut labels: Vec<String> = Vec::new();
        for (i, optimizer) in self.optimizers.iter().enumerate() {
            optimizer.resolve(source).map_err(|e| ConfigError {
                key: Some(format!("optimizers[{i}]")),
                ..e
            })?;
            let l = label(optimizer);
            if labels.contains(&l) {
                return Err(source.error(
                    &format!("optimizers[{i}]"),
                    format!("two optimizers are both {l}"),
                ));
            }
            labels.push(l);
        }
        if !(0.0..=1.0).contains(&self.schedule.end_factor) {
            return Err(source.error("schedule.end_factor", "expected a fraction in [0, 1]"));
        }
        let classes = self.data.classes.unwrap_or(match self.data.name {
            batchlab_datasets::DatasetName::CatsVsDogs => 2,
            _ => 10,
        });
        let head_fits = spec.classes == classes || (spec.classes == 1 && classes == 2);
        if !head_fits {
            return Err(source.error(
                "model.classes",
                format!(
                    "{} has {classes} classes; expected model.classes = {classes}{}",
                    self.data.name.as_str(),
                    if classes == 2 {
                        " (or 1 for one logit)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        let axes = self.grid_axes();
        for (i, claim) in self.analysis.claims.iter().enumerate() {
            claim.check(i, source, &axes)?;
        }
        Ok(())
    }
}
