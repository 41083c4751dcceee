//! `batchlab predict`: training time from the step-time sweeps of this device.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use batchlab_experiments::{
    config::{BackendConfig, BackendKind},
    estimate::duration,
    predict::{
        history, history_summary, nearest_machine, predict_training, suggestions, Basis, Origin,
        Predicted, TrainingPlan,
    },
    sweeps::{machine_here, model_name, Machine},
};
use batchlab_models::{Architecture, ModelSpec};

use crate::commands::parse_input;
use crate::out::outln;

#[derive(Debug, clap::Args)]
pub struct PredictArgs {
    /// The model, e.g. vgg16 (`batchlab models` lists them).
    #[arg(long, value_parser = clap::value_parser!(Architecture), required_unless_present = "history")]
    model: Option<Architecture>,
    /// Input as C,H,W.
    #[arg(long, default_value = "3,32,32", value_parser = parse_input)]
    input: [usize; 3],
    /// Classes of the head.
    #[arg(long, default_value_t = 10)]
    classes: usize,
    /// Hidden widths of an MLP, comma-separated (e.g. 128,128).
    #[arg(long, value_delimiter = ',')]
    hidden: Option<Vec<usize>>,
    /// The optimizer as a sweep's label: sgd, sgd-momentum, sgd-nesterov, adam, adamw.
    #[arg(long, default_value = "sgd")]
    optimizer: String,
    /// Examples per step.
    #[arg(long, required_unless_present = "history")]
    batch: Option<u32>,
    /// Training examples per epoch.
    #[arg(long, required_unless_present = "history")]
    examples: Option<u64>,
    /// Epochs.
    #[arg(long, default_value_t = 1.0)]
    epochs: f64,
    /// Drop the last partial batch of each epoch (floor(N/B) steps; else ceil).
    #[arg(long)]
    drop_last: bool,
    /// Backend the training runs on.
    #[arg(long, default_value = "flex", value_parser = crate::commands::backend_names())]
    backend: String,
    /// CPU threads (0: all cores), as the sweeps' meta.json records them.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Report root holding the step-time sweeps.
    #[arg(long, default_value = "reports")]
    reports: PathBuf,
    /// Directory of experiment TOMLs, searched for the step-time study that would give a sweep
    /// when this machine has none.
    #[arg(long, default_value = "experiments")]
    experiments: PathBuf,
    /// Without a sweep on this machine, predict from the nearest machine's sweeps (named, with
    /// the warning that the error was measured there).
    #[arg(long)]
    any_machine: bool,
    /// Instead of predicting, list every past check of the prediction under the report root
    /// (each training report's measured times beside the predicted ones).
    #[arg(long)]
    history: bool,
}

/// The past checks under `reports`: the table with `full`, and the one-line summary.
fn past_checks(reports: &std::path::Path, full: bool) -> Result<()> {
    let past = history(reports);
    if past.is_empty() {
        outln!(
            "past checks: none under {} (a training report checks its times once a step-time sweep of its model on its machine exists)",
            reports.display()
        );
        return Ok(());
    }
    if full {
        outln!("| run | series | budget | batch | measured s | predicted s | error |");
        outln!("| --- | --- | --- | --- | --- | --- | --- |");
        for (run, r) in &past {
            outln!(
                "| {} | {} | {} | {} | {:.3} | {:.3} | {:+.1}% |",
                run.display(),
                r.series,
                r.budget,
                r.batch_size,
                r.measured_s,
                r.predicted_s,
                100.0 * r.error
            );
        }
    }
    let (cells, runs, median, largest) = history_summary(&past);
    outln!(
        "past checks: {cells} cells in {runs} runs under {}, median absolute error {:.1}% (largest {:.1}%){}",
        reports.display(),
        100.0 * median,
        100.0 * largest,
        if full { "" } else { "; `batchlab predict --history` lists them" }
    );
    Ok(())
}

fn triple((v, lo, hi): (f64, f64, f64)) -> String {
    format!("{} ({} – {})", duration(v), duration(lo), duration(hi))
}

/// Without a prediction on this machine: with `--any-machine`, the nearest machine's (said as
/// such); else the error, naming the experiments that would give a sweep and how long their
/// runs took, and the nearest machine `--any-machine` would use.
fn elsewhere(
    args: &PredictArgs,
    model: &ModelSpec,
    machine: &Machine,
    plan: &TrainingPlan,
    error: batchlab_experiments::RunError,
) -> Result<(Predicted, Machine)> {
    let nearest = nearest_machine(&args.reports, model, &args.optimizer, machine);
    if args.any_machine {
        let Some(other) = nearest else {
            return Err(anyhow!(
                "{error}; and no other machine has a sweep under {}",
                args.reports.display()
            ));
        };
        let p = predict_training(&args.reports, model, &args.optimizer, &other, plan)?;
        outln!(
            "warning: no sweep of this machine ({}); predicted from the sweeps of {}, whose error was measured there, not here",
            machine.words(),
            Machine::words(&other)
        );
        return Ok((p, other));
    }
    let mut advice = vec![];
    for s in suggestions(&args.experiments, &args.reports, model)
        .iter()
        .take(3)
    {
        // What a user acts on: how long the newest run took, and where; not every run.
        let newest = s.runs.last().map_or(String::new(), |(m, took)| {
            let more = match s.runs.len() {
                1 => String::new(),
                n => format!(", the newest of {n} runs"),
            };
            match took {
                Some(t) => format!("; took {} on {}{more}", duration(*t as f64), m.words()),
                None => format!("; run on {}{more}", m.words()),
            }
        });
        advice.push(format!(
            "`just run experiment={}` ({}{newest})",
            s.name,
            if s.same_model {
                "this model"
            } else {
                "this architecture; set its [model] to this model's input and classes"
            },
        ));
    }
    let run = if advice.is_empty() {
        format!(
            "No step-time experiment in {} times this architecture: copy one and set its [model] table",
            args.experiments.display()
        )
    } else {
        format!("To time it here, run {}", advice.join(" or "))
    };
    let any = nearest.map_or(String::new(), |m| {
        format!(
            "; or add --any-machine to predict from the sweeps of {}",
            Machine::words(&m)
        )
    });
    Err(anyhow!("{error}. {run}{any}"))
}

pub fn predict(args: PredictArgs) -> Result<()> {
    if args.history {
        past_checks(&args.reports, true)?;
        return Ok(());
    }
    let (Some(architecture), Some(batch), Some(examples)) = (args.model, args.batch, args.examples)
    else {
        return Err(anyhow!(
            "--model, --batch and --examples are needed (or --history)"
        ));
    };
    if batch == 0 || !(args.epochs > 0.0 && args.epochs.is_finite()) {
        return Err(anyhow!(
            "--batch must be at least 1 and --epochs a number above 0 (got {batch} and {})",
            args.epochs
        ));
    }
    let mut model = ModelSpec::new(architecture, args.input, args.classes);
    if let Some(hidden) = args.hidden.clone() {
        model.hidden = hidden;
    }
    model.validate().map_err(|e| anyhow!("--model: {e}"))?;
    let backend = BackendConfig {
        name: BackendKind::parse(&args.backend).map_err(|e| anyhow!(e))?,
        threads: args.threads,
        ..Default::default()
    };
    let machine = machine_here(&backend);
    let plan = TrainingPlan {
        batch_size: batch,
        examples,
        epochs: args.epochs,
        drop_last: args.drop_last,
    };
    let (p, machine) =
        match predict_training(&args.reports, &model, &args.optimizer, &machine, &plan) {
            Ok(p) => (p, machine),
            Err(e) => elsewhere(&args, &model, &machine, &plan, e)?,
        };
    let step = p.prediction.step;
    outln!(
        "{} with {}, batch {}, {} examples x {} epoch(s) on {}",
        model_name(&model),
        args.optimizer,
        batch,
        examples,
        args.epochs,
        machine.words()
    );
    outln!("per step:  {}", triple((step.seconds, step.low, step.high)));
    outln!(
        "per epoch: {} ({} steps)",
        triple(p.prediction.epoch),
        p.prediction.steps_per_epoch
    );
    outln!("in total:  {}", triple(p.prediction.total));
    match p.basis {
        Basis::SameModel(dir) => {
            let how = match step.origin {
                Origin::Measured => "measured at this batch size".to_string(),
                Origin::Interpolated { below, above } => {
                    format!("interpolated between batch {below} and {above}")
                }
                Origin::Extrapolated => {
                    "extrapolated beyond the sweep along its last points".into()
                }
            };
            outln!(
                "from: the step-time sweep {} ({how}; interval: the median's 95% interval)",
                dir.display()
            );
        }
        Basis::CrossModel {
            fitted,
            left_out,
            error,
        } => {
            outln!(
                "from: no sweep of this model here; the cross-model fit (per-example cost from FLOPs, activations and depthwise FLOPs; fixed cost from parameters and layers) over {} sweeps, interval ±{:.0}% (the median leave-one-model-out error):",
                fitted.len(),
                100.0 * error
            );
            for l in left_out {
                outln!(
                    "  {} predicted from the others: median error {:.0}%",
                    l.label,
                    100.0 * l.median_abs_error
                );
            }
        }
    }
    past_checks(&args.reports, false)?;
    Ok(())
}
