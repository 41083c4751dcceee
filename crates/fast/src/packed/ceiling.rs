//! How fast this machine can multiply at best, for `batchlab bench --only products`: the rate of
//! independent fused multiply-adds on registers (the machine's peak), and the rate of the packed
//! kernel's own loop on operands that stay in the first-level cache (the most the kernel can
//! give a product, with nothing to pack, fetch or share out). Each is timed on every one of
//! rayon's threads at once, the threads started together (`rayon::broadcast`) and the clock
//! read when the last one ends. A product's time at a rate is a floor no implementation at that
//! rate goes under (docs/flex-performance.md, "What the MLP's products can reach").

use std::time::Instant;

use super::{kernel, width};
use crate::simd::{vectorized, Simd, WithSimd};

/// Multiply-adds each thread runs in one timing: enough to take tens of milliseconds.
const WORK: usize = 1 << 30;
/// Depth of the kernel's strip and panel: both held in a first-level cache (6 KiB and 16 KiB
/// with AVX2).
const DEPTH: usize = 256;
/// Independent sums of the peak's loop: more than a multiply-add's latency times its issue
/// width, so that none waits for another.
const CHAINS: usize = 12;

/// What bounds a product on this machine, in GFLOP/s over all of rayon's threads.
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    /// Independent multiply-adds on registers.
    pub peak: f64,
    /// The packed kernel's loop on a strip and a panel held in the first-level cache.
    pub kernel: f64,
}

/// The two rates of [`Rates`], each the median of `timings` timings (at least one).
pub fn rates(timings: usize) -> Rates {
    let median = |rate: &dyn Fn() -> f64| {
        let mut rates: Vec<f64> = (0..timings.max(1)).map(|_| rate()).collect();
        rates.sort_by(f64::total_cmp);
        rates[rates.len() / 2]
    };
    Rates {
        peak: median(&|| on_every_thread(|| vectorized(Peak))),
        kernel: median(&|| on_every_thread(|| vectorized(KernelLoop))),
    }
}

/// GFLOP/s of `run` (which returns the operations it did) on every thread at once.
fn on_every_thread(run: impl Fn() -> (f64, f32) + Sync) -> f64 {
    let start = Instant::now();
    let done = rayon::broadcast(|_| run());
    let seconds = start.elapsed().as_secs_f64();
    let flop: f64 = done.iter().map(|(flop, _)| flop).sum();
    // The sums are read, so that the loops are not optimised away.
    std::hint::black_box(done.iter().map(|(_, sum)| sum).sum::<f32>());
    flop / seconds / 1e9
}

/// [`CHAINS`] sums of products of two registers, [`WORK`] multiply-adds in all.
struct Peak;

impl WithSimd for Peak {
    type Output = (f64, f32);

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> (f64, f32) {
        let (a, b) = std::hint::black_box((1.0f32 + 1e-7, 1e-7f32));
        let (a, b) = (simd.splat_f32s(a), simd.splat_f32s(b));
        let mut sums = [simd.splat_f32s(0.0); CHAINS];
        let steps = WORK / (CHAINS * S::F32_LANES);
        for _ in 0..steps {
            for sum in &mut sums {
                *sum = simd.mul_add_f32s(a, *sum, b);
            }
        }
        let flop = 2.0 * (steps * CHAINS * S::F32_LANES) as f64;
        (flop, total(simd, &sums))
    }
}

/// The packed kernel on one strip and one panel, again and again, each block of sums added up.
struct KernelLoop;

impl WithSimd for KernelLoop {
    type Output = (f64, f32);

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> (f64, f32) {
        match width() {
            32 => blocks::<S, 12, 32>(simd),
            16 => blocks::<S, 6, 16>(simd),
            _ => blocks::<S, 4, 2>(simd),
        }
    }
}

#[inline(always)]
fn blocks<S: Simd, const MR: usize, const NR: usize>(simd: S) -> (f64, f32) {
    assert_eq!(NR, 2 * S::F32_LANES, "a panel is two vectors wide");
    let mut strip = vec![1e-3f32; DEPTH * MR];
    let mut panel = vec![1e-3f32; DEPTH * NR];
    // Mutable and opaque: the compiler may not assume the values stay, and hoist the loads.
    let (strip, panel) = std::hint::black_box((&mut strip, &mut panel));
    let calls = WORK / (DEPTH * MR * NR);
    let mut sums = [simd.splat_f32s(0.0); 2];
    for _ in 0..calls {
        for [low, high] in kernel::<S, MR, NR>(simd, strip, panel) {
            sums[0] = simd.add_f32s(sums[0], low);
            sums[1] = simd.add_f32s(sums[1], high);
        }
    }
    let flop = 2.0 * (calls * DEPTH * MR * NR) as f64;
    (flop, total(simd, &sums))
}

#[inline(always)]
fn total<S: Simd>(simd: S, sums: &[S::f32s]) -> f32 {
    let sum = sums
        .iter()
        .fold(simd.splat_f32s(0.0), |t, &s| simd.add_f32s(t, s));
    simd.reduce_sum_f32s(sum)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_kernel_runs_at_most_at_the_peak_and_both_are_measured() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
        let pool = pool.expect("a pool of one thread");
        // Five timings of each, taking turns. Other tests share the cores, and load only ever
        // slows a timing: the fastest peak is the least disturbed one, set against the
        // kernel's median. A median of three peaks let one burst of load read the peak at 75
        // GFLOP/s beside a kernel at 116 (`just test`, 2026-12-07).
        let rates: Vec<super::Rates> = (0..5).map(|_| pool.install(|| super::rates(1))).collect();
        assert!(
            rates.iter().all(|r| r.peak > 0.0 && r.kernel > 0.0),
            "{rates:?}"
        );
        let peak = rates.iter().map(|r| r.peak).fold(0.0, f64::max);
        let mut kernels: Vec<f64> = rates.iter().map(|r| r.kernel).collect();
        kernels.sort_by(f64::total_cmp);
        let kernel = kernels[kernels.len() / 2];
        // The kernel's loop does the peak's work plus loads: it cannot be much faster. A loop
        // the compiler cut short (sums never read) ran 1.5-2.3x the peak in scratch runs.
        assert!(kernel < 1.5 * peak, "{rates:?}");
    }
}
