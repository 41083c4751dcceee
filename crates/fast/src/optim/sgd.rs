//! SGD with optional momentum (with dampening, optionally Nesterov) and coupled weight decay:
//! burn-optim's `Sgd` (`optim/sgd.rs`, `momentum.rs`, `decay.rs`), updated in place.

use burn::{
    optim::{LearningRate, SimpleOptimizer},
    record::Record,
    tensor::{backend::Backend, Device, Tensor},
};
use rayon::prelude::*;

use super::{rules::Sgd, vectorized, Loop, CHUNK};
use crate::storage::Opened;

/// The velocity of one parameter tensor (kept only with momentum).
#[derive(Record, Clone)]
pub struct SgdState<B: Backend, const D: usize> {
    /// The momentum buffer.
    pub velocity: Tensor<B, D>,
}

impl<B: Backend> SimpleOptimizer<B> for Sgd {
    type State<const D: usize> = SgdState<B, D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        state: Option<SgdState<B, D>>,
    ) -> (Tensor<B, D>, Option<SgdState<B, D>>) {
        let first = state.is_none();
        let velocity = self.momentum.map(|_| match state {
            Some(s) => s.velocity,
            None => Tensor::zeros(tensor.shape(), &tensor.device()),
        });
        let (mut p, g, mut v) = (
            Opened::new(tensor),
            Opened::new(grad),
            velocity.map(Opened::new),
        );
        let on = crate::enabled();
        if on && p.writable() && g.slice().is_some() && v.as_ref().is_none_or(Opened::writable) {
            if let (Some(ps), Some(gs)) = (p.slice_mut(), g.slice()) {
                self.fused(
                    lr as f32,
                    ps,
                    gs,
                    v.as_mut().and_then(Opened::slice_mut),
                    first,
                );
            }
            return self.done(p, v);
        }
        #[cfg(feature = "tch")]
        if on
            && super::tch::ready(&p)
            && super::tch::is_tch(&g)
            && v.as_ref().is_none_or(super::tch::ready)
        {
            super::tch::sgd(self, lr, &mut p, &g, v.as_mut(), first);
            return self.done(p, v);
        }
        crate::count(crate::Kind::Update, false);
        let velocity = if first { None } else { v.map(Opened::close) };
        self.reference(lr, p.close(), g.close(), velocity)
    }

    fn to_device<const D: usize>(state: SgdState<B, D>, device: &Device<B>) -> SgdState<B, D> {
        SgdState {
            velocity: state.velocity.to_device(device),
        }
    }
}

impl Sgd {
    /// The result of an update made in place.
    fn done<B: Backend, const D: usize>(
        &self,
        p: Opened<B>,
        v: Option<Opened<B>>,
    ) -> (Tensor<B, D>, Option<SgdState<B, D>>) {
        crate::count(crate::Kind::Update, true);
        let state = v.map(|v| SgdState {
            velocity: v.close(),
        });
        (p.close(), state)
    }

    /// burn-optim's formulas in burn's tensor ops, operation for operation.
    pub(super) fn reference<B: Backend, const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        velocity: Option<Tensor<B, D>>,
    ) -> (Tensor<B, D>, Option<SgdState<B, D>>) {
        let mut grad = grad;
        if let Some(penalty) = self.weight_decay {
            grad = tensor.clone().mul_scalar(penalty).add(grad);
        }
        let mut state = None;
        if let Some(m) = self.momentum {
            let velocity = match velocity {
                Some(v) => grad
                    .clone()
                    .mul_scalar(1.0 - m.dampening)
                    .add(v.mul_scalar(m.momentum as f32)),
                None => grad.clone(),
            };
            grad = if m.nesterov {
                velocity.clone().mul_scalar(m.momentum as f32).add(grad)
            } else {
                velocity.clone()
            };
            state = Some(SgdState { velocity });
        }
        (tensor - grad.mul_scalar(lr), state)
    }

    /// One pass over the parameter, its gradient and its velocity, in parallel chunks: the same
    /// f32 operations, in the same order, as [`Sgd::reference`].
    fn fused(&self, lr: f32, p: &mut [f32], g: &[f32], v: Option<&mut [f32]>, first: bool) {
        let step = Step {
            lr,
            decay: self.weight_decay,
        };
        let velocity = self.momentum.map(|m| Velocity {
            mu: m.momentum as f32,
            keep: (1.0 - m.dampening) as f32,
            nesterov: m.nesterov,
            first,
        });
        match (velocity, v) {
            (Some(velocity), Some(v)) => p
                .par_chunks_mut(CHUNK)
                .zip(v.par_chunks_mut(CHUNK))
                .zip(g.par_chunks(CHUNK))
                .for_each(|((p, v), g)| {
                    vectorized(WithMomentum {
                        velocity,
                        step,
                        p,
                        g,
                        v,
                    })
                }),
            _ => p
                .par_chunks_mut(CHUNK)
                .zip(g.par_chunks(CHUNK))
                .for_each(|(p, g)| vectorized(Plain { step, p, g })),
        }
    }
}

/// A step's learning rate and weight decay, as values.
#[derive(Clone, Copy)]
struct Step {
    lr: f32,
    decay: Option<f32>,
}

/// Momentum's settings for one step: `v = g` at the first, `v = keep·g + μ·v` after.
#[derive(Clone, Copy)]
struct Velocity {
    mu: f32,
    keep: f32,
    nesterov: bool,
    first: bool,
}

impl Step {
    /// The gradient `g` of parameter `p` with the coupled weight decay `λ·p` added.
    #[inline(always)]
    fn decayed(self, p: f32, g: f32) -> f32 {
        match self.decay {
            Some(l) => p * l + g,
            None => g,
        }
    }
}

/// A chunk of plain SGD: `p ← p − lr·g`.
struct Plain<'a> {
    step: Step,
    p: &'a mut [f32],
    g: &'a [f32],
}

impl Loop for Plain<'_> {
    #[inline(always)]
    fn run(self) {
        let Plain { step, p, g } = self;
        for (p, &g) in p.iter_mut().zip(g) {
            *p -= step.decayed(*p, g) * step.lr;
        }
    }
}

/// A chunk of SGD with momentum: the velocity, then `p ← p − lr·update`.
struct WithMomentum<'a> {
    velocity: Velocity,
    step: Step,
    p: &'a mut [f32],
    g: &'a [f32],
    v: &'a mut [f32],
}

impl Loop for WithMomentum<'_> {
    #[inline(always)]
    fn run(self) {
        let WithMomentum {
            velocity,
            step,
            p,
            g,
            v,
        } = self;
        let Velocity {
            mu,
            keep,
            nesterov,
            first,
        } = velocity;
        for ((p, v), &g) in p.iter_mut().zip(v).zip(g) {
            let g = step.decayed(*p, g);
            *v = if first { g } else { g * keep + *v * mu };
            let update = if nesterov { *v * mu + g } else { *v };
            *p -= update * step.lr;
        }
    }
}
