//! The [`Number`] type: an exact JSON number.

use std::fmt;

/// A JSON number that is always finite and always held exactly.
///
/// Internally a number is one of three representations:
///
/// * a non-negative integer (`u64`),
/// * a negative integer (`i64`, always `< 0`),
/// * a finite binary64 float.
///
/// Every constructor enforces these invariants:
///
/// * a float is finite and never `-0.0`;
/// * a float is never an integral value that an `i64` or `u64` can hold: such
///   values are stored as integers instead, so `2.0` and `1e2` become the
///   integers `2` and `100`, while `1e300` stays a float.
///
/// Because of this normalisation, structural equality is numeric equality:
/// two `Number`s compare equal exactly when they denote the same real number.
#[derive(Clone, Copy)]
pub struct Number(pub(crate) N);

/// How a [`Number`] is held (see [`Number::repr`]).
pub type NumberRepr = N;

/// How a [`Number`] is held (see [`Number::repr`]): exactly one representation per value.
#[derive(Clone, Copy, Debug, PartialEq)]
// Exhaustive on purpose: every finite JSON number is exactly one of these.
pub enum N {
    /// `0..=u64::MAX`.
    PosInt(u64),
    /// `i64::MIN..=-1`.
    NegInt(i64),
    /// Finite, not `-0.0`, not an integral value in `i64::MIN..=u64::MAX`.
    Float(f64),
}

/// `2^64` as an `f64` (exact).
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
/// `-2^63` as an `f64` (exact).
const NEG_TWO_POW_63: f64 = -9_223_372_036_854_775_808.0;

impl Number {
    /// The representation of this number: a non-negative integer, a negative integer, or a
    /// float that no 64-bit integer can hold. Each value has exactly one.
    #[inline]
    pub fn repr(&self) -> NumberRepr {
        self.0
    }

    /// Builds a number from an `f64`.
    ///
    /// Returns `None` for NaN, for `±Infinity`, and for `-0.0`. Negative zero
    /// is rejected rather than folded into `0` because JSON text cannot carry it
    /// losslessly (the parser rejects `-0` in argument text, see the crate docs), so
    /// silently turning it into `0` would change the caller's data.
    ///
    /// Integral values that fit an `i64` or `u64` are stored as integers.
    pub fn from_f64(f: f64) -> Option<Number> {
        if !f.is_finite() {
            return None;
        }
        if f == 0.0 {
            return if f.is_sign_negative() {
                None
            } else {
                Some(Number(N::PosInt(0)))
            };
        }
        Some(Number(Self::normalise_finite(f)))
    }

    /// Normalises a finite, non-zero float into the canonical representation.
    #[inline]
    pub(crate) fn normalise_finite(f: f64) -> N {
        // Truncating casts plus a comparison detect integral values without
        // a (possibly out-of-line) `trunc` call.
        if (0.0..TWO_POW_64).contains(&f) {
            let u = f as u64;
            if u as f64 == f {
                return N::PosInt(u);
            }
        } else if (NEG_TWO_POW_63..0.0).contains(&f) {
            let i = f as i64;
            if i as f64 == f {
                return N::NegInt(i);
            }
        }
        N::Float(f)
    }

    /// Builds a number from an `i128`, or `None` if it is outside
    /// `i64::MIN..=u64::MAX` (such integers are not held exactly by any
    /// [`Number`] representation).
    pub fn from_i128(i: i128) -> Option<Number> {
        if i >= 0 {
            u64::try_from(i).ok().map(Number::from)
        } else {
            i64::try_from(i).ok().map(Number::from)
        }
    }

    /// Builds a number from a `u128`, or `None` if it is larger than `u64::MAX`.
    pub fn from_u128(u: u128) -> Option<Number> {
        u64::try_from(u).ok().map(Number::from)
    }

    /// The value as a `u64`, if it is a non-negative integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            N::PosInt(u) => Some(u),
            N::NegInt(_) | N::Float(_) => None,
        }
    }

    /// The value as an `i64`, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            N::PosInt(u) => i64::try_from(u).ok(),
            N::NegInt(i) => Some(i),
            N::Float(_) => None,
        }
    }

    /// The value as an `f64`.
    ///
    /// Always `Some` (every `Number` is finite). Integers beyond `2^53` are
    /// rounded to the nearest `f64`, as with an `as` cast.
    pub fn as_f64(&self) -> Option<f64> {
        Some(match self.0 {
            N::PosInt(u) => u as f64,
            N::NegInt(i) => i as f64,
            N::Float(f) => f,
        })
    }

    /// Whether the number is integral: true for every integer representation
    /// and also for integral floats outside the 64-bit range, such as `1e300`.
    pub fn is_integer(&self) -> bool {
        match self.0 {
            N::PosInt(_) | N::NegInt(_) => true,
            N::Float(f) => f.fract() == 0.0,
        }
    }

    /// Whether the number is held as a float (it is not an integer that fits
    /// `i64` or `u64`).
    pub fn is_f64(&self) -> bool {
        matches!(self.0, N::Float(_))
    }

    /// Whether the number is held as a `u64`.
    pub fn is_u64(&self) -> bool {
        matches!(self.0, N::PosInt(_))
    }

    /// Whether the number is held as an `i64` (it is an integer that fits).
    pub fn is_i64(&self) -> bool {
        self.as_i64().is_some()
    }

    /// Writes the JSON text of this number into `out`.
    pub(crate) fn write_to(&self, out: &mut impl fmt::Write) -> fmt::Result {
        match self.0 {
            N::PosInt(u) => out.write_str(itoa::Buffer::new().format(u)),
            N::NegInt(i) => out.write_str(itoa::Buffer::new().format(i)),
            N::Float(f) => write_float(out, f),
        }
    }
}

/// Writes a finite float in the same form as `serde_json`: the shortest
/// round-trip digits, with an explicit `+` on positive exponents (`1e+300`).
pub(crate) fn write_float(out: &mut impl fmt::Write, f: f64) -> fmt::Result {
    let mut buf = ryu::Buffer::new();
    let s = buf.format_finite(f);
    // An exponent has at most three digits, so any `e` is near the end.
    let tail = s.len().saturating_sub(5);
    match s.as_bytes()[tail..].iter().position(|&b| b == b'e') {
        Some(p) if s.as_bytes().get(tail + p + 1) != Some(&b'-') => {
            let pos = tail + p;
            out.write_str(&s[..=pos])?;
            out.write_char('+')?;
            out.write_str(&s[pos + 1..])
        }
        _ => out.write_str(s),
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        match (self.0, other.0) {
            (N::PosInt(a), N::PosInt(b)) => a == b,
            (N::NegInt(a), N::NegInt(b)) => a == b,
            (N::Float(a), N::Float(b)) => a == b,
            // The invariants make the representations disjoint.
            _ => false,
        }
    }
}

impl Eq for Number {}

impl std::hash::Hash for Number {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self.0 {
            N::PosInt(u) => {
                0u8.hash(state);
                u.hash(state);
            }
            N::NegInt(i) => {
                1u8.hash(state);
                i.hash(state);
            }
            N::Float(f) => {
                2u8.hash(state);
                // Finite and never -0.0, so bit equality is value equality.
                f.to_bits().hash(state);
            }
        }
    }
}

impl fmt::Display for Number {
    /// Writes the number as JSON text (`1`, `-7`, `0.5`, `1e+300`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_to(f)
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Number(")?;
        self.write_to(f)?;
        f.write_str(")")
    }
}

macro_rules! from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            /// Exact conversion from the integer.
            fn from(u: $t) -> Number {
                Number(N::PosInt(u as u64))
            }
        }
    )*};
}

macro_rules! from_signed {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            /// Exact conversion from the integer.
            fn from(i: $t) -> Number {
                let i = i as i64;
                if i < 0 {
                    Number(N::NegInt(i))
                } else {
                    Number(N::PosInt(i as u64))
                }
            }
        }
    )*};
}

from_unsigned!(u8, u16, u32, u64, usize);
from_signed!(i8, i16, i32, i64, isize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_f64_normalises() {
        assert!(Number::from_f64(2.0).is_some_and(|n| n.as_u64() == Some(2)));
        assert!(Number::from_f64(-3.0).is_some_and(|n| n.as_i64() == Some(-3)));
        assert!(Number::from_f64(0.0).is_some_and(|n| n.as_u64() == Some(0)));
        assert!(Number::from_f64(-0.0).is_none());
        assert!(Number::from_f64(f64::NAN).is_none());
        assert!(Number::from_f64(f64::INFINITY).is_none());
        assert!(Number::from_f64(f64::NEG_INFINITY).is_none());
        let big = Number::from_f64(1e300).unwrap();
        assert!(big.is_f64());
        assert!(big.is_integer());
        assert_eq!(big.to_string(), "1e+300");
        let edge = Number::from_f64(TWO_POW_64).unwrap();
        assert!(edge.is_f64());
        let max = Number::from_f64(18_446_744_073_709_549_568.0).unwrap();
        assert_eq!(max.as_u64(), Some(18_446_744_073_709_549_568));
        let min = Number::from_f64(NEG_TWO_POW_63).unwrap();
        assert_eq!(min.as_i64(), Some(i64::MIN));
        assert!(Number::from_f64(NEG_TWO_POW_63 * 2.0).unwrap().is_f64());
    }

    #[test]
    fn accessors() {
        let n = Number::from(u64::MAX);
        assert_eq!(n.as_u64(), Some(u64::MAX));
        assert_eq!(n.as_i64(), None);
        assert!(n.is_integer() && !n.is_f64());
        let n = Number::from(-5i32);
        assert_eq!(n.as_u64(), None);
        assert_eq!(n.as_i64(), Some(-5));
        assert_eq!(n.as_f64(), Some(-5.0));
        let n = Number::from_f64(0.5).unwrap();
        assert_eq!(n.as_f64(), Some(0.5));
        assert!(!n.is_integer());
        assert_eq!(n.to_string(), "0.5");
        assert_eq!(format!("{n:?}"), "Number(0.5)");
        assert_eq!(Number::from_i128(-1).and_then(|n| n.as_i64()), Some(-1));
        assert!(Number::from_i128(i128::from(u64::MAX) + 1).is_none());
        assert!(Number::from_i128(i128::from(i64::MIN) - 1).is_none());
        assert!(Number::from_u128(u128::from(u64::MAX)).is_some());
        assert!(Number::from_u128(u128::from(u64::MAX) + 1).is_none());
    }

    #[test]
    fn float_format_matches_serde_json() {
        for f in [
            1e300,
            1e-7,
            0.1,
            1.5,
            -2.5e-300,
            1e16 + 0.0,
            1.7976931348623157e308,
            5e-324,
            123.456,
        ] {
            let n = Number::from_f64(f).unwrap();
            let expected = serde_json::to_string(&f).unwrap();
            if n.is_f64() {
                assert_eq!(n.to_string(), expected, "{f:e}");
            }
        }
    }
}
