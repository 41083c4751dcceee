//! The narrow kernel (`paths::Kernel::Narrow`): a product with few columns or a short inner
//! dimension, a network's head (the MLP's 512 -> 10: `x · w` and `xᵀ · d` ten columns wide,
//! `d · wᵀ` ten deep), on batchlab's product kernel (`outer`), which reads the left side where
//! it is. The packed kernel copies the left side into strips for every product, which a wide
//! product repays over its many panels and a head's one panel does not: on the MLP's head it
//! took 1.3-2.3x this kernel's time on an Intel Xeon, 2 threads (docs/flex-performance.md).
//! Here only the right side, at most [`NARROW`] x its other side, is copied, row-major, its
//! columns padded with zeros to whole vectors, so that no column takes the kernel's
//! value-by-value edge (`outer::padded`).

use rayon::prelude::*;

use crate::buffer::zeros;
use crate::outer::{self, width, Left};
use crate::packed::{Finish, Strided};

/// At most this many columns or this deep an inner dimension for the narrow kernel to be raced:
/// two of the kernel's vectors with AVX-512.
pub(super) const NARROW: usize = 32;

/// Whether the narrow kernel is raced for `[m, k] · [k, n]`.
pub(super) fn applies([_, k, n]: [usize; 3]) -> bool {
    k <= NARROW || n <= NARROW
}

/// `a · b`, `finish` applied to every value, row-major `[a.rows, b.cols]`; `a` row-major or a
/// transposed view of a row-major matrix (the layouts of `paths::Operand`).
pub(super) fn product(a: Strided, b: Strided, finish: Finish) -> Vec<f32> {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    let left = if a.col == 1 {
        Left::Rows {
            values: a.values,
            row: a.row,
        }
    } else {
        assert_eq!(a.row, 1, "a row-major left side or a transposed one");
        Left::Columns {
            values: a.values,
            step: a.col,
        }
    };
    // One vector of sums per row where the columns fit in one, else two.
    let lanes = width() / 2;
    let padded = n.next_multiple_of(if n <= lanes { lanes } else { width() });
    let mut right = vec![0.0; k * padded];
    for (s, line) in right.chunks_mut(padded).enumerate() {
        for (j, v) in line[..n].iter_mut().enumerate() {
            *v = b.values[s * b.row + j * b.col];
        }
    }
    let mut out = outer::padded(left, &right, [k, m, padded]);
    let finished = |j: usize, v: f32| match finish {
        Finish::Plain => v,
        // As the packed kernel's stores and `passes::biased` finish: a NaN stays one without
        // the ReLU.
        Finish::Bias { bias, relu: true } => (v + bias[j]).max(0.0),
        Finish::Bias { bias, relu: false } => v + bias[j],
    };
    if padded == n {
        // No padding to drop: finished in place, where there is anything to finish.
        if let Finish::Bias { .. } = finish {
            out.par_chunks_mut(n).for_each(|line| {
                for (j, v) in line.iter_mut().enumerate() {
                    *v = finished(j, *v);
                }
            });
        }
        return out;
    }
    let mut values = zeros(m * n);
    values
        .par_chunks_mut(n)
        .zip(out.par_chunks(padded))
        .for_each(|(line, row)| {
            for (j, (v, &value)) in line.iter_mut().zip(row).enumerate() {
                *v = finished(j, value);
            }
        });
    values
}
