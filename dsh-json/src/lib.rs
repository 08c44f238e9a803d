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
//! A [`SharedValue`] value (`Arc<Value>`) is the shared, immutable snapshot.
//!
//! # What the parser rejects, and why
//!
//! A tool call's arguments are a record of what the model asked for; the snapshot must be
//! exactly that record, so anything the text says that a [`Value`] could not hold exactly
//! is an error with its path and position ([`ParseErrorKind`]), never a silent change:
//!
//! | input | why it is refused |
//! | --- | --- |
//! | a duplicate key (`{"a":1,"a":2}`) | JSON parsers disagree on which one wins (JavaScript keeps the last, some keep the first): the tool and the log could see different arguments |
//! | `-0` (and `-0.0`, `-0e5`) | JSON has no negative zero: JavaScript's `JSON.stringify(-0)` writes `0`, so the value cannot round-trip |
//! | a number no 64-bit integer or `f64` holds exactly (`12345678901234567890123`, `3.141592653589793238`) | it would be rounded, and the tool would act on a number the model never sent; integral literals that an `f64` holds exactly (`2.0`, `1e300`) are kept |
//! | nesting deeper than [`ParseOptions::max_depth`] (128 by default) | a bound on work and memory per call, and on the recursion of serde-based consumers |
//! | invalid escapes, lone surrogates (`"\ud800"`), invalid UTF-8, control characters in strings | the text is not valid JSON, or would not survive a round trip through UTF-8 |
//! | trailing characters after the value | the text is not one JSON value |
//!
//! `NaN` and infinities cannot be written in JSON text; [`Number::from_f64`] and
//! [`to_value`] refuse them (and `-0.0`) for values built in Rust.
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
mod str;
mod value;
mod write;

pub use de::{DeError, from_value};
pub use number::{Number, NumberRepr};
pub use parse::{ParseError, ParseErrorKind, ParseOptions, parse, parse_slice, parse_with};
pub use ser::{LosslessError, LosslessErrorKind, to_value};
pub use serde_json_bridge::{from_serde, to_serde};
pub use str::Str;
pub use value::{Array, Object, ObjectIter, SharedValue, Value};
pub use write::{write_json_string, write_value};

#[doc(hidden)]
/// Not public API: what `dsh-runtime`'s generated code needs.
pub mod __private {
    pub use crate::de::MissingField;
    pub use crate::str::text_eq;
}
