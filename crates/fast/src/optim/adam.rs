//! Adam with coupled L2 weight decay and AdamW with decoupled decay: burn-optim's `Adam` and
//! `AdamW` (`optim/adam.rs`, `adamw.rs`: epsilon added to √v scaled by √(1 − β₂ᵗ), a step
//! counter per parameter tensor from 1), updated in place.

use burn::{
    optim::{LearningRate, SimpleOptimizer},
    record::Record,
    tensor::{backend::Backend, Device, Tensor},
};
use rayon::prelude::*;

use super::{
    rules::{Adam, Decay, Factors},
    vectorized, Loop, CHUNK,
};
use crate::storage::Opened;

/// The moments of one parameter tensor and its step count.
#[derive(Record, Clone)]
pub struct AdamState<B: Backend, const D: usize> {
    /// Steps taken, this one included.
    pub time: usize,
    /// The first moment.
    pub moment_1: Tensor<B, D>,
    /// The second moment.
    pub moment_2: Tensor<B, D>,
}

impl<B: Backend> SimpleOptimizer<B> for Adam {
    type State<const D: usize> = AdamState<B, D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        state: Option<AdamState<B, D>>,
    ) -> (Tensor<B, D>, Option<AdamState<B, D>>) {
        let (time, m, v) = match state {
            Some(s) => (s.time + 1, s.moment_1, s.moment_2),
            None => {
                let zeros = || Tensor::zeros(tensor.shape(), &tensor.device());
                (1, zeros(), zeros())
            }
        };
        let (mut p, g) = (Opened::new(tensor), Opened::new(grad));
        let (mut m, mut v) = (Opened::new(m), Opened::new(v));
        let on = crate::enabled();
        if on && p.writable() && g.slice().is_some() && m.writable() && v.writable() {
            if let (Some(ps), Some(gs), Some(ms), Some(vs)) =
                (p.slice_mut(), g.slice(), m.slice_mut(), v.slice_mut())
            {
                self.fused(lr, time, ps, gs, ms, vs);
            }
            return done(time, p, m, v);
        }
        #[cfg(feature = "tch")]
        {
            use super::tch::{is_tch, ready};
            if on && ready(&p) && is_tch(&g) && ready(&m) && ready(&v) {
                super::tch::adam(self, lr, time, &mut p, &g, &mut m, &mut v);
                return done(time, p, m, v);
            }
        }
        crate::count(crate::Kind::Update, false);
        self.reference(lr, time, p.close(), g.close(), m.close(), v.close())
    }

    fn to_device<const D: usize>(state: AdamState<B, D>, device: &Device<B>) -> AdamState<B, D> {
        AdamState {
            time: state.time,
            moment_1: state.moment_1.to_device(device),
            moment_2: state.moment_2.to_device(device),
        }
    }
}

/// The result of an update made in place.
fn done<B: Backend, const D: usize>(
    time: usize,
    p: Opened<B>,
    m: Opened<B>,
    v: Opened<B>,
) -> (Tensor<B, D>, Option<AdamState<B, D>>) {
    crate::count(crate::Kind::Update, true);
    let state = AdamState {
        time,
        moment_1: m.close(),
        moment_2: v.close(),
    };
    (p.close(), Some(state))
}

impl Adam {
    /// burn-optim's formulas in burn's tensor ops; moments start at zero, which gives burn's
    /// first step exactly (`0·β + x = x`).
    pub(super) fn reference<B: Backend, const D: usize>(
        &self,
        lr: LearningRate,
        time: usize,
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        m: Tensor<B, D>,
        v: Tensor<B, D>,
    ) -> (Tensor<B, D>, Option<AdamState<B, D>>) {
        let grad = match self.decay {
            Decay::Coupled(penalty) => tensor.clone().mul_scalar(penalty).add(grad),
            _ => grad,
        };
        let m = m
            .mul_scalar(self.beta_1)
            .add(grad.clone().mul_scalar(1.0 - self.beta_1));
        let v = v
            .mul_scalar(self.beta_2)
            .add(grad.square().mul_scalar(1.0 - self.beta_2));
        let delta = match self.factors(time) {
            Factors::Divided { bc1, bc2, eps } => m
                .clone()
                .div_scalar(bc1)
                .div(v.clone().div_scalar(bc2).sqrt().add_scalar(eps)),
            Factors::Folded { m_scale, eps } => m
                .clone()
                .mul_scalar(m_scale)
                .div(v.clone().sqrt().add_scalar(eps)),
        };
        let decayed = match self.kept(lr) {
            Some(keep) => tensor.mul_scalar(keep),
            None => tensor,
        };
        let state = AdamState {
            time,
            moment_1: m,
            moment_2: v,
        };
        (decayed - delta.mul_scalar(lr), Some(state))
    }

    /// One pass over the parameter, its gradient and both moments, in parallel chunks: the same
    /// f32 operations, in the same order, as [`Adam::reference`].
    fn fused(&self, lr: f64, time: usize, p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]) {
        let step = Step {
            betas: [self.beta_1, self.beta_2],
            coupled: match self.decay {
                Decay::Coupled(l) => Some(l),
                _ => None,
            },
            factors: self.factors(time),
            keep: self.kept(lr).map(|k| k as f32),
            lr: lr as f32,
        };
        p.par_chunks_mut(CHUNK)
            .zip(g.par_chunks(CHUNK))
            .zip(m.par_chunks_mut(CHUNK))
            .zip(v.par_chunks_mut(CHUNK))
            .for_each(|(((p, g), m), v)| vectorized(Chunk { step, p, g, m, v }));
    }
}

/// A step's settings, as values.
#[derive(Clone, Copy)]
struct Step {
    betas: [f32; 2],
    coupled: Option<f32>,
    factors: Factors,
    keep: Option<f32>,
    lr: f32,
}

/// One chunk of the parameter, its gradient and its moments.
struct Chunk<'a> {
    step: Step,
    p: &'a mut [f32],
    g: &'a [f32],
    m: &'a mut [f32],
    v: &'a mut [f32],
}

impl Loop for Chunk<'_> {
    #[inline(always)]
    fn run(self) {
        let Chunk { step, p, g, m, v } = self;
        let [b1, b2] = step.betas;
        let (c1, c2) = (1.0 - b1, 1.0 - b2);
        for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m).zip(v) {
            let g = step.coupled.map_or(g, |l| *p * l + g);
            *m = *m * b1 + g * c1;
            *v = *v * b2 + g * g * c2;
            let delta = match step.factors {
                Factors::Divided { bc1, bc2, eps } => (*m / bc1) / ((*v / bc2).sqrt() + eps),
                Factors::Folded { m_scale, eps } => *m * m_scale / (v.sqrt() + eps),
            };
            let kept = step.keep.map_or(*p, |k| *p * k);
            *p = kept - delta * step.lr;
        }
    }
}
