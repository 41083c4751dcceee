//! The passes around a dense layer's products (`dense::paths`): the bias (and ReLU) added to a
//! product another kernel than the packed one computed, and the output gradient's mask and
//! column sums (the bias's gradient), each in one pass over the rows, in the tensor's own values
//! where it holds them alone.

use burn::{backend::flex::FlexTensor, tensor::TensorData};
use rayon::prelude::*;

use super::slice;

/// Rows of the bias's gradient one task sums.
const SUM_ROWS: usize = 64;

/// `y + bias`, the bias added to each row, then the ReLU where `relu`, in a pass over `y`.
pub(super) fn biased(y: FlexTensor, bias: &[f32], relu: bool) -> FlexTensor {
    let dims = y.layout().shape().dims::<2>();
    let pass = |values: &mut [f32]| {
        values.par_chunks_mut(bias.len()).for_each(|row| {
            for (v, b) in row.iter_mut().zip(bias) {
                // No `max` without the ReLU: a NaN stays one (`max` would drop it).
                *v = if relu { (*v + b).max(0.0) } else { *v + b };
            }
        })
    };
    in_place(y, dims, pass).0
}

/// `pass` over the values of `t` (`[m, n]`): in its own storage where it holds them alone, else
/// on a copy. Returns the tensor so written and what the pass returned.
fn in_place<R>(
    t: FlexTensor,
    [m, n]: [usize; 2],
    pass: impl FnOnce(&mut [f32]) -> R,
) -> (FlexTensor, R) {
    // The old handle dropped: the contiguous one is then the values' only owner.
    let mut t = std::convert::identity(t).to_contiguous();
    if let Some(values) = t.try_storage_mut::<f32>().filter(|v| v.len() == m * n) {
        let out = pass(values);
        return (t, out);
    }
    // Values shared with another tensor, or a view into a larger buffer.
    let mut values = slice(&t).to_vec();
    let out = pass(&mut values);
    (FlexTensor::from_data(TensorData::new(values, [m, n])), out)
}

/// The output's gradient `grad` (`[m, n]`) for the layer's products, and, where `sums` asks, its
/// columns' sums (the bias's gradient). After a ReLU (its output `out` given), zero where the
/// output was not positive, masked and summed in one pass over the rows, in `grad`'s own values
/// where it holds them alone, else in a copy; after a head, as it is, summed in a pass that
/// only reads it.
pub(super) fn masked(
    grad: FlexTensor,
    out: Option<&[f32]>,
    [m, n]: [usize; 2],
    sums: bool,
) -> (FlexTensor, Option<Vec<f32>>) {
    let Some(out) = out else {
        let grad = grad.to_contiguous();
        let sums = sums.then(|| {
            let rows = slice(&grad).par_chunks(n * SUM_ROWS);
            column_sums(rows.map(|rows| column_sums_of(rows, n)), n)
        });
        return (grad, sums);
    };
    let pass = |values: &mut [f32]| {
        let rows = values
            .par_chunks_mut(n * SUM_ROWS)
            .zip(out.par_chunks(n * SUM_ROWS));
        if !sums {
            rows.for_each(|(values, out)| mask(values, out));
            return None;
        }
        let partial = rows.map(|(values, out)| {
            mask(values, out);
            column_sums_of(values, n)
        });
        Some(column_sums(partial, n))
    };
    in_place(grad, [m, n], pass)
}

/// `values` where the ReLU's output `out` was positive, zero elsewhere.
fn mask(values: &mut [f32], out: &[f32]) {
    // A select, not a branch: the mask follows the data, and a branch on it mispredicts half
    // the time (in scratch, 7% of a step's profile samples so).
    for (v, &o) in values.iter_mut().zip(out) {
        *v = if o > 0.0 { *v } else { 0.0 };
    }
}

/// The sums of the columns of `rows` (`[_, n]`).
fn column_sums_of(rows: &[f32], n: usize) -> Vec<f32> {
    let mut column = vec![0.0f32; n];
    for row in rows.chunks(n) {
        column.iter_mut().zip(row).for_each(|(s, v)| *s += v);
    }
    column
}

/// The blocks' column sums added up (`n` zeros for none).
fn column_sums(blocks: impl ParallelIterator<Item = Vec<f32>>, n: usize) -> Vec<f32> {
    blocks.reduce(
        || vec![0.0; n],
        |mut a, b| {
            a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
            a
        },
    )
}

#[cfg(test)]
mod tests {
    use super::{masked, slice};
    use crate::dense::testing::{matrix, on_two_threads};

    #[test]
    fn the_gradient_is_masked_where_the_relu_was_off_and_summed_by_column_and_a_heads_only_summed()
    {
        on_two_threads(|| {
            // More rows than one task sums, a NaN output among them.
            let (m, n) = (150, 7);
            let grad = matrix(m, n, 0.3);
            let mut out: Vec<f32> = slice(&matrix(m, n, 0.17)).to_vec();
            out[11] = f32::NAN;
            let expected: Vec<f32> = (slice(&grad).iter().zip(&out))
                .map(|(&g, &o)| if o > 0.0 { g } else { 0.0 })
                .collect();
            let sums: Vec<f32> = (0..n)
                .map(|j| expected.iter().skip(j).step_by(n).sum())
                .collect();
            // In the gradient's own values where it holds them alone; in a copy where another
            // tensor shares them, theirs left as they were.
            let (alone, shared) = (matrix(m, n, 0.3), matrix(m, n, 0.3));
            let keeper = shared.clone();
            for (grad, wanted, in_place) in [(alone, true, true), (shared, false, false)] {
                let at = slice(&grad).as_ptr();
                let (d, got) = masked(grad, Some(&out), [m, n], wanted);
                assert_eq!(slice(&d).as_ptr() == at, in_place);
                assert_eq!(slice(&d), &expected[..]);
                assert_eq!(got.is_some(), wanted);
                for (got, sum) in got.iter().flatten().zip(&sums) {
                    assert!(
                        (got - sum).abs() <= 1e-5 * (1.0 + sum.abs()),
                        "{got} against {sum}"
                    );
                }
            }
            assert_eq!(slice(&keeper), slice(&matrix(m, n, 0.3)));
            // After a head (no ReLU): the gradient as it is, its own values, summed by column.
            let sums: Vec<f32> = (0..n)
                .map(|j| slice(&grad).iter().skip(j).step_by(n).sum())
                .collect();
            let at = slice(&grad).as_ptr();
            let (d, got) = masked(grad.clone(), None, [m, n], true);
            assert_eq!((slice(&d).as_ptr(), slice(&d)), (at, slice(&grad)));
            for (got, sum) in got.iter().flatten().zip(&sums) {
                assert!(
                    (got - sum).abs() <= 1e-5 * (1.0 + sum.abs()),
                    "{got} against {sum}"
                );
            }
            assert_eq!(masked(grad, None, [m, n], false).1, None);
        });
    }
}
