//! What cuda and wgpu share as CubeCL runtimes, written once: the device memory a run uses.
//! (Synchronising before a clock is read is burn's `Backend::sync`, generic already; the
//! device check is [`super::probe`].)

/// (bytes in use, bytes reserved by the allocator) on `device`, for the calling thread's
/// stream (CubeCL keeps one memory pool per stream).
#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub fn memory<R: burn::cubecl::Runtime>(device: &R::Device) -> Option<(u64, u64)> {
    let usage = R::client(device).memory_usage().ok()?;
    Some((usage.bytes_in_use, usage.bytes_reserved))
}
