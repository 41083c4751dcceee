//! burn-cuda (`--features cuda`): running on it, checking that a GPU answers, its memory.

use super::{BackendError, OnBackend};

/// Runs `task` on CUDA device `index`, after checking that it answers.
#[cfg(feature = "cuda")]
pub fn run<T: OnBackend>(index: usize, task: T) -> Result<T::Output, BackendError> {
    use burn::backend::{cuda::CudaDevice, Autodiff, Cuda};
    check(index)?;
    Ok(task.run::<Autodiff<Cuda>>(CudaDevice::new(index)))
}

#[cfg(not(feature = "cuda"))]
pub fn run<T: OnBackend>(_index: usize, _task: T) -> Result<T::Output, BackendError> {
    Err(not_built())
}

/// Why `cuda` cannot be asked of this binary.
#[cfg(not(feature = "cuda"))]
fn not_built() -> BackendError {
    BackendError::NotBuilt {
        backend: "cuda".into(),
        how: "`cargo build --release --features cuda` (or `just build-cuda`)".into(),
    }
}

/// Fails with a clear message where burn-cuda would panic at its first tensor operation: no
/// driver library, or a device index the driver does not have.
#[cfg(feature = "cuda")]
pub fn check(index: usize) -> Result<(), BackendError> {
    use burn::{backend::cuda::CudaDevice, backend::Cuda, tensor::Tensor};
    if find_libcuda().is_none() {
        return Err(BackendError::NoDevice(
            "the NVIDIA driver library libcuda.so.1 is not installed (searched LD_LIBRARY_PATH and the system library directories)".into(),
        ));
    }
    super::probe(index, || {
        let device = CudaDevice::new(index);
        Tensor::<Cuda, 1>::ones([4], &device).sum().into_scalar()
    })
}

#[cfg(not(feature = "cuda"))]
pub fn check(_index: usize) -> Result<(), BackendError> {
    Err(not_built())
}

#[cfg(feature = "cuda")]
fn find_libcuda() -> Option<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = std::env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(Into::into)
        .collect();
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/lib/x86_64-linux-gnu",
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/compat",
        "/usr/local/nvidia/lib64",
        "/usr/lib/wsl/lib",
    ] {
        dirs.push(d.into());
    }
    dirs.into_iter()
        .map(|d| d.join("libcuda.so.1"))
        .find(|p| p.exists())
}

/// (bytes in use, bytes reserved by the allocator) on device `index`, for the calling thread's
/// stream.
#[cfg(feature = "cuda")]
pub fn memory(index: usize) -> Option<(u64, u64)> {
    use burn::backend::cuda::CudaDevice;
    super::cubecl::memory::<burn::cubecl::cuda::CudaRuntime>(&CudaDevice::new(index))
}

#[cfg(not(feature = "cuda"))]
pub fn memory(_index: usize) -> Option<(u64, u64)> {
    None
}
