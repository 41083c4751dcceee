//! Which path a 3x3 convolution takes on this machine (`Path`): the direct convolution,
//! Winograd's F(4x4, 3x3) by blocks of tiles, Winograd position by position, or over at most 4
//! input channels batchlab's narrow kernels, chosen by
//! measurement (`crate::choice`, which says how) rather than by the fixed thresholds of
//! `winograd::default_path`, measured on one CPU. A convolution's key is its geometry, the other
//! channel count and the samples, at one place in its step (forward, input gradient, weight
//! gradient).

use crate::choice;

use super::kernels::Geometry;

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
    /// Over at most 4 input channels, batchlab's direct kernels (`narrow`): the forward and the
    /// weight gradient.
    Narrow,
}

impl choice::Path for Path {
    const ALL: &'static [Path] = &[Path::Winograd, Path::Direct, Path::Positions, Path::Narrow];

    fn name(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::Winograd => "winograd",
            Path::Positions => "winograd-positions",
            Path::Narrow => "narrow",
        }
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

impl choice::Key for Key {
    fn fields(&self) -> String {
        [
            self.channels,
            self.height,
            self.width,
            self.padding[0],
            self.padding[1],
            self.k,
            self.samples,
        ]
        .iter()
        .fold(self.site.name().to_string(), |line, v| {
            format!("{line}\t{v}")
        })
    }
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
    let key = Key {
        site,
        channels: g.channels,
        height: g.height,
        width: g.width,
        padding: g.padding,
        k,
        samples,
    };
    choice::path(&key, paths, default, run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::Key as _;

    #[test]
    fn a_key_starts_its_line_as_the_machines_files_have_it() {
        let key = Key {
            site: Site::WeightGrad,
            channels: 64,
            height: 64,
            width: 64,
            padding: [1, 1],
            k: 64,
            samples: 16,
        };
        assert_eq!(key.fields(), "weight-grad\t64\t64\t64\t1\t1\t64\t16");
    }
}
