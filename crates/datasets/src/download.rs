//! Downloads a published file into the data directory: resumable, verified, and never visible
//! under its final name until its size and checksum are right.
//!
//! The bytes go to `<dir>/<file>.part`. A `.part` left by an interrupted run is resumed with an
//! HTTP range request; when the bytes are complete they are checked against the published size
//! and checksum ([`crate::sources`]) and only then renamed to `<dir>/<file>`. So a file under its
//! final name is always complete, and a later run that finds it verified does not touch the
//! network. Every error says which file, from where, and where to put a copy obtained some other
//! way (a machine without network, a mirror): the compute nodes of many clusters have no
//! network, so that is a normal way to get the data.
//!
//! Two processes downloading the same file into the same directory at once would both append to
//! the `.part`; the checksum catches that, and a later run starts again.

use std::{
    fs::{self, File, OpenOptions},
    io::{self, IsTerminal, Read, Write},
    path::{Path, PathBuf},
    time::Duration,
};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::{
    checksum::{digest_file, verify},
    error::DatasetError,
    sources::Remote,
};

/// Read and write size while streaming.
const BUFFER: usize = 64 * 1024;

/// Downloads `remote` from its official URL; see [`download`].
pub fn download_remote(
    remote: &Remote,
    dir: &Path,
    progress: bool,
) -> Result<PathBuf, DatasetError> {
    download(remote.url, remote, dir, progress)
}

/// Makes `dir/<remote.file>` hold the published file, downloading it from `url` if needed, and
/// returns its path.
///
/// `url` is separate from `remote.url` so a mirror (or a test's server) can serve the file while
/// the name, size and checksum stay the published ones.
///
/// - A file already at `dir/<file>` with the published size and checksum is returned without
///   touching the network; one that does not match is replaced once a good copy has arrived.
/// - Bytes are written to `dir/<file>.part`. An existing `.part` is resumed with
///   `Range: bytes=<its length>-`: a 206 answer is appended, a 200 answer (a server that ignores
///   ranges) restarts from zero, a 416 answer means the `.part` is already complete.
/// - When the bytes are complete, the size and checksum are checked; only then is the `.part`
///   renamed to `dir/<file>`. On a checksum mismatch the `.part` is deleted, since resuming a
///   wrong file cannot make it right.
/// - A lost connection keeps the `.part`, so running again resumes.
/// - `progress` shows a progress bar (bytes, rate, time left) on stderr, and only when stderr is
///   a terminal.
pub fn download(
    url: &str,
    remote: &Remote,
    dir: &Path,
    progress: bool,
) -> Result<PathBuf, DatasetError> {
    let job = Job::new(url, remote, dir);
    fs::create_dir_all(dir).map_err(|source| DatasetError::Write {
        path: dir.to_path_buf(),
        source,
    })?;

    // A file under the final name was verified when it was put there, or placed by hand; in
    // both cases check it once more, since a hand-placed copy may be truncated.
    let mut note = String::new();
    if job.target.is_file() {
        match job.mismatch(&job.target)? {
            None => return Ok(job.target),
            Some(why) => {
                note = format!(
                    "The file already at {} is not the published one ({why}). ",
                    job.target.display()
                );
                if progress {
                    eprintln!("{note}Downloading it again.");
                }
            }
        }
    }

    let mut offset = match fs::metadata(&job.part) {
        Ok(m) if m.is_file() => m.len(),
        _ => 0,
    };
    if let Some(size) = remote.size {
        if offset > size {
            // Longer than the whole file: not a prefix of it.
            job.remove_part();
            offset = 0;
        } else if offset == size {
            // All the bytes are there; an earlier run was stopped before checking them.
            return job.finish(true, &note);
        }
    }

    let agent: ureq::Agent = ureq::Agent::config_builder()
        // 4xx and 5xx are answers to handle (416 in particular), not transport errors.
        .http_status_as_error(false)
        .timeout_resolve(Some(Duration::from_secs(30)))
        .timeout_connect(Some(Duration::from_secs(30)))
        // A stalled transfer fails after a minute instead of hanging; the .part is kept.
        .timeout_per_read(Some(Duration::from_secs(60)))
        .build()
        .into();

    // At most two requests: a resume, and a fresh start if the server answered the resume with
    // the wrong range.
    for _ in 0..2 {
        let mut request = agent.get(url);
        if offset > 0 {
            request = request.header("Range", format!("bytes={offset}-"));
        }
        let response = request
            .call()
            .map_err(|e| job.download_error(describe(&e), &note))?;
        let status = response.status();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        match status.as_u16() {
            206 if offset > 0 => {
                let range = header("content-range");
                let (start, total) = range
                    .as_deref()
                    .and_then(parse_content_range)
                    .unwrap_or((u64::MAX, None));
                if let (Some(size), Some(total)) = (remote.size, total) {
                    if total != size {
                        return Err(job.download_error(
                            format!(
                                "the server's file is {} bytes, the published size is {} bytes",
                                group(total),
                                group(size)
                            ),
                            &note,
                        ));
                    }
                }
                if start != offset {
                    // Not the bytes asked for: appending them would corrupt the file.
                    job.remove_part();
                    offset = 0;
                    continue;
                }
                let body = response.into_body();
                let file = OpenOptions::new()
                    .append(true)
                    .open(&job.part)
                    .map_err(|source| job.write_error(source))?;
                job.stream(body, file, offset, total.or(remote.size), progress, &note)?;
                return job.finish(false, &note);
            }
            200 => {
                let body = response.into_body();
                let length = body.content_length();
                if let (Some(size), Some(length)) = (remote.size, length) {
                    if length != size {
                        return Err(job.download_error(
                            format!(
                                "the server sends {} bytes, the published size is {} bytes",
                                group(length),
                                group(size)
                            ),
                            &note,
                        ));
                    }
                }
                // The whole file from the start: whatever the .part held is replaced.
                let file = File::create(&job.part).map_err(|source| job.write_error(source))?;
                job.stream(body, file, 0, length.or(remote.size), progress, &note)?;
                return job.finish(false, &note);
            }
            416 if offset > 0 => {
                // Nothing lies beyond the .part: it should be the whole file.
                return job.finish(true, &note);
            }
            code => {
                let reason = status.canonical_reason().unwrap_or("");
                return Err(job.download_error(
                    format!("the server answered HTTP {code} {reason}")
                        .trim_end()
                        .to_owned(),
                    &note,
                ));
            }
        }
    }
    Err(job.download_error(
        "the server twice answered with a different byte range than the one asked for".into(),
        &note,
    ))
}

/// Where to place a copy of `remote` obtained some other way, with what to check it against:
/// "Download it elsewhere and place it at <path> (170,052,171 bytes, md5 c32a...), then run the
/// command again."
pub fn placement_help(remote: &Remote, path: &Path) -> String {
    format!(
        "Download it elsewhere and place it at {} ({}), then run the command again.",
        path.display(),
        expectation(remote)
    )
}

/// "170,052,171 bytes, md5 c32a..." with what is not published said so.
fn expectation(remote: &Remote) -> String {
    let size = match remote.size {
        Some(n) => format!("{} bytes", group(n)),
        None => "size not published".into(),
    };
    let checksum = match remote.checksum {
        Some(c) => c.to_string(),
        None => "no published checksum".into(),
    };
    format!("{size}, {checksum}")
}

/// `170052171` -> `170,052,171`, so sizes can be compared with `ls -l` at a glance (also the
/// CLI's and the wall-time estimate's counts).
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    // The first group takes the remainder (1 to 3 digits), every later group 3.
    let first = (digits.len() - 1) % 3 + 1;
    let mut out = digits[..first].to_owned();
    for group in digits.as_bytes()[first..].chunks(3) {
        out.push(',');
        out.extend(group.iter().map(|&b| char::from(b)));
    }
    out
}

/// `bytes 100-199/200` -> (100, Some(200)); `bytes 100-199/*` -> (100, None).
fn parse_content_range(value: &str) -> Option<(u64, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let (start, _end) = range.split_once('-')?;
    let start = start.trim().parse().ok()?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    Some((start, total))
}

/// A cause in words, with the hint a person needs for the common ones.
fn describe(error: &ureq::Error) -> String {
    match error {
        ureq::Error::HostNotFound => {
            "the host name could not be resolved (no network, or no DNS on this machine)".into()
        }
        ureq::Error::Io(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            "the connection was refused (nothing listens there, or a firewall says no)".into()
        }
        ureq::Error::Timeout(t) => format!("no answer in time ({t})"),
        e => e.to_string(),
    }
}

/// One download's names and messages.
struct Job<'a> {
    url: &'a str,
    remote: &'a Remote,
    target: PathBuf,
    part: PathBuf,
}

impl<'a> Job<'a> {
    fn new(url: &'a str, remote: &'a Remote, dir: &Path) -> Self {
        Self {
            url,
            remote,
            target: dir.join(remote.file),
            part: dir.join(format!("{}.part", remote.file)),
        }
    }

    fn help(&self) -> String {
        placement_help(self.remote, &self.target)
    }

    fn download_error(&self, message: String, note: &str) -> DatasetError {
        DatasetError::Download {
            file: self.remote.file.into(),
            url: self.url.into(),
            message,
            help: format!("{note}{}", self.help()),
        }
    }

    fn write_error(&self, source: io::Error) -> DatasetError {
        DatasetError::Write {
            path: self.part.clone(),
            source,
        }
    }

    fn remove_part(&self) {
        // Already gone is fine; anything else shows up when the .part is next written.
        let _ = fs::remove_file(&self.part);
    }

    /// Why the file at `path` is not the published one, or None if it is (as far as published).
    fn mismatch(&self, path: &Path) -> Result<Option<String>, DatasetError> {
        let len = fs::metadata(path)
            .map_err(|source| DatasetError::Io {
                path: path.to_path_buf(),
                source,
            })?
            .len();
        if let Some(size) = self.remote.size {
            if len != size {
                return Ok(Some(format!(
                    "{} bytes instead of {}",
                    group(len),
                    group(size)
                )));
            }
        }
        if let Some(expected) = self.remote.checksum {
            if !verify(path, &expected)? {
                return Ok(Some(format!("its checksum is not {expected}")));
            }
        }
        Ok(None)
    }

    /// Streams `body` into `file` (already positioned at `offset`) with a progress bar.
    fn stream(
        &self,
        mut body: ureq::Body,
        mut file: File,
        offset: u64,
        total: Option<u64>,
        progress: bool,
        note: &str,
    ) -> Result<(), DatasetError> {
        let bar = progress_bar(self.remote.file, total, offset, progress);
        let mut reader = body.as_reader();
        let mut buffer = vec![0u8; BUFFER];
        let mut received = offset;
        let result = loop {
            match reader.read(&mut buffer) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    if let Err(source) = file.write_all(&buffer[..n]) {
                        break Err(self.write_error(source));
                    }
                    received += n as u64;
                    bar.inc(n as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let of = total
                        .map(|t| format!(" of {}", group(t)))
                        .unwrap_or_default();
                    break Err(self.download_error(
                        format!(
                            "the transfer broke off after {} bytes{of} ({e}); {} keeps them and \
                             running the command again resumes from there",
                            group(received),
                            self.part.display()
                        ),
                        note,
                    ));
                }
            }
        };
        // Keep what arrived even when the transfer broke off: that is what a resume builds on.
        let synced = file.sync_all().map_err(|source| self.write_error(source));
        bar.finish_and_clear();
        result.and(synced)
    }

    /// Checks the complete `.part` and renames it to the final name. `server_says_complete`:
    /// the server has nothing beyond it (416), so a short `.part` cannot be resumed.
    fn finish(&self, server_says_complete: bool, note: &str) -> Result<PathBuf, DatasetError> {
        let len = fs::metadata(&self.part)
            .map_err(|source| DatasetError::Io {
                path: self.part.clone(),
                source,
            })?
            .len();
        if let Some(size) = self.remote.size {
            if len < size && !server_says_complete {
                return Err(self.download_error(
                    format!(
                        "the connection closed after {} of {} bytes; {} keeps them and running \
                         the command again resumes from there",
                        group(len),
                        group(size),
                        self.part.display()
                    ),
                    note,
                ));
            }
            if len != size {
                self.remove_part();
                return Err(self.download_error(
                    format!(
                        "the server's file is {} bytes, the published size is {} bytes",
                        group(len),
                        group(size)
                    ),
                    note,
                ));
            }
        }
        if let Some(expected) = self.remote.checksum {
            let found = digest_file(&self.part, expected.algorithm())?;
            if !expected.matches(&found) {
                self.remove_part();
                return Err(DatasetError::Checksum {
                    path: self.part.clone(),
                    expected: expected.to_string(),
                    found: format!("{} {found}", expected.algorithm()),
                    help: format!(
                        "It was downloaded from {} and has been deleted, so running the command \
                         again downloads it afresh. If that keeps failing, {}{}",
                        self.url,
                        note,
                        lowercase_first(&self.help())
                    ),
                });
            }
        }
        fs::rename(&self.part, &self.target).map_err(|source| DatasetError::Write {
            path: self.target.clone(),
            source,
        })?;
        Ok(self.target.clone())
    }
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A bar of bytes, rate and time left on stderr; hidden unless asked for and stderr is a
/// terminal (a log file should not fill with redraws).
fn progress_bar(file: &str, total: Option<u64>, offset: u64, progress: bool) -> ProgressBar {
    if !progress || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let template = match total {
        Some(_) => "{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
        None => "{msg} {spinner} {bytes} {binary_bytes_per_sec}",
    };
    let style = ProgressStyle::with_template(template)
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr())
        .with_style(style)
        .with_message(file.to_owned())
        .with_position(offset);
    // Count the resumed bytes as already there, not as a burst of speed.
    bar.tick();
    bar.reset_eta();
    bar
}

#[cfg(test)]
#[path = "download_tests.rs"]
mod tests;
