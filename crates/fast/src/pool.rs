//! 2x2 max-pooling with stride 2 (VGG's and the small and simple CNNs') as an operation of
//! `Autodiff<Flex>` with its own backward. flex keeps an i64 index per output, 8 bytes where the
//! winner of a 2x2 window needs 2 bits, and scatters the gradient on one thread; here the winner
//! is kept as one byte and both passes are parallel over image planes. Ties go to the first
//! element of the window in row-major order, as in flex. Other pools, other backends, inference
//! and the switch off take burn's `MaxPool2d::forward`.

use burn::{
    backend::{
        autodiff::{
            checkpoint::{base::Checkpointer, strategy::NoCheckpointing},
            grads::Gradients,
            ops::{Backward, Ops, OpsKind},
        },
        flex::FlexTensor,
        Autodiff, Flex,
    },
    nn::{pool::MaxPool2d, PaddingConfig2d},
    tensor::{backend::Backend, DType, Tensor, TensorData, TensorMetadata, TensorPrimitive},
};
use rayon::prelude::*;

use crate::buffer::zeros;
use crate::{storage::cast, Kind};

type Ad = Autodiff<Flex>;

/// `pool.forward(x)`, through the fast path where it applies.
pub fn max_pool2d<B: Backend>(pool: &MaxPool2d, x: Tensor<B, 4>) -> Tensor<B, 4> {
    let two_by_two = pool.kernel_size == [2, 2]
        && pool.stride == [2, 2]
        && pool.dilation == [1, 1]
        && matches!(pool.padding, PaddingConfig2d::Valid)
        && !pool.ceil_mode;
    let x = if crate::enabled() && two_by_two {
        match fused(x) {
            Ok(y) => {
                crate::count(Kind::Pooling, true);
                return y;
            }
            Err(x) => x,
        }
    } else {
        x
    };
    crate::count(Kind::Pooling, false);
    pool.forward(x)
}

/// The operation where `B` is `Autodiff<Flex>` and `x` is f32; `Err(x)` hands it back.
fn fused<B: Backend>(x: Tensor<B, 4>) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    if x.dtype() != DType::F32 {
        return Err(x);
    }
    let x: Tensor<Ad, 4> = cast(x)?;
    let x = x.into_primitive().tensor();
    let out = match MaxPool
        .prepare::<NoCheckpointing>([x.node.clone()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let (out, state) = forward(&x.primitive);
            prep.finish(state, out)
        }
        OpsKind::UnTracked(prep) => prep.finish(forward(&x.primitive).0),
    };
    let y: Tensor<Ad, 4> = Tensor::from_primitive(TensorPrimitive::Float(out));
    Ok(cast(y).unwrap_or_else(|_| unreachable!("B is Autodiff<Flex>")))
}

/// Which element of each window won (0-3, row-major), and the input's shape.
#[derive(Debug, Clone)]
struct Winners {
    winners: Vec<u8>,
    shape: [usize; 4],
}

fn forward(x: &FlexTensor) -> (FlexTensor, Winners) {
    let shape: [usize; 4] = x.shape().dims();
    let [n, c, h, w] = shape;
    let (p, q) = (h / 2, w / 2);
    let x = x.to_contiguous();
    let x = x.as_slice::<f32>().unwrap_or_default();
    let mut out = zeros(n * c * p * q);
    let mut winners = vec![0u8; n * c * p * q];
    out.par_chunks_mut((p * q).max(1))
        .zip(winners.par_chunks_mut((p * q).max(1)))
        .enumerate()
        .for_each(|(plane, (out, winners))| {
            let image = &x[plane * h * w..][..h * w];
            for i in 0..p {
                let (top, bottom) = (
                    &image[2 * i * w..][..2 * q],
                    &image[(2 * i + 1) * w..][..2 * q],
                );
                let (out, winners) = (&mut out[i * q..][..q], &mut winners[i * q..][..q]);
                // The window scanned in row-major order, the first of equal values kept, as
                // selects rather than branches so that the row vectorises.
                let windows = top.chunks_exact(2).zip(bottom.chunks_exact(2));
                for ((o, t), (top, bottom)) in out.iter_mut().zip(winners.iter_mut()).zip(windows) {
                    let (mut best, mut at) = (top[0], 0u8);
                    for (k, v) in [(1u8, top[1]), (2, bottom[0]), (3, bottom[1])] {
                        let wins = v > best;
                        best = if wins { v } else { best };
                        at = if wins { k } else { at };
                    }
                    *o = best;
                    *t = at;
                }
            }
        });
    let out = FlexTensor::from_data(TensorData::new(out, [n, c, p, q]));
    (out, Winners { winners, shape })
}

#[derive(Debug)]
struct MaxPool;

impl Backward<Flex, 1> for MaxPool {
    type State = Winners;

    fn backward(self, ops: Ops<Winners, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node] = ops.parents;
        let grad = grads.consume::<Flex>(&ops.node);
        let Some(node) = node else { return };
        let Winners { winners, shape } = ops.state;
        let [_, _, h, w] = shape;
        let (p, q) = (h / 2, w / 2);
        let grad = grad.to_contiguous();
        let grad = grad.as_slice::<f32>().unwrap_or_default();
        let mut dx = vec![0.0; shape.iter().product()];
        dx.par_chunks_mut((h * w).max(1))
            .enumerate()
            .for_each(|(plane, dx)| {
                let (grad, winners) = (&grad[plane * p * q..], &winners[plane * p * q..]);
                for i in 0..p {
                    let (grad, winners) = (&grad[i * q..][..q], &winners[i * q..][..q]);
                    let (top, bottom) = dx[2 * i * w..][..2 * w].split_at_mut(w);
                    // Every element of the window written (the gradient or zero), so that the
                    // row vectorises rather than scattering.
                    let windows = top.chunks_exact_mut(2).zip(bottom.chunks_exact_mut(2));
                    for ((&g, &t), (top, bottom)) in grad.iter().zip(winners).zip(windows) {
                        top[0] = if t == 0 { g } else { 0.0 };
                        top[1] = if t == 1 { g } else { 0.0 };
                        bottom[0] = if t == 2 { g } else { 0.0 };
                        bottom[1] = if t == 3 { g } else { 0.0 };
                    }
                }
            });
        grads.register::<Flex>(node.id, FlexTensor::from_data(TensorData::new(dx, shape)));
    }
}
