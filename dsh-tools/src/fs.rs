//! File tools: `read`, `write`, `edit`.
//!
//! Each tool is an ordinary `async fn` with `#[tool(args, ...)]`: the arguments are a
//! struct deriving `ToolSchema`, so constraints the model must respect (a non-empty path,
//! a positive offset, at most 2000 lines) are part of the published schema and rejected
//! with `INVALID_ARGS` before the body runs. The bodies only check what a schema cannot
//! say (the file exists, `old_string` occurs once).
//!
//! Relative paths resolve against the process's working directory (the `dsh-tools` host
//! runs in its `--root`).
//!
//! Cards: `read` shows a read card rebuilt from its presentation meta (the window it
//! returned); `write` and `edit` show the change as a diff card when called, and the
//! applied hunks (3 lines of context) when done, from meta too, so a replayed log shows
//! the same cards without the canonical value.
//!
//! Error codes: `FS_NOT_FOUND`, `FS_IS_DIRECTORY`, `FS_PERMISSION_DENIED`, `FS_BINARY`,
//! `FS_IO`, `EDIT_NO_MATCH`, `EDIT_AMBIGUOUS`, and `INVALID_ARGS` for an edit whose
//! `old_string` equals its `new_string`.

use std::io::{BufRead, BufReader, ErrorKind};
use std::path::Path;
use std::time::Duration;

use dsh_runtime::present::{
    CallView, FileDiff, FileLocation, ReadLine, ReadView, ResultSummary, ResultView, ToolCallKind,
};
use dsh_runtime::{
    ContentBlock, ErrorCode, RegisterError, Registration, Registry, ToolError, ToolSchema, tool,
};
use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};

/// The most lines one `read` returns, and its default window.
pub const MAX_READ_LINES: u64 = 2000;
/// Rendered lines longer than this many characters are cut (the value keeps them whole).
pub const MAX_RENDERED_LINE_CHARS: usize = 2000;
/// Lines of unchanged context around each hunk of a diff card.
pub const DIFF_CONTEXT_LINES: usize = 3;

/// Register `read`, `write` and `edit` in the registry's global layer.
pub fn register(registry: &Registry) -> Result<Vec<Registration>, RegisterError> {
    Ok(vec![
        registry.register(Read)?,
        registry.register(Write)?,
        registry.register(Edit)?,
    ])
}

// ---------------------------------------------------------------------------------------
// read

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
    /// The path as given.
    pub path: String,
    /// The 1-based number of the first line requested.
    pub offset: u64,
    /// The lines of the window, numbered from 1.
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

/// Read a text file, or a window of its lines.
///
/// Returns the lines numbered from 1, up to 2000 at a time; use `offset` and `limit` to
/// page through longer files. Binary files are refused.
#[tool(
    args,
    read_only,
    idempotent,
    concurrency_safe,
    render = render_read,
    presentation_meta = read_meta,
    present_call = read_call_card,
    present_result = read_result_card
)]
pub async fn read(args: ReadArgs) -> Result<ReadOutput, ToolError> {
    let offset = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(MAX_READ_LINES);
    let path = args.file_path;
    blocking(move || {
        let (lines, total_lines) = read_window(&path, offset, limit)?;
        Ok(ReadOutput {
            path,
            offset,
            lines,
            total_lines,
        })
    })
    .await
}

/// Reads lines `offset..offset + limit` and counts every line, without holding the file.
fn read_window(path: &str, offset: u64, limit: u64) -> Result<(Vec<NumberedLine>, u64), ToolError> {
    let file = open_file(path)?;
    let mut reader = BufReader::new(file);
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    let mut total = 0u64;
    let mut inspected = 0usize;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_error(path, e))?;
        if n == 0 {
            break;
        }
        if inspected < BINARY_SNIFF_BYTES {
            if buf.contains(&0) {
                return Err(binary_error(path));
            }
            inspected += n;
        }
        total += 1;
        if total >= offset && total - offset < limit {
            lines.push(NumberedLine {
                number: total,
                text: line_text(&buf),
            });
        }
    }
    Ok((lines, total))
}

fn render_read(_args: &ReadArgs, out: &ReadOutput) -> Vec<ContentBlock> {
    let mut text = String::new();
    for line in &out.lines {
        let shown = cut(&line.text, MAX_RENDERED_LINE_CHARS);
        text.push_str(&format!("{:>6}\t{shown}\n", line.number));
    }
    let note = match (out.lines.first(), out.lines.last()) {
        _ if out.total_lines == 0 => Some("(empty file)".to_string()),
        (Some(first), Some(last)) if first.number > 1 || last.number < out.total_lines => {
            let more = if last.number < out.total_lines {
                format!("; continue with offset={}", last.number + 1)
            } else {
                String::new()
            };
            Some(format!(
                "(lines {}-{} of {}{more})",
                first.number, last.number, out.total_lines
            ))
        }
        (None, _) => Some(format!(
            "(offset {} is past the end of the file, which has {} lines)",
            out.offset, out.total_lines
        )),
        _ => None,
    };
    if let Some(note) = note {
        text.push_str(&note);
    }
    vec![ContentBlock::text(text.trim_end())]
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
    let location = match args.offset {
        Some(line) => FileLocation::new(&args.file_path).at_line(line),
        None => FileLocation::new(&args.file_path),
    };
    CallView::Generic {
        title: format!("Read {}", args.file_path),
        kind: Some(ToolCallKind::Read),
        raw_input: None,
        content: None,
        locations: Some(vec![location]),
    }
}

fn read_result_card(_args: &ReadArgs, result: &ResultSummary) -> Option<ResultView> {
    let view: ReadView = meta_of(result)?;
    Some(view.into())
}

/// A highlighting hint from the file extension.
pub fn language_of(path: &str) -> Option<&'static str> {
    let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => "rust",
        "md" | "markdown" => "markdown",
        "toml" => "toml",
        "json" | "jsonl" => "json",
        "yaml" | "yml" => "yaml",
        "py" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "jsx" => "jsx",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "java" => "java",
        "kt" => "kotlin",
        "rb" => "ruby",
        "sh" | "bash" => "bash",
        "html" | "htm" => "html",
        "css" => "css",
        "sql" => "sql",
        "xml" => "xml",
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// write

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
    /// The path as given.
    pub path: String,
    /// Created or replaced.
    pub operation: WriteOperation,
    /// The previous content (`null` when the file was created).
    pub before: Option<String>,
    /// The content written.
    pub after: String,
}

/// Write a file, replacing its content if it exists.
///
/// Creates the file (and missing parent directories) or overwrites it with `content`.
/// Prefer `edit` for changing part of an existing file.
#[tool(
    args,
    destructive,
    idempotent,
    render = render_write,
    presentation_meta = write_meta,
    present_call = write_call_card,
    present_result = diff_result_card
)]
pub async fn write(args: WriteArgs) -> Result<WriteOutput, ToolError> {
    blocking(move || {
        let path = Path::new(&args.file_path);
        let before = match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => return Err(directory_error(&args.file_path)),
            Ok(_) => Some(read_text(&args.file_path)?),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(&args.file_path, e)),
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| io_error(&args.file_path, e))?;
        }
        std::fs::write(path, &args.content).map_err(|e| io_error(&args.file_path, e))?;
        Ok(WriteOutput {
            operation: if before.is_some() {
                WriteOperation::Update
            } else {
                WriteOperation::Create
            },
            path: args.file_path,
            before,
            after: args.content,
        })
    })
    .await
}

fn render_write(_args: &WriteArgs, out: &WriteOutput) -> Vec<ContentBlock> {
    let text = match &out.before {
        None => format!("Created {} ({} lines).", out.path, count_lines(&out.after)),
        Some(before) => {
            let (added, removed) = line_changes(before, &out.after);
            format!("Updated {} (+{added} -{removed} lines).", out.path)
        }
    };
    vec![ContentBlock::text(text)]
}

/// Durable diff data for `write` and `edit`: the applied hunks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffMeta {
    /// One entry per hunk (a created file is one hunk with `oldText: null`).
    pub diffs: Vec<FileDiff>,
}

fn write_meta(_args: &WriteArgs, out: &WriteOutput) -> DiffMeta {
    DiffMeta {
        diffs: hunks(&out.path, out.before.as_deref(), &out.after),
    }
}

fn write_call_card(args: &WriteArgs) -> CallView {
    CallView::Diff {
        title: format!("Write {}", args.file_path),
        diffs: vec![FileDiff::create(&args.file_path, &args.content)],
        locations: Some(vec![FileLocation::new(&args.file_path)]),
    }
}

// ---------------------------------------------------------------------------------------
// edit

/// Arguments of `edit`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub struct EditArgs {
    /// Path of the file to edit, absolute or relative to the working directory.
    #[schema(length(min = 1))]
    pub file_path: String,
    /// The exact text to replace, including whitespace and indentation.
    #[schema(length(min = 1))]
    pub old_string: String,
    /// The text to put in its place (must differ from `old_string`).
    pub new_string: String,
    /// Replace every occurrence of `old_string` (default: false; `old_string` must then
    /// occur exactly once).
    pub replace_all: Option<bool>,
}

/// What `edit` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct EditOutput {
    /// The path as given.
    pub path: String,
    /// The content before the edit.
    pub before: String,
    /// The content after the edit.
    pub after: String,
    /// How many occurrences were replaced.
    pub replacements: u64,
}

/// Replace exact text in a file.
///
/// `old_string` must occur exactly once, unless `replace_all` is set; include enough
/// surrounding lines to make it unique. The replacement is literal (no regular
/// expressions).
#[tool(
    args,
    destructive,
    render = render_edit,
    presentation_meta = edit_meta,
    present_call = edit_call_card,
    present_result = diff_result_card
)]
pub async fn edit(args: EditArgs) -> Result<EditOutput, ToolError> {
    if args.old_string == args.new_string {
        return Err(ToolError::with_code(
            ErrorCode::InvalidArgs,
            "invalid arguments: old_string and new_string must differ",
        ));
    }
    blocking(move || {
        let path = args.file_path;
        let before = read_text(&path)?;
        let replacements = before.matches(args.old_string.as_str()).count();
        if replacements == 0 {
            return Err(ToolError::with_code(
                "EDIT_NO_MATCH",
                format!("old_string was not found in {path}"),
            ));
        }
        let replace_all = args.replace_all.unwrap_or(false);
        if replacements > 1 && !replace_all {
            return Err(ToolError::with_code(
                "EDIT_AMBIGUOUS",
                format!(
                    "old_string occurs {replacements} times in {path}; include more surrounding text to make it unique, or set replace_all"
                ),
            ));
        }
        let after = if replace_all {
            before.replace(&args.old_string, &args.new_string)
        } else {
            before.replacen(&args.old_string, &args.new_string, 1)
        };
        std::fs::write(&path, &after).map_err(|e| io_error(&path, e))?;
        Ok(EditOutput {
            path,
            before,
            after,
            replacements: replacements as u64,
        })
    })
    .await
}

fn render_edit(_args: &EditArgs, out: &EditOutput) -> Vec<ContentBlock> {
    let noun = if out.replacements == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    let (added, removed) = line_changes(&out.before, &out.after);
    vec![ContentBlock::text(format!(
        "Edited {}: replaced {} {noun} (+{added} -{removed} lines).",
        out.path, out.replacements
    ))]
}

fn edit_meta(_args: &EditArgs, out: &EditOutput) -> DiffMeta {
    DiffMeta {
        diffs: hunks(&out.path, Some(&out.before), &out.after),
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

/// The completed card of `write` and `edit`: the applied hunks from meta.
fn diff_result_card<A>(_args: &A, result: &ResultSummary) -> Option<ResultView> {
    let meta: DiffMeta = meta_of(result)?;
    Some(ResultView::diff(meta.diffs))
}

// ---------------------------------------------------------------------------------------
// diffs

/// The change from `before` (`None`: a new file) to `after` as hunks with
/// [`DIFF_CONTEXT_LINES`] lines of context, one [`FileDiff`] each.
pub fn hunks(path: &str, before: Option<&str>, after: &str) -> Vec<FileDiff> {
    let Some(before) = before else {
        return vec![FileDiff::create(path, after)];
    };
    let diff = TextDiff::configure()
        .timeout(Duration::from_secs(1))
        .diff_lines(before, after);
    diff.grouped_ops(DIFF_CONTEXT_LINES)
        .iter()
        .map(|group| {
            let (mut old, mut new) = (String::new(), String::new());
            for change in group.iter().flat_map(|op| diff.iter_changes(op)) {
                match change.tag() {
                    ChangeTag::Equal => {
                        old.push_str(change.value());
                        new.push_str(change.value());
                    }
                    ChangeTag::Delete => old.push_str(change.value()),
                    ChangeTag::Insert => new.push_str(change.value()),
                }
            }
            FileDiff::update(path, old, new)
        })
        .collect()
}

/// Lines added and removed between two texts.
fn line_changes(before: &str, after: &str) -> (usize, usize) {
    let diff = TextDiff::configure()
        .timeout(Duration::from_secs(1))
        .diff_lines(before, after);
    diff.iter_all_changes()
        .fold((0, 0), |(added, removed), change| match change.tag() {
            ChangeTag::Insert => (added + 1, removed),
            ChangeTag::Delete => (added, removed + 1),
            ChangeTag::Equal => (added, removed),
        })
}

// ---------------------------------------------------------------------------------------
// shared helpers (also used by `search`)

/// How many leading bytes are checked for a NUL byte, the sign of a binary file.
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
        Err(e) => Err(ToolError::with_code("FS_IO", e.to_string())),
    }
}

/// The error for an I/O failure on `path`, coded by kind.
pub(crate) fn io_error(path: &str, e: std::io::Error) -> ToolError {
    match e.kind() {
        ErrorKind::NotFound => {
            ToolError::with_code("FS_NOT_FOUND", format!("no such file or directory: {path}"))
        }
        ErrorKind::PermissionDenied => {
            ToolError::with_code("FS_PERMISSION_DENIED", format!("permission denied: {path}"))
        }
        ErrorKind::IsADirectory => directory_error(path),
        _ => ToolError::with_code("FS_IO", format!("{path}: {e}")),
    }
}

fn directory_error(path: &str) -> ToolError {
    ToolError::with_code(
        "FS_IS_DIRECTORY",
        format!("{path} is a directory, not a file (use glob to list files)"),
    )
}

pub(crate) fn binary_error(path: &str) -> ToolError {
    ToolError::with_code(
        "FS_BINARY",
        format!("{path} looks like a binary file (it contains NUL bytes)"),
    )
}

/// Open a regular file for reading, with coded errors.
fn open_file(path: &str) -> Result<std::fs::File, ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if meta.is_dir() {
        return Err(directory_error(path));
    }
    std::fs::File::open(path).map_err(|e| io_error(path, e))
}

/// A whole text file; invalid UTF-8 is replaced, NUL bytes refuse the file.
fn read_text(path: &str) -> Result<String, ToolError> {
    let bytes = {
        let mut file = open_file(path)?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| io_error(path, e))?;
        bytes
    };
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(binary_error(path));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// A line's text without its terminator (`\n` or `\r\n`); invalid UTF-8 is replaced.
pub(crate) fn line_text(raw: &[u8]) -> String {
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    String::from_utf8_lossy(raw).into_owned()
}

/// The first `max` characters of `text`, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]).into(),
        None => text.into(),
    }
}

fn count_lines(text: &str) -> usize {
    text.lines().count()
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

    #[test]
    fn hunks_keep_three_lines_of_context() {
        let before: String = (1..=20).map(|n| format!("l{n}\n")).collect();
        let after = before.replace("l10\n", "ten\n");
        let diffs = hunks("f", Some(&before), &after);
        assert_eq!(
            diffs,
            vec![FileDiff::update(
                "f",
                "l7\nl8\nl9\nl10\nl11\nl12\nl13\n",
                "l7\nl8\nl9\nten\nl11\nl12\nl13\n"
            )]
        );
        // Two distant changes: two hunks.
        let after = after.replace("l1\n", "one\n").replace("l20\n", "twenty\n");
        assert_eq!(hunks("f", Some(&before), &after).len(), 3);
        assert_eq!(hunks("f", None, "x\n"), vec![FileDiff::create("f", "x\n")]);
        assert!(hunks("f", Some("same\n"), "same\n").is_empty());
    }

    #[test]
    fn cut_counts_characters() {
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("héllo", 5), "héllo");
    }

    #[test]
    fn line_text_strips_terminators() {
        assert_eq!(line_text(b"a\r\n"), "a");
        assert_eq!(line_text(b"a\n"), "a");
        assert_eq!(line_text(b"a"), "a");
        assert_eq!(line_text(b"\xffa\n"), "\u{fffd}a");
    }
}
