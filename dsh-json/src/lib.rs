//! Lossless JSON: an exact, immutable-once-frozen JSON value type, an
//! iterative parser that rejects anything it cannot hold exactly, and bridges
//! to `serde` and `serde_json`.
//!
//! # Why not `serde_json::Value`?
//!
//! Tool arguments and results must be snapshotted losslessly (no `NaN`, no
//! infinities, no `-0`, no silently rounded numbers, no duplicate keys) and
//! handled without recursion at any depth. [`Value`] guarantees all of that:
//!
//! * [`Number`] is always finite, never `-0`, and exact;
//! * [`Object`] keeps insertion order and unique keys;
//! * dropping, cloning, comparing and printing a [`Value`] use explicit
//!   stacks, so deep values cannot overflow the thread stack;
//! * [`parse`] is iterative too, with a configurable depth limit
//!   ([`ParseOptions::max_depth`], default 128).
//!
//! A [`Frozen`] value (`Arc<Value>`) is the shared, immutable snapshot.
//!
//! # Example
//!
//! ```
//! use dsh_json::{self as json, ParseErrorKind, Value};
//!
//! let v = json::parse(r#"{"b": [1, 2.0, 0.5, "x"], "a": null}"#).unwrap();
//! assert_eq!(v["b"][1].as_u64(), Some(2)); // integral floats are integers
//! assert_eq!(v["b"][2].as_f64(), Some(0.5));
//! // Compact output, keys in insertion order.
//! assert_eq!(v.to_string(), r#"{"b":[1,2,0.5,"x"],"a":null}"#);
//!
//! let err = json::parse(r#"{"x": -0}"#).unwrap_err();
//! assert_eq!(err.kind(), &ParseErrorKind::NegativeZero);
//! assert_eq!(
//!     err.to_string(),
//!     "-0 is not allowed (JSON has no negative zero) at arguments.x (line 1, column 7)"
//! );
//! ```
//!
//! # Text output
//!
//! `Display` writes compact JSON exactly as `serde_json::to_string` does for
//! the same data: the same string escapes, integers in decimal, and floats in
//! their shortest round-trip form with `serde_json`'s exponent style
//! (`0.1`, `1e-7`, `1e+300`). `Debug` writes the same text.
//!
//! # Recursion
//!
//! The `serde` integrations ([`from_value`], [`Value`]'s `Serialize` and
//! `Deserialize` impls, [`to_value`]) follow serde's recursive design: they
//! recurse once per nesting level of the data. Values produced by [`parse`]
//! with the default options are at most 128 levels deep, which is safe on any
//! ordinary thread stack. [`to_serde`] and [`from_serde`] are iterative, but
//! note that dropping a deep `serde_json::Value` recurses.

#![deny(missing_docs)]

mod de;
mod keys;
mod number;
mod parse;
pub mod path;
mod ser;
mod serde_json_bridge;
mod value;
mod write;

pub use de::{DeError, from_value};
pub use number::{Number, NumberRepr};
pub use parse::{ParseError, ParseErrorKind, ParseOptions, parse, parse_slice, parse_with};
pub use ser::{LosslessError, LosslessErrorKind, to_value};
pub use serde_json_bridge::{from_serde, to_serde};
pub use value::{Array, Frozen, Object, ObjectIter, Value};
pub use write::{write_json_string, write_value};

#[doc(hidden)]
/// Not public API: what `dsh-runtime`'s generated code needs.
pub mod __private {
    pub use crate::de::MissingField;
}
