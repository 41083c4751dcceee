//! One image row of the channels-last copy (`passes::channels_last`): `out[w][c] = x[c·plane +
//! w]`, blocks of channels x pixels transposed in registers. With AVX-512 (the `avx512` build on
//! a CPU that has it) 16 x 16 blocks through pulp's `V4` token, whose shuffles the generic
//! `Simd` the transforms are written against does not offer: on VGG16's shapes 0.71-0.79x the
//! time of the 8 x 8 blocks on arrays below, which LLVM compiles for baseline x86-64 (and
//! compiled for AVX-512 from 16 x 16 arrays, slower than those: docs/flex-performance.md, "VGG16's
//! backward here"). Elsewhere the 8 x 8 arrays.

/// Whether [`row`] moves 16 x 16 blocks in registers here (the `avx512` build on a CPU with the
/// instructions), not the 8 x 8 arrays.
pub(super) fn in_registers() -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "avx512"))]
    if crate::simd::avx512().is_some() {
        return true;
    }
    false
}

/// The row: `x` starts at the row's first pixel of channel 0, channels `plane` apart; `out` is
/// the row channels-last, `[width, channels]`.
pub(super) fn row(x: &[f32], out: &mut [f32], channels: usize, plane: usize, width: usize) {
    let row = Row {
        x,
        out,
        channels,
        plane,
        width,
    };
    #[cfg(all(target_arch = "x86_64", feature = "avx512"))]
    if let Some(v4) = crate::simd::avx512() {
        return pulp::Simd::vectorize(v4, wide::Blocks { v4, row });
    }
    row.blocks_of_8()
}

struct Row<'a> {
    x: &'a [f32],
    out: &'a mut [f32],
    channels: usize,
    plane: usize,
    width: usize,
}

/// Values moved side by side in the 8 x 8 blocks: two SSE registers on baseline x86-64.
const L: usize = 8;

impl Row<'_> {
    /// Blocks of 8 channels x 8 pixels as fixed-size arrays (vector moves where a
    /// variable-length copy is a call), then what is left one value at a time.
    fn blocks_of_8(self) {
        let Row {
            x,
            out,
            channels,
            plane,
            width,
        } = self;
        for c0 in (0..channels).step_by(L) {
            let lanes = L.min(channels - c0);
            let mut w0 = 0;
            while lanes == L && w0 + L <= width {
                let block: [[f32; L]; L] = std::array::from_fn(|l| {
                    x[(c0 + l) * plane + w0..][..L]
                        .try_into()
                        .expect("L values")
                });
                for p in 0..L {
                    let pixel: [f32; L] = std::array::from_fn(|l| block[l][p]);
                    out[(w0 + p) * channels + c0..][..L].copy_from_slice(&pixel);
                }
                w0 += L;
            }
            rest(x, out, [c0, lanes, w0], channels, plane, width);
        }
    }
}

/// Channels `c0..c0 + lanes` of pixels `w0..width`, one value at a time.
#[inline(always)]
fn rest(
    x: &[f32],
    out: &mut [f32],
    [c0, lanes, w0]: [usize; 3],
    channels: usize,
    plane: usize,
    width: usize,
) {
    for w in w0..width {
        for l in 0..lanes {
            out[w * channels + c0 + l] = x[(c0 + l) * plane + w];
        }
    }
}

#[cfg(all(target_arch = "x86_64", feature = "avx512"))]
mod wide {
    use core::arch::x86_64::__m512;

    use pulp::x86::V4;

    use super::{rest, Row};

    /// The row in 16 x 16 blocks, compiled for AVX-512 (`pulp::Simd::vectorize` on `v4`).
    pub(super) struct Blocks<'a> {
        pub v4: V4,
        pub row: Row<'a>,
    }

    impl pulp::WithSimd for Blocks<'_> {
        type Output = ();

        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _: S) {
            let Blocks { v4, row } = self;
            let Row {
                x,
                out,
                channels,
                plane,
                width,
            } = row;
            for c0 in (0..channels).step_by(16) {
                let lanes = 16.min(channels - c0);
                let mut w0 = 0;
                while lanes == 16 && w0 + 16 <= width {
                    let rows: [__m512; 16] = std::array::from_fn(|l| {
                        bytemuck::pod_read_unaligned(bytemuck::cast_slice(
                            &x[(c0 + l) * plane + w0..][..16],
                        ))
                    });
                    for (p, pixel) in transposed(v4, rows).iter().enumerate() {
                        out[(w0 + p) * channels + c0..][..16]
                            .copy_from_slice(bytemuck::cast_slice(std::slice::from_ref(pixel)));
                    }
                    w0 += 16;
                }
                rest(x, out, [c0, lanes, w0], channels, plane, width);
            }
        }
    }

    /// The 16 x 16 block's transpose: pairs of rows interleaved by 32 and by 64 bits, then
    /// quarters of the registers exchanged twice (`shuffle_f32x4`, 0x88 the even quarters of
    /// both, 0xdd the odd ones).
    #[inline(always)]
    fn transposed(v4: V4, r: [__m512; 16]) -> [__m512; 16] {
        let f = v4.avx512f;
        let (pd, ps) = (|a| f._mm512_castps_pd(a), |a| f._mm512_castpd_ps(a));
        let t: [__m512; 16] = std::array::from_fn(|i| match i % 2 {
            0 => f._mm512_unpacklo_ps(r[i], r[i + 1]),
            _ => f._mm512_unpackhi_ps(r[i - 1], r[i]),
        });
        let u: [__m512; 16] = std::array::from_fn(|i| {
            let (b, j) = (i / 4 * 4, i % 4);
            let (a, c) = (pd(t[b + j / 2]), pd(t[b + j / 2 + 2]));
            ps(match j % 2 {
                0 => f._mm512_unpacklo_pd(a, c),
                _ => f._mm512_unpackhi_pd(a, c),
            })
        });
        let v: [__m512; 16] = std::array::from_fn(|i| {
            let (b, j) = (i / 8 * 8, i % 8);
            match j < 4 {
                true => f._mm512_shuffle_f32x4::<0x88>(u[b + j], u[b + j + 4]),
                false => f._mm512_shuffle_f32x4::<0xdd>(u[b + j - 4], u[b + j]),
            }
        });
        std::array::from_fn(|i| match i < 8 {
            true => f._mm512_shuffle_f32x4::<0x88>(v[i], v[i + 8]),
            false => f._mm512_shuffle_f32x4::<0xdd>(v[i - 8], v[i]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Row;

    /// Every value of one row at its pixel and channel, by `copy` (each way of copying a row).
    fn check(copy: impl Fn(Row)) {
        // Whole blocks of 16 and of 8, partial blocks of channels and of pixels, one channel.
        for (channels, plane, width) in [(32, 40, 32), (17, 13, 13), (3, 20, 20), (1, 7, 7)] {
            let x: Vec<f32> = (0..channels * plane).map(|i| i as f32).collect();
            let mut out = vec![f32::NAN; width * channels];
            copy(Row {
                x: &x,
                out: &mut out,
                channels,
                plane,
                width,
            });
            for w in 0..width {
                for c in 0..channels {
                    assert_eq!(
                        out[w * channels + c],
                        x[c * plane + w],
                        "pixel {w}, channel {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_value_lands_at_its_pixel_and_channel() {
        check(|row| super::row(row.x, row.out, row.channels, row.plane, row.width));
        // Each way of copying on its own, whichever `row` takes on this machine.
        check(|row| row.blocks_of_8());
        #[cfg(all(target_arch = "x86_64", feature = "avx512"))]
        if let Some(v4) = crate::simd::avx512() {
            check(|row| pulp::Simd::vectorize(v4, super::wide::Blocks { v4, row }));
        }
    }
}
