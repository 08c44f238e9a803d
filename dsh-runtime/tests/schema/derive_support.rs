//! The corpus of derived types shared by `derive_schemas` (golden snapshots) and
//! `derive_agreement` (schema / validator / serde agreement). Together the types use every
//! serde attribute and every `#[schema]` key the derive supports.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use dsh_runtime::ToolSchema;
use dsh_runtime::schema::Schema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

/// One corpus type: its name (the snapshot file), its schema and a serde check.
pub(crate) struct Entry {
    pub name: &'static str,
    pub schema: Arc<Schema>,
    pub deserialize: fn(serde_json::Value) -> Result<(), String>,
}

fn de<T: DeserializeOwned>(v: serde_json::Value) -> Result<(), String> {
    serde_json::from_value::<T>(v)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

macro_rules! corpus {
    ($($t:ty => $name:literal,)*) => {
        pub(crate) fn corpus() -> Vec<Entry> {
            vec![$(Entry {
                name: $name,
                schema: <$t as ToolSchema>::schema(),
                deserialize: de::<$t>,
            },)*]
        }
    };
}

corpus! {
    Basic => "basic",
    Renamed => "renamed",
    Pascal => "pascal",
    ContainerDefault => "container_default",
    FieldDefaults => "field_defaults",
    Strict => "strict",
    Open => "open",
    Constrained => "constrained",
    Count => "newtype",
    Marker => "unit_struct",
    Transparent => "transparent",
    Converted => "from",
    Custom => "with",
    Generic<u8, String> => "generic",
    Plain => "unit_enum",
    Documented => "documented_unit_enum",
    External => "external",
    Internal => "internal",
    Adjacent => "adjacent",
    Untagged => "untagged",
    UntaggedObjects => "untagged_objects",
    Cases => "rename_all_fields",
    Nested => "nested",
}

/// A struct of std field types.
///
/// Second paragraph of the doc.
#[derive(Deserialize, ToolSchema)]
pub(crate) struct Basic {
    /// A string.
    pub text: String,
    pub small: u8,
    pub signed: i64,
    pub ratio: f64,
    pub single: f32,
    pub flag: bool,
    pub letter: char,
    pub maybe: Option<String>,
    pub list: Vec<u16>,
    pub fixed: [bool; 2],
    pub map: BTreeMap<String, i8>,
    pub any: serde_json::Value,
}

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Renamed {
    pub max_results: u32,
    #[serde(rename = "q")]
    pub query_text: String,
    #[serde(rename(serialize = "out", deserialize = "inName"))]
    pub in_name: Option<bool>,
    pub r#type: Option<String>,
}

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct Pascal {
    pub first_name: String,
    pub last_seen_at: Option<u64>,
}

#[derive(Deserialize, ToolSchema, Default)]
#[serde(default)]
pub(crate) struct ContainerDefault {
    pub depth: u8,
    pub name: String,
}

fn three() -> u32 {
    3
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct FieldDefaults {
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default = "three")]
    pub retries: u32,
    #[serde(skip)]
    pub cache: Vec<u8>,
    #[serde(skip_deserializing)]
    pub hits: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    pub id: i32,
}

#[derive(Deserialize, ToolSchema)]
#[serde(deny_unknown_fields, bound = "")]
pub(crate) struct Strict {
    pub a: u8,
    pub b: Option<u8>,
}

#[derive(Deserialize, ToolSchema)]
#[schema(open)]
pub(crate) struct Open {
    pub name: String,
}

#[derive(Deserialize, ToolSchema)]
#[schema(title = "Constrained", examples = [{ "word": "abc", "level": "low", "version": 2, "score": 0.5, "count": 3, "items": ["x"] }])]
pub(crate) struct Constrained {
    /// A lowercase word.
    #[schema(pattern = "^[a-z]{1,8}$", length(min = 1, max = 8))]
    pub word: String,
    #[schema(enum = ["low", "high"], default = "low")]
    pub level: String,
    #[schema(const = 2)]
    pub version: u8,
    #[schema(range(min = -1.5, max = 2.5))]
    pub score: f64,
    #[schema(range(min = 1, max = 10))]
    pub count: Option<u32>,
    #[schema(length(min = 1, max = 3))]
    pub items: Vec<String>,
    #[schema(length(max = 4), examples = ["ab"])]
    pub short: Option<String>,
}

/// A count of things.
#[derive(Deserialize, ToolSchema)]
pub(crate) struct Count(#[schema(range(max = 1000))] pub u32);

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Marker;

#[derive(Deserialize, ToolSchema)]
#[serde(transparent)]
pub(crate) struct Transparent {
    pub inner: Option<u16>,
    #[serde(skip)]
    pub note: String,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Raw {
    pub n: i32,
}

#[derive(Deserialize, ToolSchema)]
#[serde(from = "Raw")]
pub(crate) struct Converted {
    pub n: i64,
}

impl From<Raw> for Converted {
    fn from(r: Raw) -> Self {
        Converted { n: r.n.into() }
    }
}

fn hex_schema() -> Schema {
    Schema::string()
        .with_description("Hexadecimal digits.")
        .with_pattern(dsh_runtime::schema::Pattern::new("^[0-9a-f]{1,8}$").expect("valid"))
}

fn hex<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let s = String::deserialize(d)?;
    if s.is_empty()
        || s.len() > 8
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(serde::de::Error::custom("not hex"));
    }
    u32::from_str_radix(&s, 16).map_err(serde::de::Error::custom)
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Custom {
    #[serde(deserialize_with = "hex")]
    #[schema(with = hex_schema)]
    pub id: u32,
    #[serde(default, deserialize_with = "hex")]
    #[schema(with = hex_schema)]
    pub parent: u32,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Generic<A, B> {
    pub first: A,
    pub second: Option<B>,
    pub many: Vec<A>,
}

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Plain {
    VeryFast,
    Slow,
    #[serde(rename = "meh")]
    Medium,
    #[serde(skip)]
    Never,
    #[serde(skip_deserializing)]
    Hidden,
}

/// How hard to try.
#[derive(Deserialize, ToolSchema)]
pub(crate) enum Documented {
    /// Quick.
    Low,
    /// Thorough.
    High,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Point {
    pub x: i32,
    pub y: i32,
}

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum External {
    Stop,
    Wait(Option<u8>),
    Go { to: Point, fast: Option<bool> },
    At(Point),
    Name(String),
}

/// Shapes.
#[derive(Deserialize, ToolSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum Internal {
    /// A circle.
    Circle {
        radius: f64,
    },
    PointAt(Point),
    Labels(BTreeMap<String, String>),
    Empty,
    #[serde(rename_all = "camelCase")]
    Box {
        top_left: Point,
        #[serde(default)]
        fill_color: Option<String>,
    },
}

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "t", content = "c")]
pub(crate) enum Adjacent {
    Ping,
    Text(String),
    Count(Option<u32>),
    Move { to: Point },
}

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
pub(crate) enum Untagged {
    Text(String),
    Many(Vec<u8>),
    Flag(bool),
    Nothing,
    Pair { a: u8, b: u8 },
}

#[derive(Deserialize, ToolSchema)]
#[serde(untagged, deny_unknown_fields)]
pub(crate) enum UntaggedObjects {
    Named {
        name: String,
    },
    Id {
        id: u64,
        #[serde(default)]
        rev: u32,
    },
    Number(f64),
}

#[derive(Deserialize, ToolSchema)]
#[serde(
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "SCREAMING-KEBAB-CASE"
)]
pub(crate) enum Cases {
    FirstOne {
        some_field: u8,
    },
    #[serde(rename_all = "UPPERCASE")]
    SecondTry {
        other_field: Option<u8>,
    },
    ThirdWay,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Nested {
    pub commands: Vec<External>,
    pub shape: Option<Internal>,
    pub speeds: HashMap<String, Plain>,
    pub count: Count,
    pub strict: Option<Strict>,
}
