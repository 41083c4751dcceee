//! `noise.csv`: the gradient noise scale measured during each trial of a steps-to-target study
//! (one row per measurement), for setting B_simple beside the measured B_crit.

use std::path::Path;

use crate::csv::{append_lines, quote, read_records, Fields};
use crate::ReportError;

/// The header of `noise.csv`, exactly.
pub const NOISE_HEADER: &str =
    "trial,workload,batch_size,step,b_small,b_big,g_small_sq,g_big_sq,b_simple";

/// One measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseRow {
    /// The trial's id.
    pub trial: String,
    /// `<model>/<optimizer>`.
    pub workload: String,
    /// The trial's batch size.
    pub batch_size: u32,
    /// Optimizer steps taken before the measurement.
    pub step: u64,
    /// Examples behind the small mean gradient (half the batch).
    pub b_small: u32,
    /// Examples behind the big mean gradient (the whole batch).
    pub b_big: u32,
    /// |G_small|^2.
    pub g_small_sq: f64,
    /// |G_big|^2.
    pub g_big_sq: f64,
    /// The trial's moving-average B_simple after this measurement (NaN until defined).
    pub b_simple: f64,
}

/// Appends `rows` to `path` as whole lines (creating it with [`NOISE_HEADER`]).
pub fn append_noise(path: &Path, rows: &[NoiseRow]) -> Result<(), ReportError> {
    let mut out = String::new();
    for r in rows {
        let fields = [
            quote(&r.trial),
            quote(&r.workload),
            r.batch_size.to_string(),
            r.step.to_string(),
            r.b_small.to_string(),
            r.b_big.to_string(),
            r.g_small_sq.to_string(),
            r.g_big_sq.to_string(),
            r.b_simple.to_string(),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    append_lines(path, NOISE_HEADER, &out)
}

/// Every complete row of a `noise.csv`, in file order.
pub fn read_noise(path: &Path) -> Result<Vec<NoiseRow>, ReportError> {
    read_records(path, NOISE_HEADER)?
        .iter()
        .map(|record| {
            let f = Fields::new(path, record, NOISE_HEADER);
            Ok(NoiseRow {
                trial: f.string(0),
                workload: f.string(1),
                batch_size: f.u32(2)?,
                step: f.u64(3)?,
                b_small: f.u32(4)?,
                b_big: f.u32(5)?,
                g_small_sq: f.f64(6)?,
                g_big_sq: f.f64(7)?,
                b_simple: f.f64(8)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_with_nan() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("noise.csv");
        let row = NoiseRow {
            trial: "mlp-sgd-b16-t0".into(),
            workload: "mlp/sgd".into(),
            batch_size: 16,
            step: 50,
            b_small: 8,
            b_big: 16,
            g_small_sq: 0.25,
            g_big_sq: 0.125,
            b_simple: f64::NAN,
        };
        let second = NoiseRow {
            b_simple: 12.5,
            step: 100,
            ..row.clone()
        };
        append_noise(&path, std::slice::from_ref(&row)).unwrap();
        append_noise(&path, std::slice::from_ref(&second)).unwrap();
        let back = read_noise(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert!(back[0].b_simple.is_nan());
        assert_eq!(back[1], second);
        assert_eq!(back[0].g_small_sq, row.g_small_sq);
    }
}
