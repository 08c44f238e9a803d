//! Not public API: what a type's schema holds that a strict or OpenAPI export cannot
//! keep, known at compile time, for `#[tool(portable = "..")]`.
//!
//! Every [`ToolSchema`](super::ToolSchema) impl states [`Facts`] about its schema in an
//! associated constant (the derive and the std impls combine their children's); the
//! `#[tool]` expansion evaluates [`check`] for each parameter and declared target in a
//! constant spanned at the parameter, so a schema the export would change fails the
//! build there, with the message [`check`] writes. The rules are the export's
//! (`export::project`): [`lost`] lists, per target, the features whose export warns or
//! fails, and the export's tests assert, for each feature and target, that the export
//! of a type with that feature does warn or fail there.
//!
//! Not checked here (the export still reports them): budgets across a whole request
//! (Anthropic strict's optional and union-typed parameters, OpenAI strict's property,
//! enum and character totals), and the schema of a hand-written `ToolSchema` impl that
//! keeps the default [`Facts::UNKNOWN`].

/// The capacity of a [`FieldPath`], in bytes; a longer path is cut with `…`.
const PATH_CAP: usize = 80;

/// A field path inside a parameter (`filters[].tags`), built at compile time.
#[derive(Clone, Copy, Debug)]
pub struct FieldPath {
    bytes: [u8; PATH_CAP],
    len: usize,
}

impl FieldPath {
    /// The empty path (the value itself).
    pub const EMPTY: FieldPath = FieldPath {
        bytes: [0; PATH_CAP],
        len: 0,
    };

    /// `seg.self` (`seg` alone when `self` is empty); `[]` (array items) joins without a dot.
    pub const fn prefixed(self, seg: &str) -> FieldPath {
        let mut out = FieldPath::EMPTY;
        out = out.push(seg.as_bytes());
        if self.len > 0 {
            let (head, _) = self.bytes.split_at(self.len);
            if !starts_with_bracket(head) {
                out = out.push(b".");
            }
            out = out.push(head);
        }
        out
    }

    const fn push(mut self, bytes: &[u8]) -> FieldPath {
        let mut i = 0;
        while i < bytes.len() {
            if self.len == PATH_CAP {
                return self;
            }
            self.bytes[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// The path's text (cut at a character boundary if it was too long).
    pub const fn as_str(&self) -> &str {
        let mut len = self.len;
        loop {
            let (head, _) = self.bytes.split_at(len);
            if let Ok(s) = core::str::from_utf8(head) {
                return s;
            }
            len -= 1;
        }
    }
}

const fn starts_with_bracket(b: &[u8]) -> bool {
    !b.is_empty() && b[0] == b'['
}

/// The features, one bit each (see [`Facts::features`]).
pub mod feature {
    /// A hand-written schema: nothing is known.
    pub const UNKNOWN: u32 = 1 << 0;
    /// An object whose values follow a schema (`additionalProperties: {..}`): a map.
    pub const MAP: u32 = 1 << 1;
    /// Any JSON value (no type), or an array of any JSON values.
    pub const ANY_JSON: u32 = 1 << 2;
    /// An object that admits undeclared keys (below the parameter root).
    pub const OPEN_OBJECT: u32 = 1 << 3;
    /// An object without declared properties (below the parameter root).
    pub const EMPTY_OBJECT: u32 = 1 << 4;
    /// `minLength` / `maxLength`.
    pub const STRING_LENGTH: u32 = 1 << 5;
    /// A published `minimum` / `maximum`.
    pub const NUMBER_BOUND: u32 = 1 << 6;
    /// `maxItems`, or `minItems` above 1.
    pub const ITEMS_BOUND: u32 = 1 << 7;
    /// A `default` annotation.
    pub const DEFAULT: u32 = 1 << 8;
    /// An `examples` annotation.
    pub const EXAMPLES: u32 = 1 << 9;
    /// An `examples` annotation of more than one value.
    pub const EXAMPLES_MANY: u32 = 1 << 10;
    /// A `oneOf` other than "a type or null".
    pub const UNION: u32 = 1 << 11;
    /// A `oneOf` of a type and `null` (an `Option` outside an object property).
    pub const NULLABLE: u32 = 1 << 12;
    /// An `enum` or `const` of values that are not strings.
    pub const NON_STRING_ENUM: u32 = 1 << 13;
    /// A property name outside `[A-Za-z_][A-Za-z0-9_]*` (at most 64 characters).
    pub const PROPERTY_NAME: u32 = 1 << 14;
    /// A unit enum with documented variants (a `oneOf` of string constants with
    /// descriptions): strict modes write it as an `enum`, the descriptions moved into the
    /// description (with a warning, the values unchanged); Gemini keeps the union.
    pub const DOCUMENTED_ENUM: u32 = 1 << 15;
    /// The number of feature bits.
    pub const COUNT: usize = 16;
}

/// The kind of a schema's root node, for the constraints whose meaning depends on it.
pub mod root {
    /// Anything else.
    pub const OTHER: u8 = 0;
    /// A string.
    pub const STRING: u8 = 1;
    /// An array.
    pub const ARRAY: u8 = 2;
    /// A number or integer.
    pub const NUMBER: u8 = 3;
}

/// What one type's schema holds, as far as portability is concerned.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    /// The [`feature`] bits present anywhere in the schema.
    pub features: u32,
    /// The [`root`] kind.
    pub root: u8,
    /// Levels of object nesting (an object is 1, an object in an object 2, a string 0).
    pub depth: usize,
    /// Where each feature first occurs.
    paths: [FieldPath; feature::COUNT],
    /// Where the deepest object is.
    depth_path: FieldPath,
}

impl Facts {
    /// A schema with nothing of note (strings, booleans, `i64`, `f64`).
    pub const PLAIN: Facts = Facts {
        features: 0,
        root: root::OTHER,
        depth: 0,
        paths: [FieldPath::EMPTY; feature::COUNT],
        depth_path: FieldPath::EMPTY,
    };

    /// A hand-written `ToolSchema` impl: its schema is only known at run time, so
    /// `portable` checks nothing below it.
    pub const UNKNOWN: Facts = Facts::PLAIN.with(feature::UNKNOWN);

    /// A node of root kind `root` with nothing of note.
    pub const fn of(root: u8) -> Facts {
        let mut f = Facts::PLAIN;
        f.root = root;
        f
    }

    /// With `features` at this node.
    pub const fn with(mut self, features: u32) -> Facts {
        let mut bit = 0;
        while bit < feature::COUNT {
            let b = 1u32 << bit;
            if features & b != 0 && self.features & b == 0 {
                self.features |= b;
                self.paths[bit] = FieldPath::EMPTY;
            }
            bit += 1;
        }
        self
    }

    /// With the root kind `root` (features kept).
    pub const fn rooted(mut self, root: u8) -> Facts {
        self.root = root;
        self
    }

    /// `child`'s features and depth merged in, its paths under `seg` (`""` keeps them).
    pub const fn merge(mut self, child: Facts, seg: &str) -> Facts {
        let mut bit = 0;
        while bit < feature::COUNT {
            let b = 1u32 << bit;
            if child.features & b != 0 && self.features & b == 0 {
                self.features |= b;
                self.paths[bit] = if seg.is_empty() {
                    child.paths[bit]
                } else {
                    child.paths[bit].prefixed(seg)
                };
            }
            bit += 1;
        }
        if child.depth > self.depth {
            self.depth = child.depth;
            self.depth_path = if seg.is_empty() {
                child.depth_path
            } else {
                child.depth_path.prefixed(seg)
            };
        }
        self
    }

    /// The array of `items`.
    pub const fn array(items: Facts) -> Facts {
        Facts::of(root::ARRAY).merge(items, "[]")
    }

    /// An object (closed or `open`) with the given property count: its properties are
    /// merged in afterwards with [`Facts::property`]. A map is `object(0, false)` with
    /// [`Facts::map_values`].
    pub const fn object(properties: usize, open: bool) -> Facts {
        let mut f = Facts::of(root::OTHER);
        if open {
            f = f.with(feature::OPEN_OBJECT);
        }
        if properties == 0 {
            f = f.with(feature::EMPTY_OBJECT);
        }
        f.depth = 1;
        f
    }

    /// A property `name` of this object with the facts of its schema.
    pub const fn property(self, name: &str, schema: Facts) -> Facts {
        let mut schema = schema;
        schema.depth += 1;
        let mut f = self.merge(schema, name);
        if !gemini_property_name(name) {
            f = f.merge(Facts::PLAIN.with(feature::PROPERTY_NAME), name);
        }
        f
    }

    /// Nothing of note but the property name `name` (an inline tag).
    pub const fn name(name: &str) -> Facts {
        if gemini_property_name(name) {
            Facts::PLAIN
        } else {
            Facts::PLAIN.merge(Facts::PLAIN.with(feature::PROPERTY_NAME), name)
        }
    }

    /// A map (an object without properties) whose values have `values`' facts.
    pub const fn map(values: Facts) -> Facts {
        let mut values = values;
        values.depth += 1;
        Facts::object(0, false)
            .with(feature::MAP)
            .merge(values, "{}")
    }

    /// `oneOf` of `branches` (at least two).
    pub const fn union(branches: &[Facts]) -> Facts {
        let mut f = Facts::PLAIN.with(feature::UNION);
        let mut i = 0;
        while i < branches.len() {
            f = f.merge(branches[i], "");
            i += 1;
        }
        f.root = root::OTHER;
        f
    }

    /// `oneOf [inner, null]` (an `Option` outside an object property).
    pub const fn nullable(inner: Facts) -> Facts {
        let mut f = inner.with(feature::NULLABLE);
        f.root = root::OTHER;
        f
    }

    /// `length(min, max)` on this node: string lengths or item counts by its root kind.
    pub const fn length(self, min: Option<u64>, max: Option<u64>) -> Facts {
        match self.root {
            root::STRING if min.is_some() || max.is_some() => self.with(feature::STRING_LENGTH),
            root::ARRAY => {
                let big_min = match min {
                    Some(m) => m > 1,
                    None => false,
                };
                if big_min || max.is_some() {
                    self.with(feature::ITEMS_BOUND)
                } else {
                    self
                }
            }
            _ => self,
        }
    }

    /// A published `minimum`/`maximum` on this node.
    pub const fn bounded(self) -> Facts {
        self.with(feature::NUMBER_BOUND)
    }

    /// As a `#[tool(args)]` parameter root: one level less deep, and the root object's
    /// own openness and emptiness not counted (the root is open or closed by the tool).
    pub const fn as_root(mut self) -> Facts {
        self.depth = self.depth.saturating_sub(1);
        let mut bit = 0;
        while bit < feature::COUNT {
            let b = 1u32 << bit;
            let root_only = b == feature::OPEN_OBJECT || b == feature::EMPTY_OBJECT;
            if root_only && self.features & b != 0 && self.paths[bit].len == 0 {
                self.features &= !b;
            }
            bit += 1;
        }
        self
    }

    /// Whether `feature` is present.
    pub const fn has(&self, feature: u32) -> bool {
        self.features & feature != 0
    }
}

/// Whether an integer bound is published (the export leaves out the bounds that are the
/// range of `i64`/`u64` itself).
pub const fn informative_int(bound: i128) -> bool {
    !(bound == i64::MIN as i128 || bound == i64::MAX as i128 || bound == u64::MAX as i128)
}

/// Gemini's OpenAPI form: property names `[A-Za-z_][A-Za-z0-9_]*`, at most 64 bytes.
pub const fn gemini_property_name(name: &str) -> bool {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 64 || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return false;
    }
    let mut i = 1;
    while i < b.len() {
        if !(b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            return false;
        }
        i += 1;
    }
    true
}

/// The OpenAI strict rule set (`export::Target::OpenAiResponsesStrict`, `OpenAiChatStrict`).
pub const OPENAI_STRICT: u8 = 0;
/// The Anthropic strict rule set (`export::Target::AnthropicStrict`).
pub const ANTHROPIC_STRICT: u8 = 1;
/// Gemini's OpenAPI form (`export::Target::GeminiOpenApi`).
pub const GEMINI: u8 = 2;

/// OpenAI strict's limit of object nesting, the parameter root included.
pub const OPENAI_MAX_OBJECT_DEPTH: usize = 10;

/// The features whose export to `target` warns or fails (the projection's rules, see
/// `export::project::Flavor`).
pub const fn lost(target: u8) -> u32 {
    use feature::*;
    match target {
        OPENAI_STRICT => {
            MAP | ANY_JSON | OPEN_OBJECT | STRING_LENGTH | DEFAULT | EXAMPLES | UNION | NULLABLE
        }
        ANTHROPIC_STRICT => {
            MAP | ANY_JSON
                | OPEN_OBJECT
                | STRING_LENGTH
                | NUMBER_BOUND
                | ITEMS_BOUND
                | EXAMPLES
                | UNION
                | NULLABLE
        }
        _ => {
            MAP | EMPTY_OBJECT
                | EXAMPLES_MANY
                | UNION
                | NON_STRING_ENUM
                | PROPERTY_NAME
                | DOCUMENTED_ENUM
        }
    }
}

/// The target's name in `portable = ".."` and in messages.
const fn names(target: u8) -> (&'static str, &'static str) {
    match target {
        OPENAI_STRICT => ("openai-strict", "OpenAI strict mode"),
        ANTHROPIC_STRICT => ("anthropic-strict", "Anthropic strict tool use"),
        _ => ("gemini", "Gemini's OpenAPI `parameters` form"),
    }
}

/// What a feature means, and what to change (after the target's description).
const fn explain(bit: u32, target: u8) -> (&'static str, &'static str) {
    use feature::*;
    let gemini = target == GEMINI;
    match bit {
        MAP if gemini => (
            "is a map, whose value schema ",
            " drops (it has no `additionalProperties`); use a Vec of key/value structs",
        ),
        MAP => (
            "is a map, which ",
            " cannot express (every object must be closed); use a Vec of key/value structs",
        ),
        ANY_JSON => (
            "accepts any JSON value, which ",
            " cannot express (every schema needs a type); give it a typed schema",
        ),
        OPEN_OBJECT => (
            "is an open object, which ",
            " closes: keys beyond its declared properties could no longer be sent; declare them as fields",
        ),
        EMPTY_OBJECT => (
            "is an object without declared properties, which ",
            " cannot type (it refuses an OBJECT without properties); declare its fields",
        ),
        STRING_LENGTH => (
            "has a string length bound (`minLength`/`maxLength`: a `length(..)`, or a `char`, which is one character long), which ",
            " moves into the description, unenforced by the provider; remove the `length(..)` (for a `char`, use `String`)",
        ),
        NUMBER_BOUND => (
            "has a numeric bound (`minimum`/`maximum`: a `range(..)`, or the range of an 8- to 32-bit or unsigned integer type), which ",
            " moves into the description; use `i64`/`f64` without `range(..)`",
        ),
        ITEMS_BOUND => (
            "has `maxItems` or a `minItems` above 1 (a fixed-size array or `length(..)`), which ",
            " moves into the description; use a `Vec` without `length(..)`",
        ),
        DEFAULT => (
            "has a `default` (`#[schema(default)]` or `#[serde(default)]`), which ",
            " moves into the description; remove it, or make the value an `Option`",
        ),
        EXAMPLES => (
            "has schema `examples`, which ",
            " moves into the description; show whole calls as the tool's input examples instead (a ```json block under `# Examples`)",
        ),
        EXAMPLES_MANY => (
            "has more than one schema example, of which ",
            " keeps one (`example`); keep one, or show whole calls as the tool's input examples",
        ),
        UNION => (
            "is a union (`oneOf`: an enum with data, or unit variants with examples or defaults), which ",
            " rewrites as `anyOf`; use a unit-only enum or a struct of optional fields",
        ),
        DOCUMENTED_ENUM => (
            "is a unit enum with documented variants (a `oneOf` of described strings), which ",
            " rewrites as `anyOf`; remove the variants' doc comments (document the values in the enum's own doc comment)",
        ),
        NULLABLE => (
            "is nullable (`oneOf` with null: an `Option` in an array or enum), which ",
            " rewrites as `anyOf`; leave `Option` to struct fields and parameters",
        ),
        NON_STRING_ENUM => (
            "has an `enum`/`const` of values that are not strings, which ",
            " moves into the description; use strings",
        ),
        PROPERTY_NAME => (
            "is a property name outside `[A-Za-z_][A-Za-z0-9_]*` (at most 64 characters), which ",
            " refuses; rename it (`#[serde(rename = \"..\")]`, or a `rename_all` that keeps `_`)",
        ),
        _ => ("", ""),
    }
}

/// The capacity of a [`Message`].
const MESSAGE_CAP: usize = 600;

/// A compile-time message.
#[derive(Clone, Copy, Debug)]
pub struct Message {
    bytes: [u8; MESSAGE_CAP],
    len: usize,
}

impl Message {
    pub(crate) const fn new() -> Message {
        Message {
            bytes: [0; MESSAGE_CAP],
            len: 0,
        }
    }

    pub(crate) const fn push(mut self, s: &str) -> Message {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && self.len < MESSAGE_CAP {
            self.bytes[self.len] = b[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// A signed integer in decimal.
    pub(crate) const fn push_int(self, n: i128) -> Message {
        if n < 0 {
            // `unsigned_abs` keeps `i128::MIN` exact.
            self.push("-").push_u128(n.unsigned_abs())
        } else {
            self.push_u128(n as u128)
        }
    }

    const fn push_u128(self, n: u128) -> Message {
        let mut digits = [0u8; 40];
        let mut count = 0;
        let mut n = n;
        loop {
            digits[39 - count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let (_, tail) = digits.split_at(40 - count);
        match core::str::from_utf8(tail) {
            Ok(s) => self.push(s),
            Err(_) => self,
        }
    }

    const fn push_number(self, n: usize) -> Message {
        let mut digits = [0u8; 20];
        let mut count = 0;
        let mut n = n;
        loop {
            digits[19 - count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let (_, tail) = digits.split_at(20 - count);
        match core::str::from_utf8(tail) {
            Ok(s) => self.push(s),
            Err(_) => self,
        }
    }

    /// The text (cut at a character boundary if it was too long).
    pub const fn as_str(&self) -> &str {
        let mut len = self.len;
        loop {
            let (head, _) = self.bytes.split_at(len);
            if let Ok(s) = core::str::from_utf8(head) {
                return s;
            }
            len -= 1;
        }
    }
}

/// Why parameter `param` (of type text `ty`, with facts `facts`) cannot be exported to
/// `target` without loss, or `None` when it can. The first lost feature is reported.
pub const fn check(facts: &Facts, target: u8, param: &str, ty: &str) -> Option<Message> {
    let (key, what) = names(target);
    let lost = facts.features & lost(target);
    let mut bit = 0;
    while bit < feature::COUNT {
        let b = 1u32 << bit;
        if lost & b != 0 {
            let (before, after) = explain(b, target);
            let path = facts.paths[bit];
            let m = Message::new().push("`").push(param);
            let m = if path.len > 0 {
                let p = path.as_str();
                let m = if starts_with_bracket(p.as_bytes()) {
                    m
                } else {
                    m.push(".")
                };
                m.push(p)
                    .push("` (in `")
                    .push(param)
                    .push(": ")
                    .push(ty)
                    .push("`) ")
            } else {
                m.push(": ").push(ty).push("` ")
            };
            let m = m
                .push(before)
                .push(what)
                .push(after)
                .push(", or drop `")
                .push(key)
                .push("` from `portable`");
            return Some(m);
        }
        bit += 1;
    }
    // The parameter root is one more level.
    if target == OPENAI_STRICT && facts.depth + 1 > OPENAI_MAX_OBJECT_DEPTH {
        let m = Message::new().push("`").push(param);
        let m = if facts.depth_path.len > 0 {
            m.push(".").push(facts.depth_path.as_str())
        } else {
            m
        };
        let m = m
            .push("` (in `")
            .push(param)
            .push(": ")
            .push(ty)
            .push("`) nests objects ")
            .push_number(facts.depth + 1)
            .push(" levels deep, counting the parameter root; ")
            .push(what)
            .push(" allows at most ")
            .push_number(OPENAI_MAX_OBJECT_DEPTH)
            .push(": flatten the nesting, or drop `")
            .push(key)
            .push("` from `portable`");
        return Some(m);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_fields_and_items() {
        let p = FieldPath::EMPTY
            .prefixed("tags")
            .prefixed("[]")
            .prefixed("filters");
        assert_eq!(p.as_str(), "filters[].tags");
        let long = FieldPath::EMPTY.prefixed(&"é".repeat(60));
        assert!(long.as_str().len() <= PATH_CAP && long.as_str().chars().all(|c| c == 'é'));
    }

    #[test]
    fn messages_name_the_path_and_the_fix() {
        let inner = Facts::object(1, false).property("tags", Facts::map(Facts::PLAIN));
        let f = Facts::array(inner);
        let m = check(&f, OPENAI_STRICT, "filters", "Vec<Filter>").unwrap();
        assert_eq!(
            m.as_str(),
            "`filters[].tags` (in `filters: Vec<Filter>`) is a map, which OpenAI strict mode cannot express (every object must be closed); use a Vec of key/value structs, or drop `openai-strict` from `portable`"
        );
        assert!(check(&Facts::PLAIN, OPENAI_STRICT, "a", "i64").is_none());
        let mut deep = Facts::PLAIN;
        for _ in 0..10 {
            deep = Facts::object(1, false).property("n", deep);
        }
        let m = check(&deep, OPENAI_STRICT, "d", "D").unwrap();
        assert!(
            m.as_str().contains("nests objects 11 levels deep"),
            "{}",
            m.as_str()
        );
        assert!(check(&deep, GEMINI, "d", "D").is_none());
    }
}
