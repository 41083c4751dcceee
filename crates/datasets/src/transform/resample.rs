//! Resampling: [`resize`] and [`Resizer`] with a [`Filter`], computed to the bit as the `image`
//! crate's `imageops::resize` computes it, on channel-major bytes, with the filter weights
//! computed once per shape.

use serde::{Deserialize, Serialize};

/// A resampling filter. The arithmetic is the `image` crate's (`imageops::FilterType` named in
/// each variant): separable, weights normalised over the pixels inside the image, the support
/// widened by the scale factor when shrinking (so shrinking averages, as PIL does), a vertical
/// pass into `f32` then a horizontal pass rounded to the nearest byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Filter {
    /// Output pixel `x` takes source pixel `floor((x + 0.5) * in / out)`, PIL's `NEAREST` rule,
    /// which Keras' `load_img(path, target_size=...)` uses by default (`interpolation="nearest"`).
    /// No arithmetic on values, so the output equals PIL's wherever both pick the same pixel
    /// (they can differ only where `(x + 0.5) * in / out` is an exact integer that rounding puts
    /// on either side). `FilterType::Nearest`.
    Nearest,
    /// The triangle (tent) kernel: torchvision's `Resize` default (`InterpolationMode.BILINEAR`,
    /// on PIL images PIL's `BILINEAR`, which also widens the kernel when shrinking).
    /// `FilterType::Triangle`. Close to PIL's but not byte-equal: PIL resamples horizontally
    /// first, in fixed point, rounding to bytes between its two passes.
    Bilinear,
    /// Keys' cubic convolution with a = -0.5 (Catmull-Rom): PIL's `BICUBIC`, the default of PIL's
    /// `Image.resize` (since Pillow 7), used by the cats-vs-dogs augmentation's
    /// `photo.resize((250, 250))`. `FilterType::CatmullRom`. Close to PIL's but not byte-equal,
    /// for the reasons given under `Bilinear`.
    Bicubic,
}

impl Filter {
    /// Half-width of the kernel at scale 1, in source pixels.
    fn support(self) -> f32 {
        match self {
            Self::Nearest => 0.0,
            Self::Bilinear => 1.0,
            Self::Bicubic => 2.0,
        }
    }

    fn kernel(self, x: f32) -> f32 {
        match self {
            Self::Nearest => 1.0,
            Self::Bilinear => {
                if x.abs() < 1.0 {
                    1.0 - x.abs()
                } else {
                    0.0
                }
            }
            Self::Bicubic => cubic(x, 0.0, 0.5),
        }
    }
}

/// Mitchell-Netravali's (B, C) family; B = 0, C = 0.5 is Catmull-Rom. Written with the same
/// operations in the same order as the `image` crate, so the weights are equal to the bit.
fn cubic(x: f32, b: f32, c: f32) -> f32 {
    let a = x.abs();
    let k = if a < 1.0 {
        (12.0 - 9.0 * b - 6.0 * c) * a.powi(3)
            + (-18.0 + 12.0 * b + 6.0 * c) * a.powi(2)
            + (6.0 - 2.0 * b)
    } else if a < 2.0 {
        (-b - 6.0 * c) * a.powi(3)
            + (6.0 * b + 30.0 * c) * a.powi(2)
            + (-12.0 * b - 48.0 * c) * a
            + (8.0 * b + 24.0 * c)
    } else {
        0.0
    };
    k / 6.0
}

/// The weights of one axis: every output position reads `width` consecutive source positions
/// from its start. Positions have different numbers of taps (fewer at the edges); the shorter
/// ones are padded with zero weights, which add exactly nothing (`acc + 0.0 * v == acc`), so
/// that the inner loop has one fixed length per axis and compiles to straight-line code.
#[derive(Debug, Clone, PartialEq)]
struct Axis {
    /// First source position read, per output position.
    starts: Vec<usize>,
    /// Taps per output position (the most any position has).
    width: usize,
    /// `width` weights per output position.
    weights: Vec<f32>,
    /// Output position `i` is source position `i` (same size): the pass is skipped, which
    /// changes no value (the identity weights are exactly 1 and 0).
    identity: bool,
}

impl Axis {
    /// Follows `image::imageops::sample`'s `horizontal_sample` / `vertical_sample` operation
    /// for operation, so that a resize here equals `imageops::resize` to the bit.
    fn new(from: usize, to: usize, filter: Filter) -> Self {
        let mut axis = Self {
            starts: Vec::with_capacity(to),
            width: 0,
            weights: Vec::new(),
            identity: from == to,
        };
        if from == 0 || to == 0 {
            return axis;
        }
        let ratio = from as f32 / to as f32;
        let sratio = if ratio < 1.0 { 1.0 } else { ratio };
        let support = filter.support() * sratio;
        let mut taps = Vec::with_capacity(to);
        for out in 0..to {
            let centre = (out as f32 + 0.5) * ratio;
            let left = ((centre - support).floor() as i64).clamp(0, from as i64 - 1);
            let right = ((centre + support).ceil() as i64).clamp(left + 1, from as i64);
            let centre = centre - 0.5;
            let mut weights: Vec<f32> = (left..right)
                .map(|i| filter.kernel((i as f32 - centre) / sratio))
                .collect();
            let sum = weights.iter().fold(0.0, |sum, &w| sum + w);
            for w in &mut weights {
                *w /= sum;
            }
            taps.push((left as usize, weights));
        }
        axis.width = taps.iter().map(|(_, w)| w.len()).max().unwrap_or(0);
        for (left, weights) in taps {
            // Moved left where the padding would pass the end of the source.
            let start = left.min(from - axis.width);
            let before = left - start;
            axis.starts.push(start);
            axis.weights.extend(std::iter::repeat_n(0.0, before));
            axis.weights.extend_from_slice(&weights);
            axis.weights.extend(std::iter::repeat_n(
                0.0,
                axis.width - before - weights.len(),
            ));
        }
        axis
    }

    /// Resamples one row into bytes; generic so that the source row is read as it is stored
    /// (bytes when the vertical pass was skipped, floats otherwise).
    fn apply<T: Copy>(&self, src: &[T], dst: &mut [u8])
    where
        f32: From<T>,
    {
        if self.identity {
            for (d, &v) in dst.iter_mut().zip(src) {
                *d = to_byte(f32::from(v));
            }
            return;
        }
        // One compiled loop per common width (2-3 taps enlarging bilinear, 4-5 bicubic).
        match self.width {
            1 => self.apply_fixed::<1, T>(src, dst),
            2 => self.apply_fixed::<2, T>(src, dst),
            3 => self.apply_fixed::<3, T>(src, dst),
            4 => self.apply_fixed::<4, T>(src, dst),
            5 => self.apply_fixed::<5, T>(src, dst),
            6 => self.apply_fixed::<6, T>(src, dst),
            width => {
                let rows = self.starts.iter().zip(self.weights.chunks_exact(width));
                for (d, (&start, weights)) in dst.iter_mut().zip(rows) {
                    *d = to_byte(dot(&src[start..start + width], weights));
                }
            }
        }
    }

    fn apply_fixed<const K: usize, T: Copy>(&self, src: &[T], dst: &mut [u8])
    where
        f32: From<T>,
    {
        let rows = self.starts.iter().zip(self.weights.chunks_exact(K));
        for (d, (&start, weights)) in dst.iter_mut().zip(rows) {
            *d = to_byte(dot(&src[start..start + K], weights));
        }
    }
}

/// The taps summed in order from 0.0, as imageops sums them.
#[inline(always)]
fn dot<T: Copy>(values: &[T], weights: &[f32]) -> f32
where
    f32: From<T>,
{
    let mut acc = 0.0;
    for (&v, &w) in values.iter().zip(weights) {
        acc += f32::from(v) * w;
    }
    acc
}

/// A resize from one shape to another with one filter, its weights computed once: build one per
/// (source shape, target size) and reuse it for every image of that shape.
///
/// Cost per image: about `C * (out_h * in_w * taps_v + out_h * out_w * taps_h)` multiply-adds
/// (taps: 1 for [`Filter::Nearest`], 2 for [`Filter::Bilinear`] and 4 for [`Filter::Bicubic`]
/// when enlarging, times the shrink factor when shrinking), and a scratch buffer of
/// `C * out_h * in_w` floats that [`Resizer::resize_into`] reuses. Nearest only copies bytes.
/// Measured on one core of the 2-core development machine (`resize_speed` test): 3x32x32 to
/// 256x256 takes about 60 us nearest, 350 us bilinear, 430 us bicubic; 3x200x200 to 250x250
/// bicubic 460 us; 3x375x500 to 200x200 nearest 40 us.
#[derive(Debug, Clone, PartialEq)]
pub struct Resizer {
    shape: [usize; 3],
    size: [usize; 2],
    filter: Filter,
    rows: Axis,
    columns: Axis,
}

impl Resizer {
    /// A resize of `[C, H, W]` images to `size = [height, width]`. Costs `O(height + width)`
    /// weights; no image is touched.
    pub fn new(shape: [usize; 3], size: [usize; 2], filter: Filter) -> Self {
        Self {
            shape,
            size,
            filter,
            rows: Axis::new(shape[1], size[0], filter),
            columns: Axis::new(shape[2], size[1], filter),
        }
    }

    /// `[C, height, width]` of the output.
    pub fn output_shape(&self) -> [usize; 3] {
        [self.shape[0], self.size[0], self.size[1]]
    }

    /// Resizes `image` (`[C, H, W]` as given to [`Resizer::new`]) into `out`
    /// (`output_shape()` bytes), using `scratch` for the intermediate rows; allocates only when
    /// `scratch` is too small.
    ///
    /// # Panics
    ///
    /// If `image` or `out` has the wrong length.
    pub fn resize_into(&self, image: &[u8], out: &mut [u8], scratch: &mut Vec<f32>) {
        let [c, h, w] = self.shape;
        let [oh, ow] = self.size;
        assert_eq!(
            image.len(),
            c * h * w,
            "resize: image of {} bytes is not [C, H, W] = {:?}",
            image.len(),
            self.shape
        );
        assert_eq!(
            out.len(),
            c * oh * ow,
            "resize: output of {} bytes is not [C, H, W] = {:?}",
            out.len(),
            self.output_shape()
        );
        if out.is_empty() {
            return;
        }
        if h == 0 || w == 0 {
            // As imageops: nothing to sample from gives black.
            out.fill(0);
            return;
        }
        if self.rows.identity && self.columns.identity {
            out.copy_from_slice(image);
            return;
        }
        if self.filter == Filter::Nearest {
            self.nearest(image, out);
            return;
        }
        // Vertical pass into f32 rows, [C, oh, w]; skipped (the source read directly) when the
        // height does not change.
        let vertical = !self.rows.identity;
        if vertical {
            scratch.clear();
            scratch.resize(c * oh * w, 0.0);
            for ch in 0..c {
                let plane = &image[ch * h * w..(ch + 1) * h * w];
                let rows = self
                    .rows
                    .starts
                    .iter()
                    .zip(self.rows.weights.chunks_exact(self.rows.width));
                for (y, (&start, weights)) in rows.enumerate() {
                    let acc = &mut scratch[(ch * oh + y) * w..(ch * oh + y + 1) * w];
                    // Each pixel sums its taps in order from 0.0, as imageops does; a padding
                    // tap (weight 0) would add nothing, so its row is not read.
                    for (k, &weight) in weights.iter().enumerate() {
                        if weight == 0.0 {
                            continue;
                        }
                        let src = &plane[(start + k) * w..(start + k + 1) * w];
                        for (a, &p) in acc.iter_mut().zip(src) {
                            *a += f32::from(p) * weight;
                        }
                    }
                }
            }
        }
        // Horizontal pass, rounded to bytes.
        for row in 0..c * oh {
            let dst = &mut out[row * ow..(row + 1) * ow];
            if vertical {
                self.columns.apply(&scratch[row * w..(row + 1) * w], dst);
            } else {
                self.columns.apply(&image[row * w..(row + 1) * w], dst);
            }
        }
    }

    /// One source pixel per output pixel: the weight is exactly 1, so copying is equal to the
    /// general path.
    fn nearest(&self, image: &[u8], out: &mut [u8]) {
        let [c, h, w] = self.shape;
        let [oh, ow] = self.size;
        let rows = &self.rows.starts;
        let columns = &self.columns.starts;
        for ch in 0..c {
            let plane = &image[ch * h * w..(ch + 1) * h * w];
            for y in 0..oh {
                let src = &plane[rows[y] * w..(rows[y] + 1) * w];
                let dst = &mut out[(ch * oh + y) * ow..(ch * oh + y + 1) * ow];
                for (d, &x) in dst.iter_mut().zip(columns) {
                    *d = src[x];
                }
            }
        }
    }
}

/// Clamped to 0..=255 and rounded half away from zero, as imageops' `FloatNearest`
/// (`f32::round`). Written out because `round` is a library call on baseline x86-64 (no
/// SSE4.1), the most expensive step of a resize; truncation is one instruction, and
/// `v - trunc(v)` is exact, so the result is the same for every value.
fn to_byte(v: f32) -> u8 {
    let v = v.clamp(0.0, 255.0);
    let whole = v as u8;
    if v - f32::from(whole) >= 0.5 {
        whole + 1
    } else {
        whole
    }
}

/// `image` (`[C, H, W]` = `shape`) resized to `size = [height, width]` with `filter`.
///
/// Cost: [`Resizer::new`]'s weights, the output, a scratch of `C * height * W` floats, and the
/// arithmetic in [`Resizer`]. Build a [`Resizer`] instead when resizing many images of one shape.
///
/// # Panics
///
/// If `image.len()` is not `C * H * W`.
pub fn resize(image: &[u8], shape: [usize; 3], size: [usize; 2], filter: Filter) -> Vec<u8> {
    let resizer = Resizer::new(shape, size, filter);
    let mut out = vec![0; shape[0] * size[0] * size[1]];
    resizer.resize_into(image, &mut out, &mut Vec::new());
    out
}
