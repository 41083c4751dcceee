//! `grid.eval_batch_size`: the batch size of evaluation passes, a number of examples or
//! `"train"` (each trial's own training batch size).
//!
//! A fixed size keeps the test time of every trial the same by construction; Raschka's loaders
//! (seed 002) evaluate at the training batch size, which is what makes his inference column a
//! measurement of the batch size at all.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The batch size of evaluation passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalBatchSize {
    /// This many examples per pass, whatever the training batch size.
    Examples(usize),
    /// The trial's training batch size.
    Train,
}

impl Default for EvalBatchSize {
    fn default() -> Self {
        EvalBatchSize::Examples(256)
    }
}

impl EvalBatchSize {
    /// The batch size of a trial training at `train_batch`.
    pub fn for_trial(self, train_batch: usize) -> usize {
        match self {
            EvalBatchSize::Examples(n) => n,
            EvalBatchSize::Train => train_batch,
        }
    }

    /// Whether a fixed size is 0 (never valid).
    pub fn is_zero(self) -> bool {
        self == EvalBatchSize::Examples(0)
    }
}

impl Serialize for EvalBatchSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            EvalBatchSize::Examples(n) => s.serialize_u64(*n as u64),
            EvalBatchSize::Train => s.serialize_str("train"),
        }
    }
}

impl<'de> Deserialize<'de> for EvalBatchSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = EvalBatchSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a batch size (a whole number of examples) or \"train\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                usize::try_from(v)
                    .map(EvalBatchSize::Examples)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                usize::try_from(v)
                    .map(EvalBatchSize::Examples)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "train" => Ok(EvalBatchSize::Train),
                    _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Serialize)]
    struct T {
        e: EvalBatchSize,
    }

    #[test]
    fn a_number_or_train_and_nothing_else() {
        let t: T = toml::from_str("e = 512").unwrap();
        assert_eq!(t.e, EvalBatchSize::Examples(512));
        assert_eq!(t.e.for_trial(16), 512);
        let t: T = toml::from_str("e = \"train\"").unwrap();
        assert_eq!(t.e.for_trial(16), 16);
        assert_eq!(toml::to_string(&t).unwrap().trim(), "e = \"train\"");
        for bad in ["e = \"test\"", "e = -1", "e = 1.5"] {
            let err = toml::from_str::<T>(bad).err().expect(bad).to_string();
            assert!(
                err.contains("a batch size (a whole number of examples) or \"train\""),
                "{err}"
            );
        }
    }
}
