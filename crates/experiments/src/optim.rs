//! The optimizers a config can name. Defaults follow Keras, the framework of the seeds
//! (SGD lr 0.01, Adam lr 0.001, epsilon 1e-7), and burn's own differing defaults are overridden
//! explicitly (burn 0.21's `MomentumConfig` defaults dampening to 0.1 and `AdamConfig` epsilon to 1e-5, where Keras has 0 and 1e-7).
//!
//! With the fast paths on (`backend.fast_paths`, the default) the optimizers are batchlab-fast's,
//! which compute burn-optim's formulas and update in place on flex and LibTorch; off, they are
//! burn-optim's own.

use batchlab_fast::optim as fast;
use burn::{
    module::AutodiffModule,
    optim::{
        adaptor::OptimizerAdaptor, decay::WeightDecayConfig, momentum::MomentumConfig, AdamConfig,
        AdamWConfig, Optimizer, SgdConfig,
    },
    tensor::backend::AutodiffBackend,
};
use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, Source};

/// `[optimizer]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OptimizerConfig {
    /// `sgd`, `adam` or `adamw`.
    pub name: OptimizerKind,
    /// Step size; `None` takes the Keras default of the optimizer (SGD 0.01, Adam/AdamW 0.001).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learning_rate: Option<f64>,
    /// SGD momentum (0 = plain SGD, as in the step-time seed). Dampening is 0, as in PyTorch/Keras.
    pub momentum: f64,
    /// Nesterov momentum (SGD only).
    pub nesterov: bool,
    /// L2 penalty (coupled for SGD/Adam, decoupled for AdamW).
    pub weight_decay: f64,
    /// Adam's epsilon; Keras's 1e-7 by default (burn's own default is 1e-5).
    pub epsilon: f64,
}

impl Default for OptimizerConfig {
    fn default() -> Self {
        Self {
            // Plain SGD is what the step-time seed trained VGG16 with.
            name: OptimizerKind::Sgd,
            learning_rate: None,
            momentum: 0.0,
            nesterov: false,
            weight_decay: 0.0,
            epsilon: 1e-7,
        }
    }
}

/// Which optimizer: what `optimizer.name` deserializes into (an unknown name is an error at
/// its value), compared as a value everywhere after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimizerKind {
    /// Stochastic gradient descent, optionally with (Nesterov) momentum.
    Sgd,
    /// Adam with coupled L2 weight decay.
    Adam,
    /// Adam with decoupled weight decay.
    AdamW,
}

impl OptimizerKind {
    /// Every optimizer a config can name.
    pub const ALL: [OptimizerKind; 3] = [
        OptimizerKind::Sgd,
        OptimizerKind::Adam,
        OptimizerKind::AdamW,
    ];

    /// The name configs, trial ids and figures spell it with.
    pub fn name(self) -> &'static str {
        match self {
            OptimizerKind::Sgd => "sgd",
            OptimizerKind::Adam => "adam",
            OptimizerKind::AdamW => "adamw",
        }
    }

    /// The optimizer named `name`, or an error listing the names.
    pub fn parse(name: &str) -> Result<Self, String> {
        OptimizerKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| format!("expected \"sgd\", \"adam\" or \"adamw\", got {name:?}"))
    }
}

impl std::fmt::Display for OptimizerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

crate::word_serde!(OptimizerKind, name, OptimizerKind::ALL, |word| {
    OptimizerKind::parse(word).err().unwrap_or_default()
});

impl OptimizerConfig {
    /// Tensors of state the optimizer keeps per parameter tensor: Adam's two moments, SGD's
    /// velocity when it has momentum (an analytic memory estimate counts them).
    pub fn state_per_parameter(&self) -> usize {
        match self.name {
            OptimizerKind::Adam | OptimizerKind::AdamW => 2,
            OptimizerKind::Sgd if self.momentum > 0.0 => 1,
            OptimizerKind::Sgd => 0,
        }
    }

    /// Checks ranges once, with errors pointing at `[optimizer]` (the name was checked when
    /// the config was read).
    pub fn resolve(&self, source: &Source) -> Result<OptimizerKind, ConfigError> {
        let kind = self.name;
        if let Some(lr) = self.learning_rate {
            if !(lr > 0.0 && lr.is_finite()) {
                return Err(source.error(
                    "optimizer.learning_rate",
                    format!("expected a positive number, got {lr}"),
                ));
            }
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return Err(source.error(
                "optimizer.momentum",
                format!("expected 0 <= momentum < 1, got {}", self.momentum),
            ));
        }
        if self.nesterov && (kind != OptimizerKind::Sgd || self.momentum == 0.0) {
            return Err(source.error(
                "optimizer.nesterov",
                "Nesterov needs optimizer.name = \"sgd\" and a momentum above 0",
            ));
        }
        if self.weight_decay < 0.0 || self.epsilon <= 0.0 {
            return Err(source.error("optimizer", "expected weight_decay >= 0 and epsilon > 0"));
        }
        Ok(kind)
    }

    /// The learning rate used: the configured one or the Keras default of the optimizer.
    pub fn learning_rate(&self) -> f64 {
        self.learning_rate.unwrap_or(match self.name {
            OptimizerKind::Sgd => 0.01,
            OptimizerKind::Adam | OptimizerKind::AdamW => 0.001,
        })
    }
}

/// Work that needs an optimizer of a concrete type; written once, run with any of them.
pub trait WithOptimizer<B: AutodiffBackend, M: AutodiffModule<B>> {
    /// What the work returns.
    type Output;
    /// Runs with the built optimizer.
    fn run<O: Optimizer<M, B>>(self, optimizer: O) -> Self::Output;
}

/// Builds the configured optimizer and hands it to `task`. Call [`OptimizerConfig::resolve`] first.
pub fn with_optimizer<B, M, T>(config: &OptimizerConfig, task: T) -> T::Output
where
    B: AutodiffBackend,
    M: AutodiffModule<B>,
    T: WithOptimizer<B, M>,
{
    if batchlab_fast::enabled() {
        with_fast_optimizer(config, task)
    } else {
        with_burn_optimizer(config, task)
    }
}

/// batchlab-fast's optimizers, with the same formulas and constants as [`with_burn_optimizer`].
fn with_fast_optimizer<B, M, T>(config: &OptimizerConfig, task: T) -> T::Output
where
    B: AutodiffBackend,
    M: AutodiffModule<B>,
    T: WithOptimizer<B, M>,
{
    let decay = (config.weight_decay > 0.0).then_some(config.weight_decay as f32);
    let adam = |decay| fast::Adam {
        // burn's AdamConfig defaults (its fields are private), as with_burn_optimizer leaves them.
        beta_1: 0.9,
        beta_2: 0.999,
        epsilon: config.epsilon as f32,
        decay,
    };
    match config.name {
        OptimizerKind::Adam => task.run(OptimizerAdaptor::from(adam(
            decay.map_or(fast::Decay::None, fast::Decay::Coupled),
        ))),
        OptimizerKind::AdamW => task.run(OptimizerAdaptor::from(adam(fast::Decay::Decoupled(
            config.weight_decay as f32,
        )))),
        OptimizerKind::Sgd => task.run(OptimizerAdaptor::from(fast::Sgd {
            momentum: (config.momentum > 0.0).then_some(fast::Momentum {
                momentum: config.momentum,
                dampening: 0.0,
                nesterov: config.nesterov,
            }),
            weight_decay: decay,
        })),
    }
}

/// burn-optim's optimizers.
fn with_burn_optimizer<B, M, T>(config: &OptimizerConfig, task: T) -> T::Output
where
    B: AutodiffBackend,
    M: AutodiffModule<B>,
    T: WithOptimizer<B, M>,
{
    let decay =
        (config.weight_decay > 0.0).then(|| WeightDecayConfig::new(config.weight_decay as f32));
    match config.name {
        OptimizerKind::Adam => task.run(
            AdamConfig::new()
                .with_epsilon(config.epsilon as f32)
                .with_weight_decay(decay)
                .init(),
        ),
        OptimizerKind::AdamW => task.run(
            AdamWConfig::new()
                .with_epsilon(config.epsilon as f32)
                .with_weight_decay(config.weight_decay as f32)
                .init(),
        ),
        OptimizerKind::Sgd => {
            let momentum = (config.momentum > 0.0).then_some(MomentumConfig {
                momentum: config.momentum,
                dampening: 0.0,
                nesterov: config.nesterov,
            });
            task.run(
                SgdConfig::new()
                    .with_momentum(momentum)
                    .with_weight_decay(decay)
                    .init(),
            )
        }
    }
}

/// How an optimizer is named in trial ids and figures: its name, `-momentum` or `-nesterov`, and
/// its learning rate when not the default.
pub fn label(optimizer: &OptimizerConfig) -> String {
    let mut label = optimizer.name.name().to_string();
    if optimizer.nesterov {
        label.push_str("-nesterov");
    } else if optimizer.momentum > 0.0 {
        label.push_str("-momentum");
    }
    if let Some(lr) = optimizer.learning_rate {
        label.push_str(&format!("-lr{lr}"));
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimizer_labels_tell_the_grid_apart() {
        let sgd = OptimizerConfig::default();
        assert_eq!(label(&sgd), "sgd");
        let nesterov = OptimizerConfig {
            momentum: 0.9,
            nesterov: true,
            learning_rate: Some(0.05),
            ..sgd
        };
        assert_eq!(label(&nesterov), "sgd-nesterov-lr0.05");
    }

    fn source() -> Source {
        Source {
            origin: "t.toml".into(),
            text: "[optimizer]\nname = \"adam\"\n".into(),
            overrides: vec![],
        }
    }

    #[test]
    fn defaults_follow_keras() {
        let sgd = OptimizerConfig::default();
        assert_eq!(sgd.resolve(&source()).unwrap(), OptimizerKind::Sgd);
        assert_eq!(sgd.learning_rate(), 0.01);
        let adam = OptimizerConfig {
            name: OptimizerKind::Adam,
            ..sgd
        };
        assert_eq!(adam.learning_rate(), 0.001);
        assert_eq!(adam.epsilon, 1e-7);
    }

    #[test]
    fn bad_values_are_refused_with_the_key() {
        #[derive(Debug, Deserialize)]
        struct Only {
            #[allow(dead_code)]
            optimizer: OptimizerConfig,
        }
        let bad = Source {
            origin: "t.toml".into(),
            text: "[optimizer]\nname = \"adagrad\"\n".into(),
            overrides: vec![],
        };
        let err = bad.parse::<Only>().unwrap_err();
        assert_eq!(err.key.as_deref(), Some("optimizer.name"));
        assert!(
            err.message
                .contains("expected \"sgd\", \"adam\" or \"adamw\", got \"adagrad\""),
            "{err}"
        );
        let nesterov_without_momentum = OptimizerConfig {
            nesterov: true,
            ..Default::default()
        };
        assert!(nesterov_without_momentum.resolve(&source()).is_err());
    }
}
