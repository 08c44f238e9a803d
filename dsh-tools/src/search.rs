//! Discovery tools: `grep` (matching lines) and `glob` (matching paths).
//!
//! Both are methods of [`Search`], a `#[toolbox]` value holding the [`FsScope`] they search
//! in ([`register`]: the working directory, unconfined; [`register_in`]: a scope of your
//! choice). They walk the tree in process with the crates ripgrep is built from, so the
//! semantics are ripgrep's:
//!
//! - `grep` takes `pattern` (a Rust `regex`, the syntax ripgrep uses, matched against the
//!   bytes of each line), `path` (a file or directory) and `include` (one glob filter on file
//!   paths, `*.{ts,tsx}` style). Walking a directory it skips hidden files and directories and
//!   what `.gitignore` (inside a git repository), `.ignore` and `.rgignore` exclude, does not
//!   follow symbolic links, and treats a file with a NUL byte as binary (a NUL in the first
//!   64 KiB skips the file, a later one ends the search in it); a file given as `path` is
//!   always searched. The value is `{matches: [{path, lineNumber, line}]}`; the model sees
//!   `Found N matches`, then each file's path and its `Line N: text` rows, the first 250
//!   matches with lines cut after 2000 bytes.
//! - `glob` takes `pattern` (a glob: without a `/` it matches file names at any depth, with
//!   one it is anchored at the working directory, like `.gitignore` lines) and `path` (the
//!   directory to list). It lists files only, hidden and ignored ones included (not the
//!   contents of `.git`, `.svn`, `.hg`, `.bzr`, `.jj`, `.sl`), oldest modification first.
//!   The value is `{root, paths}`; the model sees the first 100 paths.
//!
//! Paths in results are relative to the working directory (the root, for the host) when they
//! are inside it, and start with the `path` given (`dir/sub.rs` for `path: "dir"`).
//!
//! # Departures from the reference, and why
//!
//! - `grep` lists files in path order (names sorted at each level, depth first); ripgrep's
//!   parallel walk lists them in an order that depends on thread timing.
//! - Error messages do not mention ripgrep or its exit status (`grep pattern rejected: ...`,
//!   `glob search failed: ...`): no ripgrep process runs. The codes are the reference's:
//!   `SEARCH_INVALID_PATTERN`, `SEARCH_FAILED`, `SEARCH_ABORTED`,
//!   `SEARCH_RAW_OUTPUT_OVERFLOW`.
//! - Patterns (and `include`) longer than [`MAX_PATTERN_CHARS`] are refused with a short
//!   `SEARCH_INVALID_PATTERN`, before anything is compiled.
//! - Under a confined scope, a `path` outside the root is refused (`FS_OUTSIDE_ROOT`), and
//!   every file reported is opened (`grep`) or checked (`glob`) through the root handle, so
//!   a directory swapped for a symbolic link mid-walk cannot leak what lies outside.
//! - `grep` reads ignore files itself, through the scope, like `read` opens files: inside
//!   the root only (under an ambient scope, inside the working directory, or the searched
//!   directory when it is elsewhere), regular files with one link, at most
//!   [`MAX_IGNORE_FILE_BYTES`] each; FIFOs, devices and links leading out are skipped as if
//!   absent. ripgrep also reads the ignore files of the directories above, the global git
//!   excludes file and a worktree's `.git` file; `grep` does not. Per directory, the
//!   precedence is ripgrep's: `.rgignore`, then `.ignore`, then `.gitignore`, then
//!   `.git/info/exclude` (these two inside a git repository, up to its top directory).
//! - `grep` keeps and searches at most [`GREP_VALUE_LINE_BYTES`] (64 KiB) of each line: a
//!   match in the first 64 KiB of a longer line is reported with that part, ending with
//!   ` (line truncated)`; text past it is read through (holes of sparse files skipped) but
//!   not searched. ripgrep searches a line whole, however long.
//!
//! # Confinement
//!
//! Under a confined scope, `grep` and `glob` read nothing outside the root and nothing
//! that is not a regular file: the files `grep` searches and the ignore files it reads are
//! all opened through the root handle, without blocking, one link only, with bounded
//! reads (lines at [`GREP_VALUE_LINE_BYTES`], ignore files at [`MAX_IGNORE_FILE_BYTES`]).
//! Of the world above the root, only whether a `.git` entry exists there is looked at.
//! The full statement, and what escapes it, is in [`crate::scope`].
//!
//! The pending card is a generic one (`kind: search`); the completed card is a `search` card
//! rebuilt from presentation meta (at most 64 KiB), matches grouped by file for `grep`, a
//! flat path list for `glob`.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use dsh_runtime::cards::{
    CallView, ResultSummary, ResultView, SearchFile, SearchMatch, SearchView, ToolCallKind,
};
use dsh_runtime::json::Value;
use dsh_runtime::{
    RegisterError, RegistrationHandle, Registry, ToolContext, ToolError, ToolSchema,
    content::ContentBlock, tool, toolbox,
};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::{Match, WalkBuilder};
use regex::bytes::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::fs::{blocking, meta_of};
use crate::scope::{FsScope, OUTSIDE_ROOT, PATH_TOO_LONG, Target, shown};

/// How many matches `grep` shows the model.
pub const GREP_MAX_MATCHES: usize = 250;
/// Matched lines are shown cut after this many bytes (ending with ` (line truncated)`).
pub const GREP_MAX_LINE_BYTES: usize = 2000;
/// Matched lines are kept in the value cut after this many bytes.
pub const GREP_VALUE_LINE_BYTES: usize = 64 * 1024;
/// How many paths `glob` shows the model.
pub const GLOB_MAX_RESULTS: usize = 100;
/// The most bytes of paths and lines one search may collect; past it the search fails with
/// `SEARCH_RAW_OUTPUT_OVERFLOW` (as the reference does past 20 MB of ripgrep output).
pub const MAX_RESULT_BYTES: usize = 20_000_000;
/// The most bytes of presentation metadata one search keeps.
pub const SEARCH_META_MAX_BYTES: usize = 64 * 1024;
/// The longest `pattern` or `include` accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 4096;
/// Directories `glob` never lists the contents of.
pub const GLOB_VCS_EXCLUDES: &[&str] = &[".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];
/// The largest ignore file (`.gitignore`, `.ignore`, `.rgignore`, `.git/info/exclude`)
/// `grep` reads; a larger one is skipped, as if it were not there.
pub const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;
/// A walked file with a NUL byte in its first this many bytes is skipped as binary.
const BINARY_WINDOW: usize = 64 * 1024;

/// Register `grep` and `glob` in the registry's global layer, searching from the working
/// directory, unconfined.
pub fn register(registry: &Registry) -> Result<Vec<RegistrationHandle>, RegisterError> {
    register_in(registry, FsScope::ambient())
}

/// Register `grep` and `glob` in the registry's global layer, searching in `scope`.
pub fn register_in(
    registry: &Registry,
    scope: FsScope,
) -> Result<Vec<RegistrationHandle>, RegisterError> {
    crate::register_toolbox(registry, Search::new(scope))
}

/// The search tools over one [`FsScope`].
#[derive(Clone, Debug)]
pub struct Search {
    scope: FsScope,
}

impl Search {
    /// Search tools working in `scope`.
    pub fn new(scope: FsScope) -> Self {
        Search { scope }
    }
}

// ---------------------------------------------------------------------------------------
// arguments and values

/// Arguments of `grep`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub struct GrepArgs {
    /// Regular expression to search for (ripgrep's syntax, e.g. `fn\s+main`).
    #[schema(length(min = 1))]
    pub pattern: String,
    /// File or directory to search (default: the working directory; relative paths resolve
    /// against it).
    pub path: Option<String>,
    /// Search only files matching this single glob, e.g. `*.rs` or `*.{ts,tsx}` (no
    /// comma-separated lists, no `!` negation).
    pub include: Option<String>,
}

/// Every matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GrepOutput {
    /// The matches, file by file in path order, lines in file order.
    pub matches: Vec<GrepMatch>,
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepMatch {
    /// The file's path.
    pub path: String,
    /// 1-based line number.
    pub line_number: u64,
    /// The line without its terminator (`(line is not valid UTF-8)` for one that is not).
    pub line: String,
}

/// Arguments of `glob`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub struct GlobArgs {
    /// The glob, e.g. `**/*.rs` or `src/*/mod.rs`. Without a `/` it is tried against file
    /// names anywhere below `path` (`*.md` finds every Markdown file); with one, against the
    /// path from the working directory.
    #[schema(length(min = 1))]
    pub pattern: String,
    /// Directory to search in (default: the working directory; relative paths resolve
    /// against it).
    pub path: Option<String>,
}

/// Every matching file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GlobOutput {
    /// The directory searched, as given (`.` by default).
    pub root: String,
    /// The files' paths, oldest modification first.
    pub paths: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// the tools

#[toolbox]
impl Search {
    /// Search file contents with a regular expression.
    ///
    /// Returns matching lines with line numbers, grouped by file; the first 250 matches are
    /// shown. Hidden files, files ignored by `.gitignore`/`.ignore` and binary files are
    /// skipped when searching a directory. Use `read` on a matched file for context.
    #[tool(
        name = "grep",
        args,
        read_only,
        idempotent,
        concurrency_safe,
        timeout_ms = 30_000,
        render = render_grep,
        presentation_meta = grep_meta,
        present_call = grep_call_card,
        present_result = grep_result_card
    )]
    pub async fn grep(&self, args: GrepArgs, cx: ToolContext) -> Result<GrepOutput, ToolError> {
        check_path_arg(args.path.as_deref())?;
        if let Some(include) = &args.include {
            validate_include(include)?;
        }
        check_length("grep pattern", &args.pattern)?;
        let regex = RegexBuilder::new(&args.pattern).build().map_err(|e| {
            ToolError::with_code(
                "SEARCH_INVALID_PATTERN",
                format!("grep pattern rejected: {e}"),
            )
        })?;
        let scope = self.scope.clone();
        let token = cx.cancellation().clone();
        blocking(move || {
            let base = base_of(&scope, "grep")?;
            let filter = match &args.include {
                Some(include) => Some(compile_glob("grep include", &base, include)?),
                None => None,
            };
            let search = SearchRoot::locate(&scope, "grep", args.path.as_deref())?;
            let mut out = Collector::new("grep", "narrow pattern, path, or include and retry");
            if search.is_file {
                let file = scope
                    .open_file("search", &search.target)
                    .map_err(|e| failed("grep", search.given(), e.message()))?;
                grep_file(
                    &regex,
                    file,
                    false,
                    &search.shown(Path::new("")),
                    &mut out,
                    &token,
                )?;
                return Ok(GrepOutput {
                    matches: out.matches,
                });
            }
            // The walk reads no file on its own: ignore files are read by `IgnoreRules`,
            // through the scope (see the module docs).
            let rules = IgnoreRules::new(&scope, &search.target.real)
                .map_err(|e| failed("grep", search.given(), &e.to_string()))?;
            let rules = Arc::new(rules);
            let walker = WalkBuilder::new(&search.target.real)
                .standard_filters(false)
                .follow_links(false)
                .sort_by_file_name(|a, b| a.cmp(b))
                .filter_entry(move |entry| rules.keep(entry, filter.as_ref()))
                .build();
            for entry in walker {
                if token.is_cancelled() {
                    return Err(aborted("grep"));
                }
                let Ok(entry) = entry else { continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let Ok(within) = entry.path().strip_prefix(&search.target.real) else {
                    continue;
                };
                // Opened through the root handle (confined): a path that leads out now is
                // refused, as are special files and hard links.
                let Ok(file) = scope.open_walked(entry.path()) else {
                    continue;
                };
                grep_file(&regex, file, true, &search.shown(within), &mut out, &token)?;
            }
            Ok(GrepOutput {
                matches: out.matches,
            })
        })
        .await
    }

    /// List the files whose paths match a glob.
    ///
    /// Returns matching file paths (never directories), hidden and ignored files included
    /// (version-control metadata directories excluded), oldest modification first; the first
    /// 100 are shown.
    #[tool(
        name = "glob",
        args,
        read_only,
        idempotent,
        concurrency_safe,
        timeout_ms = 30_000,
        render = render_glob,
        presentation_meta = glob_meta,
        present_call = glob_call_card,
        present_result = glob_result_card
    )]
    pub async fn glob(&self, args: GlobArgs, cx: ToolContext) -> Result<GlobOutput, ToolError> {
        if args.pattern.trim().is_empty() {
            return Err(ToolError::new("pattern must be a non-empty string"));
        }
        check_path_arg(args.path.as_deref())?;
        check_length("glob pattern", &args.pattern)?;
        let scope = self.scope.clone();
        let token = cx.cancellation().clone();
        blocking(move || {
            let base = base_of(&scope, "glob")?;
            let matcher = compile_glob("glob pattern", &base, &args.pattern)?;
            let search = SearchRoot::locate(&scope, "glob", args.path.as_deref())?;
            let root = match &args.path {
                None => ".".to_string(),
                Some(path) => workdir_relative(Path::new(path), &base),
            };
            if search.is_file {
                return Ok(GlobOutput {
                    root,
                    paths: vec![search.shown(Path::new(""))],
                });
            }
            let mut found: Vec<(SystemTime, String)> = Vec::new();
            let mut bytes = 0usize;
            let walker = WalkBuilder::new(&search.target.real)
                .standard_filters(false)
                .follow_links(false)
                .sort_by_file_name(|a, b| a.cmp(b))
                .filter_entry(|entry| {
                    !(entry.file_type().is_some_and(|t| t.is_dir())
                        && entry.depth() > 0
                        && entry
                            .file_name()
                            .to_str()
                            .is_some_and(|n| GLOB_VCS_EXCLUDES.contains(&n)))
                })
                .build();
            for entry in walker {
                if token.is_cancelled() {
                    return Err(aborted("glob"));
                }
                let Ok(entry) = entry else { continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let Ok(within) = entry.path().strip_prefix(&search.target.real) else {
                    continue;
                };
                let candidate = search.joined(within);
                if !matcher.matched(&candidate, false).is_whitelist() || in_vcs_dir(&candidate) {
                    continue;
                }
                // Re-checked through the root handle (confined): what a swapped link would
                // have shown from outside the root is dropped here.
                let Ok(modified) = scope.walked_file_mtime(entry.path()) else {
                    continue;
                };
                let shown = search.shown(within);
                bytes += shown.len() + 1;
                if bytes > MAX_RESULT_BYTES {
                    return Err(overflow("glob", "narrow pattern or path and retry"));
                }
                found.push((modified, shown));
            }
            // Stable: equal times keep path order.
            found.sort_by_key(|(modified, _)| *modified);
            Ok(GlobOutput {
                root,
                paths: found.into_iter().map(|(_, path)| path).collect(),
            })
        })
        .await
    }
}

// ---------------------------------------------------------------------------------------
// grep

/// Matches collected so far, under [`MAX_RESULT_BYTES`].
struct Collector {
    tool: &'static str,
    advice: &'static str,
    matches: Vec<GrepMatch>,
    bytes: usize,
}

impl Collector {
    fn new(tool: &'static str, advice: &'static str) -> Self {
        Collector {
            tool,
            advice,
            matches: Vec::new(),
            bytes: 0,
        }
    }

    fn push(&mut self, m: GrepMatch) -> Result<(), ToolError> {
        self.bytes += m.path.len() + m.line.len() + 16;
        if self.bytes > MAX_RESULT_BYTES {
            return Err(overflow(self.tool, self.advice));
        }
        self.matches.push(m);
        Ok(())
    }
}

/// Search one file line by line. `walked`: found by a walk, so a NUL byte makes it binary.
///
/// At most [`GREP_VALUE_LINE_BYTES`] of a line are kept (and searched): the rest of a
/// longer line is read past, in fixed-size chunks, and a match in it is reported cut,
/// ending with ` (line truncated)`. Past the kept part of a line, holes of a sparse file
/// (which hold only NUL bytes, never a line end) are skipped without being read.
fn grep_file(
    regex: &Regex,
    mut file: std::fs::File,
    walked: bool,
    shown: &str,
    out: &mut Collector,
    token: &CancellationToken,
) -> Result<(), ToolError> {
    use std::io::Read as _;
    let mut buf = vec![0u8; BINARY_WINDOW];
    let (mut start, mut end) = (0usize, 0usize);
    // The file offset just past `buf[..end]`.
    let mut offset = 0u64;
    let mut first = true;
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    let mut in_line = false;
    let mut number = 0u64;
    loop {
        if start == end {
            if token.is_cancelled() {
                return Err(aborted("grep"));
            }
            if cut {
                match skip_hole(&mut file, offset) {
                    Hole::None => {}
                    // NUL bytes: binary for a walked file.
                    Hole::To(_) | Hole::ToEnd if walked => return Ok(()),
                    Hole::To(next) => offset = next,
                    Hole::ToEnd => {
                        // The line runs to the end of the file.
                        number += 1;
                        return report(regex, &line, true, number, shown, out);
                    }
                }
            }
            let n = match file.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // Unreadable mid-way: keep what was found, like an unreadable file.
                Err(_) => return Ok(()),
            };
            if n == 0 {
                if in_line {
                    number += 1;
                    report(regex, &line, cut, number, shown, out)?;
                }
                return Ok(());
            }
            if first && walked && buf[..n].contains(&0) {
                return Ok(());
            }
            first = false;
            (start, end) = (0, n);
            offset += n as u64;
        }
        let chunk = &buf[start..end];
        let newline = chunk.iter().position(|b| *b == b'\n');
        let piece = &chunk[..newline.unwrap_or(chunk.len())];
        if walked && piece.contains(&0) {
            return Ok(());
        }
        in_line = true;
        let keep = (GREP_VALUE_LINE_BYTES - line.len()).min(piece.len());
        line.extend_from_slice(&piece[..keep]);
        cut |= keep < piece.len();
        start += piece.len() + usize::from(newline.is_some());
        if newline.is_some() {
            number += 1;
            report(regex, &line, cut, number, shown, out)?;
            line.clear();
            cut = false;
            in_line = false;
        }
    }
}

/// What `lseek(SEEK_DATA)` found at an offset.
enum Hole {
    /// Data (or no way to tell): read on.
    None,
    /// A hole up to this offset, where data starts.
    To(u64),
    /// A hole up to the end of the file.
    ToEnd,
}

/// Move `file` past a hole starting at `offset` (its current position), if there is one.
#[allow(unsafe_code)]
fn skip_hole(file: &mut std::fs::File, offset: u64) -> Hole {
    use std::io::{Seek as _, SeekFrom};
    use std::os::fd::AsRawFd as _;
    let Ok(at) = libc::off_t::try_from(offset) else {
        return Hole::None;
    };
    // SAFETY: lseek on a descriptor this function borrows; it changes only its offset.
    let next = unsafe { libc::lseek(file.as_raw_fd(), at, libc::SEEK_DATA) };
    if next < 0 {
        let past_end = std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO)
            && file.metadata().is_ok_and(|m| m.len() > offset);
        // Put the offset back where reading left it (lseek failed, or found no data).
        if file.seek(SeekFrom::Start(offset)).is_err() {
            return Hole::ToEnd;
        }
        return if past_end { Hole::ToEnd } else { Hole::None };
    }
    match u64::try_from(next) {
        Ok(next) if next > offset => Hole::To(next),
        _ => Hole::None,
    }
}

/// Report `line` (without its `\n`) when it matches. `cut`: only its first
/// [`GREP_VALUE_LINE_BYTES`] are there.
fn report(
    regex: &Regex,
    line: &[u8],
    cut: bool,
    number: u64,
    shown: &str,
    out: &mut Collector,
) -> Result<(), ToolError> {
    if !regex.is_match(line) {
        return Ok(());
    }
    let text = if cut {
        // Cut at a byte count: drop a character the cut split.
        let valid = match std::str::from_utf8(line) {
            Ok(text) => Some(text),
            Err(e) if e.error_len().is_none() => std::str::from_utf8(&line[..e.valid_up_to()]).ok(),
            Err(_) => None,
        };
        match valid {
            Some(text) => format!("{text} (line truncated)"),
            None => "(line is not valid UTF-8)".to_string(),
        }
    } else {
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        match std::str::from_utf8(content) {
            Ok(text) => preview(text, GREP_VALUE_LINE_BYTES),
            Err(_) => "(line is not valid UTF-8)".to_string(),
        }
    };
    out.push(GrepMatch {
        path: shown.to_string(),
        line_number: number,
        line: text,
    })
}

/// `line` cut after `max` bytes (at a character boundary), marked ` (line truncated)`.
fn preview(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_string();
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} (line truncated)", &line[..end])
}

/// The matches the model sees: the first [`GREP_MAX_MATCHES`], lines previewed.
fn retained(out: &GrepOutput) -> Vec<GrepMatch> {
    out.matches
        .iter()
        .take(GREP_MAX_MATCHES)
        .map(|m| GrepMatch {
            line: preview(&m.line, GREP_MAX_LINE_BYTES),
            ..m.clone()
        })
        .collect()
}

/// Matches grouped by file, in first-seen order.
fn grouped(matches: &[GrepMatch]) -> Vec<(&str, Vec<&GrepMatch>)> {
    let mut groups: Vec<(&str, Vec<&GrepMatch>)> = Vec::new();
    for m in matches {
        match groups.iter_mut().find(|(path, _)| *path == m.path) {
            Some((_, group)) => group.push(m),
            None => groups.push((&m.path, vec![m])),
        }
    }
    groups
}

fn render_grep(_args: &GrepArgs, out: &GrepOutput) -> Vec<ContentBlock> {
    let seen = out.matches.len();
    if seen == 0 {
        return vec![ContentBlock::text("No matches found")];
    }
    let kept = retained(out);
    let truncated = kept.len() < seen;
    let header = if truncated {
        format!("Found {} of {seen} matches", kept.len())
    } else {
        format!(
            "Found {seen} {}",
            if seen == 1 { "match" } else { "matches" }
        )
    };
    let body: Vec<String> = grouped(&kept)
        .into_iter()
        .map(|(path, group)| {
            let rows: Vec<String> = group
                .iter()
                .map(|m| format!("Line {}: {}", m.line_number, m.line))
                .collect();
            format!("{}\n{}", shown(path), rows.join("\n"))
        })
        .collect();
    let mut text = format!("{header}\n\n{}", body.join("\n\n"));
    if truncated {
        text.push_str(
            "\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)",
        );
    }
    vec![ContentBlock::text(text)]
}

/// The search card's data: the shown matches grouped by file, `truncated` and `total`,
/// bounded to [`SEARCH_META_MAX_BYTES`].
fn grep_meta(_args: &GrepArgs, out: &GrepOutput) -> Value {
    let kept = retained(out);
    let truncated = kept.len() < out.matches.len();
    let mut files: Vec<SearchFile> = grouped(&kept)
        .into_iter()
        .map(|(path, group)| {
            SearchFile::new(
                path,
                group
                    .iter()
                    .map(|m| SearchMatch::new(m.line_number, m.line.as_str()))
                    .collect(),
            )
        })
        .collect();
    let total = out.matches.len() as u64;
    let mut view = SearchView::matches(files.clone(), truncated, total);
    while files.len() > 1 && meta_size(&view) > SEARCH_META_MAX_BYTES {
        files.pop();
        view = SearchView::matches(files.clone(), true, total);
    }
    to_value(&view)
}

fn grep_call_card(args: &GrepArgs) -> CallView {
    let mut title = format!("Grep {}", args.pattern);
    if let Some(path) = &args.path {
        title.push_str(&format!(" in {path}"));
    }
    if let Some(include) = &args.include {
        title.push_str(&format!(" ({include})"));
    }
    search_call_card(title, &args.pattern)
}

fn grep_result_card(_args: &GrepArgs, result: &ResultSummary) -> Option<ResultView> {
    let view: SearchView = meta_of(result)?;
    matches!(view, SearchView::Matches { .. }).then(|| view.into())
}

/// The reference's rules for `include`: one positive glob.
fn validate_include(include: &str) -> Result<(), ToolError> {
    if include.trim().is_empty() {
        return Err(ToolError::new(
            "include must be a non-empty glob when given",
        ));
    }
    if include.starts_with('!') {
        return Err(ToolError::new(
            "include must be a positive glob filter; negated patterns (\"!…\") are not supported",
        ));
    }
    let mut depth = 0usize;
    for c in include.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                return Err(ToolError::new(
                    "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
                ));
            }
            _ => {}
        }
    }
    check_length("grep include", include)
}

// ---------------------------------------------------------------------------------------
// glob

fn render_glob(_args: &GlobArgs, out: &GlobOutput) -> Vec<ContentBlock> {
    let text = if out.paths.is_empty() {
        "No files found".to_string()
    } else if out.paths.len() <= GLOB_MAX_RESULTS {
        out.paths.join("\n")
    } else {
        format!(
            "{}\n\n(Showing {GLOB_MAX_RESULTS} of {} paths. The complete result could not be saved; narrow pattern or path to see more.)",
            out.paths[..GLOB_MAX_RESULTS].join("\n"),
            out.paths.len()
        )
    };
    vec![ContentBlock::text(text)]
}

fn glob_meta(_args: &GlobArgs, out: &GlobOutput) -> Value {
    let mut paths: Vec<String> = out.paths.iter().take(GLOB_MAX_RESULTS).cloned().collect();
    let total = out.paths.len() as u64;
    let mut view = SearchView::paths(paths.clone(), paths.len() < out.paths.len(), total);
    while paths.len() > 1 && meta_size(&view) > SEARCH_META_MAX_BYTES {
        paths.pop();
        view = SearchView::paths(paths.clone(), true, total);
    }
    to_value(&view)
}

fn glob_call_card(args: &GlobArgs) -> CallView {
    let mut title = format!("Glob {}", args.pattern);
    if let Some(path) = &args.path {
        title.push_str(&format!(" in {path}"));
    }
    search_call_card(title, &args.pattern)
}

fn glob_result_card(_args: &GlobArgs, result: &ResultSummary) -> Option<ResultView> {
    let view: SearchView = meta_of(result)?;
    matches!(view, SearchView::Paths { .. }).then(|| view.into())
}

/// Whether a listed path lies in a version-control metadata directory.
fn in_vcs_dir(path: &Path) -> bool {
    let mut components: Vec<Component<'_>> = path.components().collect();
    components.pop(); // the file name
    components.iter().any(|c| {
        matches!(c, Component::Normal(name) if name.to_str().is_some_and(|n| GLOB_VCS_EXCLUDES.contains(&n)))
    })
}

// ---------------------------------------------------------------------------------------
// ignore files

/// The ignore files `grep` reads, per directory, in ripgrep's precedence.
const RGIGNORE: &str = ".rgignore";
const IGNORE: &str = ".ignore";
const GITIGNORE: &str = ".gitignore";

/// The rules of `grep`'s walk, read from ignore files through the scope: only files inside
/// the boundary (the root), opened like `read` opens files, each at most
/// [`MAX_IGNORE_FILE_BYTES`]; the rest is skipped.
struct IgnoreRules {
    scope: FsScope,
    /// Real, absolute.
    boundary: PathBuf,
    handle: cap_std::fs::Dir,
    /// Whether a directory above the boundary has a `.git` entry (checked, never read).
    git_above: bool,
    dirs: Mutex<HashMap<PathBuf, Arc<DirRules>>>,
}

/// The ignore files of one directory.
#[derive(Default)]
struct DirRules {
    rgignore: Option<Gitignore>,
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
    has_git: bool,
}

impl IgnoreRules {
    fn new(scope: &FsScope, search_dir: &Path) -> std::io::Result<IgnoreRules> {
        let (boundary, handle) = scope.walk_boundary(search_dir)?;
        let git_above = boundary
            .ancestors()
            .skip(1)
            .any(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok());
        Ok(IgnoreRules {
            scope: scope.clone(),
            boundary,
            handle,
            git_above,
            dirs: Mutex::new(HashMap::new()),
        })
    }

    /// Whether the walk keeps `entry` (and, for a directory, descends into it): the
    /// `include` filter first, then the ignore files, then the hidden rule, as ripgrep
    /// decides.
    fn keep(&self, entry: &ignore::DirEntry, filter: Option<&Override>) -> bool {
        if entry.depth() == 0 {
            return true;
        }
        let path = entry.path();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if let Some(filter) = filter {
            let m = filter.matched(path, is_dir);
            if m.is_ignore() {
                return false;
            }
            if m.is_whitelist() {
                return true;
            }
        }
        match self.matched(path, is_dir) {
            Match::Ignore(()) => false,
            Match::Whitelist(()) => true,
            Match::None => !entry.file_name().as_encoded_bytes().starts_with(b"."),
        }
    }

    /// The ignore files' verdict on `path`: per kind, the deepest directory with a
    /// matching rule decides; `.rgignore` over `.ignore` over `.gitignore` over
    /// `.git/info/exclude`; the git files only inside a git repository, and only up to its
    /// top directory.
    fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        let chain: Vec<Arc<DirRules>> = path
            .ancestors()
            .skip(1)
            .take_while(|dir| dir.starts_with(&self.boundary))
            .map(|dir| self.rules_of(dir))
            .collect();
        let any_git = self.git_above || chain.iter().any(|d| d.has_git);
        let (mut rg, mut ig, mut gi, mut ex) = (Match::None, Match::None, Match::None, Match::None);
        let mut saw_git = false;
        for dir in &chain {
            let of = |m: &Option<Gitignore>| match m {
                Some(m) => m.matched(path, is_dir).map(|_| ()),
                None => Match::None,
            };
            if rg.is_none() {
                rg = of(&dir.rgignore);
            }
            if ig.is_none() {
                ig = of(&dir.ignore);
            }
            if any_git && !saw_git && gi.is_none() {
                gi = of(&dir.gitignore);
            }
            if any_git && !saw_git && ex.is_none() {
                ex = of(&dir.exclude);
            }
            saw_git = saw_git || dir.has_git;
        }
        rg.or(ig).or(gi).or(ex)
    }

    fn rules_of(&self, dir: &Path) -> Arc<DirRules> {
        let mut dirs = crate::lock(&self.dirs);
        if let Some(rules) = dirs.get(dir) {
            return rules.clone();
        }
        let rules = Arc::new(self.read_dir_rules(dir));
        dirs.insert(dir.to_path_buf(), rules.clone());
        rules
    }

    fn read_dir_rules(&self, dir: &Path) -> DirRules {
        let Ok(rel) = dir.strip_prefix(&self.boundary) else {
            return DirRules::default();
        };
        let git = self.handle.symlink_metadata(rel.join(".git").as_path());
        let has_git = git.is_ok();
        let exclude = match git {
            Ok(meta) if meta.is_dir() => self.read_rules(dir, &rel.join(".git/info/exclude")),
            _ => None,
        };
        DirRules {
            rgignore: self.read_rules(dir, &rel.join(RGIGNORE)),
            ignore: self.read_rules(dir, &rel.join(IGNORE)),
            gitignore: self.read_rules(dir, &rel.join(GITIGNORE)),
            exclude,
            has_git,
        }
    }

    /// The rules of one ignore file (`rel`, under the boundary) for the directory `dir`;
    /// `None` when it is missing or refused.
    fn read_rules(&self, dir: &Path, rel: &Path) -> Option<Gitignore> {
        let bytes = self
            .scope
            .read_bounded(&self.handle, rel, MAX_IGNORE_FILE_BYTES)
            .ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let from = self.boundary.join(rel);
        let mut builder = GitignoreBuilder::new(dir);
        for line in text.lines() {
            // A line that is not a valid glob is skipped, as ripgrep skips it.
            let _ = builder.add_line(Some(from.clone()), line);
        }
        builder.build().ok().filter(|g| !g.is_empty())
    }
}

// ---------------------------------------------------------------------------------------
// shared

/// The file or directory a search starts from.
struct SearchRoot {
    /// The `path` argument, if any.
    given: Option<PathBuf>,
    target: Target,
    is_file: bool,
    base: PathBuf,
}

impl SearchRoot {
    fn locate(scope: &FsScope, tool: &str, path: Option<&str>) -> Result<SearchRoot, ToolError> {
        let given = path.unwrap_or(".");
        let target = scope.locate("search", given).map_err(|e| {
            if e.code_str() == Some(OUTSIDE_ROOT) || e.code_str() == Some(PATH_TOO_LONG) {
                e
            } else {
                failed(tool, given, e.message())
            }
        })?;
        let stat = match scope.stat(&target) {
            Ok(Some(stat)) => stat,
            Ok(None) => {
                return Err(failed(
                    tool,
                    given,
                    &std::io::Error::from_raw_os_error(libc::ENOENT).to_string(),
                ));
            }
            Err(e) => return Err(failed(tool, given, &e.to_string())),
        };
        let is_file = !stat.is_dir;
        Ok(SearchRoot {
            given: path.map(PathBuf::from),
            target,
            is_file,
            base: scope.base().unwrap_or_default(),
        })
    }

    fn given(&self) -> &str {
        self.given.as_deref().and_then(Path::to_str).unwrap_or(".")
    }

    /// A path under the search root as the search sees it: the given `path` joined with it.
    fn joined(&self, within: &Path) -> PathBuf {
        match &self.given {
            None => within.to_path_buf(),
            Some(given) if within.as_os_str().is_empty() => given.clone(),
            Some(given) => given.join(within),
        }
    }

    /// A path under the search root as reported: relative to the working directory when it
    /// is inside it.
    fn shown(&self, within: &Path) -> String {
        workdir_relative(&self.joined(within), &self.base)
    }
}

/// `path` relative to `base` when it is absolute and inside it, else unchanged.
fn workdir_relative(path: &Path, base: &Path) -> String {
    if let (true, Ok(rel)) = (path.is_absolute(), path.strip_prefix(base)) {
        if rel.as_os_str().is_empty() {
            return ".".to_string();
        }
        return rel.to_string_lossy().into_owned();
    }
    path.to_string_lossy().into_owned()
}

fn base_of(scope: &FsScope, tool: &str) -> Result<PathBuf, ToolError> {
    scope.base().map_err(|e| {
        ToolError::with_code(
            "SEARCH_FAILED",
            format!("{tool} search failed: no working directory ({e})"),
        )
    })
}

/// A glob with ripgrep's `--glob` rules, anchored at `base`.
fn compile_glob(what: &str, base: &Path, pattern: &str) -> Result<Override, ToolError> {
    let rejected = |e: ignore::Error| {
        ToolError::with_code("SEARCH_INVALID_PATTERN", format!("{what} rejected: {e}"))
    };
    let mut builder = OverrideBuilder::new(base);
    builder.add(pattern).map_err(rejected)?;
    builder.build().map_err(rejected)
}

/// Patterns are capped before anything is compiled.
fn check_length(what: &str, pattern: &str) -> Result<(), ToolError> {
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(ToolError::with_code(
            "SEARCH_INVALID_PATTERN",
            format!("{what} is too long: {chars} characters, at most {MAX_PATTERN_CHARS}"),
        ));
    }
    Ok(())
}

fn check_path_arg(path: Option<&str>) -> Result<(), ToolError> {
    if path.is_some_and(|p| p.trim().is_empty()) {
        return Err(ToolError::new("path must be a non-empty string when given"));
    }
    Ok(())
}

fn failed(tool: &str, given: &str, why: &str) -> ToolError {
    ToolError::with_code(
        "SEARCH_FAILED",
        format!("{tool} search failed: {}: {why}", shown(given)),
    )
}

fn aborted(tool: &str) -> ToolError {
    ToolError::with_code(
        "SEARCH_ABORTED",
        format!("{tool} was aborted before completion (tool timeout or caller cancellation)"),
    )
}

fn overflow(tool: &str, advice: &str) -> ToolError {
    ToolError::with_code(
        "SEARCH_RAW_OUTPUT_OVERFLOW",
        format!("{tool} found more than {MAX_RESULT_BYTES} bytes of results; {advice}"),
    )
}

fn search_call_card(title: String, pattern: &str) -> CallView {
    CallView::Generic {
        title,
        kind: Some(ToolCallKind::Search),
        raw_input: Some(Value::from(pattern)),
        content: None,
        locations: None,
    }
}

fn meta_size(view: &SearchView) -> usize {
    serde_json::to_vec(view).map_or(usize::MAX, |v| v.len())
}

fn to_value(view: &SearchView) -> Value {
    dsh_runtime::json::to_value(view).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_odd_patterns_fail_without_panicking() {
        let base = Path::new("/base");
        for c in ['a', '*', '{', '[', '?', '\\', '/'] {
            let pattern: String = std::iter::repeat_n(c, MAX_PATTERN_CHARS).collect();
            let result = std::panic::catch_unwind(|| compile_glob("glob pattern", base, &pattern));
            assert!(result.is_ok(), "glob {c:?} x {MAX_PATTERN_CHARS} panicked");
            let regex = std::panic::catch_unwind(|| RegexBuilder::new(&pattern).build());
            assert!(regex.is_ok(), "regex {c:?} panicked");
        }
        let long = "a".repeat(100_000);
        let err = check_length("glob pattern", &long).unwrap_err();
        assert_eq!(
            err.message(),
            "glob pattern is too long: 100000 characters, at most 4096"
        );
    }

    #[test]
    fn previews_cut_at_char_boundaries() {
        assert_eq!(preview("héllo", 2), "h (line truncated)");
        assert_eq!(preview("hello", 5), "hello");
    }

    #[test]
    fn include_rules() {
        assert!(validate_include("*.{ts,tsx}").is_ok());
        assert_eq!(
            validate_include("*.ts,*.js").unwrap_err().message(),
            "include must be one glob, not a comma-separated list (use {a,b} alternation instead)"
        );
        assert!(validate_include("!*.ts").is_err());
        assert!(validate_include(" ").is_err());
    }
}
