//! JSON Schema 2020-12 documents published exactly as written: [`VerbatimSchema`].

mod compile;
mod eval;
#[cfg(feature = "json-schema")]
mod full;

use std::fmt;
use std::sync::Arc;

use compile::Compiled;

use super::SchemaError;
use crate::json::Value;
use crate::violations::Violations;

/// A JSON Schema 2020-12 document that a tool publishes exactly as written: every
/// keyword, every key in its order, every number exactly (written as `serde_json` writes
/// it: `1E300` as `1e+300`).
///
/// The schema vocabulary ([`Schema`](super::Schema)) covers what Rust types say; a tool
/// defined at run time (proxied from another server, generated from an API description)
/// may need all of JSON Schema: `$defs` and `$ref`, `allOf`/`anyOf`/`not`,
/// `if`/`then`/`else`, `dependentRequired`, `patternProperties`… A `VerbatimSchema`
/// carries such a document through the SDK unchanged. Set it on a definition with
/// [`ToolDefinition::with_verbatim_parameters`](crate::ToolDefinition::with_verbatim_parameters)
/// and [`ToolDefinition::with_verbatim_output`](crate::ToolDefinition::with_verbatim_output),
/// or build the whole tool with [`RawTool::with_json_schema`](crate::RawTool::with_json_schema).
///
/// # What is checked when it is built
///
/// Everything that would break a consumer, with every problem reported and
/// path-qualified (`parameters.$defs.address.properties.zip: ...`), as a
/// [`SchemaError`] (`UNSUPPORTED_SCHEMA`):
///
/// - the shape the 2020-12 meta-schema gives each keyword (a schema is an object or a
///   boolean, `required` lists unique strings, `minLength` is a non-negative integer,
///   `allOf` is a non-empty array of schemas, `$anchor` matches
///   `^[A-Za-z_][-A-Za-z0-9._]*$`, …); keywords JSON Schema does not define are
///   annotations, kept and published (`x-mcp-header`, say);
/// - the dialect: `$schema`, when present, is [`VerbatimSchema::DIALECT`] and appears
///   only at the root; `$id` appears only at the root (one schema resource per
///   document); the draft 2019-09 keywords a 2020-12 validator would silently ignore
///   (`dependencies`, `$recursiveRef`, `$recursiveAnchor`) are refused with what to use;
/// - references: every `$ref` and `$dynamicRef` resolves within the document (`#`,
///   a JSON Pointer such as `#/$defs/address`, an anchor such as `#addressDef`, or the
///   root's `$id` followed by one of those); a reference to any other URI is refused,
///   never fetched;
/// - cycles: references may recurse through what descends into the value (a tree whose
///   `children` items refer back to the tree, see [`VerbatimSchema::is_recursive`]);
///   a loop that applies to the same value again without descending (`{"$ref":"#"}` at
///   the root, two `$defs` that only refer to each other) is refused, since no
///   validator can finish it;
/// - nesting: at most [`MAX_SCHEMA_DEPTH`](super::MAX_SCHEMA_DEPTH) levels of schemas.
///
/// With the `json-schema` feature the document is also validated against the 2020-12
/// meta-schema by the `jsonschema` crate and compiled by it (which checks every
/// `pattern` as an ECMA-262 regular expression).
///
/// # Validation
///
/// The runtime has a validator of its own for these documents. It checks every keyword
/// of JSON Schema 2020-12 exactly, except `unevaluatedItems`, `unevaluatedProperties`,
/// `uniqueItems`, a `multipleOf` that is not an integer of at most 2^53, and a
/// `pattern` (or `patternProperties` key) outside the regular expressions the runtime
/// compiles (see [`Pattern`](super::Pattern): no look-around or back-references).
/// `format` is an annotation, as the 2020-12 dialect defines it by default, and so are
/// the `content*` keywords. What the runtime's validator rejects, the schema rejects
/// too; a document that uses none of the exceptions is decided exactly
/// ([`VerbatimSchema::is_checked_exactly`]).
///
/// - **Arguments** (a tool's parameters): the runtime's validator, then, with the
///   `json-schema` feature and a document it does not decide exactly, the `jsonschema`
///   crate. Without the feature, the keywords listed above are left to the tool: **the
///   tool owns the validation of what its schema says beyond them.** A failure is
///   `INVALID_ARGS` with every violation, path-qualified, before any policy or body runs.
///   As for every tool, `null` for a property means "omitted" where the arguments only
///   match without it: arguments that fail as sent are checked again with every object
///   member whose value is `null` left out, and the body receives that copy when it
///   matches (strict provider exports declare optional properties nullable).
/// - **Outputs** are never sent unless they match: a document the runtime does not
///   decide exactly is refused as an output schema without the `json-schema` feature
///   ([`VerbatimSchema::output`]), and with it the `jsonschema` crate decides.
///
/// Values are checked at most 256 levels deep by the runtime's validator (deeper parts of
/// an argument are left to the tool; an output that deep is refused), and at most 128
/// levels deep by the `jsonschema` crate (a deeper value it would have to check is
/// refused with a message saying so).
///
/// ```
/// use dsh_runtime::json;
/// use dsh_runtime::schema::VerbatimSchema;
///
/// let text = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
///   "$defs":{"zip":{"type":"string","pattern":"^[0-9]{5}$"}},
///   "properties":{"zip":{"$ref":"#/$defs/zip"},"country":{"const":"US"}},
///   "required":["zip"],"additionalProperties":false}"##;
/// let schema = VerbatimSchema::parameters(json::parse(text).unwrap()).unwrap();
/// assert_eq!(schema.as_value(), &json::parse(text).unwrap());
/// assert!(schema.is_checked_exactly());
///
/// let bad = VerbatimSchema::parameters(json::parse(r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}"##).unwrap());
/// assert_eq!(
///     bad.unwrap_err().violations(),
///     [r##"parameters.properties.a: `$ref` "#/$defs/nope" does not resolve to a schema of this document"##]
/// );
/// ```
#[derive(Clone)]
pub struct VerbatimSchema(Arc<Inner>);

struct Inner {
    value: Value,
    compiled: Compiled,
    #[cfg(feature = "json-schema")]
    full: full::Full,
}

/// Where a reference of a [`VerbatimSchema`] leads ([`VerbatimSchema::resolve`]).
#[derive(Clone, Copy, Debug)]
pub struct ResolvedRef<'a> {
    pointer: &'a str,
    schema: &'a Value,
}

impl<'a> ResolvedRef<'a> {
    /// The target's JSON Pointer from the document's root (`/$defs/address`; empty for
    /// the root itself), with `~` and `/` in keys escaped as `~0` and `~1`.
    pub fn pointer(&self) -> &'a str {
        self.pointer
    }

    /// The target as a same-document reference: `#` and the pointer, percent-encoded
    /// where a URI fragment needs it (`#/$defs/address`).
    pub fn fragment(&self) -> String {
        let mut out = String::from("#");
        for b in self.pointer.bytes() {
            let plain = b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'/' | b'-'
                        | b'.'
                        | b'_'
                        | b'~'
                        | b'!'
                        | b'$'
                        | b'&'
                        | b'\''
                        | b'('
                        | b')'
                        | b'*'
                        | b'+'
                        | b','
                        | b';'
                        | b'='
                        | b':'
                        | b'@'
                        | b'?'
                );
            if plain {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    }

    /// The target schema (an object or a boolean).
    pub fn schema(&self) -> &'a Value {
        self.schema
    }
}

impl VerbatimSchema {
    /// The dialect of every verbatim schema, which `$schema` may state:
    /// `https://json-schema.org/draft/2020-12/schema` (MCP's default dialect).
    pub const DIALECT: &'static str = compile::DIALECT;

    /// Check a document (any root) and keep it as written. Paths in errors start at
    /// `schema`.
    ///
    /// # Errors
    ///
    /// Every problem listed in the type's docs, as one [`SchemaError`].
    pub fn new(value: Value) -> Result<VerbatimSchema, SchemaError> {
        Self::build(value, "schema")
    }

    /// A tool's parameter schema: as [`VerbatimSchema::new`], and the root must say
    /// `"type": "object"` (MCP and every provider take only object-rooted parameter
    /// schemas). Paths in errors start at `parameters`.
    ///
    /// # Errors
    ///
    /// Every problem, as one [`SchemaError`].
    pub fn parameters(value: Value) -> Result<VerbatimSchema, SchemaError> {
        let root_object = value.get("type").and_then(Value::as_str) == Some("object");
        let built = Self::build(value, "parameters");
        match (built, root_object) {
            (Ok(s), true) => Ok(s),
            (Ok(_), false) => Err(SchemaError::new(vec![ROOT_NOT_OBJECT.to_string()])),
            (Err(e), true) => Err(e),
            (Err(e), false) => {
                let mut all = vec![ROOT_NOT_OBJECT.to_string()];
                all.extend(e.violations().iter().cloned());
                Err(SchemaError::new(all))
            }
        }
    }

    /// A tool's output schema: as [`VerbatimSchema::new`] (any root), and, without the
    /// `json-schema` feature, a document the runtime checks exactly
    /// ([`VerbatimSchema::is_checked_exactly`]): an output is only sent when it matches
    /// its published schema. Paths in errors start at `output`.
    ///
    /// # Errors
    ///
    /// Every problem, as one [`SchemaError`]; without the feature, each keyword the
    /// runtime does not check is named.
    pub fn output(value: Value) -> Result<VerbatimSchema, SchemaError> {
        let schema = Self::build(value, "output")?;
        match schema.output_problems() {
            None => Ok(schema),
            Some(problems) => Err(SchemaError::new(problems)),
        }
    }

    /// Why this schema cannot be an output schema in this build, if it cannot.
    pub(crate) fn output_problems(&self) -> Option<Vec<String>> {
        if cfg!(feature = "json-schema") || self.is_checked_exactly() {
            return None;
        }
        Some(
            self.unchecked_keywords()
                .iter()
                .map(|at| {
                    format!(
                        "{at} is not checked by the runtime's own validator, and an output is only sent when it matches its schema: enable dsh-runtime's `json-schema` feature (full JSON Schema validation), or leave the keyword out"
                    )
                })
                .collect(),
        )
    }

    fn build(value: Value, label: &str) -> Result<VerbatimSchema, SchemaError> {
        let compiled = Compiled::new(&value, label);
        #[cfg(feature = "json-schema")]
        {
            // The meta-schema and `jsonschema`'s compilation back our own checks up: they
            // are asked only about a document ours accepts (so a problem is reported
            // once, in our words).
            let compiled = compiled.map_err(SchemaError::new)?;
            let full = full::Full::new(&value, label).map_err(SchemaError::new)?;
            Ok(VerbatimSchema(Arc::new(Inner {
                value,
                compiled,
                full,
            })))
        }
        #[cfg(not(feature = "json-schema"))]
        match compiled {
            Ok(compiled) => Ok(VerbatimSchema(Arc::new(Inner { value, compiled }))),
            Err(errors) => Err(SchemaError::new(errors)),
        }
    }

    /// The document, exactly as given (key order included).
    pub fn as_value(&self) -> &Value {
        &self.0.value
    }

    /// The document as compact JSON text, keys in their given order.
    pub fn to_json_string(&self) -> String {
        self.0.value.to_string()
    }

    /// The root's `type` when it is a single type name (`"object"` for every parameter
    /// schema).
    pub fn root_type(&self) -> Option<&str> {
        self.0.compiled.root_type.as_deref()
    }

    /// Whether some reference leads back to a schema it is reached from (a recursive
    /// data structure). Exports that must inline references refuse such a schema.
    pub fn is_recursive(&self) -> bool {
        self.0.compiled.recursive
    }

    /// Whether the runtime's own validator decides this document exactly (it uses none
    /// of the keywords listed in the type's docs as unchecked), so validation needs no
    /// `jsonschema` crate.
    pub fn is_checked_exactly(&self) -> bool {
        self.0.compiled.exact.first().copied().unwrap_or(true)
    }

    /// The keywords the runtime's own validator leaves unchecked, as `path: keyword`
    /// (`parameters.properties.tags: \`uniqueItems\``); empty when
    /// [`VerbatimSchema::is_checked_exactly`].
    pub fn unchecked_keywords(&self) -> &[String] {
        &self.0.compiled.inexact_at
    }

    /// Where a reference (the text of a `$ref` or `$dynamicRef`) leads in this document;
    /// `None` when it names nothing here. Every reference in the document resolves.
    pub fn resolve(&self, reference: &str) -> Option<ResolvedRef<'_>> {
        let node = self.0.compiled.resolve(reference).ok()?;
        let pointer = self.0.compiled.pointers.get(node)?;
        Some(ResolvedRef {
            pointer,
            schema: value_at(&self.0.value, pointer)?,
        })
    }

    /// The schema at a JSON Pointer of this document (`/$defs/address`, in the escaped
    /// form [`ResolvedRef::pointer`] gives), when a schema is there.
    pub fn schema_at(&self, pointer: &str) -> Option<&Value> {
        self.0.compiled.at_pointer(pointer)?;
        value_at(&self.0.value, pointer)
    }

    /// Every violation of `value` against this schema (the root named `label`, and paths
    /// prefixed with it when `prefix`: `value.x`), as the pipeline reports them; see the
    /// type's docs for what is checked.
    ///
    /// # Errors
    ///
    /// Every violation found.
    pub fn validate(&self, value: &Value, label: &str, prefix: bool) -> Result<(), Violations> {
        self.check(value, label, prefix, false)
    }

    /// Validate `value` under the rule of `exact`: a part of the value too deep for the
    /// runtime's validator is a violation rather than left to the tool.
    fn check(
        &self,
        value: &Value,
        label: &str,
        prefix: bool,
        exact: bool,
    ) -> Result<(), Violations> {
        let checker = eval::Checker {
            c: &self.0.compiled,
            label,
            prefix,
            truncated: std::cell::Cell::new(false),
        };
        checker.run(value)?;
        if self.is_checked_exactly() && !checker.truncated.get() {
            return Ok(());
        }
        #[cfg(feature = "json-schema")]
        {
            let _ = exact;
            self.0.full.check(value, label, prefix)
        }
        #[cfg(not(feature = "json-schema"))]
        {
            if exact && checker.truncated.get() {
                let mut out = Violations::new();
                let mut m = String::from("\"");
                crate::violations::write_path(
                    &mut m,
                    &crate::violations::Path::Root,
                    label,
                    prefix,
                );
                m.push_str(&format!(
                    "\" is nested deeper than the runtime checks a value against a JSON Schema ({} levels)",
                    eval::MAX_CHECK_DEPTH
                ));
                out.push(&m);
                return Err(out);
            }
            Ok(())
        }
    }

    /// Validate tool arguments (root `arguments`); `Some` is the copy the body receives
    /// when only the arguments without their `null` members match.
    pub(crate) fn check_arguments(&self, args: &Value) -> Result<Option<Value>, Violations> {
        match self.check(args, "arguments", false, false) {
            Ok(()) => Ok(None),
            Err(violations) => match without_nulls(args, 0) {
                Some(stripped) if self.check(&stripped, "arguments", false, false).is_ok() => {
                    Ok(Some(stripped))
                }
                _ => Err(violations),
            },
        }
    }

    /// Validate a tool's output (root `value`, paths prefixed: `value.x`).
    pub(crate) fn check_output(&self, value: &Value) -> Result<(), Violations> {
        self.check(value, "value", true, true)
    }
}

const ROOT_NOT_OBJECT: &str = "parameters: a tool's parameter schema must say \"type\": \"object\" at its root (MCP and every provider take only object-rooted parameter schemas)";

/// `value` without the object members whose value is `null`, at every depth (to
/// [`eval::MAX_CHECK_DEPTH`] levels); `None` when it has none.
fn without_nulls(value: &Value, depth: usize) -> Option<Value> {
    if depth >= eval::MAX_CHECK_DEPTH {
        return None;
    }
    match value {
        Value::Object(o) => {
            let mut changed = false;
            let mut out = crate::json::Object::with_capacity(o.len());
            for (k, v) in o.iter() {
                if v.is_null() {
                    changed = true;
                    continue;
                }
                match without_nulls(v, depth + 1) {
                    Some(nv) => {
                        changed = true;
                        out.insert(k, nv);
                    }
                    None => {
                        out.insert(k, v.clone());
                    }
                }
            }
            changed.then_some(Value::Object(out))
        }
        Value::Array(items) => {
            let mut changed = false;
            let out: Vec<Value> = items
                .iter()
                .map(|it| match without_nulls(it, depth + 1) {
                    Some(nv) => {
                        changed = true;
                        nv
                    }
                    None => it.clone(),
                })
                .collect();
            changed.then(|| Value::from(out))
        }
        _ => None,
    }
}

/// The value at a canonical JSON Pointer.
fn value_at<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    let mut cur = root;
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        cur = match cur {
            Value::Object(o) => o.get(&segment)?,
            Value::Array(a) => a.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

impl fmt::Debug for VerbatimSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("VerbatimSchema")
            .field(&format_args!("{}", self.0.value))
            .finish()
    }
}

/// Equal when the documents are equal as JSON (key order aside).
impl PartialEq for VerbatimSchema {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.value == other.0.value
    }
}
