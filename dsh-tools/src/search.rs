//! Discovery tools: `grep` (matching lines) and `glob` (matching paths).
//!
//! Both walk a directory the way `git` sees it: `.gitignore`, `.ignore` and global git
//! excludes are respected (also outside a git repository), hidden files and directories
//! are skipped, symbolic links are not followed. Files come in path order, so results are
//! deterministic. A capped result says so: `truncated` is set and `total` counts every
//! match found, also those not returned.
//!
//! The pending card is a generic one (`kind: search`): matches exist only once the call
//! ran. The completed card is a `search` card rebuilt from presentation meta, matches
//! grouped by file for `grep`, a flat path list for `glob`.
//!
//! Error codes: `FS_NOT_FOUND`, `FS_NOT_A_DIRECTORY` (glob), `SEARCH_INVALID_PATTERN`,
//! `SEARCH_INVALID_GLOB`, `SEARCH_CANCELLED`.

use std::path::{Path, PathBuf};

use dsh_runtime::present::{
    CallView, FileLocation, ResultSummary, ResultView, SearchFile, SearchMatch, SearchView,
    ToolCallKind,
};
use dsh_runtime::{
    ContentBlock, RegisterError, Registration, Registry, ToolContext, ToolError, ToolSchema, tool,
};
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use regex::RegexBuilder;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::fs::{BINARY_SNIFF_BYTES, blocking, cut, io_error, line_text, meta_of};

/// Default number of matches `grep` returns.
pub const DEFAULT_GREP_RESULTS: u32 = 100;
/// The most paths `glob` returns.
pub const MAX_GLOB_RESULTS: usize = 1000;
/// Matching lines longer than this many characters are cut (ending with `…`).
pub const MAX_MATCH_LINE_CHARS: usize = 500;

/// Register `grep` and `glob` in the registry's global layer.
pub fn register(registry: &Registry) -> Result<Vec<Registration>, RegisterError> {
    Ok(vec![registry.register(Grep)?, registry.register(Glob)?])
}

// ---------------------------------------------------------------------------------------
// grep

/// Arguments of `grep`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub struct GrepArgs {
    /// Regular expression to look for in each line (Rust `regex` syntax, e.g.
    /// `fn\s+main`).
    #[schema(length(min = 1))]
    pub pattern: String,
    /// File or directory to search (default: the working directory).
    pub path: Option<String>,
    /// Only search files matching this glob: without a `/` it is matched against the file
    /// name (`*.rs`), with one against the path relative to `path` (`src/**/*.rs`).
    pub glob: Option<String>,
    /// Ignore case when matching (default: false).
    pub case_insensitive: Option<bool>,
    /// Return at most this many matching lines (default: 100).
    #[schema(range(min = 1, max = 1000))]
    pub max_results: Option<u32>,
}

/// Matching lines, grouped by file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GrepOutput {
    /// Files with at least one returned match, in path order.
    pub files: Vec<GrepFile>,
    /// Whether matches were left out because of `max_results`.
    pub truncated: bool,
    /// How many matching lines were found in all.
    pub total: u64,
}

/// One file's matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GrepFile {
    /// The file's path (under the searched `path`).
    pub path: String,
    /// Its matching lines.
    pub matches: Vec<GrepMatch>,
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepMatch {
    /// 1-based line number.
    pub line_number: u64,
    /// The line, without its terminator (cut after 500 characters).
    pub line: String,
}

/// Search file contents with a regular expression.
///
/// Returns the matching lines with their line numbers, grouped by file. Files ignored by
/// git, hidden files and binary files are skipped.
#[tool(
    args,
    read_only,
    idempotent,
    concurrency_safe,
    timeout_ms = 60_000,
    render = render_grep,
    presentation_meta = grep_meta,
    present_call = grep_call_card,
    present_result = search_result_card
)]
pub async fn grep(args: GrepArgs, cx: ToolContext) -> Result<GrepOutput, ToolError> {
    let regex = RegexBuilder::new(&args.pattern)
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        .build()
        .map_err(|e| {
            ToolError::with_code("SEARCH_INVALID_PATTERN", format!("invalid pattern: {e}"))
        })?;
    let filter = args.glob.as_deref().map(FileFilter::new).transpose()?;
    let max = args.max_results.unwrap_or(DEFAULT_GREP_RESULTS) as usize;
    let token = cx.cancellation().clone();
    blocking(move || {
        let mut out = GrepOutput {
            files: Vec::new(),
            truncated: false,
            total: 0,
        };
        let mut returned = 0usize;
        for file in walk(args.path.as_deref(), &token)? {
            let file = file?;
            if filter.as_ref().is_some_and(|f| !f.admits(&file)) {
                continue;
            }
            let Ok(bytes) = std::fs::read(&file.full) else {
                continue; // unreadable files are skipped, like binary ones
            };
            if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
                continue;
            }
            let mut matches = Vec::new();
            for (index, raw) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
                let line = line_text(raw);
                if !regex.is_match(&line) {
                    continue;
                }
                out.total += 1;
                if returned < max {
                    returned += 1;
                    matches.push(GrepMatch {
                        line_number: index as u64 + 1,
                        line: cut(&line, MAX_MATCH_LINE_CHARS).into_owned(),
                    });
                }
            }
            if !matches.is_empty() {
                out.files.push(GrepFile {
                    path: file.shown,
                    matches,
                });
            }
        }
        out.truncated = out.total > returned as u64;
        Ok(out)
    })
    .await
}

fn render_grep(_args: &GrepArgs, out: &GrepOutput) -> Vec<ContentBlock> {
    if out.total == 0 {
        return vec![ContentBlock::text("No matches found.")];
    }
    let mut text = String::new();
    for file in &out.files {
        for m in &file.matches {
            text.push_str(&format!("{}:{}: {}\n", file.path, m.line_number, m.line));
        }
    }
    let returned: usize = out.files.iter().map(|f| f.matches.len()).sum();
    if out.truncated {
        text.push_str(&format!(
            "(showing {returned} of {} matches; narrow the search or raise max_results)",
            out.total
        ));
    } else {
        text.push_str(&format!(
            "({} {} in {} {})",
            out.total,
            plural(out.total, "match", "matches"),
            out.files.len(),
            plural(out.files.len() as u64, "file", "files")
        ));
    }
    vec![ContentBlock::text(text)]
}

/// The search card's data: matches grouped by file, plus `truncated`/`total`.
fn grep_meta(_args: &GrepArgs, out: &GrepOutput) -> SearchView {
    let files = out
        .files
        .iter()
        .map(|f| {
            let matches = f
                .matches
                .iter()
                .map(|m| SearchMatch::new(m.line_number, m.line.as_str()))
                .collect();
            SearchFile::new(&f.path, matches)
        })
        .collect();
    SearchView::matches(files, out.truncated, out.total)
}

fn grep_call_card(args: &GrepArgs) -> CallView {
    search_call_card("grep", &args.pattern, args.path.as_deref())
}

// ---------------------------------------------------------------------------------------
// glob

/// Arguments of `glob`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub struct GlobArgs {
    /// Glob matched against file paths relative to `path`: `*` and `?` stay within one
    /// directory, `**` spans directories, `{a,b}` is either (e.g. `**/*.rs`,
    /// `src/**/mod.rs`, `*.{md,txt}`).
    #[schema(length(min = 1))]
    pub pattern: String,
    /// Directory to search (default: the working directory).
    pub path: Option<String>,
}

/// Matching file paths.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GlobOutput {
    /// The paths (under the searched `path`), in path order, at most 1000.
    pub paths: Vec<String>,
    /// Whether paths were left out.
    pub truncated: bool,
    /// How many files matched in all.
    pub total: u64,
}

/// Find files by name pattern.
///
/// Returns the paths of regular files matching a glob, in path order. Files ignored by
/// git and hidden files are skipped.
#[tool(
    args,
    read_only,
    idempotent,
    concurrency_safe,
    timeout_ms = 60_000,
    render = render_glob,
    presentation_meta = glob_meta,
    present_call = glob_call_card,
    present_result = search_result_card
)]
pub async fn glob(args: GlobArgs, cx: ToolContext) -> Result<GlobOutput, ToolError> {
    let matcher = compile_glob(&args.pattern, true)?;
    let token = cx.cancellation().clone();
    blocking(move || {
        if let Some(dir) = &args.path {
            let meta = std::fs::metadata(dir).map_err(|e| io_error(dir, e))?;
            if !meta.is_dir() {
                return Err(ToolError::with_code(
                    "FS_NOT_A_DIRECTORY",
                    format!("{dir} is not a directory"),
                ));
            }
        }
        let mut out = GlobOutput {
            paths: Vec::new(),
            truncated: false,
            total: 0,
        };
        for file in walk(args.path.as_deref(), &token)? {
            let file = file?;
            if matcher.is_match(&file.relative) {
                out.total += 1;
                if out.paths.len() < MAX_GLOB_RESULTS {
                    out.paths.push(file.shown);
                }
            }
        }
        out.truncated = out.total > out.paths.len() as u64;
        Ok(out)
    })
    .await
}

fn render_glob(_args: &GlobArgs, out: &GlobOutput) -> Vec<ContentBlock> {
    if out.total == 0 {
        return vec![ContentBlock::text("No files matched.")];
    }
    let mut text = out.paths.join("\n");
    if out.truncated {
        text.push_str(&format!(
            "\n(showing {} of {} files; use a narrower pattern or path)",
            out.paths.len(),
            out.total
        ));
    }
    vec![ContentBlock::text(text)]
}

fn glob_meta(_args: &GlobArgs, out: &GlobOutput) -> SearchView {
    SearchView::paths(out.paths.clone(), out.truncated, out.total)
}

fn glob_call_card(args: &GlobArgs) -> CallView {
    search_call_card("glob", &args.pattern, args.path.as_deref())
}

// ---------------------------------------------------------------------------------------
// shared

fn search_call_card(tool: &str, pattern: &str, path: Option<&str>) -> CallView {
    let title = match path {
        Some(path) => format!("{tool} {pattern:?} in {path}"),
        None => format!("{tool} {pattern:?}"),
    };
    CallView::Generic {
        title,
        kind: Some(ToolCallKind::Search),
        raw_input: None,
        content: None,
        locations: path.map(|p| vec![FileLocation::new(p)]),
    }
}

fn search_result_card<A>(_args: &A, result: &ResultSummary) -> Option<ResultView> {
    let view: SearchView = meta_of(result)?;
    Some(view.into())
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// A file found by [`walk`].
struct Found {
    /// The path to open.
    full: PathBuf,
    /// The path under the search root, for glob matching.
    relative: PathBuf,
    /// The path as reported: under the given `path`, or relative to the working directory.
    shown: String,
}

/// The regular files under `path` (default `.`), in path order. A file given as `path`
/// is the only one. Entries the walk cannot read are skipped.
fn walk<'a>(
    path: Option<&str>,
    token: &'a CancellationToken,
) -> Result<impl Iterator<Item = Result<Found, ToolError>> + 'a, ToolError> {
    let root = PathBuf::from(path.unwrap_or("."));
    std::fs::metadata(&root).map_err(|e| io_error(&root.to_string_lossy(), e))?;
    let strip_dot = path.is_none();
    let walker = WalkBuilder::new(&root)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    Ok(walker.filter_map(move |entry| {
        if token.is_cancelled() {
            return Some(Err(ToolError::with_code(
                "SEARCH_CANCELLED",
                "search cancelled",
            )));
        }
        let entry = entry.ok()?;
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return None;
        }
        let full = entry.into_path();
        let relative = match full.strip_prefix(&root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_path_buf(),
            // The root itself is the file.
            _ => PathBuf::from(full.file_name()?),
        };
        let shown_path = if strip_dot {
            full.strip_prefix(".").unwrap_or(&full)
        } else {
            &full
        };
        let shown = shown_path.to_string_lossy().into_owned();
        Some(Ok(Found {
            full,
            relative,
            shown,
        }))
    }))
}

/// `grep`'s `glob` filter: the file name, or with a `/` the relative path.
struct FileFilter {
    matcher: GlobMatcher,
    by_path: bool,
}

impl FileFilter {
    fn new(pattern: &str) -> Result<FileFilter, ToolError> {
        let by_path = pattern.contains('/');
        Ok(FileFilter {
            matcher: compile_glob(pattern, by_path)?,
            by_path,
        })
    }

    fn admits(&self, file: &Found) -> bool {
        if self.by_path {
            self.matcher.is_match(&file.relative)
        } else {
            file.full
                .file_name()
                .is_some_and(|name| self.matcher.is_match(Path::new(name)))
        }
    }
}

fn compile_glob(pattern: &str, literal_separator: bool) -> Result<GlobMatcher, ToolError> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::with_code("SEARCH_INVALID_GLOB", format!("invalid glob: {e}")))
}
