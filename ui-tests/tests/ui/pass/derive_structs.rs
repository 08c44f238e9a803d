//! Every supported struct form derives and publishes the schema serde agrees with.
use std::collections::BTreeMap;

use dsh_runtime::schema::Schema;
use dsh_runtime::ToolSchema;
use serde::{Deserialize, Deserializer};

/// Search the index.
///
/// Returns matching documents.
#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, bound = "")]
#[schema(title = "Search", examples = [{ "queryText": "rust" }])]
struct Search {
    /// What to look for.
    query_text: String,
    /// At most this many.
    #[serde(default)]
    max_results: u32,
    #[serde(rename = "lang")]
    language: Option<String>,
    #[serde(rename(serialize = "out", deserialize = "in"))]
    direction: Option<bool>,
    #[serde(skip)]
    cache: Vec<u8>,
    #[serde(skip_deserializing)]
    hits: u64,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "ser_opt")]
    cursor: Option<String>,
    r#type: Option<String>,
}

fn ser_opt<S: serde::Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_some(v)
}

#[derive(Deserialize, ToolSchema, Default)]
#[serde(default)]
#[schema(open)]
struct Settings {
    verbose: bool,
    depth: u8,
}

/// A file path.
#[derive(Deserialize, ToolSchema)]
struct Path(#[schema(length(min = 1))] String);

#[derive(Deserialize, ToolSchema)]
struct Nothing;

#[derive(Deserialize, ToolSchema)]
#[serde(transparent)]
struct Maybe {
    inner: Option<u32>,
}

#[derive(Deserialize, ToolSchema)]
#[serde(transparent)]
struct Tagged<T> {
    value: T,
    #[serde(skip)]
    _marker: std::marker::PhantomData<T>,
}

#[derive(Deserialize, ToolSchema)]
struct Raw {
    n: i64,
}

#[derive(Deserialize, ToolSchema)]
#[serde(from = "Raw")]
struct Converted {
    n: i64,
}

impl From<Raw> for Converted {
    fn from(r: Raw) -> Self {
        Converted { n: r.n }
    }
}

fn hex_schema() -> Schema {
    Schema::string().with_description("A hex string.")
}

fn hex<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let s = String::deserialize(d)?;
    u64::from_str_radix(&s, 16).map_err(serde::de::Error::custom)
}

#[derive(Deserialize, ToolSchema)]
struct Custom {
    #[serde(deserialize_with = "hex")]
    #[schema(with = hex_schema)]
    id: u64,
    #[serde(default, deserialize_with = "hex")]
    #[schema(with = "hex_schema")]
    parent: u64,
}

#[derive(Deserialize, ToolSchema)]
#[serde(try_from = "String")]
#[schema(with = hex_schema)]
struct Hex(u64);

impl TryFrom<String> for Hex {
    type Error = std::num::ParseIntError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        u64::from_str_radix(&s, 16).map(Hex)
    }
}

#[derive(Deserialize, ToolSchema)]
struct Pair<A, B> {
    first: A,
    second: Option<B>,
    map: BTreeMap<String, A>,
}

#[derive(Deserialize, ToolSchema)]
#[schema(crate = dsh_runtime)]
struct Renamed {
    x: u8,
}

fn json(s: &Schema) -> String {
    s.to_json_string()
}

pub fn main() {
    let search = json(&Search::schema());
    assert!(search.starts_with(r#"{"type":"object","description":"Search the index.\n\nReturns matching documents.","title":"Search","examples":[{"queryText":"rust"}],"additionalProperties":false"#), "{search}");
    assert!(search.contains(r#""required":["queryText"]"#), "{search}");
    for key in [r#""lang""#, r#""in""#, r#""type""#, r#""maxResults""#, r#""cursor""#] {
        assert!(search.contains(key), "{key} in {search}");
    }
    for key in ["cache", "hits", "\"out\""] {
        assert!(!search.contains(key), "{key} in {search}");
    }
    assert_eq!(
        json(&Settings::schema()),
        r#"{"type":"object","additionalProperties":true,"properties":{"verbose":{"type":"boolean"},"depth":{"type":"integer","minimum":0,"maximum":255}}}"#
    );
    assert_eq!(
        json(&Path::schema()),
        r#"{"type":"string","description":"A file path.","minLength":1}"#
    );
    assert_eq!(json(&Nothing::schema()), r#"{"type":"null"}"#);
    assert!(<Maybe as ToolSchema>::OPTIONAL);
    assert_eq!(
        json(&Maybe::schema()),
        r#"{"oneOf":[{"type":"integer","minimum":0,"maximum":4294967295},{"type":"null"}]}"#
    );
    assert_eq!(json(&Tagged::<bool>::schema()), r#"{"type":"boolean"}"#);
    assert_eq!(json(&Converted::schema()), json(&Raw::schema()));
    assert_eq!(
        json(&Custom::schema()),
        r#"{"type":"object","additionalProperties":false,"properties":{"id":{"type":"string","description":"A hex string."},"parent":{"type":"string","description":"A hex string."}},"required":["id"]}"#
    );
    assert_eq!(json(&Hex::schema()), r#"{"type":"string","description":"A hex string."}"#);
    let pair = json(&Pair::<u8, String>::schema());
    assert!(pair.contains(r#""required":["first","map"]"#), "{pair}");
    assert_eq!(
        json(&Renamed::schema()),
        r#"{"type":"object","additionalProperties":false,"properties":{"x":{"type":"integer","minimum":0,"maximum":255}},"required":["x"]}"#
    );
}
