//! Tests across architectures.
