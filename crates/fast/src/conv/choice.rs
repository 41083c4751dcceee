//! Which path a 3x3 convolution takes on this machine (`Path`): the direct convolution,
//! Winograd's F(4x4, 3x3) by blocks of tiles, or Winograd position by position, chosen by
//! measurement rather than by fixed thresholds (docs/ARCHITECTURE.md, "Fast paths"). The
//! thresholds of `winograd::default_path` were measured on one CPU; another CPU (its cache
//! sizes, its vector width) moves the point where each wins. Once a process has been told where
//! this machine's choices are kept ([`measure_here`]), the first time it meets a convolution of a
//! given shape at a given place (forward, input gradient, weight gradient) it times every path
//! that can compute it, in turn, twice each, takes the fastest by the smaller of each path's two
//! times, and appends the choice to the file; every later time, in this process or another on
//! the same machine, it reads the choice. Without a file (tests, the agreement checks) the
//! thresholds decide.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::kernels::Geometry;

/// Which code the times in a machine's file were taken with, part of the file's name: a change
/// that moves a path's speed (2: Winograd's forward in blocks of tiles; 3: the direct
/// convolution as one product per slice of samples, both 2026-11-28; 4: Winograd position by
/// position, 2026-11-28) starts a new file, so that a machine measures again rather than keep
/// choices timed against code that is gone.
pub const GENERATION: u32 = 4;

/// How a convolution's site is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Path {
    /// One matrix product per slice of samples (`direct`).
    Direct,
    /// Winograd's F(4x4, 3x3), block by block of tiles (`winograd::fused`; the weight gradient's
    /// 36 products through flex's batched `matmul`).
    Winograd,
    /// Winograd position by position, the kernels transformed panel by panel in each task's
    /// cache (`winograd::positions`).
    Positions,
}

impl Path {
    /// Every path, in the order of a file line's times.
    const ALL: [Path; 3] = [Path::Winograd, Path::Direct, Path::Positions];

    fn name(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::Winograd => "winograd",
            Path::Positions => "winograd-positions",
        }
    }

    fn parse(word: &str) -> Option<Path> {
        Path::ALL.into_iter().find(|p| p.name() == word)
    }
}

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
    /// One line of the file: the key, the choice and each path's time (ms; `-` for a path
    /// that cannot compute it), tab-separated.
    fn line(&self, chosen: Path, times: &[(Path, Duration)]) -> String {
        let time = |path: Path| {
            times.iter().find(|(p, _)| *p == path).map_or_else(
                || "-".to_string(),
                |(_, t)| format!("{:.3}", 1e3 * t.as_secs_f64()),
            )
        };
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            self.site.name(),
            self.channels,
            self.height,
            self.width,
            self.padding[0],
            self.padding[1],
            self.k,
            self.samples,
            chosen.name(),
            Path::ALL.map(time).join("\t")
        )
    }

    /// The key and choice of one line; `None` for a line it cannot read (a torn write).
    fn read(line: &str) -> Option<(Key, Path)> {
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
        let path = Path::parse(f.get(8)?)?;
        // A line is whole only with every path's time after the choice.
        f.get(8 + Path::ALL.len())?;
        Some((key, path))
    }
}

/// This process's choices and the file that keeps them.
struct Choices {
    file: PathBuf,
    chosen: HashMap<Key, Path>,
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
pub fn measure_here(file: &std::path::Path) {
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

/// The path of the convolution of geometry `g` (to `k` channels, over `samples` samples) at
/// `site`, among `paths` (those that can compute it, `default` among them): by this machine's
/// measurement where [`measure_here`] was called, `run` computing it by each path in turn the
/// first time a shape is met; else `default`.
pub(super) fn path(
    site: Site,
    g: Geometry,
    [k, samples]: [usize; 2],
    paths: &[Path],
    default: Path,
    run: impl Fn(Path),
) -> Path {
    if paths.len() < 2 {
        return default;
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
        if let Some(&path) = choices.chosen.get(&key) {
            return path;
        }
    } else {
        return default;
    }
    if !MEASURING.load(Ordering::Relaxed) {
        return default;
    }
    // Timed without the lock held: the other paths of this step may run meanwhile.
    let times = race(paths, run);
    let chosen = times
        .iter()
        .min_by_key(|(_, t)| *t)
        .map_or(default, |(p, _)| *p);
    if let Some(choices) = lock().as_mut() {
        choices.chosen.insert(key, chosen);
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
            let _ = f.write_all(key.line(chosen, &times).as_bytes());
        }
    }
    chosen
}

/// The smaller of two timings of each path, the paths in turn twice over, so that the first
/// run's page faults and a passing disturbance count against none.
fn race(paths: &[Path], run: impl Fn(Path)) -> Vec<(Path, Duration)> {
    let mut best: Vec<(Path, Duration)> = paths.iter().map(|&p| (p, Duration::MAX)).collect();
    for _ in 0..2 {
        for (path, time) in best.iter_mut() {
            let start = Instant::now();
            run(*path);
            *time = (*time).min(start.elapsed());
        }
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
        let times = [
            (Path::Winograd, Duration::from_millis(3)),
            (Path::Direct, Duration::from_millis(5)),
        ];
        let line = key.line(Path::Winograd, &times);
        assert!(line.ends_with("\t3.000\t5.000\t-\n"), "{line:?}");
        assert_eq!(Key::read(line.trim_end()), Some((key, Path::Winograd)));
        let torn = &line[..line.len() - 8];
        assert_eq!(Key::read(torn), None);
    }
}
