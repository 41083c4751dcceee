//! burn-wgpu (`--features wgpu`): the CubeCL backend of `cuda` over wgpu (Vulkan on Linux), on
//! a GPU or on Mesa's software Vulkan (lavapipe), which is how a machine without a GPU runs
//! the GPU code path. Its memory statistics come from the same CubeCL runtime as cuda's
//! ([`super::cubecl`]).
//!
//! The adapter is chosen once per process and device, here rather than at the first tensor
//! operation: there its panic (no Vulkan driver, no such GPU) would surface on another thread
//! with its message lost, and its name, driver and type would be out of reach.

use super::{BackendError, OnBackend};

/// The wgpu device of a config's `backend.device`: 0 is wgpu's default adapter (the best GPU,
/// else a software one; `CUBECL_WGPU_DEFAULT_DEVICE` overrides it), n > 0 discrete GPU n.
#[cfg(feature = "wgpu")]
fn device(index: usize) -> burn::backend::wgpu::WgpuDevice {
    use burn::backend::wgpu::WgpuDevice;
    match index {
        0 => WgpuDevice::DefaultDevice,
        n => WgpuDevice::DiscreteGpu(n),
    }
}

/// The adapter wgpu chose for device `index`, in words (name; graphics API; device type;
/// driver), or why none could be chosen. Initialises the device on the first call in this
/// process; later calls return the same answer.
#[cfg(feature = "wgpu")]
pub fn adapter(index: usize) -> Result<String, BackendError> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};

    use burn::backend::wgpu::{graphics::AutoGraphicsApi, init_setup, RuntimeOptions};

    static CHOSEN: OnceLock<Mutex<HashMap<usize, Result<String, String>>>> = OnceLock::new();
    let mut chosen = CHOSEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let answer = chosen.entry(index).or_insert_with(|| {
        let wgpu_device = device(index);
        super::catch_quietly(move || {
            init_setup::<AutoGraphicsApi>(&wgpu_device, RuntimeOptions::default())
        })
        .map(|setup| {
            let info = setup.adapter.get_info();
            let software = info.device_type == ::wgpu::DeviceType::Cpu;
            format!(
                "{} ({}, {:?} device, driver {} {}){}",
                info.name,
                info.backend,
                info.device_type,
                info.driver,
                info.driver_info,
                if software {
                    ": a software rasteriser on the CPU, so its timings are not a GPU's"
                } else {
                    ""
                }
            )
        })
    });
    answer.clone().map_err(|message| {
        BackendError::NoDevice(format!(
            "wgpu found no usable adapter for device {index} (is a Vulkan driver installed? On a machine without a GPU, Mesa's software one: apt-get install mesa-vulkan-drivers libvulkan1): {message}"
        ))
    })
}

/// Runs `task` on wgpu device `index`, after choosing its adapter and checking that it
/// computes.
#[cfg(feature = "wgpu")]
pub fn run<T: OnBackend>(index: usize, task: T) -> Result<T::Output, BackendError> {
    use burn::backend::{Autodiff, Wgpu};
    check(index)?;
    Ok(task.run::<Autodiff<Wgpu>>(device(index)))
}

/// Fails with a clear message where burn-wgpu would panic at its first tensor operation.
#[cfg(feature = "wgpu")]
pub fn check(index: usize) -> Result<(), BackendError> {
    use burn::{backend::Wgpu, tensor::Tensor};
    adapter(index)?;
    super::probe(index, || {
        Tensor::<Wgpu, 1>::ones([4], &device(index))
            .sum()
            .into_scalar()
    })
}

/// (bytes in use, bytes reserved) on device `index`, for the calling thread's stream.
#[cfg(feature = "wgpu")]
pub fn memory(index: usize) -> Option<(u64, u64)> {
    adapter(index).ok()?;
    super::cubecl::memory::<burn::cubecl::wgpu::WgpuRuntime>(&device(index))
}

#[cfg(not(feature = "wgpu"))]
pub fn run<T: OnBackend>(_index: usize, _task: T) -> Result<T::Output, BackendError> {
    Err(not_built())
}

#[cfg(not(feature = "wgpu"))]
pub fn check(_index: usize) -> Result<(), BackendError> {
    Err(not_built())
}

#[cfg(not(feature = "wgpu"))]
pub fn adapter(_index: usize) -> Result<String, BackendError> {
    Err(not_built())
}

#[cfg(not(feature = "wgpu"))]
pub fn memory(_index: usize) -> Option<(u64, u64)> {
    None
}

/// Why `wgpu` cannot be asked of this binary.
#[cfg(not(feature = "wgpu"))]
fn not_built() -> BackendError {
    BackendError::NotBuilt {
        backend: "wgpu".into(),
        how: "`cargo build --release --features wgpu` (or `just build-wgpu`)".into(),
    }
}
