//! TEMPORARY stub of the lossless JSON module (replaced by the real one on merge).
#![allow(missing_docs)]
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(Box<str>),
    Array(Array),
    Object(Object),
}
#[derive(Clone, Copy, Debug)]
enum N {
    PosInt(u64),
    NegInt(i64),
    Float(f64),
}
#[derive(Clone, Copy, Debug)]
pub struct Number(N);
impl PartialEq for Number {
    fn eq(&self, o: &Self) -> bool {
        match (self.0, o.0) {
            (N::PosInt(a), N::PosInt(b)) => a == b,
            (N::NegInt(a), N::NegInt(b)) => a == b,
            (N::Float(a), N::Float(b)) => a == b,
            _ => false,
        }
    }
}
impl Number {
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            N::PosInt(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            N::PosInt(v) => i64::try_from(v).ok(),
            N::NegInt(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        Some(match self.0 {
            N::PosInt(v) => v as f64,
            N::NegInt(v) => v as f64,
            N::Float(v) => v,
        })
    }
    pub fn is_integer(&self) -> bool {
        match self.0 {
            N::Float(f) => f.fract() == 0.0,
            _ => true,
        }
    }
    pub fn is_f64(&self) -> bool {
        matches!(self.0, N::Float(_))
    }
    pub fn from_f64(f: f64) -> Option<Number> {
        if !f.is_finite() || (f == 0.0 && f.is_sign_negative()) {
            None
        } else if f.fract() == 0.0 && f >= 0.0 && f < 1.8e19 {
            Some(Number(N::PosInt(f as u64)))
        } else if f.fract() == 0.0 && f < 0.0 && f >= -9.2e18 {
            Some(Number(N::NegInt(f as i64)))
        } else {
            Some(Number(N::Float(f)))
        }
    }
}
impl From<u64> for Number {
    fn from(v: u64) -> Self {
        Number(N::PosInt(v))
    }
}
impl From<i64> for Number {
    fn from(v: i64) -> Self {
        if v >= 0 {
            Number(N::PosInt(v as u64))
        } else {
            Number(N::NegInt(v))
        }
    }
}
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            N::PosInt(v) => write!(f, "{v}"),
            N::NegInt(v) => write!(f, "{v}"),
            N::Float(v) => write!(f, "{v:?}"),
        }
    }
}
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Array(Vec<Value>);
impl std::ops::Deref for Array {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.0
    }
}
impl From<Vec<Value>> for Array {
    fn from(v: Vec<Value>) -> Self {
        Array(v)
    }
}
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Object(Vec<(Box<str>, Value)>);
impl Object {
    pub fn new() -> Self {
        Object(Vec::new())
    }
    pub fn get(&self, k: &str) -> Option<&Value> {
        self.0.iter().find(|(a, _)| &**a == k).map(|(_, v)| v)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (&**k, v))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn insert(&mut self, k: impl Into<Box<str>>, v: Value) -> Option<Value> {
        let k = k.into();
        if let Some(e) = self.0.iter_mut().find(|(a, _)| *a == k) {
            return Some(std::mem::replace(&mut e.1, v));
        }
        self.0.push((k, v));
        None
    }
    pub fn contains_key(&self, k: &str) -> bool {
        self.get(k).is_some()
    }
}
impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Array> {
        match self {
            Value::Array(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(s) => Some(*s),
            _ => None,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.into())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s.into())
    }
}
impl From<bool> for Value {
    fn from(s: bool) -> Self {
        Value::Bool(s)
    }
}
impl From<u64> for Value {
    fn from(s: u64) -> Self {
        Value::Number(s.into())
    }
}
impl From<i64> for Value {
    fn from(s: i64) -> Self {
        Value::Number(s.into())
    }
}
impl From<Object> for Value {
    fn from(s: Object) -> Self {
        Value::Object(s)
    }
}
impl From<Vec<Value>> for Value {
    fn from(s: Vec<Value>) -> Self {
        Value::Array(Array(s))
    }
}
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => write!(f, "{n}"),
            Value::String(s) => write!(
                f,
                "{}",
                serde_json::to_string(&**s).map_err(|_| fmt::Error)?
            ),
            Value::Array(a) => {
                f.write_str("[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Object(o) => {
                f.write_str("{")?;
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(
                        f,
                        "{}:{v}",
                        serde_json::to_string(k).map_err(|_| fmt::Error)?
                    )?;
                }
                f.write_str("}")
            }
        }
    }
}
pub type Frozen = std::sync::Arc<Value>;
pub fn from_serde(v: &serde_json::Value) -> Result<Value, String> {
    Ok(match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Number(if let Some(u) = n.as_u64() {
            u.into()
        } else if let Some(i) = n.as_i64() {
            i.into()
        } else {
            Number::from_f64(n.as_f64().unwrap_or(f64::NAN)).ok_or("bad number")?
        }),
        serde_json::Value::String(s) => Value::String(s.as_str().into()),
        serde_json::Value::Array(a) => {
            Value::Array(Array(a.iter().map(from_serde).collect::<Result<_, _>>()?))
        }
        serde_json::Value::Object(o) => {
            let mut m = Object::new();
            for (k, v) in o {
                m.insert(k.as_str(), from_serde(v)?);
            }
            Value::Object(m)
        }
    })
}
pub fn parse(s: &str) -> Result<Value, String> {
    from_serde(&serde_json::from_str(s).map_err(|e| e.to_string())?)
}
pub fn to_serde(v: &Value) -> serde_json::Value {
    serde_json::from_str(&v.to_string()).unwrap_or(serde_json::Value::Null)
}
impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        to_serde(self).serialize(s)
    }
}
impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        from_serde(&v).map_err(serde::de::Error::custom)
    }
}
pub fn from_value<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, String> {
    serde_json::from_value(to_serde(v)).map_err(|e| e.to_string())
}
pub fn to_value<T: serde::Serialize + ?Sized>(v: &T) -> Result<Value, String> {
    from_serde(&serde_json::to_value(v).map_err(|e| e.to_string())?)
}
