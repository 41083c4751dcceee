//! With the `tch` feature, records libtorch's library directory in the binary's run path, so
//! `batchlab` (and the worker processes it starts) finds libtorch without LD_LIBRARY_PATH.
//! The directory is the one torch-sys linked against: `$LIBTORCH/lib`, or the `lib` directory
//! of the `torch` package of the `python` on PATH (LIBTORCH_USE_PYTORCH=1, as `just build-tch`).

use std::{env, path::PathBuf, process::Command};

const TORCH_LIB: &str =
    "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))";

fn main() {
    // Without the feature nothing here depends on the environment: rerun only if this changes.
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_TCH").is_none() {
        return;
    }
    for var in ["LIBTORCH", "VIRTUAL_ENV", "PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let lib = match env::var_os("LIBTORCH") {
        Some(root) => PathBuf::from(root).join("lib"),
        None => python_torch_lib(),
    };
    if !lib.join("libtorch_cpu.so").is_file() {
        panic!(
            "the `tch` feature needs libtorch: {} has no libtorch_cpu.so (build with `just build-tch`)",
            lib.display()
        );
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
}

fn python_torch_lib() -> PathBuf {
    let python = if env::var_os("VIRTUAL_ENV").is_some() {
        "python"
    } else {
        "python3"
    };
    let out = Command::new(python)
        .args(["-c", TORCH_LIB])
        .output()
        .unwrap_or_else(|e| {
            panic!("the `tch` feature needs a Python with torch: cannot run {python}: {e}")
        });
    if !out.status.success() {
        panic!(
            "the `tch` feature needs a Python with torch 2.9.0 (`just build-tch`); {python} said: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}
