//! The one way an enum spelled as a word in configs and files is written and read.

/// Serde for an enum spelled as one word in configs and files: written as `self.$name()`, read
/// back from it; any other word is an error at its value, worded by `$expected(word)`.
#[macro_export]
macro_rules! word_serde {
    ($ty:ty, $name:ident, $all:expr, $expected:expr) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.$name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let word = <String as serde::Deserialize>::deserialize(d)?;
                let expected: fn(&str) -> String = $expected;
                $all.into_iter()
                    .find(|v: &$ty| v.$name() == word)
                    .ok_or_else(|| serde::de::Error::custom(expected(&word)))
            }
        }
    };
}
