//! File tools: `read`, `write`, `edit`.
//!
//! The three tools are methods of [`Files`], a `#[toolbox]` value holding the [`FsScope`] they
//! resolve paths in: [`register`] gives them the working directory and no confinement,
//! [`register_in`] a scope of your choice (the `dsh-tools` host confines them to `--root`).
//! What the model sees is fixed (parameter names, error codes and messages, and the text of
//! each result; pinned by `tests/tools/fs_tools.rs`):
//!
//! - `read` answers with a `<path>`/`<type>`/`<content>` envelope of `N: text` lines and a
//!   footer: `(End of file - total N lines)`, or how to continue (`Use offset=N to
//!   continue.`). At most 2000 lines and 50 KiB of line text per call; lines longer than
//!   2000 characters are cut (`... (line truncated to 2000 chars)`) in the value too. Files
//!   that are not UTF-8 text are refused (`FS_NOT_TEXT`), as are directories and special files
//!   (`FS_NOT_REGULAR_FILE`, checked before the file is opened, so a FIFO never blocks). An
//!   `offset` past the end is `FS_NOT_FOUND`. A leading byte-order mark is not shown.
//! - `write` creates or replaces a file (creating missing directories); the value's `after`
//!   has CRLF line endings shown as LF, the file gets the content byte for byte.
//! - `edit` replaces literal text. An LF `old_string` matches CRLF text, and the replacement
//!   takes the file's line endings; `before`/`after` in the value are LF-normalized. A file that
//!   is not valid UTF-8 or contains a NUL byte is refused (`FS_NOT_TEXT`) and left untouched.
//!
//! Both mutations are atomic (a temporary file beside the target, renamed over it; see
//! [`crate::scope`]): an error never leaves a half-written file.
//!
//! Argument rules a schema can state (a non-empty path, a positive `offset`, at most 2000
//! lines) are in the published schema and rejected with `INVALID_ARGS` before the body runs;
//! a path of only blanks is refused by the body (`file_path must be a non-empty string`).
//!
//! # Departures from the reference, and why
//!
//! - `edit` keeps every byte outside the replaced spans: the reference rewrites the whole
//!   file in one line-ending style (a mostly-CRLF file with a few LF lines gets all CRLF, and a
//!   leading byte-order mark is dropped). Files with one line-ending style come out the same.
//! - `edit` of a missing file is `FS_NOT_FOUND` (`cannot edit "<path>": not found`); the
//!   reference reports `FS_STALE_VERSION`, "file changed since it was read", for a file that
//!   was never read.
//! - `edit` refuses files, and results, over 10 MiB (`FS_TOO_LARGE`), so the value (which
//!   holds the text before and after) stays bounded; the change hunks kept as presentation
//!   metadata are bounded to 64 KiB.
//! - `old_string` equal to `new_string` is `INVALID_ARGS` (the reference gives the same
//!   message without a code).
//! - Under a confined scope, paths outside the root are refused (`FS_OUTSIDE_ROOT`), and so
//!   are files with more than one hard link.
//! - `write` of a new file has no `before` in its value; the reference sends
//!   `"before": null`, which its own published output schema (a plain string) does not
//!   admit, so validating MCP clients reject the call. What we send is what we publish.
//!
//! Cards: `read` shows a read card rebuilt from its presentation meta (the window it returned)
//! and content; `write` and `edit` show the change as a diff card when called, and the applied
//! hunks (3 lines of context) when done, from meta too, so a replayed log shows the same cards
//! without the canonical value.
//!
//! - A path over 4096 bytes or 1024 components is refused before it is resolved
//!   (`FS_PATH_TOO_LONG`, naming the limit).
//! - `edit` refuses (`FS_STALE_VERSION`) a file that changed twice between its read and its
//!   replacement, and keeps the file's extended attributes; what confinement and the atomic
//!   replacement guarantee, and the window they leave, is stated in [`crate::scope`].
//!
//! Error codes: `FS_NOT_FOUND`, `FS_NOT_REGULAR_FILE`, `FS_NOT_TEXT`, `FS_PERMISSION_DENIED`,
//! `FS_IO_ERROR`, `FS_EDIT_NOT_FOUND`, `FS_AMBIGUOUS_EDIT`, `FS_TOO_LARGE`, `FS_OUTSIDE_ROOT`,
//! `FS_PATH_TOO_LONG`, `FS_STALE_VERSION`, and `INVALID_ARGS`.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::time::Duration;

use dsh_runtime::cards::{
    CallView, FileDiff, FileLocation, ReadLine, ReadView, ResultSummary, ResultView, ToolCallKind,
};
use dsh_runtime::{
    PipelineCode, RegisterError, RegistrationHandle, Registry, ToolError, ToolSchema,
    content::ContentBlock, tool, toolbox,
};
use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};

use crate::scope::{FsScope, Identity, OUTSIDE_ROOT, Old, Target, is_stale, not_regular, shown};

/// The most lines one `read` returns, and its default window.
pub const MAX_READ_LINES: u64 = 2000;
/// Lines longer than this many characters (UTF-16 code units, as the reference counts) are
/// cut by `read`.
pub const MAX_READ_LINE_CHARS: usize = 2000;
/// The most bytes of line text one `read` returns; the window ends before the line that
/// would cross it.
pub const MAX_READ_BYTES: usize = 50 * 1024;
/// Lines of unchanged context around each hunk of a diff card.
pub const DIFF_CONTEXT_LINES: usize = 3;
/// The largest file `edit` changes, and the largest result it writes (bytes).
pub const MAX_EDIT_BYTES: usize = 10 * 1024 * 1024;
/// `write` reports the previous content (`before`) only for files below this size (bytes).
pub const MAX_DIFF_BASIS_BYTES: usize = 10 * 1024 * 1024;
/// The error code of an `edit` refused because the file kept changing while it was edited.
pub const STALE: &str = "FS_STALE_VERSION";
/// How many times `edit` reads, edits and tries to replace a file that changes meanwhile.
pub const EDIT_ATTEMPTS: u32 = 2;
/// The most bytes of hunk text kept in the presentation metadata of `write` and `edit`.
pub const MAX_DIFF_META_BYTES: usize = 64 * 1024;

/// Register `read`, `write` and `edit` in the registry's global layer, resolving paths
/// against the working directory, unconfined.
pub fn register(registry: &Registry) -> Result<Vec<RegistrationHandle>, RegisterError> {
    register_in(registry, FsScope::ambient())
}

/// Register `read`, `write` and `edit` in the registry's global layer, resolving paths in
/// `scope`.
pub fn register_in(
    registry: &Registry,
    scope: FsScope,
) -> Result<Vec<RegistrationHandle>, RegisterError> {
    crate::register_toolbox(registry, Files::new(scope))
}

/// The file tools over one [`FsScope`].
#[derive(Clone, Debug)]
pub struct Files {
    scope: FsScope,
}

impl Files {
    /// File tools resolving paths in `scope`.
    pub fn new(scope: FsScope) -> Self {
        Files { scope }
    }

    /// The scope paths resolve in.
    pub fn scope(&self) -> &FsScope {
        &self.scope
    }
}

// ---------------------------------------------------------------------------------------
// arguments and values

/// Arguments of `read`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub struct ReadArgs {
    /// Path of the file to read, absolute or relative to the working directory.
    #[schema(length(min = 1))]
    pub file_path: String,
    /// 1-based number of the first line to return (default: 1).
    #[schema(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to return (default and maximum: 2000).
    #[schema(range(min = 1, max = 2000))]
    pub limit: Option<u64>,
}

/// A window of a text file's lines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadOutput {
    /// The file's absolute path (`.` and `..` applied, symbolic links kept).
    pub path: String,
    /// The 1-based number of the first line requested.
    pub offset: u64,
    /// The lines of the window, numbered from 1 (long lines cut).
    pub lines: Vec<NumberedLine>,
    /// How many lines the file has.
    pub total_lines: u64,
}

/// One numbered line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct NumberedLine {
    /// 1-based line number.
    pub number: u64,
    /// The line's text, without its line terminator.
    pub text: String,
}

/// Arguments of `write`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub struct WriteArgs {
    /// Path of the file to write, absolute or relative to the working directory. Missing
    /// parent directories are created.
    #[schema(length(min = 1))]
    pub file_path: String,
    /// The file's complete new content.
    pub content: String,
}

/// Whether `write` created the file or replaced an existing one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub enum WriteOperation {
    /// The file did not exist.
    Create,
    /// The file existed and was replaced.
    Update,
}

/// What `write` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct WriteOutput {
    /// The file's absolute path.
    pub path: String,
    /// Created or replaced.
    pub operation: WriteOperation,
    /// The previous content, LF-normalized; absent when the file was created, or was not
    /// UTF-8 text, or had 10 MiB or more.
    pub before: Option<String>,
    /// The content written, LF-normalized.
    pub after: String,
}

/// Arguments of `edit`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub struct EditArgs {
    /// Path of the file to edit, absolute or relative to the working directory.
    #[schema(length(min = 1))]
    pub file_path: String,
    /// The exact text to replace, including whitespace and indentation.
    #[schema(length(min = 1))]
    pub old_string: String,
    /// The text to put in its place (must differ from `old_string`; empty deletes it).
    pub new_string: String,
    /// Replace every occurrence of `old_string` (default: false; `old_string` must then
    /// occur exactly once).
    pub replace_all: Option<bool>,
}

/// What `edit` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct EditOutput {
    /// The file's absolute path.
    pub path: String,
    /// The content before the edit, LF-normalized.
    pub before: String,
    /// The content after the edit, LF-normalized.
    pub after: String,
}

/// Durable diff data for `write` and `edit`: the applied hunks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffMeta {
    /// One entry per hunk (at most [`MAX_DIFF_META_BYTES`] of text in all).
    pub diffs: Vec<FileDiff>,
}

// ---------------------------------------------------------------------------------------
// the tools

#[toolbox]
impl Files {
    /// Read a UTF-8 text file as numbered lines.
    ///
    /// Returns up to 2000 lines (and 50 KiB) at a time, numbered from 1; use `offset` and
    /// `limit` to continue reading long files. Binary files and directories are refused.
    #[tool(
        name = "read",
        args,
        read_only,
        idempotent,
        concurrency_safe,
        render = render_read,
        presentation_meta = read_meta,
        present_call = read_call_card,
        present_result = read_result_card
    )]
    pub async fn read(&self, args: ReadArgs) -> Result<ReadOutput, ToolError> {
        non_blank(&args.file_path)?;
        let offset = args.offset.unwrap_or(1);
        let limit = args.limit.unwrap_or(MAX_READ_LINES);
        let scope = self.scope.clone();
        blocking(move || {
            let target = scope.locate("read", &args.file_path)?;
            let stat = scope
                .stat(&target)
                .map_err(|e| scope.io_error("read", &target.display, e))?
                .ok_or_else(|| not_found("read", &target.display))?;
            if !stat.is_file {
                return Err(not_regular("read", &target.display));
            }
            let file = scope.open_file("read", &target)?;
            let window = read_window(file, &target.display, offset, limit)?;
            Ok(ReadOutput {
                path: target.display,
                offset,
                lines: window.lines,
                total_lines: window.total_lines,
            })
        })
        .await
    }

    /// Create a UTF-8 text file, or replace its whole content.
    ///
    /// Writes `content` as the file's whole content, creating missing parent directories.
    /// Prefer `edit` for changing part of an existing file.
    #[tool(
        name = "write",
        args,
        destructive,
        idempotent,
        render = render_write,
        presentation_meta = write_meta,
        present_call = write_call_card,
        present_result = write_result_card
    )]
    pub async fn write(&self, args: WriteArgs) -> Result<WriteOutput, ToolError> {
        non_blank(&args.file_path)?;
        let scope = self.scope.clone();
        blocking(move || {
            let target = scope.locate("write", &args.file_path)?;
            let existing = scope
                .stat(&target)
                .map_err(|e| scope.io_error("write", &target.display, e))?;
            if existing.is_some_and(|s| !s.is_file) {
                return Err(not_regular("write", &target.display));
            }
            let before = match existing {
                Some(_) if args.content.len() < MAX_DIFF_BASIS_BYTES => {
                    diff_basis(&scope, &target)?
                }
                _ => None,
            };
            // The replaced file's extended attributes are kept (when it can be opened).
            let old_file = existing.and_then(|_| scope.open_file("write", &target).ok());
            let old = old_file.as_ref().map(|file| Old { file, expect: None });
            scope
                .write_atomic_with(&target, existing, old, |f| {
                    f.write_all(args.content.as_bytes())
                })
                .map_err(|e| scope.io_error("write", &target.display, e))?;
            Ok(WriteOutput {
                path: target.display,
                operation: if existing.is_some() {
                    WriteOperation::Update
                } else {
                    WriteOperation::Create
                },
                before,
                after: normalize_line_endings(&args.content).into_owned(),
            })
        })
        .await
    }

    /// Change an existing UTF-8 text file by replacing exact text.
    ///
    /// `old_string` must occur exactly once unless `replace_all` is set; include enough
    /// surrounding text to make it unique. Matching is literal (no regular expressions), and
    /// an LF `old_string` also matches CRLF text; the file keeps its line endings.
    #[tool(
        name = "edit",
        args,
        destructive,
        render = render_edit,
        presentation_meta = edit_meta,
        present_call = edit_call_card,
        present_result = edit_result_card
    )]
    pub async fn edit(&self, args: EditArgs) -> Result<EditOutput, ToolError> {
        non_blank(&args.file_path)?;
        if args.old_string == args.new_string {
            return Err(ToolError::with_code(
                PipelineCode::InvalidArgs,
                "invalid arguments: old_string and new_string must differ",
            ));
        }
        let scope = self.scope.clone();
        blocking(move || {
            let target = scope.locate("edit", &args.file_path)?;
            let stat = scope
                .stat(&target)
                .map_err(|e| scope.io_error("edit", &target.display, e))?
                .ok_or_else(|| not_found("edit", &target.display))?;
            if !stat.is_file {
                return Err(not_regular("edit", &target.display));
            }
            // A file that changes between the read and the rename is read and edited once
            // more; a second change refuses the edit.
            let mut attempt = 0;
            let edited = loop {
                attempt += 1;
                let file = scope.open_file("edit", &target)?;
                let identity = Identity::of(&file)
                    .map_err(|e| scope.io_error("edit", &target.display, e))?;
                let raw = read_for_edit(&file, &target)?;
                let edited = apply_edit(
                    &raw,
                    &args.old_string,
                    &args.new_string,
                    args.replace_all.unwrap_or(false),
                    &target.display,
                )?;
                if edited.raw_after.len() > MAX_EDIT_BYTES {
                    return Err(ToolError::with_code(
                        "FS_TOO_LARGE",
                        format!(
                            "cannot edit \"{}\": the edited file would have {} bytes, over the {MAX_EDIT_BYTES}-byte limit",
                            shown(&target.display),
                            edited.raw_after.len()
                        ),
                    ));
                }
                let old = Old {
                    file: &file,
                    expect: Some(identity),
                };
                match scope.write_atomic_with(&target, Some(stat), Some(old), |f| {
                    f.write_all(edited.raw_after.as_bytes())
                }) {
                    Ok(()) => break edited,
                    Err(e) if is_stale(&e) && attempt < EDIT_ATTEMPTS => continue,
                    Err(e) if is_stale(&e) => {
                        return Err(ToolError::with_code(
                            STALE,
                            format!(
                                "cannot edit \"{}\": the file changed while it was being edited ({EDIT_ATTEMPTS} attempts); nothing was written, read it again and retry",
                                shown(&target.display)
                            ),
                        ));
                    }
                    Err(e) => return Err(scope.io_error("edit", &target.display, e)),
                }
            };
            Ok(EditOutput {
                path: target.display,
                before: edited.before,
                after: edited.after,
            })
        })
        .await
    }
}

// ---------------------------------------------------------------------------------------
// read

/// A read window, before it becomes a [`ReadOutput`].
struct Window {
    lines: Vec<NumberedLine>,
    total_lines: u64,
}

/// Scans the whole file (counting lines and checking it is UTF-8) while keeping only the
/// window, and at most a little more than one cut line of any line, in memory.
fn read_window(
    mut file: std::fs::File,
    display: &str,
    offset: u64,
    limit: u64,
) -> Result<Window, ToolError> {
    let io = |e: std::io::Error| io_failure("read", display, e);
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    (&mut file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(io)?;
    if head.contains(&0) {
        return Err(not_text("read", display, "binary file"));
    }
    let mut scanner = LineScanner::new(offset, limit);
    let mut utf8 = Utf8Check::default();
    let mut chunk = head;
    let mut first = true;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut data = chunk.as_slice();
        if first {
            first = false;
            data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
        }
        if !utf8.feed(data) {
            return Err(not_text("read", display, "invalid UTF-8 text"));
        }
        scanner.feed(data);
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        chunk = buf[..n].to_vec();
    }
    if !utf8.finish() {
        return Err(not_text("read", display, "invalid UTF-8 text"));
    }
    let (lines, total_lines, truncated_by_bytes) = scanner.finish();
    if !truncated_by_bytes && offset > total_lines && !(total_lines == 0 && offset == 1) {
        return Err(ToolError::with_code(
            "FS_NOT_FOUND",
            format!(
                "offset {offset} is out of range for \"{}\" ({total_lines} lines)",
                shown(display)
            ),
        ));
    }
    Ok(Window { lines, total_lines })
}

/// Splits a byte stream into lines (`\n`, with a `\r` before it dropped), numbering them and
/// keeping the requested window under the line and byte caps.
struct LineScanner {
    offset: u64,
    limit: u64,
    current: Vec<u8>,
    /// Bytes of the current line seen (also those not kept).
    current_len: usize,
    lines: Vec<NumberedLine>,
    total: u64,
    bytes: usize,
    truncated_by_bytes: bool,
}

/// Enough bytes of a line to cut it at [`MAX_READ_LINE_CHARS`] code units: a kept prefix
/// this long always has more.
const LINE_KEEP_BYTES: usize = 4 * (MAX_READ_LINE_CHARS + 2);

impl LineScanner {
    fn new(offset: u64, limit: u64) -> Self {
        LineScanner {
            offset,
            limit,
            current: Vec::new(),
            current_len: 0,
            lines: Vec::new(),
            total: 0,
            bytes: 0,
            truncated_by_bytes: false,
        }
    }

    fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let (segment, rest, ends) = match data.iter().position(|b| *b == b'\n') {
                Some(i) => (&data[..i], &data[i + 1..], true),
                None => (data, &data[data.len()..], false),
            };
            let room = LINE_KEEP_BYTES.saturating_sub(self.current.len());
            self.current
                .extend_from_slice(&segment[..segment.len().min(room)]);
            self.current_len += segment.len();
            if ends {
                self.flush();
            }
            data = rest;
        }
    }

    fn flush(&mut self) {
        self.total += 1;
        let wanted = !self.truncated_by_bytes
            && self.total >= self.offset
            && (self.lines.len() as u64) < self.limit;
        if wanted {
            let complete = self.current.len() == self.current_len;
            let mut raw = self.current.as_slice();
            if complete {
                raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            }
            let text = match std::str::from_utf8(raw) {
                Ok(text) => text,
                // A kept prefix may end inside a character.
                Err(e) => std::str::from_utf8(&raw[..e.valid_up_to()]).unwrap_or_default(),
            };
            let text = cut_line(text);
            let size = text.len() + usize::from(!self.lines.is_empty());
            if self.bytes + size > MAX_READ_BYTES {
                self.truncated_by_bytes = true;
            } else {
                self.bytes += size;
                self.lines.push(NumberedLine {
                    number: self.total,
                    text,
                });
            }
        }
        self.current.clear();
        self.current_len = 0;
    }

    fn finish(mut self) -> (Vec<NumberedLine>, u64, bool) {
        if self.current_len > 0 {
            self.flush();
        }
        (self.lines, self.total, self.truncated_by_bytes)
    }
}

/// A line cut to [`MAX_READ_LINE_CHARS`] UTF-16 code units, with the reference's marker.
fn cut_line(text: &str) -> String {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        units += c.len_utf16();
        if units > MAX_READ_LINE_CHARS {
            return format!(
                "{}... (line truncated to {MAX_READ_LINE_CHARS} chars)",
                &text[..i]
            );
        }
    }
    text.to_string()
}

/// Streaming UTF-8 validation: bytes of a character split across chunks are carried over.
#[derive(Default)]
struct Utf8Check {
    carry: Vec<u8>,
}

impl Utf8Check {
    fn feed(&mut self, data: &[u8]) -> bool {
        let joined;
        let data = if self.carry.is_empty() {
            data
        } else {
            joined = [self.carry.as_slice(), data].concat();
            joined.as_slice()
        };
        match std::str::from_utf8(data) {
            Ok(_) => {
                self.carry.clear();
                true
            }
            Err(e) if e.error_len().is_none() => {
                self.carry = data[e.valid_up_to()..].to_vec();
                true
            }
            Err(_) => false,
        }
    }

    fn finish(&self) -> bool {
        self.carry.is_empty()
    }
}

fn render_read(args: &ReadArgs, out: &ReadOutput) -> Vec<ContentBlock> {
    let limit = args.limit.unwrap_or(MAX_READ_LINES);
    let end = out
        .lines
        .last()
        .map_or(out.offset.saturating_sub(1), |l| l.number);
    let capped = (out.lines.len() as u64) < limit && end < out.total_lines;
    let footer = if capped {
        format!(
            "(Output capped. Showing lines {}-{end}. Use offset={} to continue.)",
            out.offset,
            end + 1
        )
    } else if end < out.total_lines {
        format!(
            "(Showing lines {}-{end} of {}. Use offset={} to continue.)",
            out.offset,
            out.total_lines,
            end + 1
        )
    } else {
        format!("(End of file - total {} lines)", out.total_lines)
    };
    let body = if out.lines.is_empty() {
        footer
    } else {
        let mut body = String::new();
        for line in &out.lines {
            body.push_str(&format!("{}: {}\n", line.number, line.text));
        }
        body.push('\n');
        body.push_str(&footer);
        body
    };
    vec![ContentBlock::text(envelope(&out.path, &body))]
}

/// The `<path>`/`<type>`/`<content>` envelope of `read` and `write`.
fn envelope(path: &str, body: &str) -> String {
    format!(
        "<path>{}</path>\n<type>file</type>\n<content>\n{body}\n</content>",
        shown(path)
    )
}

/// The read window and a language hint: what the read card is rebuilt from.
fn read_meta(_args: &ReadArgs, out: &ReadOutput) -> ReadView {
    let lines = out
        .lines
        .iter()
        .map(|l| ReadLine::new(l.number, l.text.as_str()))
        .collect();
    let view = ReadView::new(&out.path, out.offset, lines, out.total_lines);
    match language_of(&out.path) {
        Some(lang) => view.with_lang(lang),
        None => view,
    }
}

fn read_call_card(args: &ReadArgs) -> CallView {
    let first = args.offset.unwrap_or(1);
    let window = match (args.limit, args.offset) {
        (Some(limit), _) => format!(" ({first} - {})", first.saturating_add(limit - 1)),
        (None, Some(offset)) => format!(" (from line {offset})"),
        (None, None) => String::new(),
    };
    CallView::Generic {
        title: format!("Read {}{window}", args.file_path),
        kind: Some(ToolCallKind::Read),
        raw_input: None,
        content: None,
        locations: Some(vec![FileLocation::new(&args.file_path).at_line(first)]),
    }
}

/// The read card: the window from meta, and the envelope's body as its content (a logged
/// result of an older version, without the envelope, gets the window alone).
fn read_result_card(_args: &ReadArgs, result: &ResultSummary) -> Option<ResultView> {
    let view: ReadView = meta_of(result)?;
    let body = match result.content.as_slice() {
        [block] => block.as_text().and_then(|text| {
            text.split_once("</path>\n<type>file</type>\n<content>\n")?
                .1
                .strip_suffix("\n</content>")
        }),
        _ => None,
    };
    Some(match body {
        Some(body) => view.with_content(vec![ContentBlock::text(body)]).into(),
        None => view.into(),
    })
}

/// A highlighting hint from the file extension (the reference's table).
pub fn language_of(path: &str) -> Option<&'static str> {
    let name = Path::new(path).file_name()?.to_str()?;
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    Some(match ext.to_ascii_lowercase().as_str() {
        "ts" | "mts" | "cts" => "ts",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "js",
        "jsx" => "jsx",
        "json" | "jsonc" => "json",
        "py" => "py",
        "rb" => "rb",
        "go" => "go",
        "rs" => "rs",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "cpp",
        "cs" => "cs",
        "kt" => "kotlin",
        "swift" => "swift",
        "php" => "php",
        "sh" | "bash" | "zsh" => "sh",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "ini" => "ini",
        "md" | "markdown" => "md",
        "mdx" => "mdx",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "sql" => "sql",
        "xml" => "xml",
        "lua" => "lua",
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// write

/// The previous text of a file `write` replaces, LF-normalized; `None` when it is not UTF-8
/// text, has [`MAX_DIFF_BASIS_BYTES`] or more, or cannot be read. A file the scope refuses
/// (a hard link under `--root`) refuses the write.
fn diff_basis(scope: &FsScope, target: &Target) -> Result<Option<String>, ToolError> {
    let file = match scope.open_file("write", target) {
        Ok(file) => file,
        Err(e) if e.code_str() == Some(OUTSIDE_ROOT) => return Err(e),
        Err(_) => return Ok(None),
    };
    let mut bytes = Vec::new();
    if file
        .take(MAX_DIFF_BASIS_BYTES as u64)
        .read_to_end(&mut bytes)
        .is_err()
        || bytes.len() >= MAX_DIFF_BASIS_BYTES
        || bytes.contains(&0)
    {
        return Ok(None);
    }
    Ok(String::from_utf8(bytes)
        .ok()
        .map(|text| normalize_line_endings(&text).into_owned()))
}

fn render_write(_args: &WriteArgs, out: &WriteOutput) -> Vec<ContentBlock> {
    let what = match out.operation {
        WriteOperation::Create => "Created file",
        WriteOperation::Update => "Updated file",
    };
    vec![ContentBlock::text(envelope(&out.path, what))]
}

fn write_meta(args: &WriteArgs, out: &WriteOutput) -> DiffMeta {
    DiffMeta {
        diffs: match &out.before {
            Some(before) => hunks(&args.file_path, before, &out.after),
            None => Vec::new(),
        },
    }
}

fn write_call_card(args: &WriteArgs) -> CallView {
    CallView::Diff {
        title: format!("Write {}", args.file_path),
        diffs: vec![FileDiff::create(&args.file_path, &args.content)],
        locations: Some(vec![FileLocation::new(&args.file_path)]),
    }
}

/// The applied hunks from meta; a created file (no hunks) shows its whole content.
fn write_result_card(args: &WriteArgs, result: &ResultSummary) -> Option<ResultView> {
    let meta: DiffMeta = meta_of(result)?;
    if meta.diffs.is_empty() {
        return Some(ResultView::diff(vec![FileDiff::create(
            &args.file_path,
            &args.content,
        )]));
    }
    Some(ResultView::diff(meta.diffs))
}

// ---------------------------------------------------------------------------------------
// edit

/// The file's text for `edit`: refused when over [`MAX_EDIT_BYTES`], with a NUL byte, or not
/// UTF-8.
fn read_for_edit(file: &std::fs::File, target: &Target) -> Result<String, ToolError> {
    let mut bytes = Vec::new();
    file.take(MAX_EDIT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_failure("edit", &target.display, e))?;
    if bytes.len() > MAX_EDIT_BYTES {
        return Err(ToolError::with_code(
            "FS_TOO_LARGE",
            format!(
                "cannot edit \"{}\": the file has more than {MAX_EDIT_BYTES} bytes, the limit for edits",
                shown(&target.display)
            ),
        ));
    }
    if bytes.contains(&0) {
        return Err(not_text("edit", &target.display, "binary file"));
    }
    String::from_utf8(bytes).map_err(|_| not_text("edit", &target.display, "invalid UTF-8 text"))
}

/// The outcome of [`apply_edit`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Edited {
    /// The new file content: the old bytes with the matched spans replaced.
    pub raw_after: String,
    /// The old content, LF-normalized, without a byte-order mark.
    pub before: String,
    /// The new content, LF-normalized, without a byte-order mark.
    pub after: String,
}

/// Replace `old` with `new` in `raw`, matching on the LF-normalized text but splicing the raw
/// text: every byte outside the matched spans is kept, and the replacement takes the file's
/// dominant line ending (CRLF when, in its first 4096 characters, CRLF pairs outnumber lone
/// LFs).
pub(crate) fn apply_edit(
    raw: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    display: &str,
) -> Result<Edited, ToolError> {
    let bom = if raw.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &raw[bom..];
    // The normalized text, and where each collapsed CRLF pair sits in it.
    let mut norm = String::with_capacity(body.len());
    let mut collapsed = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find("\r\n") {
        norm.push_str(&rest[..i]);
        collapsed.push(norm.len());
        norm.push('\n');
        rest = &rest[i + 2..];
    }
    norm.push_str(rest);
    let to_raw = |n: usize| n + collapsed.partition_point(|&p| p < n);

    let old_norm = normalize_line_endings(old);
    let new_norm = normalize_line_endings(new);
    if old_norm.is_empty() {
        return Err(ToolError::with_code(
            "FS_EDIT_NOT_FOUND",
            "old_string must be a non-empty string",
        ));
    }
    let spans: Vec<usize> = norm
        .match_indices(old_norm.as_ref())
        .map(|(i, _)| i)
        .collect();
    match spans.len() {
        0 => {
            return Err(ToolError::with_code(
                "FS_EDIT_NOT_FOUND",
                format!("old_string was not found in \"{}\"", shown(display)),
            ));
        }
        1 => {}
        n if !replace_all => {
            return Err(ToolError::with_code(
                "FS_AMBIGUOUS_EDIT",
                format!(
                    "old_string matched {n} times in \"{}\"; provide a more specific old_string or set replace_all to true",
                    shown(display)
                ),
            ));
        }
        _ => {}
    }
    let replacement = if crlf_style(body) {
        new_norm.replace('\n', "\r\n")
    } else {
        new_norm.clone().into_owned()
    };
    let mut raw_after = String::with_capacity(raw.len());
    raw_after.push_str(&raw[..bom]);
    let mut done = 0;
    for &start in &spans {
        let (raw_start, raw_end) = (to_raw(start), to_raw(start + old_norm.len()));
        raw_after.push_str(&body[done..raw_start]);
        raw_after.push_str(&replacement);
        done = raw_end;
    }
    raw_after.push_str(&body[done..]);
    let after = norm.replace(old_norm.as_ref(), &new_norm);
    Ok(Edited {
        raw_after,
        before: norm,
        after,
    })
}

/// Whether CRLF pairs outnumber lone LFs in the first 4096 UTF-16 code units of `text`.
fn crlf_style(text: &str) -> bool {
    let mut units = 0;
    let end = text
        .char_indices()
        .find(|(_, c)| {
            units += c.len_utf16();
            units > 4096
        })
        .map_or(text.len(), |(i, _)| i);
    let sample = &text[..end];
    let crlf = sample.matches("\r\n").count();
    let lf = sample.matches('\n').count();
    crlf > lf - crlf
}

fn render_edit(args: &EditArgs, out: &EditOutput) -> Vec<ContentBlock> {
    let path = shown(&out.path);
    let text = if args.replace_all.unwrap_or(false) {
        format!("The file {path} has been updated. All occurrences were successfully replaced.")
    } else {
        format!("The file {path} has been updated successfully.")
    };
    vec![ContentBlock::text(text)]
}

fn edit_meta(args: &EditArgs, out: &EditOutput) -> DiffMeta {
    DiffMeta {
        diffs: hunks(&args.file_path, &out.before, &out.after),
    }
}

fn edit_call_card(args: &EditArgs) -> CallView {
    CallView::Diff {
        title: format!("Edit {}", args.file_path),
        diffs: vec![FileDiff::update(
            &args.file_path,
            &args.old_string,
            &args.new_string,
        )],
        locations: Some(vec![FileLocation::new(&args.file_path)]),
    }
}

/// The applied hunks from meta.
fn edit_result_card(_args: &EditArgs, result: &ResultSummary) -> Option<ResultView> {
    let meta: DiffMeta = meta_of(result)?;
    if meta.diffs.is_empty() {
        return None;
    }
    Some(ResultView::diff(meta.diffs))
}

// ---------------------------------------------------------------------------------------
// diffs

/// The change from `before` to `after` as hunks with [`DIFF_CONTEXT_LINES`] lines of context,
/// one [`FileDiff`] each: each side's lines joined with `\n` (no final newline), `oldText`
/// `null` for a pure insertion. At most [`MAX_DIFF_META_BYTES`] of text in all: later hunks
/// are dropped, and a first hunk alone over the budget is cut (ending with `…`).
pub fn hunks(path: &str, before: &str, after: &str) -> Vec<FileDiff> {
    let diff = TextDiff::configure()
        .timeout(Duration::from_secs(1))
        .diff_lines(before, after);
    let mut out = Vec::new();
    let mut size = 0;
    for group in diff.grouped_ops(DIFF_CONTEXT_LINES) {
        let (mut old, mut new) = (Vec::new(), Vec::new());
        for change in group.iter().flat_map(|op| diff.iter_changes(op)) {
            let line = change.value().strip_suffix('\n').unwrap_or(change.value());
            match change.tag() {
                ChangeTag::Equal => {
                    old.push(line);
                    new.push(line);
                }
                ChangeTag::Delete => old.push(line),
                ChangeTag::Insert => new.push(line),
            }
        }
        let old_text = (!old.is_empty()).then(|| old.join("\n"));
        let new_text = new.join("\n");
        let hunk_size = old_text.as_ref().map_or(0, String::len) + new_text.len();
        if size + hunk_size > MAX_DIFF_META_BYTES {
            if out.is_empty() {
                let half = MAX_DIFF_META_BYTES / 2;
                out.push(FileDiff {
                    old_text: old_text.map(|t| cut_bytes(&t, half)),
                    ..FileDiff::create(path, cut_bytes(&new_text, half))
                });
            }
            break;
        }
        size += hunk_size;
        out.push(FileDiff {
            old_text,
            ..FileDiff::create(path, new_text)
        });
    }
    out
}

/// The first `max` bytes of `text` (at a character boundary), with `…` when cut.
fn cut_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

// ---------------------------------------------------------------------------------------
// shared helpers (also used by `search`)

/// How many leading bytes `read` checks for a NUL byte, the sign of a binary file.
pub(crate) const BINARY_SNIFF_BYTES: usize = 8192;

/// Run blocking file work off the async executor (requires a Tokio runtime). A panic in
/// `f` resumes on the caller, where the pipeline contains it.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(ToolError::with_code("FS_IO_ERROR", e.to_string())),
    }
}

/// `file_path must be a non-empty string` for a path of only blanks (the schema already
/// refuses an empty one).
fn non_blank(path: &str) -> Result<(), ToolError> {
    if path.trim().is_empty() {
        return Err(ToolError::new("file_path must be a non-empty string"));
    }
    Ok(())
}

fn not_found(verb: &str, display: &str) -> ToolError {
    ToolError::with_code(
        "FS_NOT_FOUND",
        format!("cannot {verb} \"{}\": not found", shown(display)),
    )
}

fn not_text(verb: &str, display: &str, why: &str) -> ToolError {
    ToolError::with_code(
        "FS_NOT_TEXT",
        format!("cannot {verb} \"{}\": {why}", shown(display)),
    )
}

/// An I/O error while reading an opened file.
fn io_failure(verb: &str, display: &str, e: std::io::Error) -> ToolError {
    ToolError::with_code(
        "FS_IO_ERROR",
        format!("cannot {verb} \"{}\": {e}", shown(display)),
    )
}

/// CRLF pairs as LF (lone CRs are kept).
pub(crate) fn normalize_line_endings(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("\r\n") {
        text.replace("\r\n", "\n").into()
    } else {
        text.into()
    }
}

/// The persisted meta of a successful result, typed; `None` for failures and for meta
/// that does not have the expected shape (a log from another version).
pub(crate) fn meta_of<T: serde::de::DeserializeOwned>(result: &ResultSummary) -> Option<T> {
    if result.is_error {
        return None;
    }
    dsh_runtime::json::from_value(result.meta.as_ref()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::cut;

    #[test]
    fn hunks_keep_three_lines_of_context() {
        let before: String = (1..=20).map(|n| format!("l{n}\n")).collect();
        let after = before.replace("l10\n", "ten\n");
        let diffs = hunks("f", &before, &after);
        assert_eq!(
            diffs,
            vec![FileDiff::update(
                "f",
                "l7\nl8\nl9\nl10\nl11\nl12\nl13",
                "l7\nl8\nl9\nten\nl11\nl12\nl13"
            )]
        );
        // Two distant changes: separate hunks.
        let after = after.replace("l1\n", "one\n").replace("l20\n", "twenty\n");
        assert_eq!(hunks("f", &before, &after).len(), 3);
        assert!(hunks("f", "same\n", "same\n").is_empty());
        // A pure insertion has no old text.
        assert_eq!(hunks("f", "", "x\n"), vec![FileDiff::create("f", "x")]);
    }

    #[test]
    fn hunks_are_bounded() {
        let before: String = (0..20_000).map(|n| format!("line {n}\n")).collect();
        let after = before.replace("line", "LINE");
        let diffs = hunks("f", &before, &after);
        assert_eq!(diffs.len(), 1);
        let size = diffs[0].new_text.len() + diffs[0].old_text.as_ref().map_or(0, String::len);
        assert!(size <= MAX_DIFF_META_BYTES + 8, "{size}");
        assert!(diffs[0].new_text.ends_with('…'));
    }

    #[test]
    fn cut_counts_characters_and_lines_count_utf16_units() {
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("héllo", 5), "héllo");
        let long = "😀".repeat(1500); // 3000 UTF-16 code units
        let cut = cut_line(&long);
        assert_eq!(
            cut,
            format!("{}... (line truncated to 2000 chars)", "😀".repeat(1000))
        );
        assert_eq!(cut_line("short"), "short");
    }

    #[test]
    fn edits_splice_raw_text() {
        // LF old_string against CRLF text: the replacement takes CRLF.
        let e = apply_edit(
            "one\r\ntwo\r\nthree\r\n",
            "one\ntwo",
            "uno\ndos",
            false,
            "f",
        )
        .unwrap();
        assert_eq!(e.raw_after, "uno\r\ndos\r\nthree\r\n");
        assert_eq!(e.before, "one\ntwo\nthree\n");
        assert_eq!(e.after, "uno\ndos\nthree\n");
        // Mixed endings: bytes outside the span are kept as they were.
        let e = apply_edit("a\r\nb\nc\r\nd\r\n", "c", "C", false, "f").unwrap();
        assert_eq!(e.raw_after, "a\r\nb\nC\r\nd\r\n");
        // A byte-order mark stays in the file and out of the value.
        let e = apply_edit("\u{feff}x y\n", "y", "z", false, "f").unwrap();
        assert_eq!(e.raw_after, "\u{feff}x z\n");
        assert_eq!(e.before, "x y\n");
        // Lone CRs are text.
        let e = apply_edit("a\rb\n", "a\rb", "ab", false, "f").unwrap();
        assert_eq!(e.raw_after, "ab\n");
        let err = apply_edit("x x", "x", "y", false, "f").unwrap_err();
        assert_eq!(err.code_str(), Some("FS_AMBIGUOUS_EDIT"));
        let e = apply_edit("x\r\nx\r\n", "x\n", "y\n", true, "f").unwrap();
        assert_eq!(e.raw_after, "y\r\ny\r\n");
    }
}
