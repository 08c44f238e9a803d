//! Reading a JSON Schema 2020-12 document: the registration checks (the meta-schema's
//! shape of every keyword, the dialect, same-document references, cycles) and the node
//! graph the runtime's own validator walks.
//!
//! One walk over the document checks every keyword and builds one [`Node`] per schema
//! location; references are resolved after it, then cycles and exactness are computed
//! over the graph. Every problem is reported, each prefixed with the path of its schema
//! (`parameters.$defs.address.$anchor`).

use std::collections::HashMap;

use crate::json::{Number, Value};
use crate::schema::{MAX_SCHEMA_DEPTH, Pattern, json_quote};

/// The dialect every verbatim schema is read in.
pub(crate) const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is a non-empty array of schemas.
const SCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an object of schemas.
const SCHEMA_MAP: &[&str] = &[
    "$defs",
    "definitions",
    "dependentSchemas",
    "patternProperties",
    "properties",
];
/// Keywords whose value is a non-negative integer.
const COUNTS: &[&str] = &[
    "maxContains",
    "maxItems",
    "maxLength",
    "maxProperties",
    "minContains",
    "minItems",
    "minLength",
    "minProperties",
];
/// Keywords whose value is a number.
const BOUNDS: &[&str] = &["exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum"];
/// Keywords whose value is a string (annotations; `pattern` and the references are
/// read on their own).
const TEXTS: &[&str] = &[
    "$comment",
    "contentEncoding",
    "contentMediaType",
    "description",
    "format",
    "title",
];
/// Keywords whose value is a boolean.
const FLAGS: &[&str] = &["deprecated", "readOnly", "uniqueItems", "writeOnly"];

/// The seven JSON Schema type names, in the bit order of [`Rules::types`].
pub(crate) const TYPE_NAMES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];
pub(crate) const T_NULL: u8 = 1;
pub(crate) const T_BOOLEAN: u8 = 1 << 1;
pub(crate) const T_OBJECT: u8 = 1 << 2;
pub(crate) const T_ARRAY: u8 = 1 << 3;
pub(crate) const T_NUMBER: u8 = 1 << 4;
pub(crate) const T_STRING: u8 = 1 << 5;
pub(crate) const T_INTEGER: u8 = 1 << 6;

/// One schema location: `true`, `false`, or a schema object.
pub(crate) enum Node {
    Bool(bool),
    Rules(Box<Rules>),
}

/// A `pattern` or `patternProperties` key: compiled when the runtime's regular
/// expressions take it.
pub(crate) enum Regex {
    Compiled(Pattern),
    /// Valid ECMA-262 perhaps, but outside what the runtime's engine compiles
    /// (look-around, back-references): not checked without the `json-schema` feature.
    Unchecked,
}

/// The assertions and applicators of one schema object, with references resolved to
/// node indices.
#[derive(Default)]
pub(crate) struct Rules {
    /// A set of `T_*` bits; `None` when there is no `type`.
    pub types: Option<u8>,
    pub enum_values: Option<Vec<Value>>,
    pub const_value: Option<Value>,
    /// An integer divisor of at most 2^53 (checked exactly); see `inexact` otherwise.
    pub multiple_of: Option<Number>,
    pub minimum: Option<Number>,
    pub maximum: Option<Number>,
    pub exclusive_minimum: Option<Number>,
    pub exclusive_maximum: Option<Number>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<(String, Regex)>,
    pub prefix_items: Vec<usize>,
    pub items: Option<usize>,
    pub contains: Option<usize>,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub properties: Vec<(String, usize)>,
    pub pattern_properties: Vec<(Regex, usize)>,
    pub additional: Option<usize>,
    pub property_names: Option<usize>,
    pub required: Vec<String>,
    pub dependent_required: Vec<(String, Vec<String>)>,
    pub dependent_schemas: Vec<(String, usize)>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub all_of: Vec<usize>,
    pub any_of: Vec<usize>,
    pub one_of: Vec<usize>,
    pub not: Option<usize>,
    pub if_: Option<usize>,
    pub then: Option<usize>,
    pub else_: Option<usize>,
    /// `$ref` and `$dynamicRef` (the same thing in a document of one schema resource).
    pub refs: Vec<usize>,
    /// `unevaluatedItems` and `unevaluatedProperties` (not checked by the runtime; kept
    /// for the graph's cycles).
    pub unevaluated: Vec<usize>,
    /// The keywords of this object the runtime's validator does not check (it checks
    /// every other one exactly).
    pub inexact: Vec<&'static str>,
}

/// A checked document.
pub(crate) struct Compiled {
    /// One node per schema location; the root is node 0.
    pub nodes: Vec<Node>,
    /// Each node's path in messages (`parameters.$defs.address`).
    pub paths: Vec<String>,
    /// Each node's JSON pointer (`/$defs/address`; empty for the root).
    pub pointers: Vec<String>,
    /// Whether some reference leads back to a schema it is reached from.
    pub recursive: bool,
    /// Per node: whether the runtime checks it (and all it applies) exactly.
    pub exact: Vec<bool>,
    /// Where the root's checks are not exact: `path: keyword`.
    pub inexact_at: Vec<String>,
    /// The root's `type`, when it is one string.
    pub root_type: Option<String>,
    by_pointer: HashMap<String, usize>,
    anchors: HashMap<String, usize>,
    root_id: Option<String>,
}

/// A reference before resolution.
struct PendingRef {
    node: usize,
    keyword: &'static str,
    text: String,
}

struct Walk {
    nodes: Vec<Node>,
    paths: Vec<String>,
    pointers: Vec<String>,
    by_pointer: HashMap<String, usize>,
    anchors: HashMap<String, usize>,
    refs: Vec<PendingRef>,
    errors: Vec<String>,
    root_id: Option<String>,
}

/// Append a JSON Pointer segment (`~` and `/` escaped).
fn push_pointer(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Whether `name` is a valid `$anchor`/`$dynamicAnchor` (`^[A-Za-z_][-A-Za-z0-9._]*$`).
fn anchor_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
}

/// Whether `uri` names the 2020-12 dialect (with or without an empty fragment).
fn is_dialect(uri: &str) -> bool {
    uri.strip_suffix('#').unwrap_or(uri) == DIALECT
}

fn non_negative(v: &Value) -> Option<u64> {
    v.as_number().and_then(Number::as_u64)
}

impl Walk {
    fn err(&mut self, path: &str, message: impl std::fmt::Display) {
        self.errors.push(format!("{path}: {message}"));
    }

    /// Read the schema at `value` (a `path` in messages, a `pointer` in references);
    /// returns its node index.
    // long function: one match over the 2020-12 keywords, an arm per keyword or keyword
    // family (each a few lines), read into one node's rules in one pass.
    fn schema(&mut self, value: &Value, path: String, pointer: String, depth: usize) -> usize {
        let index = self.nodes.len();
        self.by_pointer.insert(pointer.clone(), index);
        self.paths.push(path.clone());
        self.pointers.push(pointer.clone());
        match value {
            Value::Bool(b) => {
                self.nodes.push(Node::Bool(*b));
                return index;
            }
            Value::Object(_) => self.nodes.push(Node::Bool(true)),
            other => {
                self.nodes.push(Node::Bool(true));
                self.err(
                    &path,
                    format_args!(
                        "a schema must be an object or a boolean, found {}",
                        other.type_name()
                    ),
                );
                return index;
            }
        }
        if depth >= MAX_SCHEMA_DEPTH {
            self.err(
                &path,
                format_args!("schemas nested deeper than {MAX_SCHEMA_DEPTH} levels"),
            );
            return index;
        }
        let Some(obj) = value.as_object() else {
            return index;
        };
        let mut rules = Rules::default();
        let child = |key: &str, extra: Option<&str>| {
            let mut p = path.clone();
            crate::json::path::push_key(&mut p, key);
            let mut ptr = pointer.clone();
            push_pointer(&mut ptr, key);
            if let Some(extra) = extra {
                crate::json::path::push_key(&mut p, extra);
                push_pointer(&mut ptr, extra);
            }
            (p, ptr)
        };
        for (key, v) in obj.iter() {
            let key: &str = key;
            match key {
                "$schema" => match v.as_str() {
                    Some(uri) if depth > 0 => self.err(
                        &path,
                        format_args!(
                            "`$schema` {} below the root: only the document's root may declare the dialect",
                            json_quote(uri)
                        ),
                    ),
                    Some(uri) if !is_dialect(uri) => self.err(
                        &path,
                        format_args!(
                            "`$schema` is {}: a tool's own schema must be JSON Schema 2020-12 ({}), the dialect MCP and the providers read",
                            json_quote(uri),
                            json_quote(DIALECT)
                        ),
                    ),
                    Some(_) => {}
                    None => self.err(&path, "`$schema` must be a string"),
                },
                "$id" => match v.as_str() {
                    Some(id) if depth > 0 => self.err(
                        &path,
                        format_args!(
                            "`$id` {} below the root: embedded schema resources are not supported (references resolve against the document's root only)",
                            json_quote(id)
                        ),
                    ),
                    Some(id) if id.trim_end_matches('#').contains('#') => self.err(
                        &path,
                        format_args!("`$id` {} must not have a fragment", json_quote(id)),
                    ),
                    Some(id) => self.root_id = Some(id.trim_end_matches('#').to_string()),
                    None => self.err(&path, "`$id` must be a string"),
                },
                "$anchor" | "$dynamicAnchor" => match v.as_str() {
                    Some(name) if anchor_name(name) => {
                        if self.anchors.insert(name.to_string(), index).is_some() {
                            self.err(
                                &path,
                                format_args!(
                                    "anchor {} is defined twice in the document",
                                    json_quote(name)
                                ),
                            );
                        }
                    }
                    Some(name) => self.err(
                        &path,
                        format_args!(
                            "`{key}` {} must match ^[A-Za-z_][-A-Za-z0-9._]*$",
                            json_quote(name)
                        ),
                    ),
                    None => self.err(&path, format_args!("`{key}` must be a string")),
                },
                "$ref" | "$dynamicRef" => match v.as_str() {
                    Some(text) => self.refs.push(PendingRef {
                        node: index,
                        keyword: if key == "$ref" { "$ref" } else { "$dynamicRef" },
                        text: text.to_string(),
                    }),
                    None => self.err(&path, format_args!("`{key}` must be a string")),
                },
                "$vocabulary" => match v.as_object() {
                    Some(o) if o.values().all(|b| matches!(b, Value::Bool(_))) => {}
                    _ => self.err(
                        &path,
                        "`$vocabulary` must be an object of booleans keyed by URI",
                    ),
                },
                "dependencies" | "$recursiveRef" | "$recursiveAnchor" => self.err(
                    &path,
                    format_args!(
                        "`{key}` is a keyword of earlier drafts, which JSON Schema 2020-12 validators ignore; use {}",
                        match key {
                            "dependencies" => "`dependentRequired` or `dependentSchemas`",
                            _ => "`$dynamicRef` and `$dynamicAnchor`",
                        }
                    ),
                ),
                "type" => rules.types = self.types(v, &path),
                "enum" => match v.as_array() {
                    Some(values) => rules.enum_values = Some(values.to_vec()),
                    None => self.err(&path, "`enum` must be an array"),
                },
                "const" => rules.const_value = Some(v.clone()),
                "examples" if v.as_array().is_none() => {
                    self.err(&path, "`examples` must be an array");
                }
                "examples" => {}
                "default" => {}
                "multipleOf" => match v.as_number() {
                    Some(n) if n.as_f64().is_some_and(|f| f > 0.0) => {
                        let integral = n.as_u64().is_some_and(|d| d <= 1 << 53);
                        if integral {
                            rules.multiple_of = Some(*n);
                        } else {
                            rules.inexact.push("multipleOf");
                        }
                    }
                    _ => self.err(&path, "`multipleOf` must be a number greater than 0"),
                },
                "pattern" => match v.as_str() {
                    Some(source) => {
                        let regex = match Pattern::new(source.to_string()) {
                            Ok(p) => Regex::Compiled(p),
                            Err(_) => {
                                rules.inexact.push("pattern");
                                Regex::Unchecked
                            }
                        };
                        rules.pattern = Some((source.to_string(), regex));
                    }
                    None => self.err(&path, "`pattern` must be a string"),
                },
                "required" => {
                    if let Some(names) = self.names(v, &path, "required") {
                        rules.required = names;
                    }
                }
                "dependentRequired" => match v.as_object() {
                    Some(o) => {
                        for (k, names) in o.iter() {
                            let (p, _) = child(key, Some(k));
                            if let Some(names) = self.names(names, &p, "dependentRequired") {
                                rules.dependent_required.push((k.to_string(), names));
                            }
                        }
                    }
                    None => self.err(&path, "`dependentRequired` must be an object"),
                },
                "unevaluatedItems" | "unevaluatedProperties" => {
                    rules.inexact.push(if key == "unevaluatedItems" {
                        "unevaluatedItems"
                    } else {
                        "unevaluatedProperties"
                    });
                    let (p, ptr) = child(key, None);
                    let n = self.schema(v, p, ptr, depth + 1);
                    rules.unevaluated.push(n);
                }
                k if ONE_SCHEMA.contains(&k) => {
                    let (p, ptr) = child(key, None);
                    let n = self.schema(v, p, ptr, depth + 1);
                    match k {
                        "additionalProperties" => rules.additional = Some(n),
                        "contains" => rules.contains = Some(n),
                        "else" => rules.else_ = Some(n),
                        "if" => rules.if_ = Some(n),
                        "items" => rules.items = Some(n),
                        "not" => rules.not = Some(n),
                        "propertyNames" => rules.property_names = Some(n),
                        "then" => rules.then = Some(n),
                        // `contentSchema` describes decoded content: an annotation.
                        _ => {}
                    }
                }
                k if SCHEMA_LIST.contains(&k) => match v.as_array() {
                    Some(list) if !list.is_empty() => {
                        let mut out = Vec::with_capacity(list.len());
                        for (i, item) in list.iter().enumerate() {
                            let mut p = path.clone();
                            crate::json::path::push_key(&mut p, key);
                            crate::json::path::push_index(&mut p, i);
                            let mut ptr = pointer.clone();
                            push_pointer(&mut ptr, key);
                            push_pointer(&mut ptr, itoa::Buffer::new().format(i));
                            out.push(self.schema(item, p, ptr, depth + 1));
                        }
                        match k {
                            "allOf" => rules.all_of = out,
                            "anyOf" => rules.any_of = out,
                            "oneOf" => rules.one_of = out,
                            _ => rules.prefix_items = out,
                        }
                    }
                    _ => self.err(
                        &path,
                        format_args!("`{key}` must be a non-empty array of schemas"),
                    ),
                },
                k if SCHEMA_MAP.contains(&k) => match v.as_object() {
                    Some(map) => {
                        for (name, sub) in map.iter() {
                            let (p, ptr) = child(key, Some(name));
                            if k == "patternProperties" {
                                let regex = match Pattern::new(name.to_string()) {
                                    Ok(p) => Regex::Compiled(p),
                                    Err(_) => {
                                        rules.inexact.push("patternProperties");
                                        Regex::Unchecked
                                    }
                                };
                                let n = self.schema(sub, p, ptr, depth + 1);
                                rules.pattern_properties.push((regex, n));
                                continue;
                            }
                            let n = self.schema(sub, p, ptr, depth + 1);
                            match k {
                                "properties" => rules.properties.push((name.to_string(), n)),
                                "dependentSchemas" => {
                                    rules.dependent_schemas.push((name.to_string(), n))
                                }
                                // `$defs` and `definitions` only hold schemas for references.
                                _ => {}
                            }
                        }
                    }
                    None => self.err(
                        &path,
                        format_args!("`{key}` must be an object of schemas"),
                    ),
                },
                k if COUNTS.contains(&k) => match non_negative(v) {
                    Some(n) => match k {
                        "maxContains" => rules.max_contains = Some(n),
                        "maxItems" => rules.max_items = Some(n),
                        "maxLength" => rules.max_length = Some(n),
                        "maxProperties" => rules.max_properties = Some(n),
                        "minContains" => rules.min_contains = Some(n),
                        "minItems" => rules.min_items = Some(n),
                        "minLength" => rules.min_length = Some(n),
                        _ => rules.min_properties = Some(n),
                    },
                    None => self.err(
                        &path,
                        format_args!("`{key}` must be a non-negative integer, found {v}"),
                    ),
                },
                k if BOUNDS.contains(&k) => match v.as_number() {
                    Some(n) => match k {
                        "exclusiveMaximum" => rules.exclusive_maximum = Some(*n),
                        "exclusiveMinimum" => rules.exclusive_minimum = Some(*n),
                        "maximum" => rules.maximum = Some(*n),
                        _ => rules.minimum = Some(*n),
                    },
                    None => self.err(&path, format_args!("`{key}` must be a number, found {v}")),
                },
                k if TEXTS.contains(&k) && v.as_str().is_none() => {
                    self.err(&path, format_args!("`{key}` must be a string"));
                }
                k if TEXTS.contains(&k) => {}
                k if FLAGS.contains(&k) => match v {
                    Value::Bool(b) => {
                        if k == "uniqueItems" && *b {
                            rules.inexact.push("uniqueItems");
                        }
                    }
                    _ => self.err(&path, format_args!("`{key}` must be a boolean")),
                },
                // Any other keyword is an annotation (JSON Schema ignores unknown keywords).
                _ => {}
            }
        }
        self.nodes[index] = Node::Rules(Box::new(rules));
        index
    }

    fn types(&mut self, v: &Value, path: &str) -> Option<u8> {
        let bit = |name: &str| TYPE_NAMES.iter().position(|t| *t == name).map(|i| 1u8 << i);
        match v {
            Value::String(t) => match bit(t) {
                Some(b) => Some(b),
                None => {
                    self.err(
                        path,
                        format_args!(
                            "`type` {} is not one of {}",
                            json_quote(t),
                            TYPE_NAMES.map(json_quote).join(", ")
                        ),
                    );
                    None
                }
            },
            Value::Array(list) if !list.is_empty() => {
                let mut set = 0u8;
                for t in list.iter() {
                    match t.as_str().and_then(bit) {
                        Some(b) if set & b == 0 => set |= b,
                        Some(_) => {
                            self.err(path, format_args!("`type` lists {t} twice"));
                            return None;
                        }
                        None => {
                            self.err(
                                path,
                                format_args!("`type` entry {t} is not one of the type names"),
                            );
                            return None;
                        }
                    }
                }
                Some(set)
            }
            _ => {
                self.err(
                    path,
                    "`type` must be a type name or a non-empty array of type names",
                );
                None
            }
        }
    }

    /// An array of unique strings (`required`, `dependentRequired` entries).
    fn names(&mut self, v: &Value, path: &str, key: &str) -> Option<Vec<String>> {
        let Some(list) = v.as_array() else {
            self.err(path, format_args!("`{key}` must be an array of strings"));
            return None;
        };
        let mut out: Vec<String> = Vec::with_capacity(list.len());
        for n in list.iter() {
            match n.as_str() {
                Some(name) if out.iter().any(|o| o == name) => {
                    self.err(
                        path,
                        format_args!("`{key}` lists {} twice", json_quote(name)),
                    );
                }
                Some(name) => out.push(name.to_string()),
                None => self.err(
                    path,
                    format_args!("`{key}` entries must be strings, found {n}"),
                ),
            }
        }
        Some(out)
    }
}

/// Percent-decode a URI fragment; `None` when an escape is malformed or the bytes are not
/// UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_string());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A fragment's JSON Pointer in the canonical escaped form the walk records; `None` when
/// a `~` escape is malformed.
fn canonical_pointer(fragment: &str) -> Option<String> {
    let mut out = String::with_capacity(fragment.len());
    for segment in fragment.split('/').skip(1) {
        let mut raw = String::with_capacity(segment.len());
        let mut chars = segment.chars();
        while let Some(c) = chars.next() {
            if c == '~' {
                match chars.next() {
                    Some('0') => raw.push('~'),
                    Some('1') => raw.push('/'),
                    _ => return None,
                }
            } else {
                raw.push(c);
            }
        }
        push_pointer(&mut out, &raw);
    }
    Some(out)
}

impl Compiled {
    /// Check `value` and build its graph; every problem, path-qualified from `label`.
    pub(crate) fn new(value: &Value, label: &str) -> Result<Compiled, Vec<String>> {
        let mut w = Walk {
            nodes: Vec::new(),
            paths: Vec::new(),
            pointers: Vec::new(),
            by_pointer: HashMap::new(),
            anchors: HashMap::new(),
            refs: Vec::new(),
            errors: Vec::new(),
            root_id: None,
        };
        w.schema(value, label.to_string(), String::new(), 0);
        let root_type = value
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut c = Compiled {
            nodes: w.nodes,
            paths: w.paths,
            pointers: w.pointers,
            recursive: false,
            exact: Vec::new(),
            inexact_at: Vec::new(),
            root_type,
            by_pointer: w.by_pointer,
            anchors: w.anchors,
            root_id: w.root_id,
        };
        let mut errors = w.errors;
        for r in w.refs {
            match c.resolve(&r.text) {
                Ok(target) => {
                    if let Node::Rules(rules) = &mut c.nodes[r.node] {
                        rules.refs.push(target);
                    }
                }
                Err(why) => errors.push(format!(
                    "{}: `{}` {} {why}",
                    c.paths[r.node],
                    r.keyword,
                    json_quote(&r.text)
                )),
            }
        }
        if errors.is_empty() {
            c.cycles(&mut errors);
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        c.exactness();
        Ok(c)
    }

    /// The node a reference names, or why it names none.
    pub(crate) fn resolve(&self, text: &str) -> Result<usize, String> {
        let (base, fragment) = match text.split_once('#') {
            Some((b, f)) => (b, Some(f)),
            None => (text, None),
        };
        if !base.is_empty() && self.root_id.as_deref() != Some(base) {
            return Err(
                "points outside the document: only same-document references (\"#…\", or the root's `$id` followed by one) are resolved, never a network or file URI".to_string(),
            );
        }
        let Some(fragment) = fragment.filter(|f| !f.is_empty()) else {
            return Ok(0);
        };
        let Some(fragment) = percent_decode(fragment) else {
            return Err("has a malformed percent-escape".to_string());
        };
        if fragment.starts_with('/') {
            let Some(pointer) = canonical_pointer(&fragment) else {
                return Err(
                    "has a malformed JSON Pointer escape (`~` must be followed by 0 or 1)"
                        .to_string(),
                );
            };
            return self
                .by_pointer
                .get(&pointer)
                .copied()
                .ok_or_else(|| "does not resolve to a schema of this document".to_string());
        }
        self.anchors.get(&fragment).copied().ok_or_else(|| {
            format!(
                "names no anchor of this document ({})",
                json_quote(&fragment)
            )
        })
    }

    /// The subschemas a node applies to the same value (`true`) or to a part of it
    /// (`false`).
    pub(crate) fn edges(&self, node: usize) -> Vec<(usize, bool)> {
        let Node::Rules(r) = &self.nodes[node] else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let in_place = r
            .refs
            .iter()
            .chain(&r.all_of)
            .chain(&r.any_of)
            .chain(&r.one_of)
            .chain(r.not.iter())
            .chain(r.if_.iter())
            .chain(r.then.iter())
            .chain(r.else_.iter())
            .chain(r.dependent_schemas.iter().map(|(_, n)| n));
        out.extend(in_place.map(|&n| (n, true)));
        let below = r
            .prefix_items
            .iter()
            .chain(r.items.iter())
            .chain(r.contains.iter())
            .chain(r.properties.iter().map(|(_, n)| n))
            .chain(r.pattern_properties.iter().map(|(_, n)| n))
            .chain(r.additional.iter())
            .chain(r.property_names.iter())
            .chain(&r.unevaluated);
        out.extend(below.map(|&n| (n, false)));
        out
    }

    /// Refuse cycles that never descend into the value (no validator can finish them);
    /// note whether any cycle exists (a recursive schema).
    fn cycles(&mut self, errors: &mut Vec<String>) {
        let n = self.nodes.len();
        let edges: Vec<Vec<(usize, bool)>> = (0..n).map(|i| self.edges(i)).collect();
        // Any cycle at all: iterative three-colour depth-first search.
        self.recursive = has_cycle(n, |i| edges[i].iter().map(|e| e.0));
        // A cycle of in-place edges only.
        if has_cycle(n, |i| edges[i].iter().filter(|e| e.1).map(|e| e.0)) {
            let stuck = in_place_cycle(n, &edges);
            let shown: Vec<&str> = stuck.iter().map(|&i| self.paths[i].as_str()).collect();
            errors.push(format!(
                "{}: references loop back to the same value without descending into it ({}): no validator can finish such a schema",
                shown.first().copied().unwrap_or(""),
                shown.join(" -> ")
            ));
        }
    }

    /// Which nodes the runtime checks exactly: those whose own keywords are all checked
    /// and whose every applied subschema is exact.
    fn exactness(&mut self) {
        let n = self.nodes.len();
        let mut exact: Vec<bool> = self
            .nodes
            .iter()
            .map(|node| match node {
                Node::Bool(_) => true,
                Node::Rules(r) => r.inexact.is_empty(),
            })
            .collect();
        let mut parents: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..n {
            for (child, _) in self.edges(i) {
                parents[child].push(i);
            }
        }
        let mut queue: Vec<usize> = (0..n).filter(|&i| !exact[i]).collect();
        while let Some(i) = queue.pop() {
            for &p in &parents[i] {
                if exact[p] {
                    exact[p] = false;
                    queue.push(p);
                }
            }
        }
        // Where the root's inexactness comes from: the inexact keywords it reaches, in
        // document order.
        let mut seen = vec![false; n];
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            stack.extend(self.edges(i).into_iter().map(|e| e.0));
        }
        let mut at = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if let (true, Node::Rules(r)) = (seen[i], node) {
                for k in &r.inexact {
                    at.push(format!("{}: `{k}`", self.paths[i]));
                }
            }
        }
        self.inexact_at = at;
        self.exact = exact;
    }

    /// The node at a canonical JSON Pointer.
    pub(crate) fn at_pointer(&self, pointer: &str) -> Option<usize> {
        self.by_pointer.get(pointer).copied()
    }
}

/// Whether the graph has a cycle (iterative depth-first search).
fn has_cycle<I: Iterator<Item = usize>>(n: usize, next: impl Fn(usize) -> I) -> bool {
    // 0 unvisited, 1 on the stack, 2 done.
    let mut colour = vec![0u8; n];
    for start in 0..n {
        if colour[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(start, next(start).collect())];
        colour[start] = 1;
        while let Some((node, children)) = stack.last_mut() {
            match children.pop() {
                Some(c) if colour[c] == 1 => return true,
                Some(c) if colour[c] == 0 => {
                    colour[c] = 1;
                    let grand = next(c).collect();
                    stack.push((c, grand));
                }
                Some(_) => {}
                None => {
                    colour[*node] = 2;
                    stack.pop();
                }
            }
        }
    }
    false
}

/// One cycle of in-place edges, as the nodes on it (for the message).
fn in_place_cycle(n: usize, edges: &[Vec<(usize, bool)>]) -> Vec<usize> {
    let mut colour = vec![0u8; n];
    for start in 0..n {
        if colour[start] != 0 {
            continue;
        }
        let children =
            |i: usize| -> Vec<usize> { edges[i].iter().filter(|e| e.1).map(|e| e.0).collect() };
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(start, children(start))];
        colour[start] = 1;
        while let Some((node, kids)) = stack.last_mut() {
            match kids.pop() {
                Some(c) if colour[c] == 1 => {
                    let from = stack.iter().position(|(s, _)| *s == c).unwrap_or(0);
                    let mut cycle: Vec<usize> = stack[from..].iter().map(|(s, _)| *s).collect();
                    cycle.push(c);
                    return cycle;
                }
                Some(c) if colour[c] == 0 => {
                    colour[c] = 1;
                    stack.push((c, children(c)));
                }
                Some(_) => {}
                None => {
                    colour[*node] = 2;
                    stack.pop();
                }
            }
        }
    }
    Vec::new()
}
