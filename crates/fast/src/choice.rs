//! Which of its paths an operation of a given shape takes on this machine, chosen by measurement
//! rather than by fixed thresholds (docs/ARCHITECTURE.md, "Fast paths"): a 3x3 convolution's
//! site (`conv::choice`) and a dense layer's product (`dense`). A threshold
//! measured on one CPU moves on another (its cache sizes, its vector width, which matrix
//! kernels its build has). Once a process has been told where this machine's choices are kept
//! ([`measure_here`]), the first time it meets an operation of a given shape at a given site it
//! times every path that can compute it, in turn, in rounds (at least two; more, up to
//! [`MAX_ROUNDS`], while the race has taken under [`BUDGET`]), takes the fastest by the smallest
//! of each path's times, and appends the choice to the file; every later time, in this
//! process or another on the same machine, it reads the choice. Without a file (tests, the
//! agreement checks) each operation's default decides.
//!
//! A line of the file: the key's fields (the site's name first), the path chosen, then each
//! path's time in ms (`-` for one that cannot compute it), tab-separated.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Which code the times in a machine's file were taken with, part of the file's name: a change
/// that moves a path's speed (2: Winograd's forward in blocks of tiles; 3: the direct
/// convolution as one product per slice of samples, both 2026-11-28; 4: Winograd position by
/// position, 2026-11-28) starts a new file, so that a machine measures again rather than keep
/// choices timed against code that is gone. (The dense layers' sites, added later on
/// 2026-11-28, were new keys: no choice before them changed. 5: every batch's dense products
/// raced among four kernels, where two raced over a long batch, the narrow convolutions'
/// kernels raced against the other paths, and every race in up to nine rounds where it ran
/// two, 2026-11-28. 6: a dense + ReLU's forward raced with its bias and ReLU, which the packed
/// kernel adds in its stores, and every race run for up to 150 ms where it ran for 30,
/// 2026-11-29. 7: the packed kernel's two orders raced as two kernels, 2026-11-29. 8: the direct
/// convolution's rows padded off an even number of cache lines, which made its products over
/// a power-of-two number of pixels faster, 2026-11-29. 9: a dense layer's forward over a short
/// batch raced on a kernel that streams the weights, 2026-12-01. 10: batchlab's product kernel
/// reads its left side without bounds checks, its products (Winograd's blocked forward and
/// position by position, the short batch's dense backward) 1.20-1.35x faster, 2026-12-02. The
/// dense layers' sixth kernel, the narrow one, later on 2026-12-02, needed no new file: a line
/// without a time for every path is no choice, so every dense line of a file before it is raced
/// again and the convolutions' choices stay. 11: Winograd's copy of the kernels through register
/// transposes (0.33 ms alone against 0.51 for 512 x 512 kernels, only on Winograd's paths) and the
/// input gradient's flipped copy in blocks of channels, 2026-12-07. 12: the input gradient's
/// Winograd kernels made tap-major straight from the layer's, one pass where two copies were
/// (0.62 ms alone against 1.71 for 512 x 512 kernels), 2026-12-08.)
pub const GENERATION: u32 = 12;

/// An operation's shape at one site: the start of its line.
pub(crate) trait Key {
    /// The key's fields, tab-separated, the site's name first (unique to the operation).
    fn fields(&self) -> String;
}

/// One of an operation's paths.
pub(crate) trait Path: Copy + PartialEq + 'static {
    /// Every path, in the order of a line's times.
    const ALL: &'static [Self];

    /// Its word in the file.
    fn name(self) -> &'static str;
}

/// This process's choices and the file that keeps them.
struct Choices {
    file: PathBuf,
    /// The file's lines when it was read, and those appended since.
    lines: Vec<String>,
    /// Each key met so far (its fields) and the word of its path.
    chosen: HashMap<String, &'static str>,
}

impl Choices {
    /// The path of `key` among `paths`: from the lines, the first time it is asked; `None`
    /// where no whole line names one of `paths` (a torn write is no choice, nor is a path that
    /// cannot compute the operation, which a file edited or written by other code may name).
    fn get<P: Path>(&mut self, key: &str, paths: &[P]) -> Option<P> {
        let known = |word: &str| paths.iter().copied().find(|p| p.name() == word);
        if let Some(path) = self.chosen.get(key).and_then(|word| known(word)) {
            return Some(path);
        }
        let prefix = format!("{key}\t");
        let path = self.lines.iter().find_map(|line| {
            let rest: Vec<&str> = line.strip_prefix(&prefix)?.split('\t').collect();
            // Whole only with every path's time after the choice.
            (rest.len() > P::ALL.len()).then(|| known(rest[0]))?
        })?;
        self.chosen.insert(key.to_string(), path.name());
        Some(path)
    }
}

static CHOICES: Mutex<Option<Choices>> = Mutex::new(None);

/// Off in a process that measures memory ([`without_measuring`]).
static MEASURING: AtomicBool = AtomicBool::new(true);

/// From now on this process measures no shape: a shape the machine has measured takes its
/// choice, any other its default. For a process whose peak memory is the measurement (a
/// find-batch probe): timing every path would add the ones not taken to that peak.
pub fn without_measuring() {
    MEASURING.store(false, Ordering::Relaxed);
}

/// From now on, choose each operation's path by measurement on this machine, reading and
/// appending the choices at `file` (one file per machine: its CPU, its matrix kernels and its
/// thread count). The choices already there are read now; a missing file starts empty.
pub fn measure_here(file: &std::path::Path) {
    let lines = std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    *lock() = Some(Choices {
        file: file.to_path_buf(),
        lines,
        chosen: HashMap::new(),
    });
}

/// Where this process keeps its measured choices, if it measures.
pub fn measured_at() -> Option<PathBuf> {
    lock().as_ref().map(|c| c.file.clone())
}

fn lock() -> std::sync::MutexGuard<'static, Option<Choices>> {
    CHOICES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The path of the operation `key`, among `paths` (those that can compute it, `default` among
/// them): by this machine's measurement where [`measure_here`] was called, `run` computing it
/// by each path in turn the first time a shape is met; else `default`.
pub(crate) fn path<P: Path>(key: &impl Key, paths: &[P], default: P, run: impl Fn(P)) -> P {
    if paths.len() < 2 {
        return default;
    }
    let key = key.fields();
    match lock().as_mut() {
        Some(choices) => {
            if let Some(path) = choices.get(&key, paths) {
                return path;
            }
        }
        None => return default,
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
        let line = line(&key, chosen, &times);
        choices.chosen.insert(key, chosen.name());
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
            let _ = f.write_all(line.as_bytes());
        }
    }
    chosen
}

/// The line of `key`'s choice and each path's time.
fn line<P: Path>(key: &str, chosen: P, times: &[(P, Duration)]) -> String {
    let time = |path: &P| {
        times.iter().find(|(p, _)| p == path).map_or_else(
            || "-".to_string(),
            |(_, t)| format!("{:.3}", 1e3 * t.as_secs_f64()),
        )
    };
    let times: Vec<String> = P::ALL.iter().map(time).collect();
    format!("{key}\t{}\t{}\n", chosen.name(), times.join("\t"))
}

/// Rounds of a race: at least this many, so that the first run's page faults and a passing
/// disturbance count against no path ...
const MIN_ROUNDS: usize = 2;
/// ... more while the race has taken under this long (a product of a fraction of a millisecond,
/// a dense layer's at batch 32, is timed up to [`MAX_ROUNDS`] times: two timings of each on a
/// noisy 2-core VM chose differently run to run; so did two of each of the MLP's products, of 4
/// to 9 ms, which within 30 ms is all they had: on 2026-11-29 a Zen 3's race put the packed
/// kernel's forward at 7.6 ms one time and 5.8 the time before, and chose flex's kernel for four
/// of the five products where its earlier races had chosen the packed one for four; within 150
/// ms it chose the packed one for all five), ...
const BUDGET: Duration = Duration::from_millis(150);
/// ... and at most this many.
const MAX_ROUNDS: usize = 9;

/// The smallest of each path's timings, the paths in turn, round after round.
fn race<P: Path>(paths: &[P], run: impl Fn(P)) -> Vec<(P, Duration)> {
    let mut best: Vec<(P, Duration)> = paths.iter().map(|&p| (p, Duration::MAX)).collect();
    let started = Instant::now();
    for round in 0..MAX_ROUNDS {
        if round >= MIN_ROUNDS && started.elapsed() >= BUDGET {
            break;
        }
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

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Way {
        One,
        Two,
    }

    impl Path for Way {
        const ALL: &'static [Way] = &[Way::One, Way::Two];

        fn name(self) -> &'static str {
            match self {
                Way::One => "one",
                Way::Two => "two",
            }
        }
    }

    #[test]
    fn a_choice_reads_back_from_its_line_and_a_torn_line_is_skipped() {
        let times = [(Way::Two, Duration::from_millis(3))];
        let line = line("site\t64\t8", Way::Two, &times);
        assert_eq!(line, "site\t64\t8\ttwo\t-\t3.000\n");
        let mut choices = Choices {
            file: PathBuf::new(),
            lines: vec![
                "other\t64\t8\tone\t1.000\t2.000".to_string(),
                line.trim_end().to_string(),
            ],
            chosen: HashMap::new(),
        };
        assert_eq!(choices.get("site\t64\t8", Way::ALL), Some(Way::Two));
        // A longer key that starts with the same fields is another key.
        assert_eq!(choices.get("site\t64", Way::ALL), None);
        let torn = &line[..line.len() - 7];
        choices.lines = vec![torn.to_string()];
        assert_eq!(choices.get("site\t64\t9", Way::ALL), None);
        choices.lines.push("site\t64\t9\tone\t1.000".to_string());
        assert_eq!(choices.get("site\t64\t9", Way::ALL), None);
        // A path that cannot compute this operation is no choice: the next whole line decides.
        choices.lines = vec![
            "site\t64\t10\ttwo\t1.000\t2.000".to_string(),
            "site\t64\t10\tone\t1.000\t2.000".to_string(),
        ];
        assert_eq!(choices.get("site\t64\t10", &[Way::One]), Some(Way::One));
        assert_eq!(choices.get("site\t64\t10", &[Way::Two]), Some(Way::Two));
    }

    struct Site;

    impl Key for Site {
        fn fields(&self) -> String {
            "test-site\t1\t2".to_string()
        }
    }

    #[test]
    fn a_shape_is_raced_once_and_its_choice_kept_for_the_next_process() {
        let file = std::env::temp_dir().join(format!("batchlab-choice-{}.tsv", std::process::id()));
        let _ = std::fs::remove_file(&file);
        measure_here(&file);
        let runs = std::cell::Cell::new(0);
        let two_is_slow = |way| {
            runs.set(runs.get() + 1);
            if way == Way::Two {
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        assert_eq!(path(&Site, Way::ALL, Way::Two, two_is_slow), Way::One);
        // Each way as often, at least twice; rounds of 5 ms go on until the budget has passed.
        let raced = runs.get();
        assert!(
            raced >= 2 * MIN_ROUNDS && raced.is_multiple_of(2),
            "{raced} runs"
        );
        assert!(raced <= 2 * MAX_ROUNDS, "{raced} runs");
        assert_eq!(path(&Site, Way::ALL, Way::Two, two_is_slow), Way::One);
        assert_eq!(runs.get(), raced, "chosen once per process");
        // Another process on the machine reads the choice from the file.
        measure_here(&file);
        let again = |_| panic!("measured again");
        assert_eq!(path(&Site, Way::ALL, Way::Two, again), Way::One);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.lines()
                .any(|l| l.starts_with("test-site\t1\t2\tone\t")),
            "{text}"
        );
        *lock() = None;
        let _ = std::fs::remove_file(&file);
    }
}
