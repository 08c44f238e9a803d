//! Generators for the `execute` and `validate` bodies: schemas from the whole vocabulary
//! and values that mostly conform to them (so an input gets past the first violation),
//! driven by the input bytes through `arbitrary::Unstructured`.

use std::sync::Arc;

use arbitrary::{Result, Unstructured};
use dsh_runtime::json::{Number, Object, Value};
use dsh_runtime::schema::{Additional, Kind, Pattern, Property, Schema};

/// Property names: identifiers and keys that need quoting in paths.
pub const NAMES: [&str; 6] = ["a", "b", "items", "x y", "n", ""];

/// Patterns whose meaning is the same in ECMA-262 (the oracle) and in ours.
pub const PATTERNS: [&str; 6] = ["^[a-z]+$", "ab", "^x", "[0-9]{2}", r"^\d+$", r"\bx"];

/// Short strings that hit enums, consts, patterns and names.
const STRINGS: [&str; 8] = ["", "x", "ab", "fast", "12", "a b", "٣", "xyz"];

/// A schema of at most `depth` levels that passes `Schema::check`.
pub fn schema(u: &mut Unstructured<'_>, depth: u32) -> Result<Schema> {
    let leaf = depth == 0 || u.ratio(1, 2)?;
    if leaf {
        return leaf_schema(u);
    }
    Ok(match u.int_in_range(0..=2)? {
        0 => {
            let items = if u.arbitrary()? {
                Some(Arc::new(schema(u, depth - 1)?))
            } else {
                None
            };
            let (min, max) = ordered(opt_u64(u, 3)?, opt_u64(u, 4)?);
            Schema::array(items).with_length(min, max)
        }
        1 => {
            let n = u.int_in_range(0..=4)?;
            let mut properties = Vec::new();
            for name in NAMES.iter().take(n) {
                properties.push(Property::new(*name, schema(u, depth - 1)?, u.arbitrary()?));
            }
            let additional = match u.int_in_range(0..=2)? {
                0 => Additional::Closed,
                1 => Additional::Open,
                _ => Additional::Schema(Arc::new(schema(u, depth - 1)?)),
            };
            Schema::object(properties, additional)
        }
        _ => {
            let n = u.int_in_range(2..=3)?;
            let mut branches = Vec::new();
            for _ in 0..n {
                branches.push(Arc::new(schema(u, depth - 1)?));
            }
            Schema::one_of(branches)
        }
    })
}

fn leaf_schema(u: &mut Unstructured<'_>) -> Result<Schema> {
    Ok(match u.int_in_range(0..=10)? {
        0 => {
            let (min, max) = ordered(opt_u64(u, 4)?, opt_u64(u, 6)?);
            let mut s = Schema::string().with_length(min, max);
            if u.arbitrary()? {
                let p = *u.choose(&PATTERNS)?;
                s = s.with_pattern(Pattern::new(p).map_err(|_| arbitrary::Error::IncorrectFormat)?);
            }
            s
        }
        1 => {
            let a = opt_i64(u)?;
            let b = opt_i64(u)?;
            let (a, b) = ordered(a, b);
            Schema::integer_range(a.map(i128::from), b.map(i128::from))
        }
        2 => {
            let a = opt_i64(u)?.map(|i| i as f64 / 4.0);
            let b = opt_i64(u)?.map(|i| i as f64 / 4.0);
            let (a, b) = ordered(a, b);
            Schema::number_range(a, b)
        }
        3 => Schema::boolean(),
        4 => Schema::null(),
        5 | 6 => Schema::json(),
        7 => Schema::string_enum(["fast", "slow", "x"]),
        8 => Schema::integer().with_enum(vec![Value::from(1u64), Value::from(-3i64)]),
        9 => Schema::string_const("x"),
        _ => Schema::boolean().with_const(Value::Bool(true)),
    })
}

fn ordered<T: PartialOrd>(a: Option<T>, b: Option<T>) -> (Option<T>, Option<T>) {
    match (a, b) {
        (Some(x), Some(y)) if x > y => (Some(y), Some(x)),
        other => other,
    }
}

fn opt_u64(u: &mut Unstructured<'_>, max: u64) -> Result<Option<u64>> {
    Ok(if u.arbitrary()? {
        Some(u.int_in_range(0..=max)?)
    } else {
        None
    })
}

fn opt_i64(u: &mut Unstructured<'_>) -> Result<Option<i64>> {
    Ok(if u.arbitrary()? {
        Some(u.int_in_range(-50..=50)?)
    } else {
        None
    })
}

/// Any small JSON value.
pub fn any_value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let top = if depth == 0 { 5 } else { 7 };
    Ok(match u.int_in_range(0..=top)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(u.int_in_range(-60i64..=60)?),
        3 => {
            let f = f64::from(u.int_in_range(-240i32..=240)?) / 8.0;
            Value::Number(Number::from_f64(f).unwrap_or(Number::from(0u8)))
        }
        4 => Value::from(*u.choose(&STRINGS)?),
        5 => Value::from(u.arbitrary::<String>()?),
        6 => {
            let n = u.int_in_range(0..=3)?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(any_value(u, depth - 1)?);
            }
            Value::from(items)
        }
        _ => {
            let n = u.int_in_range(0..=3)?;
            let mut o = Object::new();
            for _ in 0..n {
                let k = *u.choose(&NAMES)?;
                o.insert(k, any_value(u, depth - 1)?);
            }
            Value::Object(o)
        }
    })
}

/// A value that conforms to `schema` most of the time, with near-misses mixed in.
pub fn value_for(u: &mut Unstructured<'_>, schema: &Schema, depth: u32) -> Result<Value> {
    if depth == 0 || u.ratio(1, 8)? {
        return any_value(u, depth.min(2));
    }
    if let Some(values) = &schema.enum_values {
        return Ok(u.choose(values)?.clone());
    }
    if let Some(c) = &schema.const_value {
        return Ok(c.clone());
    }
    Ok(match &schema.kind {
        Kind::String(_) => Value::from(*u.choose(&STRINGS)?),
        Kind::Integer(r) => {
            let lo = r.minimum.map_or(-60, |m| m as i64);
            let hi = r.maximum.map_or(60, |m| m as i64);
            Value::from(u.int_in_range(lo..=hi.max(lo))?)
        }
        Kind::Number(r) => {
            let lo = r.minimum.unwrap_or(-60.0);
            let hi = r.maximum.unwrap_or(60.0).max(lo);
            let t = f64::from(u.int_in_range(0u8..=16)?) / 16.0;
            let f = lo + (hi - lo) * t;
            Value::Number(Number::from_f64(f).unwrap_or(Number::from(0u8)))
        }
        Kind::Boolean => Value::Bool(u.arbitrary()?),
        Kind::Null => Value::Null,
        Kind::Json => any_value(u, depth.min(2))?,
        Kind::OneOf(branches) => {
            let b = u.choose(branches)?;
            value_for(u, b, depth - 1)?
        }
        Kind::Array(r) => {
            let min = r.min_items.unwrap_or(0);
            let max = r.max_items.unwrap_or(min + 3).max(min);
            let n = u.int_in_range(min..=max)?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(match &r.items {
                    Some(s) => value_for(u, s, depth - 1)?,
                    None => any_value(u, 1)?,
                });
            }
            Value::from(items)
        }
        Kind::Object(r) => {
            let mut o = Object::new();
            for p in &r.properties {
                if p.required || u.arbitrary()? {
                    o.insert(p.name.as_ref(), value_for(u, &p.schema, depth - 1)?);
                }
            }
            if u.ratio(1, 4)? {
                let extra = match &r.additional {
                    Additional::Schema(s) => value_for(u, s, depth - 1)?,
                    _ => any_value(u, 1)?,
                };
                o.insert("extra", extra);
            }
            Value::Object(o)
        }
    })
}

/// Whether `v` has, somewhere `schema` reaches, a `null` for a property that is not
/// required and whose schema does not admit `null`: the documented leniency where our
/// validator (on purpose) differs from a plain JSON Schema validator.
pub fn has_lenient_null(schema: &Schema, v: &Value) -> bool {
    match (&schema.kind, v) {
        (Kind::Object(r), Value::Object(o)) => {
            o.iter()
                .any(|(k, val)| match r.properties.iter().find(|p| p.name == k) {
                    Some(p) => {
                        (!p.required && val.is_null() && !p.schema.admits_null())
                            || has_lenient_null(&p.schema, val)
                    }
                    None => match &r.additional {
                        Additional::Schema(s) => has_lenient_null(s, val),
                        _ => false,
                    },
                })
        }
        (Kind::Array(r), Value::Array(a)) => r
            .items
            .as_ref()
            .is_some_and(|s| a.iter().any(|x| has_lenient_null(s, x))),
        (Kind::OneOf(b), _) => b.iter().any(|s| has_lenient_null(s, v)),
        _ => false,
    }
}
