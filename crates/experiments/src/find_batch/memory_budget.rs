//! `search.memory_budget`: what a config says, as a value.

use bytesize::ByteSize;

use crate::sysinfo::memory;

/// `search.memory_budget`, parsed once: the memory available when the run starts, or a size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum MemoryBudget {
    /// `available`: what /proc/meminfo says is available.
    Available,
    /// A size, in bytes.
    Size(u64),
}

impl MemoryBudget {
    /// A size with its unit, or `available`.
    pub(super) fn parse(text: &str) -> Result<MemoryBudget, String> {
        let text = text.trim();
        if text == "available" {
            return Ok(MemoryBudget::Available);
        }
        text.parse::<ByteSize>()
            .map(|size| MemoryBudget::Size(size.as_u64()))
            .map_err(|_| format!("expected a size such as \"4GiB\", \"512MiB\" or \"2GB\", or \"available\"; got {text:?}"))
    }

    /// The budget in bytes, `available` read now.
    pub(super) fn bytes(self) -> Result<u64, String> {
        match self {
            MemoryBudget::Size(bytes) => Ok(bytes),
            MemoryBudget::Available => memory::available_bytes().ok_or_else(|| {
                "cannot read the available memory (/proc/meminfo); give a size such as \"4GiB\""
                    .into()
            }),
        }
    }
}
