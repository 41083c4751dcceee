//! The packed kernel's copies of its operands: the right side into panels two vectors wide,
//! the left side's rows into strips of `MR` rows, each in the order the kernel reads it, in
//! buffers that start on a cache line ([`Aligned`]).

use super::Strided;
use crate::buffer::{keep, scratch};

/// Values that start on a cache line (64 bytes), so that no load of a panel's two vectors
/// straddles two lines (one load then costs two accesses).
pub(super) struct Aligned {
    buffer: Vec<f32>,
    len: usize,
}

impl Aligned {
    /// `len` values, a kept buffer's old ones where one is kept (`buffer::scratch`).
    pub(super) fn scratch(len: usize) -> Self {
        Aligned {
            buffer: scratch(len + 16),
            len,
        }
    }

    pub(super) fn values(&mut self) -> &mut [f32] {
        let start = self.buffer.as_ptr().align_offset(64).min(16);
        &mut self.buffer[start..][..self.len]
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        keep(std::mem::take(&mut self.buffer));
    }
}

/// `b`'s rows `s0..s0 + kc` and columns `j0..j0 + NR` into `panel` (`[kc][NR]`), zeros beyond
/// its last column.
pub(super) fn pack_right<const NR: usize>(b: Strided, s0: usize, j0: usize, panel: &mut [f32]) {
    let cols = NR.min(b.cols - j0);
    let (panel, _) = panel.as_chunks_mut::<NR>();
    if b.col == 1 && cols == NR {
        // Row-major: each line of the panel is a piece of one row (a copy of fixed length,
        // not a call to memcpy).
        for (s, line) in panel.iter_mut().enumerate() {
            let row = &b.values[(s0 + s) * b.row + j0..][..NR];
            *line = row.try_into().unwrap_or_else(|_| unreachable!("NR values"));
        }
    } else {
        // A transposed view (or any other), or a last panel: column by column along the inner
        // dimension.
        for j in 0..NR {
            let start = (j0 + j) * b.col + s0 * b.row;
            gather(panel, j, (j < cols).then(|| (&b.values[start..], b.row)));
        }
    }
}

/// `a`'s rows `i0..i0 + rows` and columns `s0..s0 + kc` into strips of `MR` rows (`[strips][kc]
/// [MR]`), zeros beyond its last row.
pub(super) fn pack_left<const MR: usize>(
    a: Strided,
    [i0, rows]: [usize; 2],
    [s0, kc]: [usize; 2],
    left: &mut [f32],
) {
    for (t, strip) in left.chunks_mut(kc * MR).enumerate() {
        let (first, count) = (i0 + t * MR, MR.min(rows - t * MR));
        let (strip, _) = strip.as_chunks_mut::<MR>();
        if a.row == 1 && count == MR {
            // A transposed view: each line of the strip is a piece of one column.
            for (s, line) in strip.iter_mut().enumerate() {
                let column = &a.values[(s0 + s) * a.col + first..][..MR];
                *line = column
                    .try_into()
                    .unwrap_or_else(|_| unreachable!("MR values"));
            }
        } else if a.col == 1 && count == MR {
            // Row-major: the strip's rows side by side.
            let rows: [&[f32]; MR] =
                std::array::from_fn(|r| &a.values[(first + r) * a.row + s0..][..kc]);
            for (s, line) in strip.iter_mut().enumerate() {
                for (v, row) in line.iter_mut().zip(&rows) {
                    *v = row[s];
                }
            }
        } else {
            // Any other layout, and a last strip of fewer rows: each row along the inner
            // dimension.
            for r in 0..MR {
                let start = (first + r) * a.row + s0 * a.col;
                gather(strip, r, (r < count).then(|| (&a.values[start..], a.col)));
            }
        }
    }
}

/// Position `at` of every packed line: from `values` one `step` apart, line after line, or
/// zeros (a row or column beyond the matrix's last).
fn gather<const W: usize>(lines: &mut [[f32; W]], at: usize, from: Option<(&[f32], usize)>) {
    match from {
        Some((values, step)) => {
            for (line, &v) in lines.iter_mut().zip(values.iter().step_by(step)) {
                line[at] = v;
            }
        }
        None => lines.iter_mut().for_each(|line| line[at] = 0.0),
    }
}
