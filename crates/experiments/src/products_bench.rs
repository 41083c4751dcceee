//! `batchlab bench --only products`: the MLP benchmark step's eight matrix products (784-512-512-10
//! at batch 1024: three forward, three kernel gradients, two input gradients; 3.29 GFLOP a pass)
//! alone, on flex's matrix kernel (gemm, through burn's `matmul`) and on batchlab's packed kernel
//! in each of its orders (`batchlab_fast::packed`, which the MLP's dense layers run on). The same
//! shapes and protocol as `scripts/mlp_products.py` times in numpy's OpenBLAS and PyTorch's MKL,
//! so that `scripts/bench-mlp-products.sh` sets them all side by side: 20 untimed passes, then
//! 60 timed ones, the kernels taking turns pass by pass. Beside them, what bounds a pass here
//! ([`floors`]): the machine's peak rate of multiply-adds and the packed kernel's own loop.

use std::time::Instant;

use batchlab_fast::packed::{self, ceiling, Order, Strided};
use burn::{
    backend::Flex,
    tensor::{Tensor, TensorData},
};

const BATCH: usize = 1024;
/// `(m, k, n, a transposed, b transposed)`: `C[m, n] = op(A) · op(B)` as the layers' backward
/// reads its operands (the same list as `scripts/mlp_products.py`).
const SHAPES: [(usize, usize, usize, bool, bool); 8] = [
    (BATCH, 784, 512, false, false),
    (BATCH, 512, 512, false, false),
    (BATCH, 512, 10, false, false),
    (784, BATCH, 512, true, false),
    (512, BATCH, 512, true, false),
    (512, BATCH, 10, true, false),
    (BATCH, 512, 512, false, true),
    (BATCH, 10, 512, false, true),
];
const WARMUP: usize = 20;
const PASSES: usize = 60;

/// One kernel's timed passes, in seconds.
#[derive(Debug, Clone)]
pub struct Passes {
    /// What ran.
    pub kernel: &'static str,
    /// Seconds per pass of the eight products, one per timed pass.
    pub seconds: Vec<f64>,
}

impl Passes {
    /// `kernel: median X ms (Y GFLOP/s), quartiles A-B ms`, as `scripts/mlp_products.py` prints.
    pub fn line(&self) -> String {
        let mut sorted = self.seconds.clone();
        sorted.sort_by(f64::total_cmp);
        let at = |q: usize| sorted[(sorted.len() * q / 4).min(sorted.len() - 1)];
        let (median, low, high) = (at(2), at(1), at(3));
        format!(
            "{}: median {:.2} ms ({:.0} GFLOP/s), quartiles {:.2}-{:.2} ms",
            self.kernel,
            median * 1e3,
            flop() / median / 1e9,
            low * 1e3,
            high * 1e3
        )
    }
}

/// Floating-point operations of one pass.
fn flop() -> f64 {
    SHAPES
        .iter()
        .map(|&(m, k, n, _, _)| 2.0 * (m * k * n) as f64)
        .sum()
}

/// Timings of each rate in [`floors`]: the median of five.
const RATE_TIMINGS: usize = 5;

/// What bounds a pass of the eight products on all of rayon's threads, as lines: the rate of
/// independent multiply-adds on registers and of the packed kernel's loop on operands held in
/// the first-level cache, each with the pass's time at that rate.
pub fn floors() -> [String; 2] {
    let rates = ceiling::rates(RATE_TIMINGS);
    let line = |what: &str, rate: f64| {
        format!(
            "{what}: {rate:.0} GFLOP/s (median of {RATE_TIMINGS}), a pass at least {:.2} ms",
            flop() / rate / 1e6
        )
    };
    [
        line("the machine's peak (independent multiply-adds)", rates.peak),
        line(
            "the packed kernel's loop, operands in the first-level cache",
            rates.kernel,
        ),
    ]
}

/// Values of a fixed wave (the kernels' speed does not depend on them).
fn wave(len: usize, step: f32) -> Vec<f32> {
    (0..len).map(|i| (i as f32 * step).sin()).collect()
}

/// One round: flex's kernel and batchlab's packed kernel in each order, [`PASSES`] timed passes
/// each, taking turns.
pub fn round() -> [Passes; 3] {
    let device = Default::default();
    // Each operand stored as the layer holds it: a transposed operand is the transpose of a
    // row-major matrix, read through a view, never copied.
    let operands: Vec<_> = SHAPES
        .iter()
        .map(|&(m, k, n, ta, tb)| {
            let a = (wave(m * k, 0.37), if ta { [k, m] } else { [m, k] });
            let b = (wave(k * n, 0.11), if tb { [n, k] } else { [k, n] });
            (a, b, ta, tb)
        })
        .collect();
    let tensors: Vec<_> = operands
        .iter()
        .map(|((a, a_dims), (b, b_dims), ta, tb)| {
            let view = |values: &Vec<f32>, dims: [usize; 2], t: bool| {
                let x =
                    Tensor::<Flex, 2>::from_data(TensorData::new(values.clone(), dims), &device);
                if t {
                    x.transpose()
                } else {
                    x
                }
            };
            (view(a, *a_dims, *ta), view(b, *b_dims, *tb))
        })
        .collect();
    let flex_pass = || {
        for (a, b) in &tensors {
            std::hint::black_box(a.clone().matmul(b.clone()).into_data());
        }
    };
    let packed_pass = |order| {
        for ((a, [ar, ac]), (b, [br, bc]), ta, tb) in &operands {
            let view = |values, rows, cols, t| {
                let s = Strided::row_major(values, rows, cols);
                if t {
                    s.t()
                } else {
                    s
                }
            };
            let (a, b) = (view(a, *ar, *ac, *ta), view(b, *br, *bc, *tb));
            let product = packed::product(a, b, order);
            std::hint::black_box(product);
        }
    };
    let passes: [(&str, &dyn Fn()); 3] = [
        ("flex's kernel (gemm 0.19, burn's matmul)", &flex_pass),
        ("batchlab's packed kernel", &|| packed_pass(Order::Strips)),
        ("batchlab's packed kernel, panels' order", &|| {
            packed_pass(Order::Panels)
        }),
    ];
    for _ in 0..WARMUP {
        passes.iter().for_each(|(_, pass)| pass());
    }
    let mut seconds = [(); 3].map(|_| Vec::with_capacity(PASSES));
    for _ in 0..PASSES {
        for ((_, pass), seconds) in passes.iter().zip(&mut seconds) {
            let start = Instant::now();
            pass();
            seconds.push(start.elapsed().as_secs_f64());
        }
    }
    std::array::from_fn(|i| Passes {
        kernel: passes[i].0,
        seconds: std::mem::take(&mut seconds[i]),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_reads_the_median_and_quartiles_of_its_passes() {
        let passes = super::Passes {
            kernel: "k",
            seconds: (1..=8).map(|i| i as f64 * 1e-3).collect(),
        };
        // 3.29 GFLOP in 5 ms.
        assert_eq!(
            passes.line(),
            "k: median 5.00 ms (657 GFLOP/s), quartiles 3.00-7.00 ms"
        );
    }
}
