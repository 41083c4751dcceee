//! The steps-to-target worker (search trials on the shared trial layer, plus `search.csv` with
//! each trial's metaparameters and `noise.csv`) and its report.

use batchlab_method::rows::Status;
use std::{
    path::Path,
    time::{Duration, Instant},
};

use batchlab_method::{
    reaching::reaches,
    rows::{append_rows, steps_to_target::SearchRow},
};
use batchlab_report::about::About;
use batchlab_report::steps_to_target::{render_target, SearchSpace, TargetClaim, TargetContext};

use super::{cutoff, noise, plan::Metaparameters, SearchTrial, TargetStudy, Workload};
use crate::{
    context::RunContext,
    error::RunError,
    optim::OptimizerConfig,
    study::Rendered,
    sweeps::{model_name, read_sweep},
    trial::{
        eval_row, load_variant, record, train_loop, Evaluation, Next, Outcome, ScheduleConfig,
        TrialPlan, TrialStudy, TrialWorker, VariantData,
    },
};

fn search_row(t: &SearchTrial, w: &Workload, m: Metaparameters) -> SearchRow {
    SearchRow {
        trial: t.id.clone(),
        workload: w.label(),
        batch_size: t.batch_size,
        index: t.index,
        learning_rate: m.learning_rate,
        momentum: m.momentum,
        effective_learning_rate: m.learning_rate / (1.0 - m.momentum),
    }
}

/// Appends the search.csv row of `t`: the metaparameters `m` it was given.
pub(super) fn append_search_row(
    study: &TargetStudy,
    dir: &Path,
    t: &SearchTrial,
    m: Metaparameters,
) -> Result<(), RunError> {
    let w = &study.config.workloads[t.workload];
    append_rows(&dir.join("search.csv"), &[search_row(t, w, m)])?;
    Ok(())
}

/// A worker of the search: the study, its directory, and the dataset once loaded.
pub struct TargetWorker<'a> {
    study: &'a TargetStudy,
    dir: &'a Path,
    data_dir: &'a Path,
    data: Option<VariantData>,
}

impl<'a> TargetWorker<'a> {
    pub(super) fn new(study: &'a TargetStudy, dir: &'a Path, context: &'a RunContext) -> Self {
        Self {
            study,
            dir,
            data_dir: &context.data_dir,
            data: None,
        }
    }
}

/// What a trial that trained leaves to `finish`: the training outcome, why it stopped, and
/// the metaparameters it was given.
pub struct Trained(Outcome, End, Metaparameters);

impl TrialWorker<SearchTrial> for TargetWorker<'_> {
    type Outcome = Trained;

    fn prepare(&mut self, _trial: &SearchTrial) -> Result<(), RunError> {
        if self.data.is_none() {
            let data = load_variant(&self.study.config.data, self.data_dir)?;
            let available = data.train.len();
            for (i, w) in self.study.config.workloads.iter().enumerate() {
                if w.train_examples.is_some_and(|k| k > available) {
                    return Err(RunError::Other(format!(
                        "workloads[{i}].train_examples: expected at most the {available} examples of the training split, got {}",
                        w.train_examples.unwrap_or_default()
                    )));
                }
            }
            self.data = Some(data);
        }
        Ok(())
    }

    fn train(&mut self, t: &SearchTrial, status: &dyn Fn(&str)) -> Result<Trained, String> {
        let data = self.data.as_ref().expect("prepare loads the data");
        let m = self
            .study
            .metaparameters(self.dir, t)
            .map_err(|e| e.to_string())?;
        let (outcome, end) = run_trial(self.study, self.dir, t, m, data, status)?;
        Ok(Trained(outcome, end, m))
    }

    fn finish(
        &mut self,
        t: &SearchTrial,
        Trained(outcome, end, m): Trained,
    ) -> Result<String, RunError> {
        let (study, dir) = (self.study, self.dir);
        let factor = study.config.budget.beaten_factor;
        let w = &study.config.workloads[t.workload];
        append_search_row(study, dir, t, m)?;
        let noise = noise::rows(t, w, &outcome.gradient_norms);
        if !noise.is_empty() {
            append_rows(&dir.join("noise.csv"), &noise)?;
        }
        let mut row = record(&study.labels(t), &outcome);
        let summary = match (outcome.status, end) {
            (Status::Ok, End::Reached) => format!("reached at step {}", outcome.steps),
            (Status::Ok, End::Beaten(best)) => {
                row.message = cutoff::beaten_message(outcome.steps, t.batch_size, best, factor);
                format!("beaten at step {}", outcome.steps)
            }
            (Status::Ok, End::Budget) => "missed".into(),
            (status, _) => status.to_string(),
        };
        append_rows(&dir.join("trials.csv"), &[row])?;
        Ok(summary)
    }
}

/// Why a trial that trained without diverging stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    /// It reached the target.
    Reached,
    /// Another trial of its batch size reached the target at this step, and it had not.
    Beaten(u64),
    /// Its step budget ran out.
    Budget,
}

/// How often a running trial looks again for a sibling that reached the target.
const CUTOFF_REFRESH: Duration = Duration::from_secs(2);

fn run_trial(
    study: &TargetStudy,
    dir: &Path,
    t: &SearchTrial,
    m: Metaparameters,
    data: &VariantData,
    status: &dyn Fn(&str),
) -> Result<(Outcome, End), String> {
    let w = &study.config.workloads[t.workload];
    let budget = &study.config.budget;
    let optimizer = OptimizerConfig {
        learning_rate: Some(m.learning_rate),
        momentum: m.momentum,
        ..w.optimizer.clone()
    };
    // A workload on a subset trains on the first examples of the split (as `data.train_examples`
    // cuts the whole study's).
    let subset;
    let data = match w.train_examples {
        Some(k) if k < data.train.len() => {
            subset = VariantData {
                train: std::sync::Arc::new(data.train.slice(0..k)),
                ..data.clone()
            };
            &subset
        }
        _ => data,
    };
    let steps = study.step_budget(Some(w), data.train.len() as u64)?;
    let target = budget.target_error;
    let prefix = w.cell_prefix(t.batch_size);
    // A trial is beaten at `beaten_factor` x the best known steps (see `cutoff`).
    let best_known = || {
        budget
            .stop_when_beaten
            .then(|| cutoff::best_known_steps(dir, &prefix, target))
            .flatten()
    };
    let factor = budget.beaten_factor;
    let mut beaten_at = best_known();
    // Training past the best known steps cannot lower them (see `cutoff`).
    let total_steps = steps
        .steps(t.batch_size)
        .min(beaten_at.map_or(u64::MAX, |best| cutoff::stop_step(best, factor)));
    let evaluate_at: Vec<u64> = steps
        .evaluation_steps(t.batch_size)
        .into_iter()
        .filter(|&s| s <= total_steps)
        .chain(std::iter::once(total_steps))
        .collect::<std::collections::BTreeSet<u64>>()
        .into_iter()
        .collect();
    let schedule = ScheduleConfig::default();
    let plan = TrialPlan {
        data,
        batch_size: t.batch_size as usize,
        seed: t.index,
        total_steps,
        evaluate_at,
        learning_rate: m.learning_rate,
        schedule: &schedule,
        drop_last: false,
        eval_batch_size: budget.eval_batch_size,
        divergence_factor: budget.divergence_factor,
        prefetch: 4,
        evaluate_test: budget.evaluate_test,
        noise_every: study.config.budget.noise_every,
    };
    let results = dir.join("results.csv");
    let labels = study.labels(t);
    let mut end = End::Budget;
    let mut looked = Instant::now();
    let mut on_evaluation = |e: &Evaluation| {
        let error = 1.0 - e.accuracy;
        status(&format!("step {}, validation error {error:.4}", e.step));
        append_rows(&results, &[eval_row(&labels, e)]).map_err(|e| e.to_string())?;
        // Steps to result cannot improve once the target is reached.
        if reaches(error, target) {
            end = End::Reached;
            return Ok(Next::Stop);
        }
        if looked.elapsed() >= CUTOFF_REFRESH {
            beaten_at = best_known();
            looked = Instant::now();
        }
        match beaten_at {
            Some(best) if e.step >= cutoff::stop_step(best, factor) => {
                end = End::Beaten(best);
                Ok(Next::Stop)
            }
            _ => Ok(Next::Continue),
        }
    };
    let outcome = train_loop::train(
        &study.config.backend,
        &study.config.workloads[t.workload].model,
        &optimizer,
        t.index,
        &plan,
        &mut on_evaluation,
    )?;
    Ok((outcome, end))
}

/// Writes summary.csv, figures and report.md; returns the headline findings.
pub fn render(
    study: &TargetStudy,
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
    let train_examples = match config.data.load(data_dir) {
        Ok(loaded) => {
            dataset.push(format!(
                "{} train / {} validation examples",
                loaded.splits.train.len(),
                loaded.splits.validation.len()
            ));
            loaded.splits.train.len() as u64
        }
        Err(e) => {
            dataset.push(config.data.unloadable(&e));
            config.data.train_size()
        }
    };
    dataset.extend(config.workloads.iter().filter_map(|w| {
        let k = w.train_examples?;
        Some(format!("{} trains on the first {k} of them", w.label()))
    }));
    let s = &config.search;
    let mut context_notes = Vec::new();
    let step_times = step_times(config, &mut context_notes);
    dataset.extend(context_notes);
    let context = TargetContext {
        about,
        dataset,
        target_error: config.budget.target_error,
        budget: study
            .step_budget(None, train_examples)
            .map_err(RunError::Other)?,
        budgets_by_workload: config
            .workloads
            .iter()
            .map(|w| {
                let examples = w.train_count(train_examples as usize) as u64;
                Ok((w.label(), study.step_budget(Some(w), examples)?))
            })
            .collect::<Result<_, String>>()
            .map_err(RunError::Other)?,
        trials_per_batch: s.trials,
        trials_by_workload: config
            .workloads
            .iter()
            .map(|w| (w.label(), w.trials(s)))
            .collect(),
        batch_sizes_by_workload: config
            .workloads
            .iter()
            .map(|w| (w.label(), w.batch_sizes(s).to_vec()))
            .collect(),
        step_times,
        prediction: {
            let series: Vec<_> = config
                .workloads
                .iter()
                .map(|w| (w.label(), &w.model, &w.optimizer))
                .collect();
            crate::sweeps::prediction_inputs(dir, &series, train_examples, false)
        },
        bands: config.analysis.bands(),
        replicates: config.analysis.replicates.clone(),
        search_spaces: config
            .workloads
            .iter()
            .map(|w| {
                let space = SearchSpace {
                    learning_rate: w.learning_rate(s),
                    one_minus_momentum: w.searches_momentum().then(|| w.one_minus_momentum(s)),
                };
                (w.label(), space)
            })
            .collect(),
        claims: config
            .analysis
            .claims
            .iter()
            .map(|c| TargetClaim {
                id: c.id.clone(),
                claim: c.claim.clone(),
                source: c.source.clone(),
                workload: c.workload.clone(),
                rule: c.report_rule(config.budget.evaluate_growth),
                versus: c.versus.clone(),
            })
            .collect(),
    };
    Ok(render_target(dir, &context)?.into())
}

/// `(workload, batch size, median, low, high)` seconds per step (the sweep's raw results.csv
/// summarised again: median and 95% bootstrap interval) for each workload a configured
/// step-time report times: those its `workload` names whose model is the one the sweep timed.
/// A workload of another model (a wider or deeper variant of the architecture) is left out
/// with a note, since its steps cost differently; so is a report that cannot be read, so the
/// rest of the report still renders. The notes name each sweep's model and machine.
fn step_times(
    config: &super::TargetConfig,
    notes: &mut Vec<String>,
) -> Vec<(String, u32, f64, f64, f64)> {
    let mut times = Vec::new();
    for source in &config.analysis.step_times {
        let sweep = match read_sweep(Path::new(&source.report)) {
            Ok(sweep) => sweep,
            Err(e) => {
                notes.push(format!(
                    "step times of {}: not read ({e}); time to result left out for it",
                    source.workload
                ));
                continue;
            }
        };
        notes.push(format!(
            "step times of {}: {} ({} with {}, on {})",
            source.workload,
            Path::new(&source.report).join("results.csv").display(),
            model_name(&sweep.model),
            sweep.optimizer,
            sweep.machine.words()
        ));
        // A workload with a source of its own label takes that one, not its model's.
        let own = |w: &Workload| {
            config
                .analysis
                .step_times
                .iter()
                .any(|t| t.workload == w.label())
        };
        for w in config
            .workloads
            .iter()
            .filter(|w| source.names(w) && (source.workload == w.label() || !own(w)))
        {
            if w.model != sweep.model {
                notes.push(format!(
                    "those step times are not used for {}: its model is {}, not the {} they time",
                    w.label(),
                    model_name(&w.model),
                    model_name(&sweep.model)
                ));
                continue;
            }
            let label = w.label();
            times.extend(
                sweep
                    .curve
                    .points
                    .iter()
                    .map(|p| (label.clone(), p.batch_size, p.median, p.low, p.high)),
            );
        }
    }
    times
}
