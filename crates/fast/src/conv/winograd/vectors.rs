//! Winograd's one-dimensional transforms on pulp's vectors (`S::f32s`), one lane per channel:
//! the passes that call them run inside `simd::vectorized`, so these compile to AVX-512 or
//! AVX2 + FMA registers. They replaced transforms on eight-lane arrays, which LLVM copied
//! between the stack and registers at mismatched widths (a 256-bit store read back by a 512-bit
//! load cannot be forwarded and stalls): 20 ns per kernel for the kernels' transform, about 7
//! on vectors (Zen 5 EPYC, timings not kept).

use crate::simd::{load, Simd};

/// `values` (at most one vector's) as one vector, zero beyond them. Not pulp's partial load:
/// it goes through a masked load out of line, several times slower in these loops.
#[inline(always)]
pub(super) fn vector<S: Simd>(values: &[f32]) -> S::f32s {
    if values.len() == S::F32_LANES {
        load::<S>(values)
    } else {
        let mut padded = [0.0; 16];
        padded[..values.len()].copy_from_slice(values);
        load::<S>(&padded)
    }
}

/// The first `to.len()` lanes of `v` into `to`.
#[inline(always)]
pub(super) fn put<S: Simd>(to: &mut [f32], v: S::f32s) {
    let lanes: &[f32] = bytemuck::cast_slice(std::slice::from_ref(&v));
    to.copy_from_slice(&lanes[..to.len()]);
}

/// The lanes of `v` as values.
#[inline(always)]
pub(super) fn lanes<S: Simd>(v: &S::f32s) -> &[f32] {
    bytemuck::cast_slice(std::slice::from_ref(v))
}

/// `Bᵀ d`: the input transform along one axis.
#[inline(always)]
pub(super) fn bt<S: Simd>(simd: S, [d0, d1, d2, d3, d4, d5]: [S::f32s; 6]) -> [S::f32s; 6] {
    let k = |v: f32| simd.splat_f32s(v);
    let (s12, s34) = (simd.add_f32s(d1, d2), simd.add_f32s(d3, d4));
    let (d12, d43) = (simd.sub_f32s(d1, d2), simd.sub_f32s(d4, d3));
    let (s4m2, d31) = (simd.sub_f32s(d4, d2), simd.sub_f32s(d3, d1));
    [
        simd.mul_add_f32s(k(-5.0), d2, simd.mul_add_f32s(k(4.0), d0, d4)),
        simd.mul_add_f32s(k(-4.0), s12, s34),
        simd.mul_add_f32s(k(4.0), d12, d43),
        simd.mul_add_f32s(k(2.0), d31, s4m2),
        simd.mul_add_f32s(k(-2.0), d31, s4m2),
        simd.mul_add_f32s(k(-5.0), d3, simd.mul_add_f32s(k(4.0), d1, d5)),
    ]
}

/// `Aᵀ m`: the output transform along one axis (6 values to 4).
#[inline(always)]
pub(super) fn at<S: Simd>(simd: S, [m0, m1, m2, m3, m4, m5]: [S::f32s; 6]) -> [S::f32s; 4] {
    let k = |v: f32| simd.splat_f32s(v);
    let (sum12, diff12) = (simd.add_f32s(m1, m2), simd.sub_f32s(m1, m2));
    let (sum34, diff34) = (simd.add_f32s(m3, m4), simd.sub_f32s(m3, m4));
    [
        simd.add_f32s(m0, simd.add_f32s(sum12, sum34)),
        simd.mul_add_f32s(k(2.0), diff34, diff12),
        simd.mul_add_f32s(k(4.0), sum34, sum12),
        simd.add_f32s(simd.mul_add_f32s(k(8.0), diff34, diff12), m5),
    ]
}

/// `A y`: the adjoint of [`at`] (4 values to 6).
#[inline(always)]
pub(super) fn a<S: Simd>(simd: S, [y0, y1, y2, y3]: [S::f32s; 4]) -> [S::f32s; 6] {
    let k = |v: f32| simd.splat_f32s(v);
    let (even, odd) = (simd.add_f32s(y0, y2), simd.add_f32s(y1, y3));
    let even4 = simd.mul_add_f32s(k(4.0), y2, y0);
    let odd2 = simd.mul_add_f32s(k(8.0), y3, simd.mul_f32s(k(2.0), y1));
    [
        y0,
        simd.add_f32s(even, odd),
        simd.sub_f32s(even, odd),
        simd.add_f32s(even4, odd2),
        simd.sub_f32s(even4, odd2),
        y3,
    ]
}

/// `G g`: the kernel transform along one axis (3 values to 6).
#[inline(always)]
pub(super) fn g6<S: Simd>(simd: S, [g0, g1, g2]: [S::f32s; 3]) -> [S::f32s; 6] {
    let k = |v: f32| simd.splat_f32s(v);
    let (outer, quarter) = (simd.add_f32s(g0, g2), simd.mul_add_f32s(k(0.25), g0, g2));
    let half = simd.mul_f32s(k(0.5), g1);
    [
        simd.mul_f32s(k(0.25), g0),
        simd.mul_f32s(k(-SIXTH), simd.add_f32s(outer, g1)),
        simd.mul_f32s(k(-SIXTH), simd.sub_f32s(outer, g1)),
        simd.mul_f32s(k(SIXTH), simd.add_f32s(quarter, half)),
        simd.mul_f32s(k(SIXTH), simd.sub_f32s(quarter, half)),
        g2,
    ]
}

/// `Gᵀ u`: the adjoint of [`g6`] (6 values to 3).
#[inline(always)]
pub(super) fn g3<S: Simd>(simd: S, [u0, u1, u2, u3, u4, u5]: [S::f32s; 6]) -> [S::f32s; 3] {
    let k = |v: f32| simd.splat_f32s(v);
    let (low, high) = (simd.add_f32s(u1, u2), simd.add_f32s(u3, u4));
    let spread = simd.sub_f32s(high, low);
    [
        simd.mul_add_f32s(
            k(0.25),
            u0,
            simd.mul_f32s(k(SIXTH), simd.sub_f32s(simd.mul_f32s(k(0.25), high), low)),
        ),
        simd.mul_f32s(
            k(SIXTH),
            simd.mul_add_f32s(k(0.5), simd.sub_f32s(u3, u4), simd.sub_f32s(u2, u1)),
        ),
        simd.mul_add_f32s(k(SIXTH), spread, u5),
    ]
}

const SIXTH: f32 = 1.0 / 6.0;
