//! The bounded buffer a job's output goes to until it is read.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};

use super::lock;

/// Where a job writes its output; the runtime's [`read`](super::JobRuntime::read) consumes it.
///
/// The buffer holds at most the job's output limit of *unread* bytes. When a write
/// would exceed it, the oldest unread bytes are dropped (on a character boundary) and the
/// next read starts with a marker line saying how many bytes were lost, so a reader never
/// mistakes a capped stream for a complete one. Bytes need not be UTF-8; invalid
/// sequences are read as U+FFFD, and a character split across two writes is never split
/// across two reads.
///
/// Cloning gives another handle to the same buffer.
#[derive(Clone)]
pub struct OutputSink {
    buffer: Arc<Mutex<Buffer>>,
}

struct Buffer {
    limit: usize,
    bytes: VecDeque<u8>,
    /// Unread bytes dropped since the last read.
    dropped: u64,
}

impl OutputSink {
    pub(super) fn new(limit: usize) -> Self {
        OutputSink {
            buffer: Arc::new(Mutex::new(Buffer {
                limit,
                bytes: VecDeque::new(),
                dropped: 0,
            })),
        }
    }

    /// Appends raw bytes.
    pub fn write(&self, bytes: &[u8]) {
        let mut buffer = lock(&self.buffer);
        let limit = buffer.limit;
        // Only the last `limit` bytes of one oversized write can survive.
        let keep_from = bytes.len().saturating_sub(limit);
        buffer.dropped += keep_from as u64;
        buffer.bytes.extend(&bytes[keep_from..]);
        let excess = buffer.bytes.len().saturating_sub(limit);
        if excess > 0 || keep_from > 0 {
            buffer.bytes.drain(..excess);
            buffer.dropped += excess as u64;
            // Never start the unread text in the middle of a character.
            while buffer
                .bytes
                .front()
                .is_some_and(|b| is_utf8_continuation(*b))
            {
                buffer.bytes.pop_front();
                buffer.dropped += 1;
            }
        }
    }

    /// Appends text.
    pub fn write_str(&self, text: &str) {
        self.write(text.as_bytes());
    }

    /// The most unread bytes this buffer keeps.
    pub fn limit(&self) -> usize {
        lock(&self.buffer).limit
    }

    /// Takes the unread output. Unless `all`, an incomplete character at the end stays
    /// for the next read.
    pub(super) fn take(&self, all: bool) -> String {
        let mut buffer = lock(&self.buffer);
        let bytes: Vec<u8> = buffer.bytes.drain(..).collect();
        let split = if all {
            bytes.len()
        } else {
            bytes.len() - incomplete_utf8_tail(&bytes)
        };
        buffer.bytes.extend(&bytes[split..]);
        let mut text = String::new();
        if buffer.dropped > 0 {
            text.push_str(&truncation_marker(buffer.dropped));
            buffer.dropped = 0;
        }
        text.push_str(&String::from_utf8_lossy(&bytes[..split]));
        text
    }
}

impl fmt::Debug for OutputSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let buffer = lock(&self.buffer);
        f.debug_struct("OutputSink")
            .field("limit", &buffer.limit)
            .field("unread", &buffer.bytes.len())
            .field("dropped", &buffer.dropped)
            .finish()
    }
}

/// The line that opens a read after output was dropped.
pub(super) fn truncation_marker(dropped: u64) -> String {
    format!("[output truncated: {dropped} earlier bytes dropped]\n")
}

/// Whether `byte` continues a UTF-8 character (`0b10xx_xxxx`) rather than beginning one:
/// a window cut from a byte stream skips these at its start, so its text begins at a
/// character (as [`OutputSink`] does when it drops old output).
pub fn is_utf8_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that is cut off (its
/// rest has not arrived yet): std's "incomplete sequence at the end" error, an error with
/// no length (`Utf8Error::error_len`). A character is at most 4 bytes, so only the last 3
/// bytes can begin one; an invalid byte is not a cut-off character (0). A reader of a
/// stream that is still being written keeps these bytes for its next read, so a character
/// split between two writes is read whole.
///
/// ```
/// use dsh_runtime::jobs::incomplete_utf8_tail;
///
/// assert_eq!(incomplete_utf8_tail(&"a€".as_bytes()[..3]), 2); // `€` is 3 bytes
/// assert_eq!(incomplete_utf8_tail("a€".as_bytes()), 0);
/// assert_eq!(incomplete_utf8_tail(b"a\xFF"), 0); // invalid, not still to come
/// ```
pub fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    for start in bytes.len().saturating_sub(3)..bytes.len() {
        match std::str::from_utf8(&bytes[start..]) {
            Ok(_) => return 0,
            Err(e) if e.error_len().is_none() => return bytes.len() - start - e.valid_up_to(),
            // `start` is inside a character, or an invalid byte follows: look further on.
            Err(_) => {}
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_tails() {
        assert_eq!(incomplete_utf8_tail(b"abc"), 0);
        assert_eq!(incomplete_utf8_tail("é".as_bytes()), 0);
        assert_eq!(incomplete_utf8_tail(&"é".as_bytes()[..1]), 1);
        assert_eq!(incomplete_utf8_tail(&"€".as_bytes()[..2]), 2);
        assert_eq!(incomplete_utf8_tail(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_utf8_tail(b""), 0);
        // A split character after complete ones, and one whose first bytes are all there.
        assert_eq!(incomplete_utf8_tail(&"a€".as_bytes()[..3]), 2);
        assert_eq!(incomplete_utf8_tail(&"ab😀".as_bytes()[..4]), 2);
        // Invalid bytes are not a character still to come.
        assert_eq!(incomplete_utf8_tail(b"a\xFF"), 0);
        assert_eq!(incomplete_utf8_tail(b"\xE2\x82x"), 0);
        assert_eq!(incomplete_utf8_tail(b"\x82"), 0);
        assert_eq!(incomplete_utf8_tail(b"\x82\x82\x82\x82"), 0);
        assert_eq!(incomplete_utf8_tail("é€😀".as_bytes()), 0);
    }

    #[test]
    fn a_split_character_waits_for_its_rest() {
        let sink = OutputSink::new(64);
        let euro = "€".as_bytes();
        sink.write(b"a");
        sink.write(&euro[..1]);
        assert_eq!(sink.take(false), "a");
        sink.write(&euro[1..]);
        assert_eq!(sink.take(false), "€");
    }

    #[test]
    fn dropping_stops_on_a_character_boundary() {
        let sink = OutputSink::new(3);
        sink.write_str("aé€");
        // "€" is exactly 3 bytes; everything before it is dropped.
        assert_eq!(sink.take(true), format!("{}€", truncation_marker(3)));
        let sink = OutputSink::new(4);
        sink.write_str("aé€");
        // 4 bytes would start inside "é"; its continuation byte goes too.
        assert_eq!(sink.take(true), format!("{}€", truncation_marker(3)));
    }
}
