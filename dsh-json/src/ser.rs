//! Serialization: `Serialize for Value` and [`to_value`], a lossless
//! `serde::Serializer` that builds a [`Value`].

use std::fmt;

use serde::ser::{self, Impossible, Serialize, SerializeMap as _, SerializeSeq as _, Serializer};

use super::keys::DupDetector;
use super::number::{N, Number};
use super::path::{self, Seg};
use super::str::Str;
use super::value::{Array, Object, Value};

/// Root label of the paths in [`LosslessError`] messages.
const ROOT: &str = "value";

// ---------------------------------------------------------------------------
// Serialize for the value types

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            N::PosInt(u) => s.serialize_u64(u),
            N::NegInt(i) => s.serialize_i64(i),
            N::Float(f) => s.serialize_f64(f),
        }
    }
}

impl Serialize for Value {
    /// Serializes like `serde_json::Value` does, objects in insertion order.
    /// Recurses once per nesting level.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(x) => s.serialize_str(x),
            Value::Array(a) => a.serialize(s),
            Value::Object(o) => o.serialize(s),
        }
    }
}

impl Serialize for Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for v in self.iter() {
            seq.serialize_element(v)?;
        }
        seq.end()
    }
}

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

// ---------------------------------------------------------------------------
// Errors

/// Why a value is not lossless JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LosslessErrorKind {
    /// A NaN or infinite float.
    NonFinite,
    /// A `-0.0` float.
    NegativeZero,
    /// A map key that is not a string, char, integer or unit variant.
    KeyMustBeString,
    /// The same key twice in one map (never resolved silently).
    DuplicateKey(String),
    /// A 128-bit integer (given) outside `i64::MIN..=u64::MAX`.
    IntegerOutOfRange(String),
    /// An error reported by a `Serialize` implementation.
    Custom(String),
}

impl fmt::Display for LosslessErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LosslessErrorKind::NonFinite => f.write_str("non-finite number"),
            LosslessErrorKind::NegativeZero => f.write_str("negative zero"),
            LosslessErrorKind::KeyMustBeString => {
                f.write_str("object key must be a string, char or integer")
            }
            LosslessErrorKind::DuplicateKey(k) => {
                f.write_str("duplicate key ")?;
                super::write::write_json_string(f, k)
            }
            LosslessErrorKind::IntegerOutOfRange(i) => {
                write!(f, "integer {i} does not fit in 64 bits")
            }
            LosslessErrorKind::Custom(msg) => f.write_str(msg),
        }
    }
}

/// A value that cannot be represented losslessly as a [`Value`].
///
/// Displays as `value is not lossless JSON: <reason> at <path>`, for example
/// `value is not lossless JSON: non-finite number at value.items[2].x`. Paths
/// are rooted at `value`.
#[derive(Clone, PartialEq, Eq)]
pub struct LosslessError(Box<LosslessInner>);

#[derive(Clone, PartialEq, Eq)]
struct LosslessInner {
    kind: LosslessErrorKind,
    path: String,
    /// Whether `path` has been filled in from the serializer's position.
    located: bool,
}

impl LosslessError {
    pub(crate) fn new(kind: LosslessErrorKind, path: String) -> LosslessError {
        LosslessError(Box::new(LosslessInner {
            kind,
            path,
            located: true,
        }))
    }

    /// Why the value is not lossless.
    pub fn kind(&self) -> &LosslessErrorKind {
        &self.0.kind
    }

    /// Path of the offending value, e.g. `value.items[2].x`.
    pub fn path(&self) -> &str {
        &self.0.path
    }

    /// Fills in the path if the error was raised without one (by a
    /// `Serialize` implementation).
    fn locate(mut self, segs: &[PathSeg]) -> LosslessError {
        if !self.0.located {
            self.0.path = render(segs);
            self.0.located = true;
        }
        self
    }
}

impl fmt::Display for LosslessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "value is not lossless JSON: {} at {}",
            self.0.kind, self.0.path
        )
    }
}

impl fmt::Debug for LosslessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LosslessError")
            .field("kind", &self.0.kind)
            .field("path", &self.0.path)
            .finish()
    }
}

impl std::error::Error for LosslessError {}

impl ser::Error for LosslessError {
    fn custom<T: fmt::Display>(msg: T) -> LosslessError {
        LosslessError(Box::new(LosslessInner {
            kind: LosslessErrorKind::Custom(msg.to_string()),
            path: ROOT.to_owned(),
            located: false,
        }))
    }
}

// ---------------------------------------------------------------------------
// Path tracking

enum PathSeg {
    Field(&'static str),
    Key(Box<str>),
    Index(usize),
}

fn render(segs: &[PathSeg]) -> String {
    path::render(
        ROOT,
        segs.iter().map(|s| match s {
            PathSeg::Field(f) => Seg::Key(f),
            PathSeg::Key(k) => Seg::Key(k),
            PathSeg::Index(i) => Seg::Index(*i),
        }),
    )
}

/// Serializes `value` at the child position `seg` of `path`.
fn serialize_child<T: Serialize + ?Sized>(
    path: &mut Vec<PathSeg>,
    seg: PathSeg,
    value: &T,
) -> (Result<Value, LosslessError>, PathSeg) {
    path.push(seg);
    let result = value
        .serialize(ValueSerializer { path: &mut *path })
        .map_err(|e| e.locate(path));
    // The segment pushed above is still on top.
    let seg = path.pop().unwrap_or(PathSeg::Index(0));
    (result, seg)
}

// ---------------------------------------------------------------------------
// to_value

/// Converts any `Serialize` value into a lossless [`Value`].
///
/// Fails (with the path of the offending part, rooted at `value`) on NaN or
/// infinite floats, on `-0.0`, on 128-bit integers outside
/// `i64::MIN..=u64::MAX`, on map keys that are not strings, chars, integers
/// (stringified, as `serde_json` does) or unit variants, and on a map that
/// produces the same key twice.
///
/// The mapping follows `serde_json`: unit and `None` become `null`, unit
/// variants become strings, newtype/tuple/struct variants become
/// `{"Variant": …}`, bytes become an array of numbers, and struct fields and
/// map entries keep their order. An `f32` becomes the shortest decimal that
/// converts back to the same `f32` (`0.1f32` becomes `0.1`), as `serde_json`
/// prints it; integral floats become integers.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, LosslessError> {
    let mut path = Vec::new();
    value
        .serialize(ValueSerializer { path: &mut path })
        .map_err(|e| e.locate(&[]))
}

struct ValueSerializer<'p> {
    path: &'p mut Vec<PathSeg>,
}

impl ValueSerializer<'_> {
    fn error(&self, kind: LosslessErrorKind) -> LosslessError {
        LosslessError::new(kind, render(self.path))
    }

    fn float(self, f: f64) -> Result<Value, LosslessError> {
        match Number::from_f64(f) {
            Some(n) => Ok(Value::Number(n)),
            None if f.is_finite() => Err(self.error(LosslessErrorKind::NegativeZero)),
            None => Err(self.error(LosslessErrorKind::NonFinite)),
        }
    }
}

impl<'p> Serializer for ValueSerializer<'p> {
    type Ok = Value;
    type Error = LosslessError;
    type SerializeSeq = SeqSerializer<'p>;
    type SerializeTuple = SeqSerializer<'p>;
    type SerializeTupleStruct = SeqSerializer<'p>;
    type SerializeTupleVariant = SeqSerializer<'p>;
    type SerializeMap = MapSerializer<'p>;
    type SerializeStruct = MapSerializer<'p>;
    type SerializeStructVariant = MapSerializer<'p>;

    fn serialize_bool(self, v: bool) -> Result<Value, LosslessError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, LosslessError> {
        match Number::from_i128(v) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(self.error(LosslessErrorKind::IntegerOutOfRange(v.to_string()))),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, LosslessError> {
        match Number::from_u128(v) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(self.error(LosslessErrorKind::IntegerOutOfRange(v.to_string()))),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<Value, LosslessError> {
        if !v.is_finite() || v == 0.0 {
            return self.float(f64::from(v));
        }
        // Take the shortest decimal that round-trips the `f32` (what
        // `serde_json` writes), so `0.1f32` becomes `0.1`, not
        // `0.10000000149011612`. Converting back to `f32` is exact.
        let mut buf = ryu::Buffer::new();
        match buf.format_finite(v).parse::<f64>() {
            Ok(f) => self.float(f),
            Err(_) => self.float(f64::from(v)),
        }
    }
    fn serialize_f64(self, v: f64) -> Result<Value, LosslessError> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<Value, LosslessError> {
        let mut buf = [0u8; 4];
        Ok(Value::from(&*v.encode_utf8(&mut buf)))
    }
    fn serialize_str(self, v: &str) -> Result<Value, LosslessError> {
        Ok(Value::from(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, LosslessError> {
        Ok(Value::Array(v.iter().map(|&b| Value::from(b)).collect()))
    }
    fn serialize_none(self) -> Result<Value, LosslessError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, LosslessError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, LosslessError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, LosslessError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, LosslessError> {
        Ok(Value::from(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, LosslessError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, LosslessError> {
        let (inner, _) = serialize_child(self.path, PathSeg::Field(variant), value);
        Ok(Value::Object(Object::from_unique(vec![(
            variant.into(),
            inner?,
        )])))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSerializer<'p>, LosslessError> {
        Ok(SeqSerializer {
            path: self.path,
            items: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSerializer<'p>, LosslessError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqSerializer<'p>, LosslessError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SeqSerializer<'p>, LosslessError> {
        self.path.push(PathSeg::Field(variant));
        let mut seq = self.serialize_seq(Some(len))?;
        seq.variant = Some(variant);
        Ok(seq)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapSerializer<'p>, LosslessError> {
        Ok(MapSerializer {
            path: self.path,
            entries: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            dups: DupDetector::default(),
            pending_key: None,
            variant: None,
        })
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<MapSerializer<'p>, LosslessError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<MapSerializer<'p>, LosslessError> {
        self.path.push(PathSeg::Field(variant));
        let mut map = self.serialize_map(Some(len))?;
        map.variant = Some(variant);
        Ok(map)
    }
}

/// Builds arrays (sequences, tuples, tuple structs and tuple variants).
struct SeqSerializer<'p> {
    path: &'p mut Vec<PathSeg>,
    items: Vec<Value>,
    /// For a tuple variant: its name (whose path segment is on `path`).
    variant: Option<&'static str>,
}

impl SeqSerializer<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LosslessError> {
        let seg = PathSeg::Index(self.items.len());
        let (v, _) = serialize_child(self.path, seg, value);
        self.items.push(v?);
        Ok(())
    }

    fn finish(self) -> Result<Value, LosslessError> {
        let array = Value::Array(Array::from(self.items));
        Ok(match self.variant {
            Some(variant) => {
                self.path.pop();
                Value::Object(Object::from_unique(vec![(variant.into(), array)]))
            }
            None => array,
        })
    }
}

impl ser::SerializeSeq for SeqSerializer<'_> {
    type Ok = Value;
    type Error = LosslessError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LosslessError> {
        self.element(value)
    }
    fn end(self) -> Result<Value, LosslessError> {
        self.finish()
    }
}

impl ser::SerializeTuple for SeqSerializer<'_> {
    type Ok = Value;
    type Error = LosslessError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LosslessError> {
        self.element(value)
    }
    fn end(self) -> Result<Value, LosslessError> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SeqSerializer<'_> {
    type Ok = Value;
    type Error = LosslessError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LosslessError> {
        self.element(value)
    }
    fn end(self) -> Result<Value, LosslessError> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant for SeqSerializer<'_> {
    type Ok = Value;
    type Error = LosslessError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LosslessError> {
        self.element(value)
    }
    fn end(self) -> Result<Value, LosslessError> {
        self.finish()
    }
}

/// Builds objects (maps, structs and struct variants).
struct MapSerializer<'p> {
    path: &'p mut Vec<PathSeg>,
    entries: Vec<(Str, Value)>,
    dups: DupDetector,
    pending_key: Option<Box<str>>,
    /// For a struct variant: its name (whose path segment is on `path`).
    variant: Option<&'static str>,
}

impl MapSerializer<'_> {
    fn error(&self, kind: LosslessErrorKind) -> LosslessError {
        LosslessError::new(kind, render(self.path))
    }

    fn check_key(&mut self, key: &str) -> Result<(), LosslessError> {
        if self.dups.is_duplicate(&self.entries, key) {
            return Err(self.error(LosslessErrorKind::DuplicateKey(
                super::path::elide(key).into_owned(),
            )));
        }
        Ok(())
    }

    fn member<T: Serialize + ?Sized>(
        &mut self,
        key: Box<str>,
        value: &T,
    ) -> Result<(), LosslessError> {
        let (v, seg) = serialize_child(self.path, PathSeg::Key(key), value);
        let v = v?;
        let key = match seg {
            PathSeg::Key(k) => k.into(),
            PathSeg::Field(f) => f.into(),
            PathSeg::Index(_) => Str::default(),
        };
        self.entries.push((key, v));
        Ok(())
    }

    fn finish(self) -> Result<Value, LosslessError> {
        let object = Value::Object(Object::from_unique(self.entries));
        Ok(match self.variant {
            Some(variant) => {
                self.path.pop();
                Value::Object(Object::from_unique(vec![(variant.into(), object)]))
            }
            None => object,
        })
    }
}

impl ser::SerializeMap for MapSerializer<'_> {
    type Ok = Value;
    type Error = LosslessError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), LosslessError> {
        let key = key
            .serialize(KeySerializer)
            .map_err(|e| e.locate(self.path))?;
        self.check_key(&key)?;
        self.pending_key = Some(key);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LosslessError> {
        let Some(key) = self.pending_key.take() else {
            return Err(self.error(LosslessErrorKind::Custom(
                "map value serialized before its key".to_owned(),
            )));
        };
        self.member(key, value)
    }
    fn end(self) -> Result<Value, LosslessError> {
        self.finish()
    }
}

impl ser::SerializeStruct for MapSerializer<'_> {
    type Ok = Value;
    type Error = LosslessError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), LosslessError> {
        self.check_key(key)?;
        self.member(key.into(), value)
    }
    fn end(self) -> Result<Value, LosslessError> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for MapSerializer<'_> {
    type Ok = Value;
    type Error = LosslessError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), LosslessError> {
        self.check_key(key)?;
        self.member(key.into(), value)
    }
    fn end(self) -> Result<Value, LosslessError> {
        self.finish()
    }
}

// ---------------------------------------------------------------------------
// Map keys

/// Serializes a map key to a string; paths are filled in by the map.
struct KeySerializer;

fn key_error() -> LosslessError {
    LosslessError(Box::new(LosslessInner {
        kind: LosslessErrorKind::KeyMustBeString,
        path: ROOT.to_owned(),
        located: false,
    }))
}

macro_rules! int_keys {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<Box<str>, LosslessError> {
            Ok(itoa::Buffer::new().format(v).into())
        }
    )*};
}

impl Serializer for KeySerializer {
    type Ok = Box<str>;
    type Error = LosslessError;
    type SerializeSeq = Impossible<Box<str>, LosslessError>;
    type SerializeTuple = Impossible<Box<str>, LosslessError>;
    type SerializeTupleStruct = Impossible<Box<str>, LosslessError>;
    type SerializeTupleVariant = Impossible<Box<str>, LosslessError>;
    type SerializeMap = Impossible<Box<str>, LosslessError>;
    type SerializeStruct = Impossible<Box<str>, LosslessError>;
    type SerializeStructVariant = Impossible<Box<str>, LosslessError>;

    int_keys!(
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128
    );

    fn serialize_str(self, v: &str) -> Result<Box<str>, LosslessError> {
        Ok(v.into())
    }
    fn serialize_char(self, v: char) -> Result<Box<str>, LosslessError> {
        let mut buf = [0u8; 4];
        Ok((&*v.encode_utf8(&mut buf)).into())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Box<str>, LosslessError> {
        Ok(variant.into())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Box<str>, LosslessError> {
        value.serialize(self)
    }
    fn serialize_bool(self, _v: bool) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_f32(self, _v: f32) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_f64(self, _v: f64) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _v: &T) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Box<str>, LosslessError> {
        Err(key_error())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, LosslessError> {
        Err(key_error())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, LosslessError> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, LosslessError> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, LosslessError> {
        Err(key_error())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, LosslessError> {
        Err(key_error())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, LosslessError> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, LosslessError> {
        Err(key_error())
    }
}
