//! Pure transforms of one channel-major image: `&[u8]` of shape `[C, H, W]`, the layout of
//! [`ImageSet`](crate::ImageSet).
//!
//! - [`resize`] / [`Resizer`]: resampling with a [`Filter`], computed to the bit as the `image`
//!   crate's `imageops::resize` computes it (the tests check this), but on channel-major bytes,
//!   without converting to `Rgba<f32>` pixels, and with the filter weights computed once per
//!   shape instead of once per image.
//! - [`crop`] / [`crop_into`]: a window that may reach outside the image; outside pixels are zero
//!   (torchvision's `RandomCrop(padding=p)` zero padding).
//! - [`centre_crop`]: torchvision's `CenterCrop` placement.
//! - [`flip_horizontal`]: in place.
//! - [`hwc_to_chw`] / [`chw_to_hwc`]: decoders give interleaved pixels, datasets keep channel
//!   planes.
//!
//! The batch loader calls these per example and epoch, so none allocates more than its output
//! (and a resize its scratch rows); [`Resizer::resize_into`], [`crop_into`] and
//! [`flip_horizontal`] allocate nothing. Each function documents its cost.
//!
//! # Panics
//!
//! A slice whose length is not `C * H * W` of the shape given with it is a caller's bug (shapes
//! come from an `ImageSet`, sizes from a validated config), and panics with a message saying
//! so, as an out-of-range index does. Every size, including 0, is otherwise accepted.

mod resample;

pub use resample::{resize, Filter, Resizer};

/// The window of `size = [height, width]` whose top-left corner is at (`top`, `left`) in
/// `image` (`[C, H, W]` = `shape`). The window may reach outside the image (negative or large
/// offsets): pixels there are 0, which is torchvision's `RandomCrop(size, padding=p)` when
/// `top` and `left` are drawn from `-p..=H + p - height`.
///
/// Cost: one pass over the output (`C * height * width` bytes), row copies where the window is
/// inside the image; allocates only the output.
///
/// # Panics
///
/// If `image.len()` is not `C * H * W`.
pub fn crop(image: &[u8], shape: [usize; 3], top: isize, left: isize, size: [usize; 2]) -> Vec<u8> {
    let mut out = vec![0; shape[0] * size[0] * size[1]];
    crop_into(image, shape, top, left, size, &mut out);
    out
}

/// [`crop`] into `out` (`C * height * width` bytes), allocating nothing.
///
/// # Panics
///
/// If `image.len()` is not `C * H * W` or `out.len()` is not `C * height * width`.
pub fn crop_into(
    image: &[u8],
    shape: [usize; 3],
    top: isize,
    left: isize,
    size: [usize; 2],
    out: &mut [u8],
) {
    let [c, h, w] = shape;
    let [oh, ow] = size;
    assert_eq!(
        image.len(),
        c * h * w,
        "crop: image of {} bytes is not [C, H, W] = {shape:?}",
        image.len()
    );
    assert_eq!(
        out.len(),
        c * oh * ow,
        "crop: output of {} bytes is not [C, H, W] = {:?}",
        out.len(),
        [c, oh, ow]
    );
    // The output columns that fall inside the image, and where they start in the source row.
    let x0 = (-left).clamp(0, ow as isize) as usize;
    let x1 = (w as isize - left).clamp(x0 as isize, ow as isize) as usize;
    for ch in 0..c {
        for y in 0..oh {
            let dst = &mut out[(ch * oh + y) * ow..(ch * oh + y + 1) * ow];
            let sy = top + y as isize;
            if sy < 0 || sy >= h as isize || x0 == x1 {
                dst.fill(0);
                continue;
            }
            let row = (ch * h + sy as usize) * w;
            let sx = (left + x0 as isize) as usize;
            dst[..x0].fill(0);
            dst[x0..x1].copy_from_slice(&image[row + sx..row + sx + (x1 - x0)]);
            dst[x1..].fill(0);
        }
    }
}

/// Offset of a centred window of length `crop` in a side of length `size`, as torchvision's
/// `CenterCrop`: `round((size - crop) / 2)` with Python's round-half-to-even (so 5 -> 2 gives 2,
/// 7 -> 2 gives 2), and when the window is larger, zero padding of `(crop - size) / 2` (floored)
/// before, the rest after.
pub fn centre_offset(size: usize, crop: usize) -> isize {
    if crop > size {
        -(((crop - size) / 2) as isize)
    } else {
        let diff = size - crop;
        let half = diff / 2;
        // diff / 2 is k + 0.5 when diff is odd; half to even rounds it up when k is odd.
        (if diff % 2 == 1 && half % 2 == 1 {
            half + 1
        } else {
            half
        }) as isize
    }
}

/// The centred window of `size = [height, width]` (torchvision's `CenterCrop`, see
/// [`centre_offset`]; zero padding where the window is larger than the image).
///
/// Cost: as [`crop`].
///
/// # Panics
///
/// If `image.len()` is not `C * H * W`.
pub fn centre_crop(image: &[u8], shape: [usize; 3], size: [usize; 2]) -> Vec<u8> {
    let top = centre_offset(shape[1], size[0]);
    let left = centre_offset(shape[2], size[1]);
    crop(image, shape, top, left, size)
}

/// Mirrors `image` left-right in place.
///
/// Cost: one pass over the image, no allocation.
///
/// # Panics
///
/// If `image.len()` is not `C * H * W`.
pub fn flip_horizontal(image: &mut [u8], shape: [usize; 3]) {
    let [c, h, w] = shape;
    assert_eq!(
        image.len(),
        c * h * w,
        "flip: image of {} bytes is not [C, H, W] = {shape:?}",
        image.len()
    );
    if w > 0 {
        image.chunks_exact_mut(w).for_each(<[u8]>::reverse);
    }
}

/// Interleaved pixels (`[H, W, C]`, what decoders return) as channel planes (`[C, H, W]`).
///
/// Cost: one pass, allocates the output.
///
/// # Panics
///
/// If `pixels.len()` is not `H * W * C`.
pub fn hwc_to_chw(pixels: &[u8], [h, w, c]: [usize; 3]) -> Vec<u8> {
    assert_eq!(
        pixels.len(),
        h * w * c,
        "hwc_to_chw: {} bytes are not [H, W, C] = {:?}",
        pixels.len(),
        [h, w, c]
    );
    let mut out = vec![0; pixels.len()];
    let plane = h * w;
    for (i, pixel) in pixels.chunks_exact(c.max(1)).enumerate() {
        for (ch, &v) in pixel.iter().enumerate() {
            out[ch * plane + i] = v;
        }
    }
    out
}

/// Channel planes (`[C, H, W]`) as interleaved pixels (`[H, W, C]`), the inverse of
/// [`hwc_to_chw`].
///
/// Cost: one pass, allocates the output.
///
/// # Panics
///
/// If `image.len()` is not `C * H * W`.
pub fn chw_to_hwc(image: &[u8], [c, h, w]: [usize; 3]) -> Vec<u8> {
    assert_eq!(
        image.len(),
        c * h * w,
        "chw_to_hwc: {} bytes are not [C, H, W] = {:?}",
        image.len(),
        [c, h, w]
    );
    let mut out = vec![0; image.len()];
    let plane = h * w;
    for (i, pixel) in out.chunks_exact_mut(c.max(1)).enumerate() {
        for (ch, v) in pixel.iter_mut().enumerate() {
            *v = image[ch * plane + i];
        }
    }
    out
}

#[cfg(test)]
#[path = "transform_tests.rs"]
mod tests;
