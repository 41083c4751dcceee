//! LibTorch through burn-tch (`--features tch`): PyTorch's own kernels (oneDNN, MKL) under
//! batchlab's harness, on the CPU (`tch`) or an NVIDIA GPU (`tch-cuda`, built but untested here).
//!
//! libtorch keeps its own thread pool and ignores RAYON_NUM_THREADS, so the configured threads
//! are set through it in the process that computes ([`run`]).

use super::{BackendError, OnBackend};

/// Runs `task` on LibTorch's CPU device with `threads` compute threads (0: libtorch's default,
/// one per physical core).
#[cfg(feature = "tch")]
pub fn run<T: OnBackend>(threads: usize, task: T) -> Result<T::Output, BackendError> {
    use burn::backend::{libtorch::LibTorchDevice, Autodiff, LibTorch};
    set_threads(threads);
    Ok(task.run::<Autodiff<LibTorch>>(LibTorchDevice::Cpu))
}

#[cfg(not(feature = "tch"))]
pub fn run<T: OnBackend>(_threads: usize, _task: T) -> Result<T::Output, BackendError> {
    Err(not_built("tch"))
}

/// Runs `task` on LibTorch's CUDA device `index`, after checking that it answers.
#[cfg(feature = "tch")]
pub fn run_cuda<T: OnBackend>(index: usize, task: T) -> Result<T::Output, BackendError> {
    use burn::backend::{libtorch::LibTorchDevice, Autodiff, LibTorch};
    check_cuda(index)?;
    Ok(task.run::<Autodiff<LibTorch>>(LibTorchDevice::Cuda(index)))
}

#[cfg(not(feature = "tch"))]
pub fn run_cuda<T: OnBackend>(_index: usize, _task: T) -> Result<T::Output, BackendError> {
    Err(not_built("tch-cuda"))
}

/// Why `backend` (`tch` or `tch-cuda`) cannot be asked of this binary.
pub fn not_built(backend: &str) -> BackendError {
    BackendError::NotBuilt {
        backend: backend.into(),
        how: "`just build-tch` (PyTorch 2.9.0 in a project-local virtual environment, then `cargo build --release --features tch`), and run target/release/batchlab-tch".into(),
    }
}

/// Fails early where libtorch has no usable CUDA device `index`.
#[cfg(feature = "tch")]
pub fn check_cuda(index: usize) -> Result<(), BackendError> {
    let count = tch::Cuda::device_count();
    if !tch::Cuda::is_available() || index as i64 >= count {
        return Err(BackendError::NoDevice(format!(
            "libtorch sees {count} CUDA device(s); device {index} is not among them"
        )));
    }
    use burn::backend::{libtorch::LibTorchDevice, LibTorch};
    super::probe(index, || {
        burn::tensor::Tensor::<LibTorch, 1>::ones([4], &LibTorchDevice::Cuda(index))
            .sum()
            .into_scalar()
    })
}

#[cfg(not(feature = "tch"))]
pub fn check_cuda(_index: usize) -> Result<(), BackendError> {
    Err(not_built("tch-cuda"))
}

/// Sets libtorch's intra-op threads (the ones its kernels compute with); 0 leaves its default.
#[cfg(feature = "tch")]
pub fn set_threads(threads: usize) {
    if threads > 0 {
        tch::set_num_threads(threads as i32);
    }
}

/// libtorch's intra-op threads once `threads` is applied.
#[cfg(feature = "tch")]
pub fn threads(threads: usize) -> usize {
    set_threads(threads);
    tch::get_num_threads().max(1) as usize
}

#[cfg(not(feature = "tch"))]
pub fn threads(threads: usize) -> usize {
    threads
}

/// The PyTorch release whose libtorch this process loaded, e.g. `2.9.0+cu128 (/…/torch/lib)`:
/// read from `version.py` beside the `lib` directory that libtorch_cpu.so was mapped from, so
/// it names what runs, not what the build expected. Empty without the `tch` feature.
pub fn version() -> String {
    if !cfg!(feature = "tch") {
        return String::new();
    }
    let Some(lib) = std::fs::read_to_string("/proc/self/maps")
        .ok()
        .and_then(|maps| {
            maps.lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .find(|path| path.ends_with("/libtorch_cpu.so"))
                .map(std::path::PathBuf::from)
        })
    else {
        return "unknown (libtorch_cpu.so is not mapped)".into();
    };
    let dir = lib.parent().unwrap_or(&lib).to_path_buf();
    let release = dir
        .parent()
        .and_then(|torch| std::fs::read_to_string(torch.join("version.py")).ok())
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("__version__ = "))
                .map(|v| v.trim().trim_matches(['\'', '"']).to_string())
        })
        .unwrap_or_else(|| "unknown version".into());
    format!("{release} ({})", dir.display())
}
