//! The optimizers' settings and the scalars of a step, shared by the flex and LibTorch
//! updates: burn-optim 0.21's `Sgd` (`optim/sgd.rs`, `momentum.rs`, `decay.rs`), `Adam` and
//! `AdamW` (`optim/adam.rs`, `adamw.rs`).

/// Momentum as burn-optim's `MomentumConfig`: `v = μ·v + (1 − dampening)·g` (the first step
/// takes `v = g`), and the update is `v`, or `g + μ·v` with Nesterov.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Momentum {
    /// μ.
    pub momentum: f64,
    /// Dampening of the gradient after the first step.
    pub dampening: f64,
    /// Nesterov's look-ahead.
    pub nesterov: bool,
}

/// SGD: `g ← g + λ·p` (weight decay), then momentum, then `p ← p − lr·update`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sgd {
    /// Momentum, or plain SGD.
    pub momentum: Option<Momentum>,
    /// λ, the coupled L2 penalty.
    pub weight_decay: Option<f32>,
}

/// Where weight decay acts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decay {
    /// None (burn's `Adam` without `weight_decay`, or `AdamW` with 0).
    None,
    /// Adam's L2 penalty λ added to the gradient: `g ← g + λ·p`.
    Coupled(f32),
    /// AdamW's: `p ← p·(1 − lr·λ)` before the step.
    Decoupled(f32),
}

/// Adam or AdamW.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adam {
    /// β₁.
    pub beta_1: f32,
    /// β₂.
    pub beta_2: f32,
    /// ε.
    pub epsilon: f32,
    /// Weight decay, and which kind.
    pub decay: Decay,
}

/// The scalars of one step, computed once per tensor in f32 as burn does. burn's Adam and AdamW
/// write the same bias correction two ways, and the fast path follows each.
#[derive(Debug, Clone, Copy)]
pub(super) enum Factors {
    /// Adam: `m·(√bc₂/bc₁) / (√v + ε·√bc₂)`.
    Folded { m_scale: f32, eps: f32 },
    /// AdamW: `(m/bc₁) / (√(v/bc₂) + ε)`.
    Divided { bc1: f32, bc2: f32, eps: f32 },
}

impl Adam {
    pub(super) fn factors(&self, time: usize) -> Factors {
        let t = time as i32;
        let (bc1, bc2) = (1.0 - self.beta_1.powi(t), 1.0 - self.beta_2.powi(t));
        match self.decay {
            Decay::Decoupled(_) => Factors::Divided {
                bc1,
                bc2,
                eps: self.epsilon,
            },
            _ => Factors::Folded {
                m_scale: bc2.sqrt() / bc1,
                eps: self.epsilon * bc2.sqrt(),
            },
        }
    }

    /// The factor that keeps of the parameter before the step: AdamW's `1 − lr·λ`.
    pub(super) fn kept(&self, lr: f64) -> Option<f64> {
        match self.decay {
            Decay::Decoupled(wd) if lr * wd as f64 != 0.0 => Some(1.0 - lr * wd as f64),
            _ => None,
        }
    }
}
