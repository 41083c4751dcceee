#!/usr/bin/env python3
"""Fails when a backend feature would compile a shared dependency differently.

CI builds the workspace twice in one target directory: the default build (`just test`), then
with a GPU backend (`just test-wgpu`, `just check-cuda`). Cargo compiles a dependency once per
feature set, so a backend that turns on one more feature of a crate the default build already
compiled (serde's `rc`, say) compiles it again, and everything above it: polars, clap, the lot
(on a 2-core Zen 3 EPYC, CI's wgpu build took 26 min in a target directory of its own, as CI
recorded it for a3668f6, and 10-12 min in the shared one with these features aligned:
docs/bench/*-ci-cold.log).
crates/cli/Cargo.toml turns those features on in the default build too. This check lists, for
each BUILD (cargo's package and feature options, as CI's command gives them:
"-p batchlab-cli --features wgpu"), every dependency of the default build
(`--workspace`, tests included) whose feature set that build lacks, apart from burn's and
CubeCL's own crates (the backend itself) and the workspace's; and exits 1 if there is one.

Usage: python3 scripts/feature-drift.py BUILD...
"""

import subprocess
import sys
from collections import defaultdict

# The backend's own crates: a GPU feature changes them by design.
OWN = ("batchlab-", "burn", "cubecl")


def feature_sets(build: str) -> dict[str, set[str]]:
    """Every package of `build` (cargo's package and feature options; normal, build and dev
    edges) with each set of features it is compiled with (a crate that build scripts use too
    may have two)."""
    args = ["cargo", "tree", *build.split(), "-e", "normal,build,dev", "--prefix", "none"]
    args += ["-f", "{p}\t{f}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    sets = defaultdict(set)
    for line in out.splitlines():
        if "\t" not in line:
            continue
        package, enabled = line.split("\t", 1)
        package = package.replace("(*)", "").strip()
        sets[package].add(enabled.replace("(*)", "").strip())
    return sets


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    default = feature_sets("--workspace")
    drift = 0
    for feature in sys.argv[1:]:
        before = drift
        other = feature_sets(feature)
        for package, sets in sorted(default.items()):
            if package.startswith(OWN) or package not in other:
                continue
            for missing in sorted(sets - other[package]):
                drift += 1
                print(
                    f"{feature}: {package} is compiled with features [{missing}] by default "
                    f"but with {sorted(other[package])} under {feature}: turn the difference on "
                    "in crates/cli/Cargo.toml",
                    file=sys.stderr,
                )
        if drift == before:
            print(f"{feature}: every shared dependency compiles as in the default build")
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
