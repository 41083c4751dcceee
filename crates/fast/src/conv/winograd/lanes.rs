//! Winograd's one-dimensional transforms on `L` channels at a time: fixed-size arrays the
//! compiler keeps in vector registers.

/// Values transformed side by side: one AVX2 register of f32 where the passes run through
/// `simd::vectorized` (the input and output transforms and the output's adjoint), two SSE
/// registers on the baseline x86-64 this crate compiles for elsewhere.
pub(super) const L: usize = 8;
pub(super) type Lanes = [f32; L];

/// The first `lanes` elements of `from` as lanes (zero beyond); a fixed-size copy when all
/// `L` are wanted, which compiles to vector moves where a variable-length copy is a call.
#[inline(always)]
pub(super) fn load(from: &[f32], lanes: usize) -> Lanes {
    if lanes == L {
        from[..L].try_into().expect("L elements")
    } else {
        let mut out = [0.0; L];
        out[..lanes].copy_from_slice(&from[..lanes]);
        out
    }
}

/// Writes the first `lanes` of `values` to the start of `to` (see [`load`]).
#[inline(always)]
pub(super) fn store(to: &mut [f32], values: &Lanes, lanes: usize) {
    if lanes == L {
        to[..L].copy_from_slice(values);
    } else {
        to[..lanes].copy_from_slice(&values[..lanes]);
    }
}

/// `Bᵀ d` for each lane: the input transform along one axis.
#[inline(always)]
pub(super) fn bt(d: &[Lanes; 6]) -> [Lanes; 6] {
    let mut o = [[0.0; L]; 6];
    for l in 0..L {
        let [d0, d1, d2, d3, d4, d5] = [d[0][l], d[1][l], d[2][l], d[3][l], d[4][l], d[5][l]];
        o[0][l] = 4.0 * d0 - 5.0 * d2 + d4;
        o[1][l] = -4.0 * (d1 + d2) + d3 + d4;
        o[2][l] = 4.0 * (d1 - d2) - d3 + d4;
        o[3][l] = 2.0 * (d3 - d1) - d2 + d4;
        o[4][l] = 2.0 * (d1 - d3) - d2 + d4;
        o[5][l] = 4.0 * d1 - 5.0 * d3 + d5;
    }
    o
}

/// `Aᵀ m` for each lane: the output transform along one axis (6 values to 4).
#[inline(always)]
pub(super) fn at(m: &[Lanes; 6]) -> [Lanes; 4] {
    let mut o = [[0.0; L]; 4];
    for l in 0..L {
        let [m0, m1, m2, m3, m4, m5] = [m[0][l], m[1][l], m[2][l], m[3][l], m[4][l], m[5][l]];
        let (sum12, diff12, sum34, diff34) = (m1 + m2, m1 - m2, m3 + m4, m3 - m4);
        o[0][l] = m0 + sum12 + sum34;
        o[1][l] = diff12 + 2.0 * diff34;
        o[2][l] = sum12 + 4.0 * sum34;
        o[3][l] = diff12 + 8.0 * diff34 + m5;
    }
    o
}

/// `A y` for each lane: the adjoint of [`at`] (4 values to 6).
#[inline(always)]
pub(super) fn a(y: &[Lanes; 4]) -> [Lanes; 6] {
    let mut o = [[0.0; L]; 6];
    for l in 0..L {
        let [y0, y1, y2, y3] = [y[0][l], y[1][l], y[2][l], y[3][l]];
        let (even, odd) = (y0 + y2, y1 + y3);
        let (even4, odd2) = (y0 + 4.0 * y2, 2.0 * y1 + 8.0 * y3);
        o[0][l] = y0;
        o[1][l] = even + odd;
        o[2][l] = even - odd;
        o[3][l] = even4 + odd2;
        o[4][l] = even4 - odd2;
        o[5][l] = y3;
    }
    o
}
