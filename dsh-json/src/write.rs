//! Compact JSON text output (iterative, byte-compatible with `serde_json`).

use std::fmt::{self, Write};

use super::str::Str;
use super::value::{Array, Object, Value};

const BB: u8 = b'b';
const TT: u8 = b't';
const NN: u8 = b'n';
const FF: u8 = b'f';
const RR: u8 = b'r';
const QU: u8 = b'"';
const BS: u8 = b'\\';
const UU: u8 = b'u';
const __: u8 = 0;

/// For each byte: `0` when it is written literally, otherwise the letter of its
/// escape (`u` meaning `\u00XX`).
static ESCAPE: [u8; 256] = {
    let mut t = [__; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = UU;
        i += 1;
    }
    t[0x08] = BB;
    t[0x09] = TT;
    t[0x0A] = NN;
    t[0x0C] = FF;
    t[0x0D] = RR;
    t[b'"' as usize] = QU;
    t[b'\\' as usize] = BS;
    t
};

/// Writes `s` as a JSON string literal, escaping exactly like `serde_json`:
/// `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
/// `\u00xx` (lowercase hex), everything else literally.
pub fn write_json_string(out: &mut impl Write, s: &str) -> fmt::Result {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.write_char('"')?;
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc = ESCAPE[b as usize];
        if esc == 0 {
            continue;
        }
        if start < i {
            // Escaped bytes are ASCII, so `start..i` lies on char boundaries.
            out.write_str(&s[start..i])?;
        }
        match esc {
            UU => {
                let buf = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(b >> 4) as usize],
                    HEX[(b & 0xF) as usize],
                ];
                for c in buf {
                    out.write_char(c as char)?;
                }
            }
            other => {
                out.write_char('\\')?;
                out.write_char(other as char)?;
            }
        }
        start = i + 1;
    }
    if start < bytes.len() {
        out.write_str(&s[start..])?;
    }
    out.write_char('"')
}

enum Frame<'a> {
    Arr(std::slice::Iter<'a, Value>),
    Obj(std::slice::Iter<'a, (Str, Value)>),
}

/// Writes `v` as compact JSON without recursion.
pub fn write_value(out: &mut impl Write, v: &Value) -> fmt::Result {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(v);
    loop {
        if let Some(v) = next.take() {
            match v {
                Value::Null => out.write_str("null")?,
                Value::Bool(true) => out.write_str("true")?,
                Value::Bool(false) => out.write_str("false")?,
                Value::Number(n) => n.write_to(out)?,
                Value::String(s) => write_json_string(out, s)?,
                Value::Array(a) => {
                    if let Some((first, rest)) = a.split_first() {
                        out.write_char('[')?;
                        stack.push(Frame::Arr(rest.iter()));
                        next = Some(first);
                        continue;
                    }
                    out.write_str("[]")?;
                }
                Value::Object(o) => {
                    if let Some(((k, first), rest)) = o.entries().split_first() {
                        out.write_char('{')?;
                        write_json_string(out, k)?;
                        out.write_char(':')?;
                        stack.push(Frame::Obj(rest.iter()));
                        next = Some(first);
                        continue;
                    }
                    out.write_str("{}")?;
                }
            }
        }
        // The current value is complete: move on to its next sibling.
        match stack.last_mut() {
            None => return Ok(()),
            Some(Frame::Arr(it)) => match it.next() {
                Some(v) => {
                    out.write_char(',')?;
                    next = Some(v);
                }
                None => {
                    out.write_char(']')?;
                    stack.pop();
                }
            },
            Some(Frame::Obj(it)) => match it.next() {
                Some((k, v)) => {
                    out.write_char(',')?;
                    write_json_string(out, k)?;
                    out.write_char(':')?;
                    next = Some(v);
                }
                None => {
                    out.write_char('}')?;
                    stack.pop();
                }
            },
        }
    }
}

/// Collects small writes into a local buffer and forwards them to the
/// underlying writer in chunks (far fewer dynamic calls into a `Formatter`).
struct Chunked<'a, W: Write + ?Sized> {
    buf: String,
    out: &'a mut W,
}

impl<W: Write + ?Sized> Chunked<'_, W> {
    const FLUSH_AT: usize = 8 * 1024;

    fn flush(&mut self) -> fmt::Result {
        self.out.write_str(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl<W: Write + ?Sized> Write for Chunked<'_, W> {
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.buf.len() + s.len() > Self::FLUSH_AT {
            self.flush()?;
            if s.len() > Self::FLUSH_AT {
                return self.out.write_str(s);
            }
        }
        self.buf.push_str(s);
        Ok(())
    }

    #[inline]
    fn write_char(&mut self, c: char) -> fmt::Result {
        if self.buf.len() + 4 > Self::FLUSH_AT {
            self.flush()?;
        }
        self.buf.push(c);
        Ok(())
    }
}

/// Writes `v` through a chunk buffer.
fn write_value_chunked(out: &mut fmt::Formatter<'_>, v: &Value) -> fmt::Result {
    if let Value::Null | Value::Bool(_) | Value::Number(_) = v {
        return write_value(out, v);
    }
    let mut w = Chunked {
        buf: String::with_capacity(Chunked::<fmt::Formatter<'_>>::FLUSH_AT),
        out,
    };
    write_value(&mut w, v)?;
    w.flush()
}

impl fmt::Display for Value {
    /// Writes compact JSON (no whitespace, keys in insertion order), byte for
    /// byte what `serde_json::to_string` writes for the same data. Works at
    /// any nesting depth (no recursion).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_value_chunked(f, self)
    }
}

impl fmt::Debug for Value {
    /// Same text as `Display`: compact JSON, safe at any depth.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_value_chunked(f, self)
    }
}

impl fmt::Display for Array {
    /// Writes the array as compact JSON.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_array(f, self)
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_array(f, self)
    }
}

impl fmt::Display for Object {
    /// Writes the object as compact JSON, keys in insertion order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_object(f, self)
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_object(f, self)
    }
}

fn write_array(out: &mut impl Write, a: &Array) -> fmt::Result {
    out.write_char('[')?;
    for (i, v) in a.iter().enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        write_value(out, v)?;
    }
    out.write_char(']')
}

fn write_object(out: &mut impl Write, o: &Object) -> fmt::Result {
    out.write_char('{')?;
    for (i, (k, v)) in o.iter().enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        write_json_string(out, k)?;
        out.write_char(':')?;
        write_value(out, v)?;
    }
    out.write_char('}')
}
