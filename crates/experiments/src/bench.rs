//! `batchlab bench`: fixed training-step benchmarks, comparable across commits, backends and
//! frameworks, and the overhead of the sweep harness over a bare loop of the same burn calls.

use std::time::Instant;

use batchlab_datasets::SyntheticImages;
use batchlab_method::stats::{median, quantile};
use batchlab_models::{classification_loss, Architecture, Model, ModelSpec};
use burn::{
    optim::{GradientsParams, Optimizer},
    tensor::backend::AutodiffBackend,
};

use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};

use crate::{
    backend::{dispatch, OnBackend},
    config::BackendConfig,
    error::RunError,
    optim::{with_optimizer, OptimizerConfig, WithOptimizer},
    progress::Progress,
    timed_step::{with_stepper, StepSetup, Warmup},
};

/// One benchmark case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Shown in the table.
    pub name: String,
    /// The model.
    pub spec: ModelSpec,
    /// The batch size.
    pub batch_size: usize,
    /// The optimizer.
    pub optimizer: OptimizerConfig,
}

/// A case's timings in milliseconds.
#[derive(Debug, Clone)]
pub struct Timing {
    /// The case.
    pub name: String,
    /// Median step.
    pub median_ms: f64,
    /// Quartiles.
    pub q1_ms: f64,
    /// Quartiles.
    pub q3_ms: f64,
    /// Timed steps.
    pub samples: usize,
}

/// The fixed cases of `batchlab bench` (issue 2): VGG16 3x64x64 batch 16 (SGD), the seed-003
/// small CNN 3x200x200 batch 32 (Adam), an MLP 784-512-512-10 batch 1024 (SGD).
pub fn standard_cases() -> Vec<Case> {
    let sgd = OptimizerConfig::default();
    let adam = OptimizerConfig {
        name: crate::optim::OptimizerKind::Adam,
        ..OptimizerConfig::default()
    };
    let mut mlp = ModelSpec::new(Architecture::Mlp, [1, 28, 28], 10);
    mlp.hidden = vec![512, 512];
    vec![
        Case {
            name: "vgg16 3x64x64 b16 sgd".into(),
            spec: ModelSpec::new(Architecture::Vgg16, [3, 64, 64], 1000),
            batch_size: 16,
            optimizer: sgd.clone(),
        },
        Case {
            name: "small-cnn 3x200x200 b32 adam".into(),
            spec: ModelSpec::new(Architecture::SmallCnn, [3, 200, 200], 1),
            batch_size: 32,
            optimizer: adam,
        },
        Case {
            name: "mlp 784-512-512-10 b1024 sgd".into(),
            spec: mlp,
            batch_size: 1024,
            optimizer: sgd,
        },
    ]
}

impl Case {
    /// The name's first word (`vgg16`, `small-cnn`, `mlp`): what `batchlab bench --case` takes.
    pub fn key(&self) -> &str {
        self.name.split(' ').next().unwrap_or(&self.name)
    }

    /// The same case at batch size `batch`, its name saying so.
    pub fn at_batch(self, batch: usize) -> Self {
        let name = self
            .name
            .split(' ')
            .map(|word| match word.strip_prefix('b') {
                Some(digits) if digits.parse::<usize>().is_ok() => format!("b{batch}"),
                _ => word.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ");
        Self {
            name,
            batch_size: batch,
            ..self
        }
    }
}

/// The standard cases whose [`Case::key`] is among `keys`, in the standard order, at batch size
/// `batch` where one is given; all of them when `keys` is empty. An unknown key or a batch of 0
/// is an error naming what was expected.
pub fn select_cases(keys: &[String], batch: Option<usize>) -> Result<Vec<Case>, String> {
    if batch == Some(0) {
        return Err("the batch size is 0: expected at least 1".to_string());
    }
    let cases = standard_cases();
    if let Some(unknown) = keys.iter().find(|k| !cases.iter().any(|c| c.key() == *k)) {
        let known: Vec<&str> = cases.iter().map(Case::key).collect();
        return Err(format!(
            "unknown case `{unknown}`: expected one of {}",
            known.join(", ")
        ));
    }
    Ok(cases
        .into_iter()
        .filter(|c| keys.is_empty() || keys.iter().any(|k| k == c.key()))
        .map(|c| match batch {
            Some(batch) => c.at_batch(batch),
            None => c,
        })
        .collect())
}

/// Times `case`: `warmup` dropped steps, then `samples` timed steps through the sweep harness.
pub fn time_case(
    backend: &BackendConfig,
    case: &Case,
    warmup: usize,
    samples: usize,
) -> Result<Timing, RunError> {
    let step_ms = steps(backend, case, warmup, samples, Mode::Harness)?;
    Ok(timing(&case.name, &step_ms))
}

/// How [`compare`] interleaves its visits.
#[derive(Debug, Clone, Copy)]
pub struct Rounds {
    /// Rounds; each visits every (case, backend) pair once.
    pub rounds: usize,
    /// Dropped steps at the start of each visit (a fresh model and optimizer).
    pub warmup: usize,
    /// Timed steps per visit.
    pub samples: usize,
    /// Seeds each round's shuffled order.
    pub seed: u64,
}

/// Times every case on every backend, interleaved so that no backend always runs on a warmer
/// or a busier machine: each round visits every (case, backend) pair once, in an order shuffled
/// afresh per round. Returns `timings[case][backend]` over all rounds' timed steps.
pub fn compare(
    backends: &[BackendConfig],
    cases: &[Case],
    plan: Rounds,
    progress: &dyn Progress,
) -> Result<Vec<Vec<Timing>>, RunError> {
    let mut step_ms = vec![vec![Vec::new(); backends.len()]; cases.len()];
    let mut visits: Vec<(usize, usize)> = (0..cases.len())
        .flat_map(|c| (0..backends.len()).map(move |b| (c, b)))
        .collect();
    progress.start((plan.rounds * visits.len()) as u64, "bench");
    let mut rng = StdRng::seed_from_u64(plan.seed);
    let mut done = 0;
    for round in 1..=plan.rounds {
        visits.shuffle(&mut rng);
        for &(c, b) in &visits {
            let (case, backend) = (&cases[c], &backends[b]);
            let visit = format!("round {round}: {} on {}", case.name, backend.name);
            progress.detail(&visit);
            let times = steps(backend, case, plan.warmup, plan.samples, Mode::Harness)?;
            step_ms[c][b].extend(times);
            done += 1;
            progress.advance(done, &visit);
        }
    }
    progress.finish();
    Ok(step_ms
        .iter()
        .zip(cases)
        .map(|(per_backend, case)| {
            per_backend
                .iter()
                .map(|ms| timing(&case.name, ms))
                .collect()
        })
        .collect())
}

/// The step times of `warmup` + `samples` steps of `case` in `mode`, warm-up dropped.
fn steps(
    backend: &BackendConfig,
    case: &Case,
    warmup: usize,
    samples: usize,
    mode: Mode,
) -> Result<Vec<f64>, RunError> {
    match mode {
        Mode::Harness => {
            let setup = StepSetup {
                backend,
                model: &case.spec,
                optimizer: &case.optimizer,
                seed: 0,
            };
            with_stepper(setup, |stepper| {
                stepper.visit(case.batch_size, 0, Warmup::fixed(warmup), samples, true)
            })?
            .map(|visit| visit.step_ms)
            .map_err(RunError::Other)
        }
        Mode::Bare => Ok(dispatch(
            backend,
            Bare {
                case,
                warmup,
                samples,
            },
        )?),
    }
}

/// Harness overhead: rounds alternating a harness visit (the [`crate::timed_step`] stepper,
/// memory tracking and CPU clock, the loss kept as a tensor) and a bare loop of the same burn calls timed step by step. Returns
/// (harness, bare) timings over all their steps.
pub fn harness_overhead(
    backend: &BackendConfig,
    case: &Case,
    rounds: usize,
    steps: usize,
) -> Result<(Timing, Timing), RunError> {
    let mut harness = Vec::new();
    let mut bare = Vec::new();
    for round in 0..rounds {
        // Alternate which goes first, so neither always runs on a warmer machine.
        let order = if round % 2 == 0 {
            [Mode::Harness, Mode::Bare]
        } else {
            [Mode::Bare, Mode::Harness]
        };
        for mode in order {
            let times = self::steps(backend, case, 2, steps, mode)?;
            match mode {
                Mode::Harness => harness.extend(times),
                Mode::Bare => bare.extend(times),
            }
        }
    }
    Ok((
        timing("sweep harness", &harness),
        timing("bare loop", &bare),
    ))
}

fn timing(name: &str, ms: &[f64]) -> Timing {
    Timing {
        name: name.to_string(),
        median_ms: median(ms),
        q1_ms: quantile(ms, 0.25),
        q3_ms: quantile(ms, 0.75),
        samples: ms.len(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Harness,
    Bare,
}

/// A bare loop of the burn calls of a training step, timed step by step.
struct Bare<'a> {
    case: &'a Case,
    warmup: usize,
    samples: usize,
}

impl OnBackend for Bare<'_> {
    type Output = Vec<f64>;
    fn run<B: AutodiffBackend>(self, device: B::Device) -> Vec<f64> {
        B::seed(&device, 0);
        let model = self
            .case
            .spec
            .init::<B>(&device)
            .expect("the benchmark cases are valid models");
        with_optimizer::<B, Model<B>, _>(
            &self.case.optimizer.clone(),
            BareWith {
                bare: self,
                model,
                device,
            },
        )
    }
}

struct BareWith<'a, B: AutodiffBackend> {
    bare: Bare<'a>,
    model: Model<B>,
    device: B::Device,
}

impl<B: AutodiffBackend> WithOptimizer<B, Model<B>> for BareWith<'_, B> {
    type Output = Vec<f64>;
    fn run<O: Optimizer<Model<B>, B>>(self, mut optimizer: O) -> Vec<f64> {
        let Bare {
            case,
            warmup,
            samples,
        } = self.bare;
        let images = SyntheticImages {
            shape: case.spec.input,
            classes: case.spec.classes,
        };
        let batch = images.batch::<B>(case.batch_size, 0, &self.device);
        let lr = case.optimizer.learning_rate();
        // The same burn calls with nothing around them but the clock and the sync that any
        // step-time measurement needs.
        let mut model = self.model;
        let mut times = Vec::with_capacity(samples);
        for i in 0..warmup + samples {
            let start = Instant::now();
            let loss =
                classification_loss(model.forward(batch.images.clone()), batch.labels.clone());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optimizer.step(lr, model, grads);
            B::sync(&self.device).expect("sync");
            if i >= warmup {
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        times
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_picked_by_their_first_word_in_the_standard_order() {
        let keys = |cases: Vec<Case>| {
            cases
                .iter()
                .map(|c| c.key().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(select_cases(&[], None).unwrap()),
            ["vgg16", "small-cnn", "mlp"]
        );
        let picked = select_cases(&["mlp".into(), "vgg16".into()], None).unwrap();
        assert_eq!(keys(picked), ["vgg16", "mlp"]);
        let unknown = select_cases(&["resnet".into()], None).unwrap_err();
        assert!(
            unknown.contains("`resnet`") && unknown.contains("vgg16, small-cnn, mlp"),
            "{unknown}"
        );
    }

    #[test]
    fn a_batch_size_replaces_each_cases_own_and_its_name_says_so() {
        let picked = select_cases(&["mlp".into()], Some(256)).unwrap();
        assert_eq!(picked[0].batch_size, 256);
        assert_eq!(picked[0].name, "mlp 784-512-512-10 b256 sgd");
        assert_eq!(picked[0].key(), "mlp");
        let zero = select_cases(&[], Some(0)).unwrap_err();
        assert!(zero.contains("batch size is 0"), "{zero}");
    }
}
