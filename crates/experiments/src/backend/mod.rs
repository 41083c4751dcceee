//! Choosing the backend at run time: flex (pure-Rust CPU, always built), CUDA (built with
//! `--features cuda`, [`cuda`]), wgpu (built with `--features wgpu`, [`wgpu`]; the same CubeCL
//! backend as CUDA, over Vulkan, and on Mesa's software Vulkan where there is no GPU) or
//! LibTorch on the CPU or a GPU (built with `--features tch`, [`libtorch`]). A runner writes
//! its measurement once, generic over the backend, as an [`OnBackend`] task; [`dispatch`]
//! instantiates it for the configured one.

pub mod conv_choices;
mod cubecl;
mod cuda;
mod libtorch;
mod wgpu;

use burn::tensor::backend::AutodiffBackend;

use crate::{
    config::{BackendConfig, BackendKind},
    sysinfo,
};

/// Why a backend cannot run here.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Asked for a backend this binary was built without.
    #[error("this batchlab was built without the {backend} backend; build it with {how}")]
    NotBuilt {
        /// The backend asked for.
        backend: String,
        /// How to get a binary that has it.
        how: String,
    },
    /// The binary has the backend, but the machine has no usable device for it.
    #[error("no usable device: {0}")]
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
    batchlab_fast::set_enabled(config.fast_paths);
    if let Some(file) = conv_choices::file(config) {
        batchlab_fast::choice::measure_here(&file);
    }
    match config.name {
        BackendKind::Flex => {
            Ok(task.run::<burn::backend::Autodiff<burn::backend::Flex>>(Default::default()))
        }
        BackendKind::Cuda => cuda::run(config.device, task),
        BackendKind::Tch => libtorch::run(config.threads, task),
        BackendKind::TchCuda => libtorch::run_cuda(config.device, task),
        BackendKind::Wgpu => wgpu::run(config.device, task),
    }
}

/// Fails early, before a report directory exists, if the configured backend cannot run here.
pub fn ensure_available(config: &BackendConfig) -> Result<(), BackendError> {
    match config.name {
        BackendKind::Flex => Ok(()),
        BackendKind::Cuda => cuda::check(config.device),
        BackendKind::Tch if cfg!(feature = "tch") => Ok(()),
        BackendKind::Tch => Err(libtorch::not_built("tch")),
        BackendKind::TchCuda => libtorch::check_cuda(config.device),
        BackendKind::Wgpu => wgpu::check(config.device),
    }
}

/// The backends this binary was built with, flex first.
pub fn built_backends() -> Vec<BackendKind> {
    let mut kinds = vec![BackendKind::Flex];
    if cfg!(feature = "cuda") {
        kinds.push(BackendKind::Cuda);
    }
    if cfg!(feature = "tch") {
        kinds.extend([BackendKind::Tch, BackendKind::TchCuda]);
    }
    if cfg!(feature = "wgpu") {
        kinds.push(BackendKind::Wgpu);
    }
    kinds
}

/// Runs a test sum of four ones on a GPU, turning the panic a driver without that device
/// raises into an error.
#[allow(dead_code)] // Only the GPU builds probe.
fn probe<E: burn::tensor::ElementConversion>(
    index: usize,
    sum: impl FnOnce() -> E + std::panic::UnwindSafe,
) -> Result<(), BackendError> {
    match catch_quietly(sum).map(|v| v.elem::<f32>()) {
        Ok(4.0) => Ok(()),
        Ok(v) => Err(BackendError::NoDevice(format!(
            "device {index} answered a test sum with {v} instead of 4"
        ))),
        Err(message) => Err(BackendError::NoDevice(format!(
            "device {index} failed its first operation: {message}"
        ))),
    }
}

/// Runs `f`, turning a panic into its message without the panic hook's report (a backtrace
/// on stderr for what the caller words as an error). The hook is process-wide: this is for
/// start-up checks, before other threads compute.
#[allow(dead_code)] // Only the GPU builds check devices this way.
fn catch_quietly<T>(f: impl FnOnce() -> T + std::panic::UnwindSafe) -> Result<T, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(f).map_err(|panic| panic_message(&panic));
    std::panic::set_hook(hook);
    result
}

/// The text of a caught panic.
pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic without a message".into())
}

/// What a report names as the device: the CPU model on the CPU backends, the GPU's name on the
/// CUDA ones (from nvidia-smi where available), wgpu's adapter (name, graphics API, device
/// type, driver; a software rasteriser says so).
pub fn device_name(config: &BackendConfig) -> String {
    match config.name {
        BackendKind::Cuda | BackendKind::TchCuda => std::process::Command::new("nvidia-smi")
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
        BackendKind::Wgpu => wgpu::adapter(config.device).unwrap_or_else(|e| e.to_string()),
        BackendKind::Flex | BackendKind::Tch => sysinfo::cpu_model(),
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

/// batchlab's own fast paths a run on `config` takes (meta.json `fast_paths`): none on the
/// CubeCL backends, none where `backend.fast_paths = false`.
pub fn fast_paths(config: &BackendConfig) -> String {
    let words = match config.name {
        _ if !config.fast_paths => "off (backend.fast_paths = false): burn's own ops",
        BackendKind::Flex if conv_choices::file(config).is_some() => batchlab_fast::ON_FLEX,
        BackendKind::Flex => batchlab_fast::ON_FLEX_THRESHOLDS,
        BackendKind::Tch if conv_choices::file(config).is_some() => batchlab_fast::ON_LIBTORCH,
        BackendKind::Tch | BackendKind::TchCuda => batchlab_fast::ON_LIBTORCH_THRESHOLDS,
        BackendKind::Cuda | BackendKind::Wgpu => "none on this backend: burn's own ops",
    };
    words.into()
}

/// The PyTorch release (and library directory) whose libtorch runs `config`; empty on the
/// backends without libtorch.
pub fn libtorch_version(config: &BackendConfig) -> String {
    match config.name {
        BackendKind::Tch | BackendKind::TchCuda => libtorch::version(),
        BackendKind::Flex | BackendKind::Cuda | BackendKind::Wgpu => String::new(),
    }
}

/// The library path a tch backend found libtorch through (LD_LIBRARY_PATH; meta.json
/// `library_path`); empty for other backends or when unset.
pub fn library_path(config: &BackendConfig) -> String {
    match config.name {
        BackendKind::Tch | BackendKind::TchCuda => {
            std::env::var("LD_LIBRARY_PATH").unwrap_or_default()
        }
        BackendKind::Flex | BackendKind::Cuda | BackendKind::Wgpu => String::new(),
    }
}

/// The NVIDIA GPU a cuda or tch-cuda run computes on, as nvidia-smi reads it (meta.json `gpu`).
pub fn nvidia_gpu(config: &BackendConfig) -> Option<crate::sysinfo::GpuReading> {
    match config.name {
        BackendKind::Cuda | BackendKind::TchCuda => crate::sysinfo::nvidia_gpu(config.device),
        BackendKind::Flex | BackendKind::Tch | BackendKind::Wgpu => None,
    }
}

/// How much CubeCL autotunes on the CubeCL backends (meta.json `autotune`): the level set by
/// cubecl's `CUBECL_AUTOTUNE_LEVEL`, else its default (balanced), on builds with the `autotune`
/// feature; "off" on builds without it (`cuda-untuned`, `wgpu` alone), which run burn-cubecl's
/// default kernel for each op; empty on the CPU backends. The tuning decides which kernels run
/// (the level buckets shapes and limits the candidates timed), so a timing names it.
pub fn autotune(config: &BackendConfig) -> String {
    match config.name {
        BackendKind::Cuda | BackendKind::Wgpu if cfg!(feature = "autotune") => {
            match std::env::var("CUBECL_AUTOTUNE_LEVEL") {
                Ok(level) => format!("{level} (CUBECL_AUTOTUNE_LEVEL)"),
                Err(_) => "balanced (cubecl's default)".into(),
            }
        }
        BackendKind::Cuda | BackendKind::Wgpu => {
            "off (built without burn's autotune): burn-cubecl's default kernels".into()
        }
        BackendKind::Flex | BackendKind::Tch | BackendKind::TchCuda => String::new(),
    }
}

/// Device memory on backends whose runtime reports it (cuda, wgpu): (bytes in use, bytes reserved
/// by the allocator), for the calling thread's stream. `None` on the CPU backends, whose
/// memory is the process's own (see `sysinfo::memory`), and on tch-cuda, whose allocator's
/// statistics tch does not expose.
pub fn device_memory(config: &BackendConfig) -> Option<(u64, u64)> {
    match config.name {
        BackendKind::Cuda => cuda::memory(config.device),
        BackendKind::Wgpu => wgpu::memory(config.device),
        BackendKind::Flex | BackendKind::Tch | BackendKind::TchCuda => None,
    }
}

/// Worker threads the backend computes with (libtorch's: its intra-op threads, once the
/// configured number is applied).
pub fn threads(config: &BackendConfig) -> usize {
    match config.name {
        BackendKind::Flex if config.threads > 0 => config.threads,
        BackendKind::Tch | BackendKind::TchCuda => libtorch::threads(config.threads),
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
    fn autotune_is_recorded_for_the_cubecl_backends_only() {
        assert_eq!(autotune(&BackendConfig::default()), "");
        let cuda = BackendConfig {
            name: BackendKind::Cuda,
            ..BackendConfig::default()
        };
        let words = autotune(&cuda);
        if cfg!(feature = "autotune") {
            assert!(words.contains("CUBECL_AUTOTUNE_LEVEL") || words.starts_with("balanced"));
        } else {
            assert!(words.starts_with("off (built without"), "{words}");
        }
    }

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

    fn on(name: BackendKind) -> BackendConfig {
        BackendConfig {
            name,
            ..BackendConfig::default()
        }
    }

    #[test]
    fn flex_runs_and_unknown_names_are_refused() {
        assert_eq!(dispatch(&BackendConfig::default(), Sum).unwrap(), 3.0);
        // An unknown name never gets this far: reading the config refuses it.
        let odd = toml::from_str::<BackendConfig>("name = \"tpu\"").unwrap_err();
        assert!(
            odd.to_string()
                .contains("expected one of `flex`, `cuda`, `tch`, `tch-cuda`, `wgpu`"),
            "{odd}"
        );
    }

    #[test]
    fn backends_left_out_of_the_build_say_how_to_build_them() {
        for (kind, built, how) in [
            (BackendKind::Cuda, cfg!(feature = "cuda"), "--features cuda"),
            (BackendKind::Tch, cfg!(feature = "tch"), "just build-tch"),
            (
                BackendKind::TchCuda,
                cfg!(feature = "tch"),
                "just build-tch",
            ),
            (BackendKind::Wgpu, cfg!(feature = "wgpu"), "--features wgpu"),
        ] {
            assert_eq!(built, built_backends().contains(&kind), "{kind}");
            if built {
                continue;
            }
            let err = dispatch(&on(kind), Sum).unwrap_err().to_string();
            assert!(
                err.contains(how) && err.contains(&kind.to_string()),
                "{err}"
            );
            let early = ensure_available(&on(kind)).unwrap_err().to_string();
            assert_eq!(early, err);
        }
    }

    #[cfg(feature = "tch")]
    #[test]
    fn tch_runs_with_the_configured_threads_and_names_its_libtorch() {
        let tch = BackendConfig {
            threads: 1,
            ..on(BackendKind::Tch)
        };
        ensure_available(&tch).unwrap();
        assert_eq!(dispatch(&tch, Sum).unwrap(), 3.0);
        assert_eq!(threads(&tch), 1);
        let version = libtorch_version(&tch);
        assert!(version.starts_with("2.9.0"), "{version}");
        assert!(libtorch_version(&BackendConfig::default()).is_empty());
    }
}
