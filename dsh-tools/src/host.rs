//! The registry the `dsh-tools` binary serves: every reference tool, a job runtime for
//! background work, and a guard confining the file tools to a root directory.
//!
//! ```no_run
//! # async fn demo() -> Result<(), dsh_tools::host::HostError> {
//! use dsh_tools::host::Host;
//!
//! let host = Host::new(".")?;
//! let result = host.call("call_1", "read", r#"{"file_path":"README.md","limit":5}"#).await;
//! println!("{}", result.text());
//! host.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # The root guard
//!
//! [`root_guard`] denies a call of a file tool (`read`, `write`, `edit`, `grep`, `glob`)
//! whose path argument (`file_path`, or `path`, which defaults to the working directory)
//! resolves outside the root. Resolution follows the file system: `..` is applied to the
//! real directory reached so far, and every existing symbolic link along the path is
//! followed (dangling ones too), so neither `../..` nor a link pointing out of the root
//! gets through. Relative paths resolve against the root, as the tools resolve them.
//!
//! The guard runs after argument validation and policy hooks, and its denial is final
//! (see the registry's pipeline). It gives an early, precise denial; the enforcement is in
//! the tools themselves, which the host registers with a [confined
//! scope](crate::scope::FsScope::confined): every file is opened through a handle on the
//! root, so a symbolic link swapped in after the guard's check cannot lead out, and a file
//! with several hard links is refused. It is a boundary for the file tools, not a sandbox:
//! `bash` can still reach anything the process can.
//!
//! What the confinement guarantees, and what escapes it, is stated in [`crate::scope`].
//!
//! # Spill files
//!
//! `bash` writes the whole of a long output stream to a spill file. A [`Host`] gives its
//! commands a private directory of its own (mode `0700`, files `0600`), and caps the
//! spill bytes of all of them at [`SESSION_SPILL_BYTES`]: a stream that reaches the cap
//! keeps its first part in its file (`spillTruncated: true`, and the notice says the file
//! holds the first part), and once the cap is spent, output that outgrows memory gets no
//! spill file. The directory is removed when the host is dropped, so with `dsh-tools
//! session` the spill files live as long as the session; `dsh-tools call` keeps them
//! ([`Host::keep_spill_files`]), since its one result points at them. Over MCP, each
//! session's shell gets a directory and a cap of its own, removed when the session ends.

use std::fmt;
use std::path::{Path, PathBuf};

use dsh_runtime::hooks::{CallInfo, Guard, guard_fn};
use dsh_runtime::jobs::JobRuntime;
use dsh_runtime::{
    RegisterError, RegistrationGuard, RegistrationHandle, Registry, ToolCall, ToolResult,
};

use crate::bash::BashConfig;
use crate::process::SpillBudget;
use crate::scope::{FsScope, resolve, shown};

/// The tools the root guard confines, with their path argument and its default when the
/// argument is omitted (`None`: the argument is required).
pub const CONFINED_TOOLS: &[(&str, &str, Option<&str>)] = &[
    ("read", "file_path", None),
    ("write", "file_path", None),
    ("edit", "file_path", None),
    ("grep", "path", Some(".")),
    ("glob", "path", Some(".")),
];

/// The total spill bytes of one host (one `session`), and of each MCP session: 1 GiB.
pub const SESSION_SPILL_BYTES: u64 = 1 << 30;

/// A private spill directory (mode `0700`), removed when dropped, and the spill budget of
/// the commands writing there (one per host, and one per MCP session).
pub struct SpillDir {
    dir: std::sync::Mutex<Option<tempfile::TempDir>>,
    path: PathBuf,
    budget: SpillBudget,
}

impl SpillDir {
    /// A new private directory under the system temporary directory, with a budget of
    /// [`SESSION_SPILL_BYTES`].
    ///
    /// # Errors
    ///
    /// When the directory cannot be made.
    pub fn new() -> std::io::Result<SpillDir> {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::Builder::new()
            .prefix("dsh-tools-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        Ok(SpillDir {
            path: dir.path().to_path_buf(),
            dir: std::sync::Mutex::new(Some(dir)),
            budget: SpillBudget::new(SESSION_SPILL_BYTES),
        })
    }

    /// The default shell config, spilling here within the budget.
    pub fn bash_config(&self) -> BashConfig {
        BashConfig::default()
            .with_spill_dir(&self.path)
            .with_spill_budget(self.budget.clone())
    }

    fn keep(&self) -> PathBuf {
        let mut dir = crate::lock(&self.dir);
        if let Some(dir) = dir.take() {
            let _ = dir.keep();
        }
        self.path.clone()
    }
}

/// A registry holding every reference tool, its job runtime and the root guard.
///
/// Spill files of its commands go to a private directory (mode `0700`) of its own, at most
/// [`SESSION_SPILL_BYTES`] in all; the directory is removed when the host is dropped
/// (after [`shutdown`](Host::shutdown)), unless [`keep_spill_files`](Host::keep_spill_files)
/// was called.
pub struct Host {
    registry: Registry,
    jobs: JobRuntime,
    root: PathBuf,
    _registrations: Vec<RegistrationGuard>,
    // Last: removed after the registrations (and the shell) are gone.
    spill: SpillDir,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Host")
            .field("root", &self.root)
            .field("tools", &self.registry.view().names())
            .finish_non_exhaustive()
    }
}

/// Why a [`Host`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The root does not exist or is not a directory.
    #[error("invalid root {}: {error}", .root.display())]
    Root {
        /// The root as given.
        root: PathBuf,
        /// What went wrong.
        #[source]
        error: std::io::Error,
    },
    /// A tool was refused by the registry.
    #[error("cannot register the reference tools: {0}")]
    Register(#[from] RegisterError),
}

/// How a [`Host`] is made, beyond its root.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HostOptions {
    /// Record each traced call's arguments and successful result on its `execute_tool`
    /// span (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`; see
    /// [`RegistryBuilder::trace_content`](dsh_runtime::RegistryBuilder::trace_content)).
    /// Off by default: they may be sensitive.
    pub trace_content: bool,
}

impl HostOptions {
    /// The defaults: no call content on spans.
    pub fn new() -> HostOptions {
        HostOptions::default()
    }

    /// Set [`HostOptions::trace_content`].
    pub fn trace_content(mut self, record: bool) -> HostOptions {
        self.trace_content = record;
        self
    }
}

impl Host {
    /// A host confined to `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Host, HostError> {
        Host::with_options(root, &HostOptions::new())
    }

    /// [`Host::new`] with `options`.
    pub fn with_options(root: impl AsRef<Path>, options: &HostOptions) -> Result<Host, HostError> {
        let root_error = |error| HostError::Root {
            root: root.as_ref().to_path_buf(),
            error,
        };
        let root_path = root.as_ref().canonicalize().map_err(root_error)?;
        if !root_path.is_dir() {
            return Err(root_error(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "not a directory",
            )));
        }
        let scope = FsScope::confined(&root_path).map_err(root_error)?;
        let spill = SpillDir::new().map_err(|error| HostError::Root {
            root: std::env::temp_dir(),
            error,
        })?;
        let jobs = JobRuntime::new();
        let registry = Registry::builder()
            .jobs(jobs.clone())
            .trace_content(options.trace_content)
            .build();
        let mut registrations = register_tools_with(&registry, &scope, spill.bash_config())?;
        registrations.push(registry.add_guard(root_guard(root_path.clone())));
        Ok(Host {
            registry,
            jobs,
            root: root_path,
            _registrations: registrations
                .into_iter()
                .map(RegistrationHandle::unregister_on_drop)
                .collect(),
            spill,
        })
    }

    /// The directory the host's commands spill their long output to.
    pub fn spill_dir(&self) -> &Path {
        &self.spill.path
    }

    /// Keep the spill directory after the host is dropped (for a one-shot call whose
    /// result points at its spill files); its path.
    pub fn keep_spill_files(&self) -> PathBuf {
        self.spill.keep()
    }

    /// The registry (every reference tool, and the root guard).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The job runtime background tools start their jobs on.
    pub fn jobs(&self) -> &JobRuntime {
        &self.jobs
    }

    /// The root, canonicalized.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// One call from the global view, through the full pipeline.
    pub async fn call(&self, call_id: &str, name: &str, arguments: &str) -> ToolResult {
        self.registry
            .execute(ToolCall::new(call_id, name, arguments))
            .await
    }

    /// Stop every background job and wait until they have settled.
    pub async fn shutdown(self) {
        self.jobs.shutdown().await;
    }
}

/// Register every reference tool in the global layer: `read`, `write`, `edit`, `grep`,
/// `glob` (resolving paths in `scope`), then the shell and job tools (which start and
/// control background work on the registry's job runtime, `RegistryBuilder::jobs`).
pub fn register_tools(
    registry: &Registry,
    scope: &FsScope,
) -> Result<Vec<RegistrationHandle>, RegisterError> {
    register_tools_with(registry, scope, BashConfig::default())
}

/// [`register_tools`] with `bash` configured by `bash`.
pub fn register_tools_with(
    registry: &Registry,
    scope: &FsScope,
    bash: BashConfig,
) -> Result<Vec<RegistrationHandle>, RegisterError> {
    let mut all = crate::fs::register_in(registry, scope.clone())?;
    all.extend(crate::search::register_in(registry, scope.clone())?);
    all.extend(crate::bash::register_with(registry, bash)?);
    all.extend(crate::jobs::register(registry)?);
    Ok(all)
}

/// A guard denying calls of [`CONFINED_TOOLS`] whose path resolves outside `root`
/// (canonical). Relative paths resolve against the root.
pub fn root_guard(root: PathBuf) -> impl Guard {
    guard_fn(move |call: &CallInfo<'_>| {
        let &(_, key, default) = CONFINED_TOOLS
            .iter()
            .find(|(name, ..)| *name == call.name())?;
        let given = match call.arguments().get(key) {
            Some(value) if !value.is_null() => value.as_str()?,
            _ => default?,
        };
        check_within(&root, &root, given).err()
    })
}

/// Resolve `path` against `base` and check it is `root` or inside it. The error names
/// the path as given and the root, never where the path resolved to: the target of a
/// symbolic link pointing out of the root (or of a `/proc/self/fd/N` entry) is not
/// echoed.
pub fn check_within(root: &Path, base: &Path, path: &str) -> Result<PathBuf, String> {
    let resolved = resolve(base, Path::new(path))
        .map_err(|e| format!("cannot resolve path {:?}: {e}", shown(path)))?;
    if resolved.starts_with(root) {
        Ok(resolved)
    } else {
        Err(format!(
            "path {:?} leads outside the root {}",
            shown(path),
            root.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_resolution_without_links() {
        let base = Path::new("/nonexistent-base/dir");
        assert_eq!(
            resolve(base, Path::new("a/./b/../c")).unwrap(),
            Path::new("/nonexistent-base/dir/a/c")
        );
        assert_eq!(
            resolve(base, Path::new("../../..")).unwrap(),
            Path::new("/")
        );
        assert_eq!(
            resolve(base, Path::new("/etc/../x")).unwrap(),
            Path::new("/x")
        );
    }

    #[test]
    fn within_checks_components_not_prefixes() {
        let root = Path::new("/nonexistent-root/app");
        assert!(check_within(root, root, "src/main.rs").is_ok());
        assert!(check_within(root, root, ".").is_ok());
        let err = check_within(root, root, "../app2/x").unwrap_err();
        assert_eq!(
            err,
            "path \"../app2/x\" leads outside the root /nonexistent-root/app"
        );
    }
}
