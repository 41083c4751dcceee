//! Output buffers of the parallel passes. `vec![0.0; n]` zeroes on the calling thread while the
//! other threads wait (or, for memory fresh from the kernel, faults its pages in there): for a
//! layer's tens of megabytes that is serial time in every step (docs/flex-performance.md,
//! "Blocked Winograd, the dense backward and direct convolutions"). Here every thread zeroes,
//! and faults in, a share; and a pass that overwrites its whole buffer (Winograd's transforms,
//! the channels-last copies) takes one kept from an earlier call instead, not zeroed again.

use std::sync::Mutex;

use rayon::prelude::*;

/// Buffers given back for reuse.
static KEPT: Mutex<Kept> = Mutex::new(Kept(Vec::new()));
/// What the kept buffers may hold in all (256 MiB): mimalloc keeps freed memory anyway
/// (`cli::allocator`), so the bound only keeps a rarely used size from staying.
const KEPT_BYTES: usize = 256 << 20;

/// `len` values for a pass that writes every one of them: a kept buffer where one is large
/// enough, its old values left in place, else zeros.
pub(crate) fn scratch(len: usize) -> Vec<f32> {
    let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner()).take(len);
    kept.unwrap_or_else(|| zeros(len))
}

/// Keeps `buffer` for a later [`scratch`].
pub(crate) fn keep(buffer: Vec<f32>) {
    KEPT.lock()
        .unwrap_or_else(|e| e.into_inner())
        .give(buffer, KEPT_BYTES);
}

/// Buffers kept for reuse, largest first.
struct Kept(Vec<Vec<f32>>);

impl Kept {
    /// The smallest kept buffer of at least `len` values' capacity, at length `len` (values
    /// added within its capacity are zero).
    fn take(&mut self, len: usize) -> Option<Vec<f32>> {
        let i = self.0.iter().rposition(|b| b.capacity() >= len)?;
        let mut buffer = self.0.remove(i);
        buffer.resize(len, 0.0);
        Some(buffer)
    }

    /// Keeps `buffer`, letting the smallest go beyond `bytes` in all.
    fn give(&mut self, buffer: Vec<f32>, bytes: usize) {
        self.0.push(buffer);
        self.0.sort_by_key(|b| std::cmp::Reverse(b.capacity()));
        let mut total = 0;
        self.0.retain(|b| {
            total += b.capacity() * std::mem::size_of::<f32>();
            total <= bytes
        });
    }
}

/// `len` zeros, written by all the threads.
pub(crate) fn zeros(len: usize) -> Vec<f32> {
    let mut values = Vec::with_capacity(len);
    values.par_extend(rayon::iter::repeat_n(0.0, len));
    values
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_smallest_kept_buffer_that_fits_is_handed_out_at_the_length_asked() {
        let mut kept = super::Kept(Vec::new());
        let (mut small, large) = (vec![0.0; 100], vec![0.0; 1000]);
        small[99] = 7.0;
        let at = small.as_ptr();
        kept.give(small, usize::MAX);
        kept.give(large, usize::MAX);
        let again = kept.take(99).unwrap();
        assert_eq!((again.len(), again.as_ptr()), (99, at));
        kept.give(again, usize::MAX);
        // Back to its full length within its capacity: the value beyond is zeroed again.
        let whole = kept.take(100).unwrap();
        assert_eq!((whole.as_ptr(), whole[99]), (at, 0.0));
        assert_eq!(kept.take(1001), None);
        // Beyond the bound the smallest goes.
        kept.give(whole, 1000 * 4);
        assert_eq!(kept.0.len(), 1);
    }

    #[test]
    fn every_element_is_zero() {
        let values = super::zeros(100_003);
        assert_eq!(values.len(), 100_003);
        assert!(values.iter().all(|&v| v == 0.0));
    }
}
