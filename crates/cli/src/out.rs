//! The commands' standard output. Its reader may close it early (`batchlab check NAME | head`),
//! and `println!` then panics. Every line goes through [`text`] (with the `outln!` and `out!`
//! macros), which turns the closed pipe into [`StdoutClosed`]; `main` then ends quietly with
//! the status a shell shows for a process killed by SIGPIPE. The signal itself stays ignored
//! (Rust's default): a run writes to its worker processes' pipes and must survive one dying.

use std::fmt;
use std::io::{self, Write};

use anyhow::Result;

/// The exit status of a command whose stdout was closed: 128 + SIGPIPE, as `cat` gets.
pub const CLOSED_EXIT: u8 = 141;

/// Stdout's reader has gone.
#[derive(Debug)]
pub struct StdoutClosed;

impl fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output was closed")
    }
}

impl std::error::Error for StdoutClosed {}

/// Writes `args` to stdout.
pub fn text(args: fmt::Arguments) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to standard output")),
    }
}

/// `print!` through [`text`]; returns from the enclosing function when stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::text(format_args!($($arg)*))?
    };
}

/// `println!` through [`text`]; returns from the enclosing function when stdout is closed.
macro_rules! outln {
    () => {
        $crate::out::text(format_args!("\n"))?
    };
    ($($arg:tt)*) => {
        $crate::out::text(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

pub(crate) use {out, outln};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_told_apart_from_other_errors() {
        let closed = anyhow::Error::from(StdoutClosed).context("listing");
        assert!(closed.downcast_ref::<StdoutClosed>().is_some());
        let other = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(other.downcast_ref::<StdoutClosed>().is_none());
    }
}
