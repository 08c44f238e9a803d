//! The lossless, iterative JSON parser.

use std::fmt;

use smallvec::SmallVec;

use super::keys::DupDetector;
use super::number::{N, Number};
use super::path::{self, Seg};
use super::str::Str;
use super::value::{Array, Object, Value};

/// Root label of the paths in parse error messages.
const ROOT: &str = "arguments";

/// Options for [`parse_with`] and [`parse_slice`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// Maximum number of nested arrays/objects. A document nested exactly this
    /// deep is accepted; one more level fails with [`ParseErrorKind::TooDeep`].
    /// Scalars do not count: with `max_depth: 0` only a top-level scalar
    /// parses. The parser is iterative, so large limits are safe; the default
    /// is 128.
    pub max_depth: usize,
}

impl ParseOptions {
    /// The default depth limit (128).
    pub const DEFAULT_MAX_DEPTH: usize = 128;

    /// Options with the given depth limit.
    pub fn with_max_depth(max_depth: usize) -> ParseOptions {
        ParseOptions { max_depth }
    }
}

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        ParseOptions {
            max_depth: Self::DEFAULT_MAX_DEPTH,
        }
    }
}

/// What went wrong while parsing; see [`ParseError`] for the position.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The text is not JSON here; the message says what was expected.
    Syntax(String),
    /// The key occurs twice in one object (compared after unescaping). A key
    /// longer than [`path::MAX_ECHO_CHARS`](crate::path::MAX_ECHO_CHARS)
    /// characters is given shortened by [`path::elide`](crate::path::elide).
    DuplicateKey(String),
    /// `-0`, `-0.0`, `-0e5`, …: JSON data cannot carry a negative zero losslessly.
    NegativeZero,
    /// The number literal (given, shortened like keys when long) has more
    /// precision than an `i64`, `u64` or `f64` holds, so accepting it would
    /// round it.
    InexactNumber(String),
    /// The number literal (given, shortened like keys when long) is beyond the
    /// finite range of an `f64` (it would become infinite, or zero for a
    /// non-zero literal).
    NumberOutOfRange(String),
    /// Arrays/objects are nested deeper than the limit.
    TooDeep {
        /// The configured [`ParseOptions::max_depth`].
        limit: usize,
    },
    /// An unknown escape (`\x`) or a malformed `\uXXXX`.
    InvalidEscape,
    /// A `\u` escape for half of a surrogate pair without its other half.
    LoneSurrogate,
    /// The input bytes are not UTF-8 (only from [`parse_slice`]).
    InvalidUtf8,
    /// A raw control character (U+0000 to U+001F) inside a string.
    ControlCharacter,
    /// Something other than whitespace follows the JSON value.
    TrailingCharacters,
    /// The input ends in the middle of a value.
    Eof,
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Syntax(msg) => f.write_str(msg),
            ParseErrorKind::DuplicateKey(key) => {
                f.write_str("duplicate key ")?;
                super::write::write_json_string(f, key)
            }
            ParseErrorKind::NegativeZero => {
                f.write_str("-0 is not allowed (JSON has no negative zero)")
            }
            ParseErrorKind::InexactNumber(lit) => write!(f, "number {lit} cannot be held exactly"),
            ParseErrorKind::NumberOutOfRange(lit) => {
                write!(f, "number {lit} is out of the range of a 64-bit float")
            }
            ParseErrorKind::TooDeep { limit } => {
                write!(f, "nesting is deeper than the limit of {limit} levels")
            }
            ParseErrorKind::InvalidEscape => f.write_str("invalid escape sequence in string"),
            ParseErrorKind::LoneSurrogate => {
                f.write_str("unpaired surrogate in \\u escape (lone half of a UTF-16 pair)")
            }
            ParseErrorKind::InvalidUtf8 => f.write_str("invalid UTF-8"),
            ParseErrorKind::ControlCharacter => {
                f.write_str("unescaped control character in string")
            }
            ParseErrorKind::TrailingCharacters => {
                f.write_str("trailing characters after the JSON value")
            }
            ParseErrorKind::Eof => f.write_str("unexpected end of input"),
        }
    }
}

/// A parse failure: what went wrong, where in the text, and at which JSON
/// path.
///
/// Displays as `<kind> at <path> (line <l>, column <c>)`, for example
/// `duplicate key "a" at arguments.filters[2] (line 1, column 31)`. The path
/// is rooted at `arguments` and names the value being parsed (for a duplicate
/// key: the object holding it; between members: the enclosing container).
///
/// The message stays short whatever the input: long keys, number literals and
/// paths are shortened (see [`crate::path`]), so a 10 MB literal is not echoed.
#[derive(Clone, PartialEq, Eq)]
pub struct ParseError(Box<ErrorInner>);

#[derive(Clone, PartialEq, Eq)]
struct ErrorInner {
    kind: ParseErrorKind,
    line: usize,
    column: usize,
    offset: usize,
    path: String,
}

impl ParseError {
    /// What went wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.0.kind
    }

    /// 1-based line of the error position (lines end at `\n`).
    pub fn line(&self) -> usize {
        self.0.line
    }

    /// 1-based column of the error position, counted in characters.
    pub fn column(&self) -> usize {
        self.0.column
    }

    /// Byte offset of the error position in the input.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// JSON path of the value being parsed, e.g. `arguments.items[2]`.
    pub fn path(&self) -> &str {
        &self.0.path
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {} (line {}, column {})",
            self.0.kind, self.0.path, self.0.line, self.0.column
        )
    }
}

impl fmt::Debug for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParseError")
            .field("kind", &self.0.kind)
            .field("line", &self.0.line)
            .field("column", &self.0.column)
            .field("offset", &self.0.offset)
            .field("path", &self.0.path)
            .finish()
    }
}

impl std::error::Error for ParseError {}

/// Parses one JSON document with the default [`ParseOptions`].
///
/// The grammar is RFC 8259 exactly: whitespace is space, tab, LF and CR; no
/// comments, trailing commas, leading zeros, `+` signs, `NaN` or `Infinity`;
/// exactly one value, optionally surrounded by whitespace.
///
/// The result is lossless; the parser rejects rather than alters data:
///
/// * duplicate keys in one object fail ([`ParseErrorKind::DuplicateKey`]);
/// * lone surrogate escapes fail ([`ParseErrorKind::LoneSurrogate`]);
/// * numbers are never rounded silently. A literal is accepted only if the
///   [`Number`] it becomes denotes exactly the same decimal value. Integers
///   that fit `i64`/`u64` are held as integers. Any other literal is read as
///   the nearest `f64` and accepted only if that `f64`'s shortest round-trip
///   decimal form has the same value as the literal (ignoring leading and
///   trailing zeros and the placement of the exponent). Literals whose value
///   is an integer in `i64::MIN..=u64::MAX` become that integer exactly,
///   whatever their spelling (`2.0` and `1e2` are the integers 2 and 100).
///   An integral literal beyond that range is accepted when the nearest
///   `f64` is exactly that integer, however many digits it is written with
///   (`1180591620717411303424`, which is 2^70, but not
///   `1180591620717411303425`).
///   So `0.1`, `1.5e3`, `2.0`, `1.0e2`, `-3.25`, `1e300` and
///   `100000000000000000000000` are accepted, while `3.141592653589793238`,
///   `12345678901234567890123` and `12345678901234567890123.0` fail with
///   [`ParseErrorKind::InexactNumber`], `1e400` and `1e-400` with
///   [`ParseErrorKind::NumberOutOfRange`], and `-0`, `-0.0`, `-0e5` with
///   [`ParseErrorKind::NegativeZero`].
///
/// The parser uses an explicit stack (no recursion): any depth allowed by
/// [`ParseOptions::max_depth`] is safe on a small stack.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    parse_with(text, &ParseOptions::default())
}

/// Parses one JSON document with the given options; see [`parse`].
pub fn parse_with(text: &str, opts: &ParseOptions) -> Result<Value, ParseError> {
    Parser::new(text, opts).run()
}

/// Parses one JSON document from bytes; see [`parse`].
///
/// Bytes that are not UTF-8 fail with [`ParseErrorKind::InvalidUtf8`] at the
/// first invalid byte (with the path of the value containing it), unless the
/// text before that byte already contains an error, which is then reported.
pub fn parse_slice(bytes: &[u8], opts: &ParseOptions) -> Result<Value, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_with(text, opts),
        Err(e) => {
            let valid = e.valid_up_to();
            let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
            let parser = Parser::new(prefix, opts);
            match parser.run() {
                Err(mut err) if err.0.kind == ParseErrorKind::Eof => {
                    err.0.kind = ParseErrorKind::InvalidUtf8;
                    Err(err)
                }
                Err(err) => Err(err),
                Ok(_) => Err(make_error(
                    prefix,
                    ParseErrorKind::InvalidUtf8,
                    valid,
                    ROOT.to_owned(),
                )),
            }
        }
    }
}

fn make_error(text: &str, kind: ParseErrorKind, offset: usize, path: String) -> ParseError {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let column = before[line_start..].chars().count() + 1;
    ParseError(Box::new(ErrorInner {
        kind,
        line,
        column,
        offset,
        path,
    }))
}

/// An internal failure before it gets its path: kind and byte offset.
type Fail = (ParseErrorKind, usize);

fn syntax(msg: &str, at: usize) -> Fail {
    (ParseErrorKind::Syntax(msg.to_owned()), at)
}

/// How many open containers the parser holds without allocating (tool arguments rarely
/// nest deeper).
const INLINE_FRAMES: usize = 8;

/// One open array or object.
struct Frame {
    is_object: bool,
    /// Length of the shared element stack when this frame opened.
    values_start: usize,
    /// Length of the shared member stack when this frame opened.
    members_start: usize,
    /// Object only: the key of the member being parsed.
    key: Str,
    /// Object only: duplicate-key tracking.
    dups: DupDetector,
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    /// The open containers, outermost first (inline up to [`INLINE_FRAMES`] deep).
    frames: SmallVec<[Frame; INLINE_FRAMES]>,
    /// Elements of all open arrays, innermost last.
    values: Vec<Value>,
    /// Members of all open objects, innermost last.
    members: Vec<(Str, Value)>,
    /// Buffer for strings with escapes.
    scratch: String,
}

const WORD_ONES: u64 = 0x0101_0101_0101_0101;
const WORD_HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `w` (little-endian) that is `"`, `\` or below
/// 0x20 is set in the result, except that bytes above the first such byte may be
/// flagged spuriously (borrows propagate upwards): the *lowest* set bit is
/// always exact, which is all [`scan_string`] uses.
#[inline]
fn attention_mask(w: u64) -> u64 {
    let quote = w ^ (WORD_ONES * u64::from(b'"'));
    let backslash = w ^ (WORD_ONES * u64::from(b'\\'));
    let has_zero = |v: u64| v.wrapping_sub(WORD_ONES) & !v;
    let below_space = w.wrapping_sub(WORD_ONES * 0x20) & !w;
    (has_zero(quote) | has_zero(backslash) | below_space) & WORD_HIGHS
}

/// Whether `b` ends a run of plain string bytes: `"`, `\` or a control byte.
#[inline]
fn needs_attention(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// The offset of the first `"`, `\` or control byte (below 0x20) at or after
/// `i`, or `bytes.len()` if there is none. Scans eight bytes at a time.
#[inline]
fn scan_string(bytes: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let mask = attention_mask(u64::from_le_bytes(*chunk));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if needs_attention(b) {
            return i;
        }
        i += 1;
    }
    i
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, opts: &ParseOptions) -> Parser<'a> {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            max_depth: opts.max_depth,
            frames: SmallVec::new(),
            values: Vec::new(),
            members: Vec::new(),
            scratch: String::new(),
        }
    }

    /// Turns an internal failure into a [`ParseError`]. With `slot`, the path
    /// includes the member/element currently expected in the innermost open
    /// container; without it, the path ends at that container.
    fn fail(&self, (kind, offset): Fail, slot: bool) -> ParseError {
        let n = self.frames.len();
        let segs = self.frames.iter().enumerate().filter_map(|(i, f)| {
            if i + 1 == n && !slot {
                return None;
            }
            Some(if f.is_object {
                Seg::Key(&f.key)
            } else {
                let end = match self.frames.get(i + 1) {
                    Some(child) => child.values_start,
                    None => self.values.len(),
                };
                Seg::Index(end - f.values_start)
            })
        });
        let path = path::render(ROOT, segs);
        make_error(self.text, kind, offset, path)
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if b == b' ' || b == b'\n' || b == b'\t' || b == b'\r' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    // long function: the parser's one loop over the input, with an explicit stack of
    // frames instead of recursion; its two states ("expecting a value", "a value is
    // complete") hand over to each other with `continue 'value`, which separate
    // functions could not do without a state value checked on every byte.
    fn run(mut self) -> Result<Value, ParseError> {
        let mut value: Value;
        'value: loop {
            // Expecting a value.
            self.skip_ws();
            let Some(b) = self.peek() else {
                return Err(self.fail((ParseErrorKind::Eof, self.pos), true));
            };
            value = match b {
                b'[' | b'{' => {
                    if self.frames.len() >= self.max_depth {
                        let kind = ParseErrorKind::TooDeep {
                            limit: self.max_depth,
                        };
                        return Err(self.fail((kind, self.pos), true));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if b == b'[' {
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            Value::Array(Array::new())
                        } else {
                            self.frames.push(Frame {
                                is_object: false,
                                values_start: self.values.len(),
                                members_start: self.members.len(),
                                key: Str::default(),
                                dups: DupDetector::default(),
                            });
                            continue 'value;
                        }
                    } else {
                        match self.peek() {
                            Some(b'}') => {
                                self.pos += 1;
                                Value::Object(Object::new())
                            }
                            Some(b'"') => {
                                self.frames.push(Frame {
                                    is_object: true,
                                    values_start: self.values.len(),
                                    members_start: self.members.len(),
                                    key: Str::default(),
                                    dups: DupDetector::default(),
                                });
                                self.parse_key()?;
                                continue 'value;
                            }
                            None => return Err(self.fail((ParseErrorKind::Eof, self.pos), true)),
                            Some(_) => {
                                let f = syntax(
                                    "expected `\"` (start of an object key) or `}`",
                                    self.pos,
                                );
                                return Err(self.fail(f, true));
                            }
                        }
                    }
                }
                b'"' => match self.parse_string() {
                    Ok(s) => Value::String(s),
                    Err(f) => return Err(self.fail(f, true)),
                },
                b'-' | b'0'..=b'9' => match self.parse_number() {
                    Ok(n) => Value::Number(n),
                    Err(f) => return Err(self.fail(f, true)),
                },
                b't' => {
                    self.literal(b"true").map_err(|f| self.fail(f, true))?;
                    Value::Bool(true)
                }
                b'f' => {
                    self.literal(b"false").map_err(|f| self.fail(f, true))?;
                    Value::Bool(false)
                }
                b'n' => {
                    self.literal(b"null").map_err(|f| self.fail(f, true))?;
                    Value::Null
                }
                _ => return Err(self.fail(syntax("expected a JSON value", self.pos), true)),
            };
            // A value is complete: attach it to its container.
            loop {
                let Some(frame) = self.frames.last_mut() else {
                    self.skip_ws();
                    if self.pos < self.bytes.len() {
                        let f = (ParseErrorKind::TrailingCharacters, self.pos);
                        return Err(self.fail(f, false));
                    }
                    return Ok(value);
                };
                let (is_object, values_start, members_start) =
                    (frame.is_object, frame.values_start, frame.members_start);
                if is_object {
                    let key = std::mem::take(&mut frame.key);
                    self.members.push((key, value));
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => {
                            self.pos += 1;
                            self.skip_ws();
                            self.parse_key()?;
                            continue 'value;
                        }
                        Some(b'}') => {
                            self.pos += 1;
                            self.frames.pop();
                            // The outermost container takes the whole stack
                            // (no copy); inner ones split their part off.
                            let entries = if self.frames.is_empty() {
                                std::mem::take(&mut self.members)
                            } else {
                                self.members.split_off(members_start)
                            };
                            value = Value::Object(Object::from_unique(entries));
                        }
                        None => return Err(self.fail((ParseErrorKind::Eof, self.pos), false)),
                        Some(_) => {
                            let f = syntax("expected `,` or `}` after object member", self.pos);
                            return Err(self.fail(f, false));
                        }
                    }
                } else {
                    self.values.push(value);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => {
                            self.pos += 1;
                            continue 'value;
                        }
                        Some(b']') => {
                            self.pos += 1;
                            self.frames.pop();
                            let items = if self.frames.is_empty() {
                                std::mem::take(&mut self.values)
                            } else {
                                self.values.split_off(values_start)
                            };
                            value = Value::Array(Array::from(items));
                        }
                        None => return Err(self.fail((ParseErrorKind::Eof, self.pos), false)),
                        Some(_) => {
                            let f = syntax("expected `,` or `]` after array element", self.pos);
                            return Err(self.fail(f, false));
                        }
                    }
                }
            }
        }
    }

    /// Parses `"key"` and the following `:` for the innermost (object) frame.
    fn parse_key(&mut self) -> Result<(), ParseError> {
        let start = self.pos;
        match self.peek() {
            Some(b'"') => {}
            None => return Err(self.fail((ParseErrorKind::Eof, self.pos), false)),
            Some(_) => {
                let f = syntax("expected `\"` (start of an object key)", self.pos);
                return Err(self.fail(f, false));
            }
        }
        let key = self.parse_string().map_err(|f| self.fail(f, false))?;
        let Some(frame) = self.frames.last_mut() else {
            return Err(self.fail(syntax("object key outside of an object", start), false));
        };
        let existing = &self.members[frame.members_start..];
        if frame.dups.is_duplicate(existing, &key) {
            let kind = ParseErrorKind::DuplicateKey(path::elide(&key).into_owned());
            return Err(self.fail((kind, start), false));
        }
        frame.key = key;
        self.skip_ws();
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            None => Err(self.fail((ParseErrorKind::Eof, self.pos), true)),
            Some(_) => Err(self.fail(syntax("expected `:` after object key", self.pos), true)),
        }
    }

    /// Checks the literal `lit` at the current position.
    fn literal(&mut self, lit: &[u8]) -> Result<(), Fail> {
        let start = self.pos;
        for (i, &expected) in lit.iter().enumerate() {
            match self.bytes.get(start + i) {
                Some(&b) if b == expected => {}
                Some(_) => {
                    let msg = format!(
                        "invalid literal (expected `{}`)",
                        String::from_utf8_lossy(lit)
                    );
                    return Err((ParseErrorKind::Syntax(msg), start));
                }
                None => return Err((ParseErrorKind::Eof, self.bytes.len())),
            }
        }
        self.pos = start + lit.len();
        Ok(())
    }

    /// Parses a string starting at the opening quote at `self.pos`.
    #[inline]
    fn parse_string(&mut self) -> Result<Str, Fail> {
        let bytes = self.bytes;
        let start = self.pos + 1;
        // Fast path: no escapes, copy the slice.
        let i = scan_string(bytes, start);
        if let Some(b'"') = bytes.get(i) {
            self.pos = i + 1;
            return Ok(Str::from(&self.text[start..i]));
        }
        self.parse_string_rest(start, i)
    }

    /// [`Parser::parse_string`] from the first byte at `i` that is not plain text
    /// (an escape, or an error).
    #[cold]
    #[inline(never)]
    fn parse_string_rest(&mut self, start: usize, i: usize) -> Result<Str, Fail> {
        let bytes = self.bytes;
        match bytes.get(i) {
            None => return Err((ParseErrorKind::Eof, bytes.len())),
            Some(b'\\') => {}
            Some(_) => return Err((ParseErrorKind::ControlCharacter, i)),
        }
        // Slow path: unescape into the scratch buffer.
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        out.push_str(&self.text[start..i]);
        let result = self.unescape_rest(i, &mut out);
        let result = result.map(|end| {
            self.pos = end;
            Str::from(out.as_str())
        });
        self.scratch = out;
        result
    }

    /// Continues a string at the backslash at `i`; returns the offset after
    /// the closing quote.
    fn unescape_rest(&self, mut i: usize, out: &mut String) -> Result<usize, Fail> {
        let bytes = self.bytes;
        loop {
            // Here bytes[i] is a backslash.
            let esc = i;
            let Some(&c) = bytes.get(i + 1) else {
                return Err((ParseErrorKind::Eof, bytes.len()));
            };
            i += 2;
            match c {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let cp = self.hex4(i, esc)?;
                    i += 4;
                    let ch = match cp {
                        0xD800..=0xDBFF => {
                            // Needs a low surrogate escape right after.
                            match (bytes.get(i), bytes.get(i + 1)) {
                                (Some(b'\\'), Some(b'u')) => {}
                                (None, _) | (Some(b'\\'), None) => {
                                    return Err((ParseErrorKind::Eof, bytes.len()));
                                }
                                _ => return Err((ParseErrorKind::LoneSurrogate, esc)),
                            }
                            let low = self.hex4(i + 2, i)?;
                            if !(0xDC00..=0xDFFF).contains(&low) {
                                return Err((ParseErrorKind::LoneSurrogate, esc));
                            }
                            i += 6;
                            0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                        }
                        0xDC00..=0xDFFF => return Err((ParseErrorKind::LoneSurrogate, esc)),
                        _ => cp,
                    };
                    match char::from_u32(ch) {
                        Some(ch) => out.push(ch),
                        None => return Err((ParseErrorKind::InvalidEscape, esc)),
                    }
                }
                _ => return Err((ParseErrorKind::InvalidEscape, esc)),
            }
            // Copy the run up to the next quote, backslash or control byte.
            let run_start = i;
            i = scan_string(bytes, i);
            match bytes.get(i) {
                None => return Err((ParseErrorKind::Eof, bytes.len())),
                Some(b'"') | Some(b'\\') => {}
                Some(_) => return Err((ParseErrorKind::ControlCharacter, i)),
            }
            out.push_str(&self.text[run_start..i]);
            if bytes[i] == b'"' {
                return Ok(i + 1);
            }
        }
    }

    /// Reads four hex digits at `at` (part of the escape starting at `esc`).
    fn hex4(&self, at: usize, esc: usize) -> Result<u32, Fail> {
        let mut cp = 0u32;
        for k in 0..4 {
            let Some(&b) = self.bytes.get(at + k) else {
                return Err((ParseErrorKind::Eof, self.bytes.len()));
            };
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return Err((ParseErrorKind::InvalidEscape, esc)),
            };
            cp = cp * 16 + u32::from(d);
        }
        Ok(cp)
    }

    /// Parses a number starting at `self.pos` (a `-` or a digit).
    fn parse_number(&mut self) -> Result<Number, Fail> {
        let bytes = self.bytes;
        let start = self.pos;
        let negative = bytes.get(start) == Some(&b'-');
        // All digits of the integer and fraction parts are accumulated into
        // `mant` (wrapping); it is exact when there are at most 19 of them.
        // Longer literals take the general path.
        let mut mant: u64 = 0;
        let int_start = start + usize::from(negative);
        let mut i = digits(bytes, int_start, &mut mant);
        let int_len = i - int_start;
        integer_part(bytes, int_start, int_len)?;
        let mut is_int = true;
        let mut frac_len: usize = 0;
        if bytes.get(i) == Some(&b'.') {
            is_int = false;
            let frac_start = i + 1;
            i = digits(bytes, frac_start, &mut mant);
            frac_len = i - frac_start;
            if frac_len == 0 {
                return Err(missing_digit(
                    bytes,
                    i,
                    "expected a digit after the decimal point",
                ));
            }
        }
        let mut exp: i64 = 0;
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            is_int = false;
            (exp, i) = exponent(bytes, i + 1)?;
        }
        self.pos = i;
        if int_len + frac_len > 19 {
            return float_literal(&self.text[start..i], negative, start);
        }
        if is_int && let Some(n) = integer_number(mant, negative, start) {
            return n;
        }
        // `frac_len` is at most 19 here.
        let exp10 = exp - frac_len as i64;
        decimal_number(mant, exp10, negative, &self.text[start..i], start)
    }
}

/// Accumulates the decimal digits at `i` into `mant` (wrapping); returns the index
/// after them.
#[inline]
fn digits(bytes: &[u8], mut i: usize, mant: &mut u64) -> usize {
    while let Some(&b) = bytes.get(i) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *mant = mant.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    i
}

/// The failure where a digit is expected at `i`: `msg`, or the end of the input.
#[cold]
fn missing_digit(bytes: &[u8], i: usize, msg: &str) -> Fail {
    match bytes.get(i) {
        Some(_) => syntax(msg, i),
        None => (ParseErrorKind::Eof, bytes.len()),
    }
}

/// Checks the integer part of a number, `int_len` digits at `int_start`: at least one,
/// and no leading zero.
#[inline]
fn integer_part(bytes: &[u8], int_start: usize, int_len: usize) -> Result<(), Fail> {
    match int_len {
        0 => Err(missing_digit(
            bytes,
            int_start,
            "expected a digit after `-`",
        )),
        1 => Ok(()),
        _ if bytes[int_start] == b'0' => Err(syntax(
            "leading zeros are not allowed in numbers",
            int_start,
        )),
        _ => Ok(()),
    }
}

/// Reads the exponent's sign and digits at `i` (just after the `e` or `E`); returns
/// the exponent and the index after it.
#[inline]
fn exponent(bytes: &[u8], mut i: usize) -> Result<(i64, usize), Fail> {
    let negative = bytes.get(i) == Some(&b'-');
    if matches!(bytes.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    if !matches!(bytes.get(i), Some(b'0'..=b'9')) {
        return Err(missing_digit(bytes, i, "expected a digit in the exponent"));
    }
    let mut exp: i64 = 0;
    while let Some(&d @ b'0'..=b'9') = bytes.get(i) {
        // Saturate far beyond the f64 range; the value is then out of range (or zero)
        // either way.
        if exp < 1_000_000_000 {
            exp = exp * 10 + i64::from(d - b'0');
        }
        i += 1;
    }
    Ok((if negative { -exp } else { exp }, i))
}

/// An integer literal of at most 19 digits, `mant` with its sign, as an integer
/// number; `None` when it is below `i64::MIN` (a float then).
#[inline]
fn integer_number(mant: u64, negative: bool, start: usize) -> Option<Result<Number, Fail>> {
    if !negative {
        return Some(Ok(Number(N::PosInt(mant))));
    }
    if mant == 0 {
        return Some(Err((ParseErrorKind::NegativeZero, start)));
    }
    if mant <= 1u64 << 63 {
        return Some(Ok(Number(N::NegInt(0i64.wrapping_sub(mant as i64)))));
    }
    None
}

/// Powers of ten that are exact in an `f64`.
const POW10_F64: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Converts the number `(-1)^negative * mant * 10^exp10` (at most 19
/// significant digits, from `literal`), accepting it only when exact.
fn decimal_number(
    mut mant: u64,
    mut exp10: i64,
    negative: bool,
    literal: &str,
    start: usize,
) -> Result<Number, Fail> {
    if mant == 0 {
        return if negative {
            Err((ParseErrorKind::NegativeZero, start))
        } else {
            Ok(Number(N::PosInt(0)))
        };
    }
    while mant.is_multiple_of(10) {
        mant /= 10;
        exp10 += 1;
    }
    // An integral value within the 64-bit range is held exactly as an integer.
    if (0..20).contains(&exp10)
        && let Some(v) = 10u64
            .checked_pow(exp10 as u32)
            .and_then(|p| mant.checked_mul(p))
    {
        if !negative {
            return Ok(Number(N::PosInt(v)));
        }
        if v <= 1u64 << 63 {
            return Ok(Number(N::NegInt(0i64.wrapping_sub(v as i64))));
        }
    }
    // Correctly rounded: exact operands and a single rounding (Clinger's fast
    // path), exact 128-bit arithmetic, or else the standard library's parser.
    let f = if mant <= 1u64 << 53 && (-22..=22).contains(&exp10) {
        let m = mant as f64;
        let p = POW10_F64[exp10.unsigned_abs() as usize];
        if exp10 >= 0 { m * p } else { m / p }
    } else if let Some(f) = mul_pow10_u128(mant, exp10) {
        f
    } else {
        match literal.parse::<f64>() {
            Ok(f) => f.abs(),
            Err(_) => return Err(syntax("invalid number", start)),
        }
    };
    let f = if negative { -f } else { f };
    if !f.is_finite() || f == 0.0 {
        return Err((
            ParseErrorKind::NumberOutOfRange(path::elide(literal).into_owned()),
            start,
        ));
    }
    let n = Number::normalise_finite(f);
    let exact = match n {
        // Not an integer in range, yet it rounded to one.
        N::PosInt(_) | N::NegInt(_) => false,
        // Any decimal with at most 15 significant digits in the normal range
        // survives decimal -> f64 -> shortest decimal unchanged.
        N::Float(_) if mant < 1_000_000_000_000_000 && f.is_normal() => true,
        // The literal's digit step exceeds the float's spacing, so it is the
        // only decimal this short that rounds to `f`: it is the shortest.
        N::Float(_) if pow10_exceeds_ulp(f, exp10) => true,
        // No shortest representation has more than 17 digits.
        N::Float(_) if mant >= 100_000_000_000_000_000 => exact_integral(f, literal),
        N::Float(_) => match shortest_is_exact(f.abs(), mant, exp10) {
            Some(true) => true,
            Some(false) => exact_integral(f, literal),
            None => shortest_is(f, mant, exp10) || exact_integral(f, literal),
        },
    };
    if !exact {
        return Err((
            ParseErrorKind::InexactNumber(path::elide(literal).into_owned()),
            start,
        ));
    }
    Ok(Number(n))
}

/// `5^k` for `k` in `0..=27` (all below 2^63).
const POW5_U64: [u64; 28] = {
    let mut t = [1u64; 28];
    let mut k = 1;
    while k < 28 {
        t[k] = t[k - 1] * 5;
        k += 1;
    }
    t
};

/// `mant * 10^exp10`, correctly rounded to the nearest `f64` (ties to even),
/// for `exp10` in `-27..=27`, by exact 128-bit integer arithmetic; `None`
/// outside that range. `mant` must not be zero.
fn mul_pow10_u128(mant: u64, exp10: i64) -> Option<f64> {
    let k = usize::try_from(exp10.unsigned_abs()).ok()?;
    let pow5 = u128::from(*POW5_U64.get(k)?);
    if exp10 >= 0 {
        // mant * 5^k < 2^64 * 2^63 is exact; the conversion rounds once and
        // the power-of-two scaling is exact (no overflow this small).
        let p = u128::from(mant) * pow5;
        return Some(p as f64 * f64::from_bits((1023 + k as u64) << 52));
    }
    // mant / (5^k * 2^k): shift `mant` to the top of a u128 so the quotient
    // keeps at least 64 significant bits, then fold the remainder into a
    // sticky bit, so that the single rounding in the conversion sees whether
    // anything was cut off.
    let shift = mant.leading_zeros() + 63;
    let n = u128::from(mant) << shift;
    let q = n / pow5;
    let sticky = u128::from(n - q * pow5 != 0);
    let scale = u64::from(shift) + k as u64;
    // 2^-scale with scale <= 126 + 27 is a normal f64; the result is at
    // least 1e-27, far from the subnormal range, so the scaling is exact.
    Some((q | sticky) as f64 * f64::from_bits((1023 - scale) << 52))
}

/// Whether `10^exp10 > ulp(f)` for a normal, finite `f`. Then any other
/// decimal with no more significant digits than `m * 10^exp10` (where
/// `m * 10^exp10` rounds to `f` and `m` has no trailing zero) is at least
/// `10^exp10` away from it, hence more than half an ulp from `f`: the
/// literal is the only such decimal that rounds to `f`, i.e. its shortest
/// form.
fn pow10_exceeds_ulp(f: f64, exp10: i64) -> bool {
    if !f.is_normal() || !(-400..=400).contains(&exp10) {
        return false;
    }
    // ulp(f) = 2^(e - 52) with e the unbiased binary exponent.
    let e = ((f.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    if exp10 == 0 {
        return e - 52 < 0;
    }
    // floor(exp10 * log2(10)); the product is never an integer for exp10 != 0
    // and is at least 1e-3 away from one for |exp10| <= 400, far more than
    // the error of this 2^-40 fixed-point constant.
    const LOG2_10_FIX40: i64 = 3_652_498_566_964; // log2(10) * 2^40
    let floor_log2 = (exp10 * LOG2_10_FIX40) >> 40;
    e - 52 <= floor_log2
}

/// Compares `a * 10^p` with `b * 2^t` exactly in 128-bit arithmetic; `None` when the
/// operands do not fit (then the caller takes the general path).
fn cmp_dec_bin(a: u128, p: i64, b: u128, t: i64) -> Option<std::cmp::Ordering> {
    let k = usize::try_from(p.unsigned_abs()).ok()?;
    let pow5 = u128::from(*POW5_U64.get(k)?);
    // a * 5^p * 2^p versus b * 2^t, with the power of five moved to the side where
    // it is a factor: then x versus y * 2^d.
    let (x, y) = if p >= 0 {
        (a.checked_mul(pow5)?, b)
    } else {
        (a, b.checked_mul(pow5)?)
    };
    let d = t - p;
    let shift = |v: u128, by: i64| -> Option<u128> {
        let by = u32::try_from(by).ok()?;
        (v.leading_zeros() > by).then(|| v << by)
    };
    Some(if d >= 0 {
        x.cmp(&shift(y, d)?)
    } else {
        shift(x, -d)?.cmp(&y)
    })
}

/// Whether `mant * 10^exp10` (no trailing zero in `mant`, rounding to the positive
/// normal `f`) is the shortest round-trip decimal of `f`, decided exactly without
/// formatting: it is iff no decimal with fewer digits rounds to `f` (the two nearest
/// such decimals bracket every other one) and it is strictly the closest decimal with
/// its own number of digits to `f`. `None` when the arithmetic does not fit 128 bits or
/// on an exact tie (the caller then formats with `ryu`).
fn shortest_is_exact(f: f64, mant: u64, exp10: i64) -> Option<bool> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    if !f.is_normal() || mant < 10 {
        return None;
    }
    let bits = f.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let m = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let e = biased - 1075;
    // The reals that round to `f` (ties to even: bounds included when `m` is even).
    let inclusive = m % 2 == 0;
    let (lo_m, lo_e) = if m == 1 << 52 && biased > 1 {
        (4 * m - 1, e - 2)
    } else {
        (2 * m - 1, e - 1)
    };
    let (hi_m, hi_e) = (2 * m + 1, e - 1);
    let inside = |a: u128, p: i64| -> Option<bool> {
        let above = cmp_dec_bin(a, p, lo_m, lo_e)?;
        let below = cmp_dec_bin(a, p, hi_m, hi_e)?;
        Some(if inclusive {
            above != Less && below != Greater
        } else {
            above == Greater && below == Less
        })
    };
    let shorter = u128::from(mant / 10);
    if inside(shorter, exp10 + 1)? || inside(shorter + 1, exp10 + 1)? {
        return Some(false);
    }
    // |L - f| < 10^exp10 / 2, i.e. (2M-1) 10^exp10 < 2f < (2M+1) 10^exp10.
    let twice = u128::from(mant) * 2;
    match (
        cmp_dec_bin(twice - 1, exp10, m, e + 1)?,
        cmp_dec_bin(twice + 1, exp10, m, e + 1)?,
    ) {
        (Less, Greater) => Some(true),
        (Equal, _) | (_, Equal) => None,
        _ => Some(false),
    }
}

/// Whether the shortest round-trip decimal of `f` is `mant * 10^exp10` (with
/// `mant` free of trailing zeros).
fn shortest_is(f: f64, mant: u64, exp10: i64) -> bool {
    let mut buf = ryu::Buffer::new();
    let s = buf.format_finite(f.abs()).as_bytes();
    // `ryu` writes at most 17 significant digits, plus at most 16 leading or
    // trailing zeros (`0.0001234`, `1000000000000000.0`): the digits fit a
    // u64 because leading zeros add nothing.
    let mut m: u64 = 0;
    let mut frac: i64 = 0;
    let mut in_frac = false;
    let mut rest: &[u8] = &[];
    for (k, &b) in s.iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d <= 9 {
            m = m.wrapping_mul(10).wrapping_add(u64::from(d));
            frac += i64::from(in_frac);
        } else if b == b'.' {
            in_frac = true;
        } else {
            rest = &s[k..];
            break;
        }
    }
    let mut e: i64 = 0;
    if let [b'e', exp @ ..] = rest {
        let text = std::str::from_utf8(exp).unwrap_or("0");
        e = text.parse().unwrap_or(0);
    }
    let mut e = e - frac;
    if m == 0 {
        return false;
    }
    while m.is_multiple_of(10) {
        m /= 10;
        e += 1;
    }
    m == mant && e == exp10
}

/// Whether `f` is an integral `f64` whose exact value is the literal's value
/// (e.g. `18446744073709551616`, which is 2^64 exactly though not its shortest
/// form, or 2^70 written out in 22 digits). Formatting with an explicit
/// precision prints the exact value, so any number of digits compares
/// exactly.
fn exact_integral(f: f64, literal: &str) -> bool {
    if f.fract() != 0.0 {
        return false;
    }
    let exact = format!("{:.0}", f.abs());
    let (a_digits, a_exp) = normal_form(literal);
    let (b_digits, b_exp) = normal_form(&exact);
    a_exp == b_exp && a_digits.eq(b_digits)
}

/// The normal form of a number literal of any length: its significant digits
/// (no leading or trailing zeros) and the power of ten of the last one, or
/// `None` for the exponent when the value is zero or the exponent is beyond
/// any `f64`.
fn normal_form(literal: &str) -> (impl Iterator<Item = u8> + '_, Option<i64>) {
    let body = literal.strip_prefix('-').unwrap_or(literal);
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(k) => (&body[..k], body[k + 1..].parse::<i64>().ok()),
        None => (body, Some(0)),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = int.bytes().chain(frac.bytes());
    let total = int.len() + frac.len();
    let leading = int
        .bytes()
        .chain(frac.bytes())
        .take_while(|&b| b == b'0')
        .count();
    let trailing = frac
        .bytes()
        .rev()
        .chain(int.bytes().rev())
        .take_while(|&b| b == b'0')
        .count();
    if leading == total {
        return (digits.skip(total).take(0), None);
    }
    let sig = total - leading - trailing;
    // The last significant digit's power of ten.
    let exp = exp.and_then(|e| {
        let frac_len = i64::try_from(frac.len()).ok()?;
        let trailing = i64::try_from(trailing).ok()?;
        e.checked_sub(frac_len)?.checked_add(trailing)
    });
    (digits.skip(leading).take(sig), exp)
}

/// The decimal value of a number literal in normal form: significant digits
/// without leading or trailing zeros, and the power of ten of the last one.
struct Decimal {
    digits: [u8; Decimal::CAP],
    len: usize,
    /// More than `CAP` significant digits (can never match an `f64`).
    overflow: bool,
    exp: i64,
}

impl Decimal {
    /// More significant digits than any shortest `f64` representation has.
    const CAP: usize = 20;

    /// Normal form of a JSON number literal (or of a `ryu` output, which uses
    /// the same syntax). Zero has `len == 0`.
    fn of(s: &str) -> Decimal {
        let mut d = Decimal {
            digits: [0; Decimal::CAP],
            len: 0,
            overflow: false,
            exp: 0,
        };
        let bytes = s.as_bytes();
        let mut i = 0;
        if bytes.first() == Some(&b'-') {
            i += 1;
        }
        // Zeros seen since the last non-zero digit (after the first one).
        let mut pending_zeros: i64 = 0;
        let mut frac_digits: i64 = 0;
        let mut in_frac = false;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'0'..=b'9' => {
                    if in_frac {
                        frac_digits += 1;
                    }
                    if b == b'0' {
                        if d.len > 0 {
                            pending_zeros += 1;
                        }
                    } else {
                        for _ in 0..pending_zeros {
                            d.push(0);
                        }
                        pending_zeros = 0;
                        d.push(b - b'0');
                    }
                }
                b'.' => in_frac = true,
                _ => break,
            }
            i += 1;
        }
        let mut exp: i64 = 0;
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            let neg = bytes.get(i) == Some(&b'-');
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            while let Some(&b @ b'0'..=b'9') = bytes.get(i) {
                exp = exp.saturating_mul(10).saturating_add(i64::from(b - b'0'));
                i += 1;
            }
            if neg {
                exp = -exp;
            }
        }
        d.exp = exp
            .saturating_sub(frac_digits)
            .saturating_add(pending_zeros);
        d
    }

    fn push(&mut self, digit: u8) {
        if self.len < Decimal::CAP {
            self.digits[self.len] = digit;
            self.len += 1;
        } else {
            self.overflow = true;
        }
    }

    /// The value as an integer [`Number`], if it is integral and within
    /// `i64::MIN..=u64::MAX`.
    fn as_integer(&self, negative: bool) -> Option<Number> {
        if self.overflow || self.exp < 0 {
            return None;
        }
        let mut v: u64 = 0;
        for &d in &self.digits[..self.len] {
            v = v.checked_mul(10)?.checked_add(u64::from(d))?;
        }
        for _ in 0..self.exp {
            v = v.checked_mul(10)?;
        }
        if !negative {
            Some(Number(N::PosInt(v)))
        } else if v <= 1u64 << 63 {
            Some(Number(N::NegInt(0i64.wrapping_sub(v as i64))))
        } else {
            None
        }
    }

    fn same_value(&self, other: &Decimal) -> bool {
        !self.overflow
            && !other.overflow
            && self.len == other.len
            && self.exp == other.exp
            && self.digits[..self.len] == other.digits[..other.len]
    }
}

/// Converts a number literal with a fraction or exponent (or an integer
/// literal too large for 64 bits), accepting it only when exact.
fn float_literal(literal: &str, negative: bool, start: usize) -> Result<Number, Fail> {
    let dec = Decimal::of(literal);
    if dec.len == 0 {
        // Every digit is zero.
        return if negative {
            Err((ParseErrorKind::NegativeZero, start))
        } else {
            Ok(Number(N::PosInt(0)))
        };
    }
    // An integral value within the 64-bit range is held exactly as an integer
    // (`2.0`, `1.5e3`, `2.6934100508506787e17`), whatever the nearest f64.
    if let Some(n) = dec.as_integer(negative) {
        return Ok(n);
    }
    let Ok(f) = literal.parse::<f64>() else {
        return Err(syntax("invalid number", start));
    };
    if !f.is_finite() || f == 0.0 {
        return Err((
            ParseErrorKind::NumberOutOfRange(path::elide(literal).into_owned()),
            start,
        ));
    }
    let n = Number::normalise_finite(f);
    let exact = match n {
        // The literal is not an integer in range, yet it rounded to one.
        N::PosInt(_) | N::NegInt(_) => false,
        // Any decimal with at most 15 significant digits in the normal range
        // survives decimal -> f64 -> shortest decimal unchanged, so only
        // longer literals (and subnormals) need the full comparison.
        N::Float(_) if dec.len <= 15 && !dec.overflow && f.is_normal() => true,
        N::Float(_) => {
            let mut buf = ryu::Buffer::new();
            dec.same_value(&Decimal::of(buf.format_finite(f))) || exact_integral(f, literal)
        }
    };
    if !exact {
        return Err((
            ParseErrorKind::InexactNumber(path::elide(literal).into_owned()),
            start,
        ));
    }
    Ok(Number(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact_slow(lit: &str) -> bool {
        let f: f64 = lit.parse().unwrap();
        let mut buf = ryu::Buffer::new();
        Decimal::of(lit).same_value(&Decimal::of(buf.format_finite(f)))
    }

    #[test]
    fn decimal_normal_form() {
        let d = Decimal::of("-0012.3400e+3");
        assert_eq!(&d.digits[..d.len], &[1, 2, 3, 4]);
        assert_eq!(d.exp, 1);
        let d = Decimal::of("100");
        assert_eq!(&d.digits[..d.len], &[1]);
        assert_eq!(d.exp, 2);
        let d = Decimal::of("0.000");
        assert_eq!(d.len, 0);
        assert!(Decimal::of("1.5e3").same_value(&Decimal::of("1500.0")));
        assert!(Decimal::of("1e300").same_value(&Decimal::of("1e300")));
        assert!(!Decimal::of("1e300").same_value(&Decimal::of("1e301")));
    }

    #[test]
    fn fast_path_agrees_with_slow_path() {
        // Pseudo-random literals with at most 15 significant digits.
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 1_000_000_000_000_000) + 1;
            let exp = ((x >> 50) % 600) as i64 - 300;
            let lit = format!("{digits}e{exp}");
            let f: f64 = lit.parse().unwrap();
            if f.is_normal() {
                assert!(exact_slow(&lit), "{lit}");
            }
        }
    }
}

#[cfg(test)]
mod fast_float_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// The 128-bit conversion is the standard library's correctly rounded parse.
        #[test]
        fn mul_pow10_u128_is_correctly_rounded(
            mant in prop_oneof![1u64..=u64::MAX, 1u64..(1 << 53), 1_000_000_000_000_000u64..100_000_000_000_000_000],
            exp10 in -27i64..=27,
        ) {
            let fast = mul_pow10_u128(mant, exp10).unwrap();
            let slow: f64 = format!("{mant}e{exp10}").parse().unwrap();
            prop_assert_eq!(fast.to_bits(), slow.to_bits(), "{}e{}", mant, exp10);
        }

        /// When the shortcut says the literal is the shortest form, ryu agrees.
        #[test]
        fn pow10_shortcut_agrees_with_ryu(
            mant in prop_oneof![1_000_000_000_000_000u64..10_000_000_000_000_000, 1u64..=u64::MAX],
            exp10 in prop_oneof![-40i64..=40, -330i64..=310],
        ) {
            let mut mant = mant;
            let mut exp10 = exp10;
            while mant.is_multiple_of(10) {
                mant /= 10;
                exp10 += 1;
            }
            let lit = format!("{mant}e{exp10}");
            let f: f64 = lit.parse().unwrap();
            prop_assume!(f.is_normal());
            if pow10_exceeds_ulp(f, exp10) {
                prop_assert!(shortest_is(f, mant, exp10), "{}", lit);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(50_000))]

        /// The exact shortest-form decision agrees with formatting by ryu.
        #[test]
        fn exact_shortest_agrees_with_ryu(
            mant in prop_oneof![
                10_000_000_000_000_000u64..100_000_000_000_000_000,
                1_000_000_000_000_000u64..10_000_000_000_000_000,
                10u64..1_000_000_000_000_000,
            ],
            exp10 in prop_oneof![-40i64..=10, -330i64..=300],
            // Also literals that are the shortest form of a random double.
            from_double in any::<bool>(),
            bits in any::<u64>(),
        ) {
            let (mut mant, mut exp10) = (mant, exp10);
            if from_double {
                let f = f64::from_bits(bits & !(1 << 63));
                prop_assume!(f.is_normal());
                let mut buf = ryu::Buffer::new();
                let d = Decimal::of(buf.format_finite(f));
                prop_assume!(!d.overflow && d.len > 0);
                mant = d.digits[..d.len].iter().fold(0, |m, &x| m * 10 + u64::from(x));
                exp10 = d.exp;
            }
            while mant.is_multiple_of(10) {
                mant /= 10;
                exp10 += 1;
            }
            let lit = format!("{mant}e{exp10}");
            let f: f64 = lit.parse().unwrap();
            prop_assume!(f.is_normal());
            if let Some(fast) = shortest_is_exact(f, mant, exp10) {
                prop_assert_eq!(fast, shortest_is(f, mant, exp10), "{}", lit);
            }
        }
    }

    #[test]
    fn exact_shortest_decides_typical_literals() {
        // Shortest forms of doubles: 17 and 16 digits.
        for lit in [
            "0.12345678901234568",
            "0.5476834209876543",
            "3.141592653589793",
        ] {
            let d = Decimal::of(lit);
            let mant = d.digits[..d.len]
                .iter()
                .fold(0u64, |m, &x| m * 10 + u64::from(x));
            let f: f64 = lit.parse().unwrap();
            assert_eq!(shortest_is_exact(f, mant, d.exp), Some(true), "{lit}");
        }
        // Rounds to 0.1, whose shortest form is shorter.
        assert_eq!(
            shortest_is_exact(0.1, 10_000_000_000_000_001, -17),
            Some(false)
        );
        // Rounds to 0.12345678901234566 but is not the closest 17-digit decimal.
        let f: f64 = "0.12345678901234567".parse().unwrap();
        assert_eq!(f, 0.12345678901234566);
        assert_eq!(
            shortest_is_exact(f, 12_345_678_901_234_567, -17),
            Some(false)
        );
        assert_eq!(
            shortest_is_exact(f, 12_345_678_901_234_566, -17),
            Some(true)
        );
    }

    #[test]
    fn pow10_shortcut_fires_on_sixteen_digits() {
        // 16 significant digits, step 1e-16 against an ulp of 2^-53 ~ 1.1e-16.
        assert!(pow10_exceeds_ulp(0.1234567890123456, -16));
        // 17 digits never pass: the step is below the ulp.
        assert!(!pow10_exceeds_ulp(0.12345678901234567, -17));
        assert!(pow10_exceeds_ulp(1.5, 0));
        assert!(!pow10_exceeds_ulp(1e300, 0));
    }
}

#[cfg(test)]
mod number_tests {
    use super::super::value::number_is_canonical;
    use super::*;

    #[test]
    fn parsed_numbers_are_canonical() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut accepted = 0;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lit = match x % 4 {
                0 => format!("{}", f64::from_bits(x >> 2)),
                1 => format!("{}e{}", (x >> 20) % 100_000, (x % 40) as i64 - 20),
                2 => format!("-{}.{}", (x >> 30) % 1000, (x >> 10) % 1000),
                _ => format!("{}.0", (x >> 8) as i64),
            };
            if let Ok(Value::Number(n)) = parse(&lit) {
                accepted += 1;
                assert!(number_is_canonical(&n), "{lit} -> {n:?}");
            }
        }
        assert!(accepted > 50_000, "{accepted}");
    }
}

#[cfg(test)]
mod fast_slow_tests {
    use super::*;

    fn kind_of(r: &Result<Number, Fail>) -> Result<Number, ParseErrorKind> {
        r.clone().map_err(|(k, _)| k)
    }

    #[test]
    fn fast_number_path_agrees_with_general_path() {
        let mut x: u64 = 0x1234_5678_9ABC_DEF1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..300_000u32 {
            let r = next();
            let digits = match round % 3 {
                0 => r % 1_000_000,
                1 => r % 100_000_000_000_000_000,
                _ => r >> (r % 64),
            };
            let digits = digits.to_string();
            let split = (next() as usize) % (digits.len() + 1);
            let sign = if next() % 2 == 0 { "-" } else { "" };
            let (int, frac) = digits.split_at(split);
            let int = int.trim_start_matches('0');
            let int = if int.is_empty() { "0" } else { int };
            let frac = if frac.is_empty() {
                String::new()
            } else {
                format!(".{frac}")
            };
            let exp = match next() % 4 {
                0 => String::new(),
                1 => format!("e{}", (next() % 40) as i64 - 20),
                2 => format!("e{}", (next() % 700) as i64 - 350),
                _ => format!("E+{}", next() % 25),
            };
            let lit = format!("{sign}{int}{frac}{exp}");
            let mut parser = Parser::new(&lit, &ParseOptions::default());
            let fast = kind_of(&parser.parse_number());
            let slow = kind_of(&float_literal(&lit, !sign.is_empty(), 0));
            assert_eq!(fast, slow, "{lit}");
        }
    }
}
