//! The training grid's worker (trials one by one, rows appended as they come) and its report.

use batchlab_method::rows::Status;
use std::{collections::BTreeMap, path::Path};

use batchlab_method::rows::append_rows;
use batchlab_report::about::About;
use batchlab_report::train::{render_train, Published, TrainContext};

use super::{claims::ClaimConfig, plan::evaluation_plan, TrainStudy, Trial};
use crate::sweeps::prediction_inputs;
use crate::{
    context::RunContext,
    error::RunError,
    study::Rendered,
    trial::{
        eval_row, load_variant, record, train_loop, Evaluation, Next, Outcome, TrialPlan,
        TrialWorker, VariantData,
    },
};

/// A worker of the grid: the study, its directory, and each data variant once loaded.
pub struct TrainWorker<'a> {
    study: &'a TrainStudy,
    dir: &'a Path,
    data_dir: &'a Path,
    variants: BTreeMap<String, VariantData>,
}

impl<'a> TrainWorker<'a> {
    pub(super) fn new(study: &'a TrainStudy, dir: &'a Path, context: &'a RunContext) -> Self {
        Self {
            study,
            dir,
            data_dir: &context.data_dir,
            variants: BTreeMap::new(),
        }
    }
}

impl TrialWorker<Trial> for TrainWorker<'_> {
    type Outcome = Outcome;

    fn prepare(&mut self, trial: &Trial) -> Result<(), RunError> {
        if !self.variants.contains_key(&trial.variant) {
            let config = self.study.variant(&trial.variant);
            let data = load_variant(config, self.data_dir)?;
            self.variants.insert(trial.variant.clone(), data);
        }
        Ok(())
    }

    fn train(&mut self, trial: &Trial, status: &dyn Fn(&str)) -> Result<Outcome, String> {
        run_trial(
            self.study,
            self.dir,
            trial,
            &self.variants[&trial.variant],
            status,
        )
    }

    fn finish(&mut self, trial: &Trial, outcome: Outcome) -> Result<String, RunError> {
        append_rows(
            &self.dir.join("trials.csv"),
            &[record(&trial.labels(), &outcome)],
        )?;
        Ok(if outcome.status == Status::Ok {
            format!("{:.1}% test accuracy", outcome.test_accuracy * 100.0)
        } else {
            outcome.status.to_string()
        })
    }
}

fn run_trial(
    study: &TrainStudy,
    dir: &Path,
    trial: &Trial,
    data: &VariantData,
    status: &dyn Fn(&str),
) -> Result<Outcome, String> {
    let grid = &study.config.grid;
    let total_steps = trial.total_steps(grid, data.train.len());
    let optimizer = &study.config.optimizers[trial.optimizer];
    let plan = TrialPlan {
        data,
        batch_size: trial.batch_size as usize,
        seed: trial.seed,
        total_steps,
        evaluate_at: evaluation_plan(grid, total_steps),
        learning_rate: optimizer.learning_rate(),
        schedule: &study.config.schedule,
        drop_last: grid.drop_last,
        eval_batch_size: grid.eval_batch_size.for_trial(trial.batch_size as usize),
        divergence_factor: grid.divergence_factor,
        prefetch: grid.prefetch,
        evaluate_test: true,
        noise_every: None,
    };
    let results = dir.join("results.csv");
    let labels = trial.labels();
    let total = plan.total_steps;
    let mut write = |e: &Evaluation| {
        status(&format!(
            "epoch {:.1}, step {}/{total}, validation {:.1}%",
            e.epoch,
            e.step,
            e.accuracy * 100.0
        ));
        append_rows(&results, &[eval_row(&labels, e)])
            .map(|()| Next::Continue)
            .map_err(|e| e.to_string())
    };
    train_loop::train(
        &study.config.backend,
        &study.config.model,
        optimizer,
        trial.seed,
        &plan,
        &mut write,
    )
}

/// Writes summary.csv, figures and report.md; returns the headline findings.
pub fn render(
    study: &TrainStudy,
    dir: &Path,
    about: About,
    context: &RunContext,
) -> Result<Rendered, RunError> {
    let config = &study.config;
    let data_dir = &context.data_dir;
    let mut dataset = vec![format!(
        "{} (data directory {})",
        config.data.name.as_str(),
        data_dir.display()
    )];
    let mut test_examples = 0;
    let mut train_examples = 0;
    for (label, data) in &study.variants {
        match data.load(data_dir) {
            Ok(loaded) => {
                test_examples = loaded.splits.test.len();
                train_examples = loaded.splits.train.len() as u64;
                dataset.push(format!(
                    "variant {label}: {} train / {} validation / {} test examples",
                    loaded.splits.train.len(),
                    loaded.splits.validation.len(),
                    loaded.splits.test.len()
                ));
                dataset.extend(
                    loaded
                        .notes
                        .into_iter()
                        .map(|n| format!("variant {label}: {n}")),
                );
            }
            Err(e) => {
                train_examples = data.train_size();
                dataset.push(format!("variant {label}: {}", data.unloadable(&e)));
            }
        }
    }
    let context = TrainContext {
        about,
        model: study.model_line(),
        dataset,
        test_examples,
        published: config
            .analysis
            .published
            .iter()
            .map(|p| Published {
                batch_size: p.batch_size,
                series: p.series.clone(),
                metric: p.metric,
                value: p.value,
                source: p.source.clone(),
            })
            .collect(),
        claims: config
            .analysis
            .claims
            .iter()
            .map(ClaimConfig::to_report)
            .collect(),
        prediction: {
            let series: Vec<_> = config
                .optimizers
                .iter()
                .map(|o| (crate::optim::label(o), &config.model, o))
                .collect();
            prediction_inputs(dir, &series, train_examples, config.grid.drop_last)
        },
    };
    Ok(render_train(dir, &context)?.into())
}
