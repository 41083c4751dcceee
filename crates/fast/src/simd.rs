//! Vector instructions without unsafe code of ours, through pulp (the SIMD layer under flex's
//! matrix kernels): a kernel is written once against pulp's `Simd` operations and runs inside a
//! function compiled for AVX-512 or AVX2 + FMA when the CPU has them. This crate itself compiles
//! for baseline x86-64 (SSE2, no FMA), and LLVM's vectoriser does not reliably turn array loops
//! into the register-blocked code a kernel needs, so the kernels say it themselves.

pub(crate) use pulp::{Simd, WithSimd};

/// `kernel` on the widest vectors this CPU and this build have: AVX-512 where the build has
/// flex's AVX-512 kernels (the `avx512` feature) and the CPU the instructions, else AVX2 + FMA,
/// else one lane at a time. `with_simd`, and everything it calls, must be `#[inline(always)]`
/// to be compiled for those instructions.
#[inline(always)]
pub(crate) fn vectorized<K: WithSimd>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    {
        #[cfg(feature = "avx512")]
        if let Some(simd) = avx512() {
            return Simd::vectorize(simd, kernel);
        }
        if let Some(simd) = pulp::x86::V3::try_new() {
            return Simd::vectorize(simd, kernel);
        }
    }
    Simd::vectorize(pulp::Scalar, kernel)
}

/// pulp's AVX-512 token where this build has the `avx512` feature and the CPU the instructions,
/// as [`vectorized`] decides: for a kernel whose shuffles the generic `Simd` does not offer
/// (`conv::winograd::transpose`).
#[cfg(all(target_arch = "x86_64", feature = "avx512"))]
#[inline(always)]
pub(crate) fn avx512() -> Option<pulp::x86::V4> {
    pulp::x86::V4::try_new()
}

/// `S::F32_LANES` values from the start of `from` as one vector (an unaligned load).
#[inline(always)]
pub(crate) fn load<S: Simd>(from: &[f32]) -> S::f32s {
    bytemuck::pod_read_unaligned(bytemuck::cast_slice(&from[..S::F32_LANES]))
}
