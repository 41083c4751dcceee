//! Choosing the backend at run time: flex (pure-Rust CPU, always built) or CUDA (built with
//! `--features cuda`). A runner writes its measurement once, generic over the backend, as an
//! [`OnBackend`] task; [`dispatch`] instantiates it for the configured one.

use burn::tensor::backend::AutodiffBackend;

use crate::{
    config::{BackendConfig, BackendKind},
    sysinfo,
};

/// Why a backend cannot run here.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Asked for `cuda` from a binary built without it.
    #[error("this batchlab was built without CUDA support; rebuild it with `cargo build --release --features cuda` (or `just build-cuda`) and run that binary")]
    NotBuilt,
    /// The binary has CUDA, but the machine has no usable GPU.
    #[error("no CUDA device found: {0}")]
    NoDevice(String),
}

/// A piece of work written once for any autodiff backend.
pub trait OnBackend {
    /// What the work returns.
    type Output;
    /// Runs the work on backend `B` and `device`.
    fn run<B: AutodiffBackend>(self, device: B::Device) -> Self::Output;
}

/// Runs `task` on the backend `config` names, after checking that the backend is usable.
pub fn dispatch<T: OnBackend>(config: &BackendConfig, task: T) -> Result<T::Output, BackendError> {
    match config.name {
        BackendKind::Flex => {
            Ok(task.run::<burn::backend::Autodiff<burn::backend::Flex>>(Default::default()))
        }
        BackendKind::Cuda => run_cuda(config, task),
    }
}

/// Fails early, before a report directory exists, if the configured backend cannot run here.
pub fn ensure_available(config: &BackendConfig) -> Result<(), BackendError> {
    match config.name {
        BackendKind::Flex => Ok(()),
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => check_cuda(config.device),
        #[cfg(not(feature = "cuda"))]
        BackendKind::Cuda => Err(BackendError::NotBuilt),
    }
}

#[cfg(feature = "cuda")]
fn run_cuda<T: OnBackend>(config: &BackendConfig, task: T) -> Result<T::Output, BackendError> {
    use burn::backend::{cuda::CudaDevice, Autodiff, Cuda};
    check_cuda(config.device)?;
    Ok(task.run::<Autodiff<Cuda>>(CudaDevice::new(config.device)))
}

#[cfg(not(feature = "cuda"))]
fn run_cuda<T: OnBackend>(_config: &BackendConfig, _task: T) -> Result<T::Output, BackendError> {
    Err(BackendError::NotBuilt)
}

/// Fails with a clear message where burn-cuda would panic at its first tensor operation: no
/// driver library, or a device index the driver does not have.
#[cfg(feature = "cuda")]
fn check_cuda(index: usize) -> Result<(), BackendError> {
    use burn::{backend::cuda::CudaDevice, backend::Cuda, tensor::Tensor};
    if find_libcuda().is_none() {
        return Err(BackendError::NoDevice(
            "the NVIDIA driver library libcuda.so.1 is not installed (searched LD_LIBRARY_PATH and the system library directories)".into(),
        ));
    }
    let probe = std::panic::catch_unwind(|| {
        let device = CudaDevice::new(index);
        let x = Tensor::<Cuda, 1>::ones([4], &device);
        x.sum().into_scalar()
    });
    match probe {
        Ok(v) if v == 4.0 => Ok(()),
        Ok(v) => Err(BackendError::NoDevice(format!(
            "device {index} answered a test sum with {v} instead of 4"
        ))),
        Err(panic) => Err(BackendError::NoDevice(format!(
            "device {index} failed its first operation: {}",
            panic_message(&panic)
        ))),
    }
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

/// The text of a caught panic.
pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic without a message".into())
}

/// What a report names as the device: the CPU model for flex, the GPU's name for CUDA (from
/// nvidia-smi where available).
pub fn device_name(config: &BackendConfig) -> String {
    match config.name {
        BackendKind::Cuda => std::process::Command::new("nvidia-smi")
            .args([
                "--query-gpu=name,memory.total,driver_version",
                "--format=csv,noheader",
                "-i",
                &config.device.to_string(),
            ])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("CUDA device {}", config.device)),
        _ => sysinfo::cpu_model(),
    }
}

/// The matrix kernels a run on `config` uses where the backend chooses them by CPU (flex:
/// [`sysinfo::flex_matmul_kernels`]); empty elsewhere.
pub fn kernels(config: &BackendConfig) -> String {
    match config.name {
        BackendKind::Flex => sysinfo::flex_matmul_kernels(&sysinfo::simd_features()),
        _ => String::new(),
    }
}

/// Device memory on backends whose runtime reports it (cuda): (bytes in use, bytes reserved
/// by the allocator), for the calling thread's stream. `None` on flex, whose memory is the
/// process's own (see `sysinfo::memory`).
pub fn device_memory(config: &BackendConfig) -> Option<(u64, u64)> {
    match config.name {
        BackendKind::Flex => None,
        BackendKind::Cuda => cuda_memory(config.device),
    }
}

#[cfg(feature = "cuda")]
fn cuda_memory(device: usize) -> Option<(u64, u64)> {
    use burn::backend::cuda::CudaDevice;
    use burn::cubecl::{cuda::CudaRuntime, Runtime};
    let usage = CudaRuntime::client(&CudaDevice::new(device))
        .memory_usage()
        .ok()?;
    Some((usage.bytes_in_use, usage.bytes_reserved))
}

#[cfg(not(feature = "cuda"))]
fn cuda_memory(_device: usize) -> Option<(u64, u64)> {
    None
}

/// Worker threads the backend computes with.
pub fn threads(config: &BackendConfig) -> usize {
    match config.name {
        BackendKind::Flex if config.threads > 0 => config.threads,
        _ => std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or_else(sysinfo::available_cpus),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::ElementConversion;

    #[test]
    fn flex_runs_and_unknown_names_are_refused() {
        struct Sum;
        impl OnBackend for Sum {
            type Output = f32;
            fn run<B: AutodiffBackend>(self, device: B::Device) -> f32 {
                burn::tensor::Tensor::<B, 1>::ones([3], &device)
                    .sum()
                    .into_scalar()
                    .elem()
            }
        }
        let flex = BackendConfig::default();
        assert_eq!(dispatch(&flex, Sum).unwrap(), 3.0);
        // An unknown name never gets this far: reading the config refuses it.
        let odd = toml::from_str::<BackendConfig>("name = \"tpu\"").unwrap_err();
        assert!(
            odd.to_string().contains("expected `flex` or `cuda`"),
            "{odd}"
        );
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_without_the_feature_says_how_to_rebuild() {
        struct Nothing;
        impl OnBackend for Nothing {
            type Output = ();
            fn run<B: AutodiffBackend>(self, _device: B::Device) {}
        }
        let cuda = BackendConfig {
            name: BackendKind::Cuda,
            ..BackendConfig::default()
        };
        let err = dispatch(&cuda, Nothing).unwrap_err();
        assert!(err.to_string().contains("--features cuda"), "{err}");
    }
}
