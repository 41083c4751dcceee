//! Output buffers of the parallel passes. `vec![0.0; n]` zeroes on the calling thread while the
//! other threads wait (or, for memory fresh from the kernel, faults its pages in there): for a
//! layer's tens of megabytes that is serial time in every step (docs/flex-performance.md, "Where
//! the serial time goes"). Here every thread zeroes, and faults in, a share.

use rayon::prelude::*;

/// `len` zeros, written by all the threads.
pub(crate) fn zeros(len: usize) -> Vec<f32> {
    let mut values = Vec::with_capacity(len);
    values.par_extend(rayon::iter::repeat_n(0.0, len));
    values
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_element_is_zero() {
        let values = super::zeros(100_003);
        assert_eq!(values.len(), 100_003);
        assert!(values.iter().all(|&v| v == 0.0));
    }
}
