//! Enforcing a memory budget on one probe's process, and reading what it used.
//!
//! In order of preference: a cgroup of the probe's own with a memory limit (cgroup v2
//! `memory.max`, else v1 `memory.limit_in_bytes`), where the kernel lets this process create one
//! (root, or a delegated subtree): the limit binds the memory the process actually uses, and an
//! overrun is an out-of-memory kill the cgroup counts. Else an address-space rlimit
//! (`RLIMIT_AS`, what `ulimit -v` sets), which any process may lower for itself: an allocation
//! beyond it fails, and the process aborts saying so. It binds virtual memory, more than what
//! is resident, so its reading is the peak virtual size.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sysinfo::memory;

/// `search.limit`: how the budget is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitChoice {
    /// A cgroup where the machine allows one, else an rlimit.
    Auto,
    /// A cgroup (v2, else v1); a probe fails where none can be made.
    Cgroup,
    /// An address-space rlimit.
    Rlimit,
}

/// The cgroup interface versions, with the file names each uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CgroupVersion {
    V2,
    V1,
}

impl CgroupVersion {
    fn name(self) -> &'static str {
        match self {
            Self::V2 => "cgroup-v2",
            Self::V1 => "cgroup-v1",
        }
    }
    fn limit_file(self) -> &'static str {
        match self {
            Self::V2 => "memory.max",
            Self::V1 => "memory.limit_in_bytes",
        }
    }
    fn peak_file(self) -> &'static str {
        match self {
            Self::V2 => "memory.peak",
            Self::V1 => "memory.max_usage_in_bytes",
        }
    }
    /// The file with the `oom_kill N` line.
    fn events_file(self) -> &'static str {
        match self {
            Self::V2 => "memory.events",
            Self::V1 => "memory.oom_control",
        }
    }
    /// Swap is not memory the budget allows: the limit of memory plus swap.
    fn swap_file(self) -> &'static str {
        match self {
            Self::V2 => "memory.swap.max",
            Self::V1 => "memory.memsw.limit_in_bytes",
        }
    }
}

/// A limit in force on this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedLimit {
    /// `cgroup-v2`, `cgroup-v1` or `rlimit-as`.
    pub kind: &'static str,
    cgroup: Option<(CgroupVersion, PathBuf)>,
}

impl AppliedLimit {
    /// Limits this process to `budget` bytes, as `choice` says. `name` names the probe's cgroup
    /// (see [`probe_cgroup_name`]).
    pub fn apply(choice: LimitChoice, budget: u64, name: &str) -> Result<Self, String> {
        let cgroup_error = match choice {
            LimitChoice::Rlimit => None,
            LimitChoice::Auto | LimitChoice::Cgroup => match join_new_cgroup(name, budget) {
                Ok((version, dir)) => {
                    return Ok(Self {
                        kind: version.name(),
                        cgroup: Some((version, dir)),
                    })
                }
                Err(e) => Some(e),
            },
        };
        match (choice, cgroup_error) {
            (LimitChoice::Cgroup, Some(e)) => Err(format!(
                "search.limit = \"cgroup\", but no memory cgroup can be made here: {e}; use \"auto\" or \"rlimit\""
            )),
            _ => {
                limit_address_space(budget)?;
                Ok(Self {
                    kind: "rlimit-as",
                    cgroup: None,
                })
            }
        }
    }

    /// The peak of what the limit binds, in MiB: the cgroup's peak usage, or the process's
    /// peak virtual size under an rlimit.
    pub fn peak_mb(&self) -> Option<f64> {
        match &self.cgroup {
            Some((version, dir)) => read_u64(&dir.join(version.peak_file()))
                .map(|bytes| bytes as f64 / (1024.0 * 1024.0)),
            None => memory::peak_virtual_mb(),
        }
    }
}

/// The cgroup name of a probe: the supervisor's pid and the unit, so that the supervisor can
/// find it after the probe's process is gone.
pub fn probe_cgroup_name(supervisor_pid: u32, unit: &str) -> String {
    format!("batchlab-{supervisor_pid}-{unit}")
}

/// After a probe's process died: its cgroup's kind (`cgroup-v2`, `cgroup-v1`) and how many
/// times the kernel killed a process in it for exceeding the limit (0 where the count cannot be
/// read); `None` when the probe had no cgroup. Removes the cgroup.
pub fn reap_probe_cgroup(name: &str) -> Option<(&'static str, u64)> {
    let (version, dir) = memory_cgroups()
        .into_iter()
        .map(|(version, parent)| (version, parent.join(name)))
        .find(|(_, dir)| dir.is_dir())?;
    let kills = std::fs::read_to_string(dir.join(version.events_file()))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("oom_kill "))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0);
    // Empty once its process has exited; a cgroup still in use is left alone.
    let _ = std::fs::remove_dir(&dir);
    Some((version.name(), kills))
}

/// Removes the (empty) cgroups of every probe this supervisor started, and those left by
/// supervisors that are gone (a run killed before it could tidy up).
pub fn remove_probe_cgroups(supervisor_pid: u32) {
    let left_behind = |name: &str| {
        let pid = name
            .strip_prefix("batchlab-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        pid.is_some_and(|pid| pid == supervisor_pid || !Path::new(&format!("/proc/{pid}")).exists())
    };
    for (_, parent) in memory_cgroups() {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for entry in entries.flatten() {
            if left_behind(&entry.file_name().to_string_lossy()) {
                // Only an empty cgroup can be removed: one still in use stays.
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

/// Creates `name` under this process's memory cgroup, limits it to `budget` bytes and moves
/// this process into it.
fn join_new_cgroup(name: &str, budget: u64) -> Result<(CgroupVersion, PathBuf), String> {
    let candidates = memory_cgroups();
    if candidates.is_empty() {
        return Err("this process is in no cgroup with a memory controller".into());
    }
    let mut errors = Vec::new();
    for (version, parent) in candidates {
        let dir = parent.join(name);
        match make_limited(version, &dir, budget) {
            Ok(()) => return Ok((version, dir)),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                errors.push(format!("{}: {e}", version.name()));
            }
        }
    }
    Err(errors.join("; "))
}

fn make_limited(version: CgroupVersion, dir: &Path, budget: u64) -> Result<(), String> {
    let write = |file: &str, value: &str| {
        std::fs::write(dir.join(file), value)
            .map_err(|e| format!("cannot write {}: {e}", dir.join(file).display()))
    };
    std::fs::create_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if !dir.join(version.limit_file()).exists() {
        return Err(format!(
            "{} has no {} (the memory controller is not enabled for it)",
            dir.display(),
            version.limit_file()
        ));
    }
    write(version.limit_file(), &budget.to_string())?;
    if dir.join(version.swap_file()).exists() {
        let swap = match version {
            CgroupVersion::V2 => "0".to_string(),
            CgroupVersion::V1 => budget.to_string(),
        };
        write(version.swap_file(), &swap)?;
    }
    write("cgroup.procs", &std::process::id().to_string())
}

/// This process's cgroups that may hold a memory limit, v2 first: (version, directory).
fn memory_cgroups() -> Vec<(CgroupVersion, PathBuf)> {
    let Ok(text) = std::fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let relative = path.trim_start_matches('/');
        if controllers.is_empty() {
            // The unified hierarchy, mounted at the root or beside the v1 controllers.
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                if Path::new(root).join("cgroup.controllers").exists() {
                    found.insert(0, (CgroupVersion::V2, Path::new(root).join(relative)));
                    break;
                }
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            found.push((
                CgroupVersion::V1,
                Path::new("/sys/fs/cgroup/memory").join(relative),
            ));
        }
    }
    found
}

fn limit_address_space(budget: u64) -> Result<(), String> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (_, hard) = getrlimit(Resource::RLIMIT_AS)
        .map_err(|e| format!("cannot read the address-space limit: {e}"))?;
    setrlimit(Resource::RLIMIT_AS, budget.min(hard), hard)
        .map_err(|e| format!("cannot set the address-space limit to {budget} bytes: {e}"))
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
