//! Whether a validation error reaches a target error: the one rule for the report (steps to
//! result), the runner stopping a trial, and the cutoff that stops trials another trial has
//! beaten.
//!
//! Reaching the target means error <= target. Validation error is a count of mistakes over
//! a finite split, so a trial can sit exactly on the target (1,000 of 10,000 is exactly
//! 0.1), and "reaching" 0.1 error includes getting there. Because the error is usually
//! computed as 1 - accuracy, which rounds (1 - 0.7 is 0.30000000000000004), an error within
//! [`TARGET_SLACK`] x max(1, |target|) above the target still counts: far below one example
//! of any validation split.

/// How far above the target (times max(1, |target|)) an error still counts as reaching it:
/// 1e-12, a million times the rounding of 1 - accuracy and a million times smaller than one
/// example of a validation split of a million.
pub const TARGET_SLACK: f64 = 1e-12;

/// Whether a validation `error` reaches `target` (at or below it, within [`TARGET_SLACK`]):
/// the one rule for the report and for runners deciding when a trial stops.
pub fn reaches(error: f64, target: f64) -> bool {
    error <= target + TARGET_SLACK * target.abs().max(1.0)
}
