//! `ToolSchema` for std types.
//!
//! Each schema states exactly what the type's serde implementation accepts:
//!
//! - integers enforce their range as `minimum`/`maximum` (`i128` and `u128` the part a
//!   snapshot can hold exactly: `i64::MIN..=u64::MAX`, `0..=u64::MAX`). A bound is
//!   published only when it informs: bounds within ±2^53 (the integers every JSON
//!   consumer, JavaScript included, holds exactly) are published, wider ones are hidden
//!   ([`HiddenBounds`](super::HiddenBounds)) but still enforced. So `u8`..`u32`,
//!   `i8`..`i32` publish both bounds, `u64`/`usize` only `minimum: 0`, `i64` none;
//! - `f32` enforces its finite range without publishing it, `f64` is unbounded;
//! - `char` is a string of exactly one Unicode scalar value;
//! - `Option<T>` as an object property is `T` and not required; elsewhere (array items,
//!   an output root) it is `oneOf [T, null]`, or just `T` when `T` already admits `null`;
//! - sets (`BTreeSet`, `HashSet`) are arrays: duplicate items are accepted and collapse
//!   into one element, as serde does;
//! - `[T; N]` is an array of exactly `N` items;
//! - maps with `String` keys are objects whose undeclared keys must match the value schema;
//! - `serde_json::Value` and [`crate::json::Value`] are any JSON, `serde_json::Map` any
//!   JSON object.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use super::portable::{Facts, feature, root};
use super::{Additional, Schema, ToolSchema};

/// The facts of an integer type's schema: a number, bounded when a bound is published.
const fn int_facts(min: i128, max: i128) -> Facts {
    let f = Facts::of(root::NUMBER);
    if super::portable::informative_int(min) || super::portable::informative_int(max) {
        f.bounded()
    } else {
        f
    }
}

/// The largest magnitude whose bound is published (2^53, beyond which a JSON number read
/// as a double is no longer exact).
const PUBLISHED_MAGNITUDE: i128 = 1 << 53;

/// An integer type's range, wide bounds hidden (see the module docs).
fn type_range(min: i128, max: i128) -> Schema {
    Schema::integer_range(Some(min), Some(max))
        .with_hidden_bounds(min < -PUBLISHED_MAGNITUDE, max > PUBLISHED_MAGNITUDE)
}

macro_rules! int_impls {
    ($($t:ty => $min:expr, $max:expr;)*) => {$(
        impl ToolSchema for $t {
            const PORTABILITY: Facts = int_facts($min, $max);

            fn build_schema() -> Schema {
                type_range($min, $max)
            }
        }
    )*};
}

int_impls! {
    u8 => 0, u8::MAX as i128;
    u16 => 0, u16::MAX as i128;
    u32 => 0, u32::MAX as i128;
    u64 => 0, u64::MAX as i128;
    usize => 0, usize::MAX as i128;
    u128 => 0, u64::MAX as i128;
    i8 => i8::MIN as i128, i8::MAX as i128;
    i16 => i16::MIN as i128, i16::MAX as i128;
    i32 => i32::MIN as i128, i32::MAX as i128;
    i64 => i64::MIN as i128, i64::MAX as i128;
    isize => isize::MIN as i128, isize::MAX as i128;
    i128 => i64::MIN as i128, u64::MAX as i128;
}

macro_rules! nonzero_impls {
    ($($t:ty => $min:expr, $max:expr;)*) => {$(
        impl ToolSchema for $t {
            const PORTABILITY: Facts = int_facts($min, $max);

            fn build_schema() -> Schema {
                type_range($min, $max)
            }
        }
    )*};
}

nonzero_impls! {
    std::num::NonZeroU8 => 1, u8::MAX as i128;
    std::num::NonZeroU16 => 1, u16::MAX as i128;
    std::num::NonZeroU32 => 1, u32::MAX as i128;
    std::num::NonZeroU64 => 1, u64::MAX as i128;
    std::num::NonZeroUsize => 1, usize::MAX as i128;
}

impl ToolSchema for f64 {
    const PORTABILITY: Facts = Facts::of(root::NUMBER);

    fn build_schema() -> Schema {
        Schema::number()
    }
}

impl ToolSchema for f32 {
    // The export publishes the finite range (the hidden-bounds flag is read by the
    // registry's own projection only).
    const PORTABILITY: Facts = Facts::of(root::NUMBER).bounded();

    fn build_schema() -> Schema {
        Schema::number_range(Some(f32::MIN as f64), Some(f32::MAX as f64))
            .with_hidden_bounds(true, true)
    }
}

impl ToolSchema for bool {
    const PORTABILITY: Facts = Facts::PLAIN;

    fn build_schema() -> Schema {
        Schema::boolean()
    }
}

impl ToolSchema for () {
    const PORTABILITY: Facts = Facts::PLAIN;

    fn build_schema() -> Schema {
        Schema::null()
    }
}

impl ToolSchema for char {
    const PORTABILITY: Facts = Facts::of(root::STRING).with(feature::STRING_LENGTH);

    fn build_schema() -> Schema {
        Schema::string().with_length(Some(1), Some(1))
    }
}

macro_rules! string_impls {
    ($($t:ty),*) => {$(
        impl ToolSchema for $t {
            const PORTABILITY: Facts = Facts::of(root::STRING);

            fn build_schema() -> Schema {
                Schema::string()
            }
        }
    )*};
}

string_impls!(
    String,
    Box<str>,
    Arc<str>,
    Rc<str>,
    Cow<'static, str>,
    PathBuf
);

impl<T: ToolSchema + 'static> ToolSchema for Option<T> {
    const OPTIONAL: bool = true;
    const PORTABILITY: Facts = Facts::nullable(T::PORTABILITY);
    const PROPERTY_PORTABILITY: Facts = T::PORTABILITY;

    fn build_schema() -> Schema {
        let inner = T::schema();
        if inner.admits_null() {
            (*inner).clone()
        } else {
            Schema::one_of(vec![inner, Arc::new(Schema::null())])
        }
    }

    fn property_schema() -> Arc<Schema> {
        T::schema()
    }
}

macro_rules! pointer_impls {
    ($($p:ident),*) => {$(
        impl<T: ToolSchema + ?Sized + 'static> ToolSchema for $p<T> {
            const OPTIONAL: bool = T::OPTIONAL;
            const PORTABILITY: Facts = T::PORTABILITY;
            const PROPERTY_PORTABILITY: Facts = T::PROPERTY_PORTABILITY;

            fn build_schema() -> Schema {
                (*T::schema()).clone()
            }

            fn property_schema() -> Arc<Schema> {
                T::property_schema()
            }
        }
    )*};
}

pointer_impls!(Box, Arc, Rc);

macro_rules! seq_impls {
    ($($t:ident $(<$extra:ident>)?),*) => {$(
        impl<T: ToolSchema + 'static $(, $extra: 'static)?> ToolSchema for $t<T $(, $extra)?> {
            const PORTABILITY: Facts = Facts::array(T::PORTABILITY);

            fn build_schema() -> Schema {
                Schema::array(Some(T::schema()))
            }
        }
    )*};
}

seq_impls!(Vec, VecDeque, BTreeSet, HashSet<S>);

impl<T: ToolSchema + 'static, const N: usize> ToolSchema for [T; N] {
    const PORTABILITY: Facts = Facts::array(T::PORTABILITY).with(feature::ITEMS_BOUND);

    fn build_schema() -> Schema {
        let n = N as u64;
        Schema::array(Some(T::schema())).with_length(Some(n), Some(n))
    }
}

impl<T: ToolSchema + 'static> ToolSchema for BTreeMap<String, T> {
    const PORTABILITY: Facts = Facts::map(T::PORTABILITY);

    fn build_schema() -> Schema {
        Schema::object(Vec::new(), Additional::Schema(T::schema()))
    }
}

impl<T: ToolSchema + 'static, S: 'static> ToolSchema for HashMap<String, T, S> {
    const PORTABILITY: Facts = Facts::map(T::PORTABILITY);

    fn build_schema() -> Schema {
        Schema::object(Vec::new(), Additional::Schema(T::schema()))
    }
}

impl ToolSchema for serde_json::Value {
    const PORTABILITY: Facts = Facts::PLAIN.with(feature::ANY_JSON);

    fn build_schema() -> Schema {
        Schema::json()
    }
}

impl ToolSchema for serde_json::Map<String, serde_json::Value> {
    const PORTABILITY: Facts = Facts::object(0, true);

    fn build_schema() -> Schema {
        Schema::object(Vec::new(), Additional::Open)
    }
}

impl ToolSchema for crate::json::Value {
    const PORTABILITY: Facts = Facts::PLAIN.with(feature::ANY_JSON);

    fn build_schema() -> Schema {
        Schema::json()
    }
}

impl ToolSchema for crate::json::Object {
    const PORTABILITY: Facts = Facts::object(0, true);

    fn build_schema() -> Schema {
        Schema::object(Vec::new(), Additional::Open)
    }
}
