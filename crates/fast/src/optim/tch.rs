//! The LibTorch updates: libtorch's in-place ops on the parameter and its state, where burn-tch
//! says the storage is not shared (`TchTensor::can_mut`); the same formulas, in the same order,
//! as [`Sgd::reference`] and [`Adam::reference`] (tch 0.22 has no fused or `_foreach_` optimizer
//! ops to call instead).

use burn::{backend::libtorch::TchTensor, optim::LearningRate, tensor::backend::Backend};

use super::rules::{Adam, Decay, Factors, Sgd};
use crate::storage::Opened;

/// Whether the tensor is a LibTorch tensor.
pub(super) fn is_tch<B: Backend>(t: &Opened<B>) -> bool {
    t.get::<TchTensor>().is_some()
}

/// Whether the tensor is a LibTorch f32 tensor that may be written in place.
pub(super) fn ready<B: Backend>(t: &Opened<B>) -> bool {
    t.get::<TchTensor>()
        .is_some_and(|t| t.can_mut() && t.tensor.kind() == tch::Kind::Float)
}

/// The libtorch tensor of a tensor for which [`is_tch`] holds.
fn torch<B: Backend>(t: &Opened<B>) -> &tch::Tensor {
    &t.get::<TchTensor>().expect("checked by is_tch").tensor
}

/// The libtorch tensor, writable, of a tensor for which [`ready`] holds.
fn torch_mut<B: Backend>(t: &mut Opened<B>) -> &mut tch::Tensor {
    &mut t.get_mut::<TchTensor>().expect("checked by ready").tensor
}

/// A 0-dimensional f32 tensor: `addcmul_`/`addcdiv_` scale by it without a full-size temporary.
fn scalar(v: f64) -> tch::Tensor {
    tch::Tensor::from(v as f32)
}

pub(super) fn sgd<B: Backend>(
    opt: &Sgd,
    lr: LearningRate,
    p: &mut Opened<B>,
    g: &Opened<B>,
    v: Option<&mut Opened<B>>,
    first: bool,
) {
    let grad = match opt.weight_decay {
        Some(penalty) => torch(p).g_mul_scalar(f64::from(penalty)) + torch(g),
        None => torch(g).shallow_clone(),
    };
    let update = match (opt.momentum, v) {
        (Some(m), Some(v)) => {
            let mu = f64::from(m.momentum as f32);
            let velocity = torch_mut(v);
            if first {
                velocity.copy_(&grad);
            } else {
                let _ = velocity.g_mul_scalar_(mu);
                let _ = velocity.addcmul_(&grad, &scalar(1.0 - m.dampening));
            }
            if m.nesterov {
                velocity.g_mul_scalar(mu) + &grad
            } else {
                velocity.shallow_clone()
            }
        }
        _ => grad,
    };
    let _ = torch_mut(p).addcmul_(&update, &scalar(-lr));
}

/// Adam and AdamW with one full-size temporary (the denominator, written over g²): the moments
/// by `lerp_`, the step by `addcdiv_` with the step size folded into the denominator.
pub(super) fn adam<B: Backend>(
    opt: &Adam,
    lr: LearningRate,
    time: usize,
    p: &mut Opened<B>,
    g: &Opened<B>,
    m: &mut Opened<B>,
    v: &mut Opened<B>,
) {
    let grad = match opt.decay {
        Decay::Coupled(penalty) => torch(p).g_mul_scalar(f64::from(penalty)) + torch(g),
        _ => torch(g).shallow_clone(),
    };
    let m = torch_mut(m);
    let _ = m.lerp_(&grad, f64::from(1.0 - opt.beta_1));
    let mut denom = grad.square();
    let v = torch_mut(v);
    let _ = v.lerp_(&denom, f64::from(1.0 - opt.beta_2));
    let _ = v.sqrt_out(&denom);
    // p ← p + m / (denom / −step), with denom = √v + ε (√v̂ + ε for AdamW).
    let step = match opt.factors(time) {
        Factors::Divided { bc1, bc2, eps } => {
            let _ = denom.g_div_scalar_(f64::from(bc2.sqrt()));
            let _ = denom.g_add_scalar_(f64::from(eps));
            lr / f64::from(bc1)
        }
        Factors::Folded { m_scale, eps } => {
            let _ = denom.g_add_scalar_(f64::from(eps));
            lr * f64::from(m_scale)
        }
    };
    let _ = denom.g_div_scalar_(-step);
    let p = torch_mut(p);
    if let Some(keep) = opt.kept(lr) {
        let _ = p.g_mul_scalar_(f64::from(keep as f32));
    }
    let _ = p.addcdiv_(m, &denom);
}
