//! The learning-rate schedule of a training trial (`[schedule]` of a train config; steps-to-target
//! trials use the constant default).

use serde::{Deserialize, Serialize};

/// `[schedule]`: `constant`, `linear` (from the optimizer's rate to `end_factor` times it over
/// the trial) or `cosine` (the same ends, half a cosine between).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScheduleConfig {
    /// `constant`, `linear` or `cosine`.
    pub kind: ScheduleKind,
    /// The rate at the last step as a fraction of the initial one.
    pub end_factor: f64,
}

/// The shape of a schedule: what `schedule.kind` deserializes into (an unknown name is an
/// error at its value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleKind {
    /// The optimizer's rate throughout.
    Constant,
    /// A straight line to `end_factor` times it.
    Linear,
    /// Half a cosine to `end_factor` times it.
    Cosine,
}

impl ScheduleKind {
    const ALL: [ScheduleKind; 3] = [
        ScheduleKind::Constant,
        ScheduleKind::Linear,
        ScheduleKind::Cosine,
    ];

    /// The name configs spell it with.
    pub fn name(self) -> &'static str {
        match self {
            ScheduleKind::Constant => "constant",
            ScheduleKind::Linear => "linear",
            ScheduleKind::Cosine => "cosine",
        }
    }
}

crate::word_serde!(ScheduleKind, name, ScheduleKind::ALL, |word| format!(
    "expected constant, linear or cosine, got {word:?}"
));

impl Default for ScheduleConfig {
    fn default() -> Self {
        // The seeds used none.
        Self {
            kind: ScheduleKind::Constant,
            end_factor: 0.0,
        }
    }
}

impl ScheduleConfig {
    /// The learning rate at `step` (0-based) of `total`, starting from `initial`.
    pub fn rate(&self, initial: f64, step: u64, total: u64) -> f64 {
        let progress = if total <= 1 {
            0.0
        } else {
            step as f64 / (total - 1) as f64
        };
        let end = initial * self.end_factor;
        match self.kind {
            ScheduleKind::Linear => initial + (end - initial) * progress,
            ScheduleKind::Cosine => {
                end + (initial - end) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
            ScheduleKind::Constant => initial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_start_at_the_rate_and_end_at_the_factor() {
        let linear = ScheduleConfig {
            kind: ScheduleKind::Linear,
            end_factor: 0.1,
        };
        assert_eq!(linear.rate(1.0, 0, 11), 1.0);
        assert!((linear.rate(1.0, 10, 11) - 0.1).abs() < 1e-12);
        assert!((linear.rate(1.0, 5, 11) - 0.55).abs() < 1e-12);
        let cosine = ScheduleConfig {
            kind: ScheduleKind::Cosine,
            end_factor: 0.0,
        };
        assert!((cosine.rate(2.0, 5, 11) - 1.0).abs() < 1e-12);
        assert_eq!(ScheduleConfig::default().rate(0.3, 7, 10), 0.3);
    }
}
