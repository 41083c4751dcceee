//! What the dense modules' tests share.

use burn::{backend::flex::FlexTensor, tensor::TensorData};

/// A `rows x cols` matrix of `sin(i f)`, `i` the value's index.
pub(super) fn matrix(rows: usize, cols: usize, f: f32) -> FlexTensor {
    let values = (0..rows * cols).map(|i| (i as f32 * f).sin()).collect();
    FlexTensor::from_data(TensorData::new(values, [rows, cols]))
}

/// `f` on a pool of two threads, so that the parallel passes share their work out.
pub(super) fn on_two_threads(f: impl FnOnce() + Send) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build();
    pool.expect("a pool of two threads").install(f);
}
