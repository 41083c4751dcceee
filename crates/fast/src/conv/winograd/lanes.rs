//! `L` channels at a time as fixed-size arrays, for the channels-last copy
//! (`passes::channels_last`), which transposes `L` x `L` blocks of channels and pixels; the
//! transforms themselves run on pulp's vectors (`vectors`).

/// Values moved side by side: two SSE registers on the baseline x86-64 this crate compiles for.
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
