//! How a sweep point, a probe or a trial ended: the `status` column of every row file, one
//! type for all, so that no code compares it as a string.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The `status` column. A step-time sample or a probe cannot diverge (they do not train to an
/// end); their rows reject [`Status::Diverged`] in their checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum Status {
    /// Ran to its end.
    Ok,
    /// A training trial whose loss turned non-finite or blew up: infeasible, not failed.
    Diverged,
    /// Ran out of memory.
    Oom,
    /// Failed otherwise (a panic, a crash, a kill).
    Error,
}

impl Status {
    /// Every status, in the order files and tables list them.
    pub const ALL: [Status; 4] = [Status::Ok, Status::Diverged, Status::Oom, Status::Error];

    /// The word a row file holds.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Diverged => "diverged",
            Status::Oom => "oom",
            Status::Error => "error",
        }
    }

    /// Ran to its end.
    pub fn is_ok(self) -> bool {
        self == Status::Ok
    }

    /// Failed to run (out of memory, or an error): says nothing about the metaparameters.
    pub fn failed(self) -> bool {
        matches!(self, Status::Oom | Status::Error)
    }
}

impl FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Status::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                format!("unknown status `{s}`; expected one of ok, diverged, oom, error")
            })
    }
}

/// What a row file's reader deserializes through, so that a bad value is named as such.
impl TryFrom<String> for Status {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `Err` (column and problem, as [`Row::check`](super::Row::check) returns) when `status` is
/// [`Status::Diverged`] in a file whose rows cannot diverge.
pub(crate) fn check_cannot_diverge(status: Status) -> Result<(), (&'static str, String)> {
    if status == Status::Diverged {
        Err((
            "status",
            "`diverged` is a training trial's status; expected one of ok, oom, error".into(),
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_the_words_the_files_hold() {
        for s in Status::ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Status>(&json).unwrap(), s);
        }
        let bad = serde_json::from_str::<Status>("\"fine\"").unwrap_err();
        assert!(bad.to_string().contains("unknown status `fine`"), "{bad}");
        assert!(Status::Oom.failed() && Status::Error.failed());
        assert!(!Status::Diverged.failed() && !Status::Ok.failed());
        assert!(check_cannot_diverge(Status::Diverged).is_err());
        assert!(check_cannot_diverge(Status::Oom).is_ok());
    }
}
