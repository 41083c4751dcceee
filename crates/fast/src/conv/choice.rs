//! Which path a 3x3 convolution takes on this machine: Winograd's F(4x4, 3x3) or flex's own
//! kernel, chosen by measurement rather than by fixed thresholds (docs/ARCHITECTURE.md, "Fast
//! paths"). The thresholds of `winograd::pays` were measured on one CPU; another CPU (its
//! cache sizes, its vector width) moves the point where Winograd wins. Once a process has been
//! told where this machine's choices are kept ([`measure_here`]), the first time it meets a
//! convolution of a given shape at a given place (forward, input gradient, weight gradient) it
//! times both paths, alternating, twice each, takes the faster by the smaller of each path's two
//! times, and appends the choice to the file; every later time, in this process or another on
//! the same machine, it reads the choice. Without a file (tests, the agreement checks) the
//! thresholds decide, as before.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::kernels::Geometry;

/// Which code the times in a machine's file were taken with, part of the file's name: a change
/// that moves a path's speed (2: Winograd's forward in blocks of tiles; 3: the direct
/// convolution as one product per slice of samples; both 2026-11-28) starts a new file, so that a machine measures again rather than keep choices timed against code that
/// is gone.
pub const GENERATION: u32 = 3;

/// Where in a convolution's step a path is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Site {
    Forward,
    InputGrad,
    WeightGrad,
}

impl Site {
    fn name(self) -> &'static str {
        match self {
            Site::Forward => "forward",
            Site::InputGrad => "input-grad",
            Site::WeightGrad => "weight-grad",
        }
    }

    fn parse(word: &str) -> Option<Site> {
        [Site::Forward, Site::InputGrad, Site::WeightGrad]
            .into_iter()
            .find(|s| s.name() == word)
    }
}

/// A convolution's shape at one site: the geometry, the other channel count and the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    site: Site,
    channels: usize,
    height: usize,
    width: usize,
    padding: [usize; 2],
    k: usize,
    samples: usize,
}

impl Key {
    /// One line of the file: the key, the choice and both times (ms), tab-separated.
    fn line(&self, winograd: bool, [w, d]: [Duration; 2]) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.3}\t{:.3}\n",
            self.site.name(),
            self.channels,
            self.height,
            self.width,
            self.padding[0],
            self.padding[1],
            self.k,
            self.samples,
            if winograd { "winograd" } else { "direct" },
            1e3 * w.as_secs_f64(),
            1e3 * d.as_secs_f64()
        )
    }

    /// The key and choice of one line; `None` for a line it cannot read (a torn write).
    fn read(line: &str) -> Option<(Key, bool)> {
        let f: Vec<&str> = line.split('\t').collect();
        let n = |i: usize| f.get(i)?.parse::<usize>().ok();
        let key = Key {
            site: Site::parse(f.first()?)?,
            channels: n(1)?,
            height: n(2)?,
            width: n(3)?,
            padding: [n(4)?, n(5)?],
            k: n(6)?,
            samples: n(7)?,
        };
        let winograd = match *f.get(8)? {
            "winograd" => true,
            "direct" => false,
            _ => return None,
        };
        // A line is whole only with both times after the choice.
        f.get(10)?;
        Some((key, winograd))
    }
}

/// This process's choices and the file that keeps them.
struct Choices {
    file: PathBuf,
    chosen: HashMap<Key, bool>,
}

static CHOICES: Mutex<Option<Choices>> = Mutex::new(None);

/// Off in a process that measures memory ([`without_measuring`]).
static MEASURING: AtomicBool = AtomicBool::new(true);

/// From now on this process measures no shape: a shape the machine has measured takes its
/// choice, any other the thresholds. For a process whose peak memory is the measurement (a
/// find-batch probe): timing both paths would add the one not taken to that peak.
pub fn without_measuring() {
    MEASURING.store(false, Ordering::Relaxed);
}

/// From now on, choose each convolution's path by measurement on this machine, reading and
/// appending the choices at `file` (one file per machine: its CPU, its matrix kernels and its
/// thread count). The choices already there are read now; a missing file starts empty.
pub fn measure_here(file: &Path) {
    let chosen = std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(Key::read)
        .collect();
    *lock() = Some(Choices {
        file: file.to_path_buf(),
        chosen,
    });
}

/// Where this process keeps its measured choices, if it measures.
pub fn measured_at() -> Option<PathBuf> {
    lock().as_ref().map(|c| c.file.clone())
}

fn lock() -> std::sync::MutexGuard<'static, Option<Choices>> {
    CHOICES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether Winograd computes the convolution of geometry `g` (to `k` channels, over `samples`
/// samples) at `site`: by this machine's measurement where [`measure_here`] was called,
/// `time_both` timing the two paths the first time a shape is met; else by `thresholds`.
pub(super) fn winograd(
    site: Site,
    g: Geometry,
    k: usize,
    samples: usize,
    thresholds: bool,
    time_both: impl FnOnce() -> [Duration; 2],
) -> bool {
    if !super::winograd::applies(g) {
        return false;
    }
    let key = Key {
        site,
        channels: g.channels,
        height: g.height,
        width: g.width,
        padding: g.padding,
        k,
        samples,
    };
    if let Some(choices) = lock().as_ref() {
        if let Some(&winograd) = choices.chosen.get(&key) {
            return winograd;
        }
    } else {
        return thresholds;
    }
    if !MEASURING.load(Ordering::Relaxed) {
        return thresholds;
    }
    // Timed without the lock held: the other paths of this step may run meanwhile.
    let times = time_both();
    let winograd = times[0] < times[1];
    if let Some(choices) = lock().as_mut() {
        choices.chosen.insert(key, winograd);
        // One short write in append mode: lines from processes sharing the file do not
        // interleave. A choice that cannot be kept is measured again next time.
        if let Some(dir) = choices.file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(mut f) = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&choices.file)
        {
            let _ = f.write_all(key.line(winograd, times).as_bytes());
        }
    }
    winograd
}

/// The smaller of two timings of each path, alternating (Winograd, flex, Winograd, flex), so
/// that the first run's page faults and a passing disturbance count against neither.
pub(super) fn race(mut winograd: impl FnMut(), mut direct: impl FnMut()) -> [Duration; 2] {
    let mut best = [Duration::MAX; 2];
    for _ in 0..2 {
        let start = Instant::now();
        winograd();
        best[0] = best[0].min(start.elapsed());
        let start = Instant::now();
        direct();
        best[1] = best[1].min(start.elapsed());
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_reads_back_from_its_line_and_a_torn_line_is_skipped() {
        let key = Key {
            site: Site::WeightGrad,
            channels: 64,
            height: 64,
            width: 64,
            padding: [1, 1],
            k: 64,
            samples: 16,
        };
        let line = key.line(true, [Duration::from_millis(3), Duration::from_millis(5)]);
        assert_eq!(Key::read(line.trim_end()), Some((key, true)));
        let torn = &line[..line.len() - 8];
        assert_eq!(Key::read(torn), None);
    }
}
