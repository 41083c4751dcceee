//! End to end: a step-time run that took its steps apart (`stages.csv`) gets an anatomy
//! section naming the stage whose time jumps, and a figure that hides nothing. Set
//! BATCHLAB_FIGURE_DIR to keep the directory and look at the figure.

use batchlab_method::rows::Status;
use batchlab_report::About;
use std::path::PathBuf;

use batchlab_method::rows::append_rows;
use batchlab_method::rows::step_time::{StagePhase, StageSample, StepSample};
use batchlab_report::figures::svg_problems;
use batchlab_report::step_time::{render_step_time, StepTimeContext};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn context() -> StepTimeContext {
    StepTimeContext {
        about: About {
            experiment: "synthetic-anatomy".into(),
            description: "A synthetic sweep around 32 whose conv2 backward takes 3 ms more at 32."
                .into(),
            reproduces: None,
            claim: None,
            backend: "flex".into(),
            device: "cpu".into(),
            protocol: "synthetic".into(),
        },
        claimed_jumps: vec![],
        no_jumps_at: vec![32],
        local_minimum_at: None,
        fluctuates_more_than: None,
        slower_than: None,
        rules: Default::default(),
        registered_claims: Default::default(),
        model: "none (synthetic)".into(),
        memory_kind: "process peak resident set size".into(),
        bootstrap_resamples: 200,
        seed: 7,
    }
}

const STAGES: [&str; 4] = ["conv1+relu", "conv2+relu", "dense+relu", "head"];

/// Per stage and phase, 0.1 ms per example with 4% uniform noise; conv2+relu's backward
/// takes 3 ms more at batch 32. The step is the parts' sum plus 1 ms.
fn stage_rows(rng: &mut StdRng) -> Vec<StageSample> {
    let mut rows = vec![];
    for round in 0..4 {
        for batch_size in [31, 32, 33] {
            for sample in 0..3 {
                let mut row = |stage_index: usize, stage: &str, phase: StagePhase, ms: f64| {
                    rows.push(StageSample {
                        batch_size,
                        round,
                        sample,
                        stage_index: stage_index as u32,
                        stage: stage.into(),
                        phase,
                        ms,
                    });
                };
                let mut step = 1.0;
                for (index, stage) in STAGES.iter().enumerate() {
                    for phase in [StagePhase::Forward, StagePhase::Backward] {
                        let jump = if *stage == "conv2+relu"
                            && phase == StagePhase::Backward
                            && batch_size == 32
                        {
                            3.0
                        } else {
                            0.0
                        };
                        let ms = 0.1
                            * f64::from(batch_size)
                            * (1.0 + 0.04 * (rng.random::<f64>() - 0.5))
                            + jump;
                        step += ms;
                        row(index + 1, stage, phase, ms);
                    }
                }
                let update = 0.5 * (1.0 + 0.04 * (rng.random::<f64>() - 0.5));
                row(0, "optimizer", StagePhase::Optimizer, update);
                row(0, "step", StagePhase::Step, step + update);
            }
        }
    }
    rows
}

fn sweep_rows() -> Vec<StepSample> {
    (28..=36)
        .flat_map(|b| {
            (0..5).map(move |i| StepSample {
                batch_size: b,
                round: 0,
                sample: Some(i),
                step_ms: Some(1.0 + 0.8 * f64::from(b) + 0.01 * f64::from(i)),
                status: Status::Ok,
                backend: "flex".into(),
                device: "cpu".into(),
                peak_mem_mb: None,
                message: String::new(),
            })
        })
        .collect()
}

#[test]
fn the_anatomy_section_names_the_stage_that_jumps_and_its_figure_hides_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = std::env::var_os("BATCHLAB_FIGURE_DIR")
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from);
    for file in ["results.csv", "stages.csv"] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    append_rows(&dir.join("results.csv"), &sweep_rows()).unwrap();
    let mut rng = StdRng::seed_from_u64(5);
    append_rows(&dir.join("stages.csv"), &stage_rows(&mut rng)).unwrap();
    let findings = render_step_time(&dir, &context()).unwrap();

    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // The wording is the snapshot's; the findings are asserted below.
    insta::assert_snapshot!("anatomy_report", md);
    // Batch 32 alone was dissected with its neighbours, and its whole step stands out.
    let [anatomy] = &findings.anatomies[..] else {
        panic!("{:?}", findings.anatomies);
    };
    assert_eq!(anatomy.centre, 32);
    assert!(anatomy.step.exceeds_noise(), "{:?}", anatomy.step);
    // 8 stage parts and the optimizer; one of them exceeds its noise.
    assert_eq!(anatomy.parts.len(), 9);
    let responsible: Vec<(&str, &str)> = anatomy
        .responsible()
        .iter()
        .map(|p| (p.stage.as_str(), p.phase.name()))
        .collect();
    assert_eq!(responsible, [("conv2+relu", "backward")]);

    let svg = std::fs::read_to_string(dir.join("anatomy.svg")).unwrap();
    assert!(svg_problems(&svg).is_empty(), "{:?}", svg_problems(&svg));
    // PNG only on demand.
    assert!(!dir.join("anatomy.png").exists());
}

#[test]
fn a_run_without_stages_has_no_anatomy() {
    let tmp = tempfile::tempdir().unwrap();
    append_rows(&tmp.path().join("results.csv"), &sweep_rows()).unwrap();
    let findings = render_step_time(tmp.path(), &context()).unwrap();
    assert!(findings.anatomies.is_empty());
    assert!(!tmp.path().join("anatomy.svg").exists());
}
