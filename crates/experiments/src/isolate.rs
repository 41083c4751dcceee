//! Running a study's units of work (sweep points, trials) in child processes, so that a unit
//! which kills its process (the kernel's out-of-memory killer, an abort in a native library) is
//! recorded as failed and the study goes on.
//!
//! The protocol is stdout lines from the child: `@begin <unit>` before a unit,
//! `@end <unit> <summary>` after its results are on disk, and `@status <unit> <message>` in
//! between for the progress display. A child that dies between the two is
//! replaced, and the supervisor records the unit it was on. A child exiting with
//! [`POINT_FAILED_EXIT`] has recorded a failed unit itself (a caught panic) and wants a fresh
//! process; one exiting with [`UNIT_DONE_EXIT`] finished a unit of a kind that runs every unit
//! in a process of its own.

use std::{
    io::{BufRead, BufReader, Read, Write},
    path::Path,
    process::{Command, Stdio},
    sync::atomic::{AtomicBool, Ordering},
};

use crate::{
    error::RunError,
    path_counts::{self, PathCounts},
    progress::Progress,
};
use batchlab_method::rows::Status;

/// How a runner protects the run from a unit that crashes the process (an out-of-memory kill).
#[derive(Debug, Clone)]
pub enum Isolation {
    /// Everything in this process; a panic is caught, an abort ends the run (tests, benchmarks).
    InProcess,
    /// Work runs in child processes started as `program args... <report dir>`, which call
    /// `session::run_worker` (the hidden `worker` command); a child that dies is replaced and the unit it was on is
    /// recorded failed.
    ChildProcess {
        /// Usually the batchlab binary itself.
        program: std::path::PathBuf,
        /// Arguments before the report directory (e.g. `--data-dir DIR worker`).
        args: Vec<std::ffi::OsString>,
    },
}

/// Set in every worker's environment. The batchlab binary allocates with mimalloc, which by
/// default reserves address space in 1 GiB arenas: under the batch-size finder's address-space
/// rlimit a worker could then not even start its threads. Arenas of 32 MiB keep what is reserved
/// close to what is used (mimalloc reads the variable once, at its start; other allocators
/// ignore it).
const ALLOCATOR_ENV: (&str, &str) = ("MIMALLOC_ARENA_RESERVE", "32MiB");

/// Exit code of a worker that recorded a failed unit and should be replaced.
pub const POINT_FAILED_EXIT: i32 = 3;

/// Exit code of a worker that finished one unit whose kind wants every unit in a fresh process.
pub const UNIT_DONE_EXIT: i32 = 5;

/// Set once the run is asked to stop (SIGINT, SIGTERM): the CLI's signal handlers set it.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The flag a signal handler sets to stop the run: supervisors then start no more units, stop
/// their worker, and record nothing as failed (the unit in progress runs again on resume).
pub fn interruption_flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// Whether the run was asked to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Exit code of a worker that stopped because its supervisor is gone.
pub const SUPERVISOR_GONE_EXIT: i32 = 4;

/// In a worker process: ends the process as soon as its supervisor is gone, whatever killed it
/// (SIGKILL, the OOM killer, a lost terminal), so that a killed run never leaves a worker
/// writing into its directory. The worker sees it as the end of its stdin, whose other end
/// only the supervisor holds. Rows are appended whole in one write, so an exit between two
/// writes loses at most the unit in progress, which a resume runs again.
pub fn exit_with_supervisor() {
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        let mut stdin = std::io::stdin().lock();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        std::process::exit(SUPERVISOR_GONE_EXIT);
    });
}

const BEGIN: &str = "@begin ";
const END: &str = "@end ";
const STATUS: &str = "@status ";
/// A worker's running totals of the fast paths it took (`path_counts`), after each unit.
const PATHS: &str = "@paths ";

/// How a worker's session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerExit {
    /// Every unit is done.
    Finished,
    /// A unit failed and was recorded; the caller starts a fresh worker for the rest.
    PointFailed,
    /// A unit is done and the next must run in a fresh process (the batch-size finder: a
    /// process's memory readings and limit belong to one probe).
    UnitDone,
}

/// Where a worker announces its units.
pub trait UnitEvents {
    /// A unit starts.
    fn begin(&self, unit: &str);
    /// A unit's results are written.
    fn end(&self, unit: &str, summary: &str);
    /// Where a long unit is (e.g. a trial's epoch), for the progress display.
    fn status(&self, _unit: &str, _message: &str) {}
}

/// A child worker's announcements: protocol lines on stdout, flushed at once.
#[derive(Debug, Default)]
pub struct StdoutEvents;

impl UnitEvents for StdoutEvents {
    fn begin(&self, unit: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{BEGIN}{unit}");
        let _ = out.flush();
    }
    fn end(&self, unit: &str, summary: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{END}{unit} {summary}");
        let _ = writeln!(out, "{PATHS}{}", PathCounts::of_this_process().to_words());
        let _ = out.flush();
    }
    fn status(&self, unit: &str, message: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{STATUS}{unit} {message}");
        let _ = out.flush();
    }
}

/// An in-process worker's announcements, shown as progress.
struct ProgressEvents<'a> {
    progress: &'a dyn Progress,
    done: std::cell::Cell<u64>,
}

impl UnitEvents for ProgressEvents<'_> {
    fn begin(&self, _unit: &str) {}
    fn end(&self, unit: &str, summary: &str) {
        self.done.set(self.done.get() + 1);
        self.progress
            .advance(self.done.get(), &format!("{unit} {summary}"));
    }
    fn status(&self, unit: &str, message: &str) {
        self.progress.detail(&format!("{unit}: {message}"));
    }
}

/// `oom` for a failure whose message says memory ran out (as every backend we know says it),
/// else `error`.
pub fn failure_status(message: &str) -> Status {
    let lower = message.to_lowercase();
    let markers = [
        "out of memory",
        "outofmemory",
        "memory allocation",
        "cannot allocate memory",
    ];
    if markers.iter().any(|m| lower.contains(m)) {
        Status::Oom
    } else {
        Status::Error
    }
}

/// How a unit's process died, for the supervisor's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crash {
    /// `oom` when the process was killed by SIGKILL (what the OOM killer sends) or said memory
    /// ran out, else `error`.
    pub status: Status,
    /// Exit status and the end of the child's stderr.
    pub message: String,
}

/// Runs `work` until it finishes, replacing failed workers. `record_crash` writes the failure
/// of a unit whose process died without recording it; `env` is set in child processes.
pub fn supervise(
    dir: &Path,
    isolation: &Isolation,
    progress: &dyn Progress,
    env: &[(String, String)],
    work: &dyn Fn(&dyn UnitEvents) -> Result<WorkerExit, RunError>,
    record_crash: &dyn Fn(&str, &Crash) -> Result<(), RunError>,
) -> Result<(), RunError> {
    let events = ProgressEvents {
        progress,
        done: std::cell::Cell::new(0),
    };
    loop {
        if interrupted() {
            return Err(RunError::Interrupted);
        }
        let exit = match isolation {
            Isolation::InProcess => work(&events)?,
            Isolation::ChildProcess { program, args } => {
                run_child(program, args, env, dir, &events, record_crash)?
            }
        };
        if exit == WorkerExit::Finished {
            return Ok(());
        }
    }
}

/// How often a supervisor looks for a stop request while its worker runs.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

fn run_child(
    program: &Path,
    args: &[std::ffi::OsString],
    env: &[(String, String)],
    dir: &Path,
    events: &ProgressEvents<'_>,
    record_crash: &dyn Fn(&str, &Crash) -> Result<(), RunError>,
) -> Result<WorkerExit, RunError> {
    let mut child = Command::new(program)
        .args(args)
        .arg(dir)
        .env(ALLOCATOR_ENV.0, ALLOCATOR_ENV.1)
        .envs(env.iter().map(|(k, v)| (k, v)))
        // The worker watches this pipe: when this process dies, it closes, and the worker exits.
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RunError::io(program, format!("cannot start a worker process: {e}")))?;
    let control = child.stdin.take();
    let mut stderr = child.stderr.take().expect("stderr is piped");
    // Drained on a thread so a chatty child can never block on a full pipe.
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut current: Option<String> = None;
    let mut paths = PathCounts::default();
    let stdout = child.stdout.take().expect("stdout is piped");
    let worker = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let read_all = AtomicBool::new(false);
    std::thread::scope(|scope| {
        // A stop request ends the worker within STOP_POLL, whatever it is doing: the worker
        // may not have been signalled itself (a `kill` of this process alone), and a unit can
        // run for minutes without a line (a GPU's first steps compile and tune kernels).
        scope.spawn(|| {
            while !read_all.load(Ordering::SeqCst) {
                if interrupted() {
                    let _ = nix::sys::signal::kill(worker, nix::sys::signal::Signal::SIGKILL);
                    return;
                }
                std::thread::sleep(STOP_POLL);
            }
        });
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(unit) = line.strip_prefix(BEGIN) {
                current = Some(unit.to_string());
            } else if let Some(rest) = line.strip_prefix(END) {
                let (unit, summary) = rest.split_once(' ').unwrap_or((rest, ""));
                events.end(unit, summary);
                current = None;
            } else if let Some(rest) = line.strip_prefix(STATUS) {
                let (unit, message) = rest.split_once(' ').unwrap_or((rest, ""));
                events.status(unit, message);
            } else if let Some(words) = line.strip_prefix(PATHS) {
                paths = PathCounts::from_words(words).unwrap_or(paths);
            }
        }
        // The worker has closed its output (it is ending): the watcher stops before the worker
        // is reaped, so it can never signal a process that took over the worker's pid.
        read_all.store(true, Ordering::SeqCst);
    });
    let status = child
        .wait()
        .map_err(|e| RunError::io(program, format!("lost the worker process: {e}")))?;
    // Its units' steps up to its last announcement (a unit it died in is not counted).
    path_counts::add_worker(paths);
    drop(control);
    let stderr_text = stderr_reader.join().unwrap_or_default();
    if status.success() {
        return Ok(WorkerExit::Finished);
    }
    // Stopped on request, not failed: the unit it was on runs again on resume. A worker
    // ended by SIGTERM, SIGINT or SIGHUP was stopped from outside (scancel signals every
    // process of a job, and the worker may die before this process's own handler has run).
    if interrupted() || stopped_from_outside(&status) {
        interruption_flag().store(true, Ordering::SeqCst);
        return Err(RunError::Interrupted);
    }
    if status.code() == Some(UNIT_DONE_EXIT) {
        return Ok(WorkerExit::UnitDone);
    }
    if status.code() == Some(POINT_FAILED_EXIT) {
        events.progress.note(last_line(&stderr_text));
        return Ok(WorkerExit::PointFailed);
    }
    let tail = tail(&stderr_text, 1500);
    match current {
        Some(unit) => {
            let crash = Crash {
                status: if killed_by_sigkill(&status) {
                    Status::Oom
                } else {
                    failure_status(&stderr_text)
                },
                message: format!("worker process died ({status}): {}", cause(&stderr_text)),
            };
            events
                .progress
                .note(&format!("{unit}: {} ({status})", crash.status));
            record_crash(&unit, &crash)?;
            Ok(WorkerExit::PointFailed)
        }
        None => Err(RunError::Other(format!(
            "the worker process failed before starting any point ({status}):\n{tail}"
        ))),
    }
}

/// The signal that ended a process, if one did.
#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// Killed outright (SIGKILL 9): the kernel's OOM killer, or a memory limit.
fn killed_by_sigkill(status: &std::process::ExitStatus) -> bool {
    signal_of(status) == Some(9)
}

/// Whether a signal that asks a process to stop (SIGHUP 1, SIGINT 2, SIGTERM 15) ended it:
/// a request from outside, never a fault of the unit it was running.
fn stopped_from_outside(status: &std::process::ExitStatus) -> bool {
    matches!(signal_of(status), Some(1 | 2 | 15))
}

/// What killed a worker, from its stderr: the line that says memory ran out (an allocation
/// failure's own words), else the panic's message, else the end of the text. A backtrace's
/// frames are not a cause.
fn cause(stderr: &str) -> &str {
    let lines = || stderr.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| failure_status(l) == Status::Oom)
        .or_else(|| {
            // A panic: "thread '..' panicked at FILE:" then the message on the next line.
            let mut after_panic = lines().skip_while(|l| !l.contains("panicked at"));
            let at = after_panic.next()?;
            Some(
                after_panic
                    .next()
                    .filter(|m| !m.starts_with("stack backtrace"))
                    .unwrap_or(at),
            )
        })
        .or_else(|| lines().rfind(|l| l.starts_with("error")))
        .unwrap_or_else(|| tail(stderr, 1500))
}

fn tail(text: &str, max_chars: usize) -> &str {
    let text = text.trim_end();
    let start = text
        .char_indices()
        .rev()
        .nth(max_chars.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    &text[start..]
}

fn last_line(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or("a point failed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_messages_are_recognised() {
        assert_eq!(
            failure_status("CUDA_ERROR_OUT_OF_MEMORY: out of memory"),
            Status::Oom
        );
        assert_eq!(
            failure_status("memory allocation of 4096 bytes failed"),
            Status::Oom
        );
        assert_eq!(failure_status("index out of bounds"), Status::Error);
    }

    #[test]
    fn the_cause_is_the_allocation_or_the_panic_not_the_backtrace() {
        let oom = "memory allocation of 8589934592 bytes failed\nstack backtrace:\n   0: frame\n   1: frame";
        assert_eq!(cause(oom), "memory allocation of 8589934592 bytes failed");
        let panic = "thread 'main' panicked at src/x.rs:3:5:\nindex out of bounds\nstack backtrace:\n   0: frame";
        assert_eq!(cause(panic), "index out of bounds");
        assert_eq!(cause("something\nerror: disk full\n"), "error: disk full");
        assert_eq!(cause("just this"), "just this");
    }

    #[test]
    fn tails_keep_the_end() {
        assert_eq!(tail("abcdef\n", 3), "def");
        assert_eq!(tail("ab", 3), "ab");
        assert_eq!(last_line("one\ntwo\n"), "two");
    }
}
