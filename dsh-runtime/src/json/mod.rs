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
pub use number::Number;
pub use parse::{ParseError, ParseErrorKind, ParseOptions, parse, parse_slice, parse_with};
pub use ser::{LosslessError, LosslessErrorKind, to_value};
pub use serde_json_bridge::{from_serde, to_serde};
pub use value::{Array, Frozen, Object, ObjectIter, Value};
