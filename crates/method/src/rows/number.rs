//! How numbers of a row are written and read: `{}` of an f64 (the shortest text that parses
//! back to the same value), and the empty field of a value not measured.

use serde::{Deserialize, Deserializer, Serializer};

/// Writes `v` as `{}` does.
pub(crate) fn shortest<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Writes `v` as `{}` does; `None` and non-finite values as an empty field.
pub(crate) fn finite_or_empty<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v.filter(|v| v.is_finite()) {
        Some(v) => s.collect_str(&v),
        None => s.serialize_none(),
    }
}

/// Reads a number; an empty field reads as NaN (not measured).
pub(crate) fn nan_if_empty<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
