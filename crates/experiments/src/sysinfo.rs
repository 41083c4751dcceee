//! Facts about the machine and the moment, recorded beside every measurement.

use std::{
    path::Path,
    process::Command,
    sync::OnceLock,
    time::{SystemTime, UNIX_EPOCH},
};

static ALLOCATOR: OnceLock<&'static str> = OnceLock::new();

/// What [`allocator`] says where no other was named, and what a meta.json without the field
/// (runs made before it was recorded) is read as.
pub const SYSTEM_ALLOCATOR: &str = "system malloc";

/// Names the memory allocator the binary was built with (its `main` calls this first): it
/// changes a CPU step's time (fresh pages for every large tensor, or reused ones), so meta.json
/// records it and a step-time sweep predicts only runs made with the same one.
pub fn set_allocator(name: &'static str) {
    let _ = ALLOCATOR.set(name);
}

/// The allocator [`set_allocator`] named, else the system's malloc.
pub fn allocator() -> &'static str {
    ALLOCATOR.get().copied().unwrap_or(SYSTEM_ALLOCATOR)
}

/// The CPU's model name from /proc/cpuinfo, or the architecture where that is not readable.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The CPU as one file name: its model name, family and model numbers from /proc/cpuinfo,
/// lower-cased with every other character a dash, e.g. `amd-epyc-f26-m2`.
pub fn cpu_slug() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let name = format!(
        "{} f{} m{}",
        cpu_model(),
        field("cpu family"),
        field("model")
    );
    let slug: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    slug.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The vector instruction sets this CPU offers that decide which matrix kernels flex runs
/// (detected at run time, as gemm detects them), widest last, e.g. `sse4.2 avx avx2 fma avx512f`.
pub fn simd_features() -> Vec<String> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let mut found = vec![];
        macro_rules! probe {
            ($($name:tt),*) => {
                $(if std::arch::is_x86_feature_detected!($name) {
                    found.push($name.to_string());
                })*
            };
        }
        probe!("sse4.2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq");
        found
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        vec![std::env::consts::ARCH.to_string()]
    }
}

/// Which of gemm's f32 matrix kernels flex runs here: AVX-512 where the build has them
/// (`avx512` feature, on by default) and the CPU has AVX-512F, else AVX2 + FMA where the CPU
/// has both, else the portable ones.
pub fn flex_matmul_kernels(simd: &[String]) -> String {
    let has = |f: &str| simd.iter().any(|s| s == f);
    let built = cfg!(feature = "avx512");
    match (built, has("avx512f"), has("avx2") && has("fma")) {
        (true, true, _) => "avx512 (x86-v4 kernels built in, avx512f present)".into(),
        (false, true, true) => {
            "avx2+fma (avx512f present, but this build lacks the x86-v4 kernels)".into()
        }
        (_, false, true) => "avx2+fma".into(),
        _ => "portable (no avx2+fma)".into(),
    }
}

/// This machine's host name (Linux's /proc, then $HOSTNAME), or `unknown host`.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown host".into())
}

/// Logical CPUs the process may use.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Operating system: the distribution's pretty name and the kernel release where known.
pub fn os_description() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|s| s.trim().to_string());
    match (pretty, kernel) {
        (Some(p), Some(k)) => format!("{p}, Linux {k}"),
        (Some(p), None) => p,
        (None, Some(k)) => format!("{} {k}", std::env::consts::OS),
        (None, None) => std::env::consts::OS.to_string(),
    }
}

/// The git commit of the working directory (with `-dirty` when it has uncommitted changes to
/// tracked files outside `reports/`), or `unknown` outside a repository. Results are not
/// inputs: a run that starts while another run's report (or its `latest` link) is not yet
/// committed ran the committed code all the same.
pub fn git_commit() -> String {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(commit) => {
            let dirty = run(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ":(top)",
                ":(top,exclude)reports",
            ])
            .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{commit}-dirty")
            } else {
                commit
            }
        }
        // A copy of the tree without its repository (a GPU machine's): the commit the GPU
        // campaign was packed from (scripts/gpu-pack.sh writes it, the campaign exports it).
        None => std::env::var("BATCHLAB_GIT_COMMIT").unwrap_or_else(|_| "unknown".into()),
    }
}

/// The CubeCL kernel cache a run reads and grows (`BATCHLAB_KERNEL_CACHE`, the directory the
/// GPU campaign's cubecl.toml names: `autotune/` and `compilation/` under it), and its autotune
/// keys when the run started and when it ended: a run that started with keys started warm, and
/// the difference is what it tuned.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelCache {
    /// The cache directory.
    pub dir: String,
    /// Autotune keys in it when the run started.
    pub keys_at_start: usize,
    /// Autotune keys in it when the run ended (`None` while it runs).
    pub keys_at_end: Option<usize>,
}

impl KernelCache {
    /// The cache `BATCHLAB_KERNEL_CACHE` names, read now; `None` without the variable.
    pub fn at_start() -> Option<Self> {
        let dir = std::env::var("BATCHLAB_KERNEL_CACHE").ok()?;
        Some(Self {
            keys_at_start: autotune_keys(Path::new(&dir)),
            dir,
            keys_at_end: None,
        })
    }

    /// The same cache read again at the end of the run.
    pub fn at_end(self) -> Self {
        Self {
            keys_at_end: Some(autotune_keys(Path::new(&self.dir))),
            ..self
        }
    }
}

/// Autotune results under `dir/autotune`: cubecl keeps one JSON entry per line in each
/// `*.json.log` file (cubecl-common 0.10, `cache.rs`).
fn autotune_keys(dir: &Path) -> usize {
    fn count(dir: &Path) -> usize {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .map(|p| {
                if p.is_dir() {
                    count(&p)
                } else if p.to_string_lossy().ends_with(".json.log") {
                    std::fs::read(&p).map_or(0, |b| {
                        b.split(|&c| c == b'\n').filter(|l| !l.is_empty()).count()
                    })
                } else {
                    0
                }
            })
            .sum()
    }
    count(&dir.join("autotune"))
}

/// An NVIDIA GPU as `nvidia-smi` reports it when a run starts: what a GPU timing depends on
/// beyond its name (the clocks the card runs at and may reach, its power limit).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuReading {
    /// E.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// The driver's version.
    pub driver: String,
    /// Memory in MiB: all of it, and what was free.
    pub memory_total_mib: f64,
    /// Free memory in MiB.
    pub memory_free_mib: f64,
    /// Streaming-multiprocessor clock now, and its maximum, in MHz.
    pub clock_sm_mhz: f64,
    /// The SM clock's maximum, in MHz.
    pub clock_sm_max_mhz: f64,
    /// Memory clock, in MHz.
    pub clock_memory_mhz: f64,
    /// The power limit, in W.
    pub power_limit_w: f64,
}

/// GPU `index` as `nvidia-smi` reports it; `None` without nvidia-smi or that GPU.
pub fn nvidia_gpu(index: usize) -> Option<GpuReading> {
    let out = Command::new("nvidia-smi")
        .args([
            "--query-gpu=name,driver_version,memory.total,memory.free,clocks.sm,clocks.max.sm,clocks.mem,power.limit",
            "--format=csv,noheader,nounits",
            &format!("--id={index}"),
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    parse_nvidia_smi(&String::from_utf8_lossy(&out.stdout))
}

/// One line of [`nvidia_gpu`]'s query; a field nvidia-smi cannot read (`[N/A]`) is NaN.
fn parse_nvidia_smi(line: &str) -> Option<GpuReading> {
    let fields: Vec<&str> = line.lines().next()?.split(',').map(str::trim).collect();
    let [name, driver, numbers @ ..] = fields.as_slice() else {
        return None;
    };
    let n: Vec<f64> = numbers
        .iter()
        .map(|f| f.parse().unwrap_or(f64::NAN))
        .collect();
    let [total, free, sm, sm_max, memory, power] = n.as_slice() else {
        return None;
    };
    Some(GpuReading {
        name: name.to_string(),
        driver: driver.to_string(),
        memory_total_mib: *total,
        memory_free_mib: *free,
        clock_sm_mhz: *sm,
        clock_sm_max_mhz: *sm_max,
        clock_memory_mhz: *memory,
        power_limit_w: *power,
    })
}

/// CPU time the whole process has used so far (every thread, user and system), in
/// milliseconds; `None` where the clock cannot be read.
pub fn cpu_time_ms() -> Option<f64> {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .ok()
        .map(|t| t.tv_sec() as f64 * 1e3 + t.tv_nsec() as f64 / 1e6)
}

/// Seconds since the Unix epoch.
pub fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time.
pub fn rfc3339(unix: u64) -> String {
    let (y, m, d, hh, mm, ss) = civil(unix);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}

/// The Unix time of a `YYYY-MM-DDTHH:MM:SSZ` written by [`rfc3339`]; `None` for anything else.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Howard Hinnant's days from civil, the inverse of `civil`.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()
}

/// `YYYYMMDDTHHMMSSZ`, which sorts in time order as text (used in run ids).
pub fn compact_timestamp(unix: u64) -> String {
    let (y, m, d, hh, mm, ss) = civil(unix);
    format!("{y:04}{m:02}{d:02}T{hh:02}{mm:02}{ss:02}Z")
}

/// Calendar date and time (UTC) of a Unix time: Howard Hinnant's days-from-civil inverse.
fn civil(unix: u64) -> (i64, u32, u32, u64, u64, u64) {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, secs / 3600, secs % 3600 / 60, secs % 60)
}

/// Process memory readings from /proc (Linux). Elsewhere every reading is `None`.
pub mod memory {
    use super::Path;

    /// Resets the process's peak resident set size to its current size, so that the next
    /// [`peak_rss_mb`] covers only what follows. Returns false where the kernel does not allow it.
    pub fn reset_peak_rss() -> bool {
        // "5" resets the peak RSS counter (Linux >= 4.0, Documentation/filesystems/proc.rst).
        std::fs::write("/proc/self/clear_refs", "5").is_ok()
    }

    /// Peak resident set size (VmHWM) in MiB.
    pub fn peak_rss_mb() -> Option<f64> {
        status_kib("VmHWM:").map(|kib| kib as f64 / 1024.0)
    }

    /// Current resident set size (VmRSS) in MiB.
    pub fn rss_mb() -> Option<f64> {
        status_kib("VmRSS:").map(|kib| kib as f64 / 1024.0)
    }

    /// Peak virtual memory size (VmPeak) in MiB: what an address-space rlimit binds.
    pub fn peak_virtual_mb() -> Option<f64> {
        status_kib("VmPeak:").map(|kib| kib as f64 / 1024.0)
    }

    /// Memory the kernel estimates is available for new work (MemAvailable), in bytes.
    pub fn available_bytes() -> Option<u64> {
        let info = std::fs::read_to_string(Path::new("/proc/meminfo")).ok()?;
        info.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib * 1024)
    }

    fn status_kib(field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(Path::new("/proc/self/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autotune_keys_are_the_entries_of_the_cache_logs() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(autotune_keys(dir.path()), 0);
        let device = dir.path().join("autotune/device-0-wgpu");
        std::fs::create_dir_all(&device).unwrap();
        std::fs::write(device.join("matmul.json.log"), "{\"a\":1}\n{\"b\":2}\n").unwrap();
        std::fs::write(device.join("conv.json.log"), "{\"c\":3}\n").unwrap();
        std::fs::write(device.join("conv.json.log.lock"), "1").unwrap();
        assert_eq!(autotune_keys(dir.path()), 3);
    }

    #[test]
    fn an_nvidia_smi_line_reads_as_a_gpu() {
        let gpu =
            parse_nvidia_smi("NVIDIA H200, 580.159.03, 143771, 143000, 345, 1980, 2619, [N/A]\n")
                .unwrap();
        assert_eq!(
            (gpu.name.as_str(), gpu.driver.as_str()),
            ("NVIDIA H200", "580.159.03")
        );
        assert_eq!(
            (gpu.memory_total_mib, gpu.clock_sm_max_mhz),
            (143771.0, 1980.0)
        );
        assert!(gpu.power_limit_w.is_nan());
        assert!(parse_nvidia_smi("No devices were found").is_none());
    }

    #[test]
    fn timestamps_are_correct_and_sortable() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_310_625), "2026-11-22T01:23:45Z");
        assert_eq!(compact_timestamp(1_795_310_625), "20261122T012345Z");
        assert!(compact_timestamp(1_795_310_625) < compact_timestamp(1_795_310_626));
        for unix in [0, 951_782_400, 1_795_310_625, 4_102_444_799] {
            assert_eq!(parse_rfc3339(&rfc3339(unix)), Some(unix));
        }
        assert_eq!(parse_rfc3339("2026-11-22 01:23:45"), None);
    }

    #[test]
    fn peak_rss_follows_a_large_allocation_and_resets() {
        if !memory::reset_peak_rss() {
            return; // not Linux, or /proc not writable: the runner records no memory then
        }
        let before = memory::peak_rss_mb().unwrap();
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        let during = memory::peak_rss_mb().unwrap();
        drop(block);
        assert!(during - before > 60.0, "{before} -> {during}");
        assert!(memory::reset_peak_rss());
        let after = memory::peak_rss_mb().unwrap();
        assert!(after < during - 60.0, "reset: {during} -> {after}");
    }
}
