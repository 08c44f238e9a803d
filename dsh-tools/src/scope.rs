//! Where the file tools resolve paths, and what they may reach.
//!
//! An [`FsScope`] is either *ambient* (relative paths resolve against the process's working
//! directory and any path the process can open is reachable: what a library user embedding
//! the tools gets from [`crate::fs::register`]) or *confined* to a root directory (what the
//! `dsh-tools` host uses for `--root`).
//!
//! # Confinement
//!
//! A confined scope holds an open handle on its root. A path is first resolved (`..` and
//! every existing symbolic link followed) and denied when it leads outside the root; the
//! file is then opened *through the root handle* with the resolved path, so a component
//! swapped for a symbolic link after the check cannot lead out either: the open itself
//! refuses to leave the root (the `cap-std` crate, which uses `openat2(RESOLVE_BENEATH)`
//! where the kernel has it). Directory walks (`grep`, `glob`) open or re-check every file
//! they report the same way.
//!
//! A hard link inside the root may name a file that also lives outside it, and nothing about
//! the path shows that. Under a confined scope, a regular file with more than one link is
//! therefore refused by `read`, `write` and `edit` (`FS_OUTSIDE_ROOT`) and skipped by
//! `grep`; the check is made on the opened file, not on the path.
//!
//! # What confinement guarantees, and what escapes it
//!
//! Guaranteed under a confined scope, for `read`, `write`, `edit`, `grep` and `glob`:
//!
//! - every file they open, the ignore files `grep` reads on its own included, is opened
//!   through the root handle, without blocking (`O_NONBLOCK`), and used only when it is a
//!   regular file with one link; FIFOs, devices, sockets and symbolic links that lead out
//!   (to `/dev/zero`, or to a file outside the root) are refused or skipped;
//! - nothing read outside the root influences a result: no ignore file above the root is
//!   read (no parent-directory ignore files, no global git excludes, no `.git` file of a
//!   worktree followed), only whether a `.git` entry exists above the root is looked at, to
//!   know whether the root is inside a git repository;
//! - what is read is bounded: lines by `grep` ([`crate::search::GREP_VALUE_LINE_BYTES`]),
//!   ignore files ([`crate::search::MAX_IGNORE_FILE_BYTES`]), edited files
//!   ([`crate::fs::MAX_EDIT_BYTES`]), paths ([`MAX_PATH_BYTES`],
//!   [`MAX_PATH_COMPONENTS`]);
//! - a refusal names the path as given and the root, never where a symbolic link (or a
//!   `/proc/self/fd/N` entry) pointed.
//!
//! Not covered: `bash` and the job tools (which reach whatever the process can); the time a
//! walk takes over a large tree (bounded by the tools' timeouts and cancellation); metadata
//! of entries inside the root (names, sizes and times are what `glob` reports).
//!
//! # Writes
//!
//! `write` and `edit` never write a file in place: the new content goes to a temporary file
//! in the same directory, which is flushed to disk and then renamed over the target (with the
//! old file's permission bits, and its owner where the process may set it). A failure at any
//! point (a full disk, a crash, a refused rename) leaves the old file whole, and removes the
//! temporary file when the process is still alive to do so. Writing through a symbolic link
//! replaces the file it points to; a file with several hard links (possible only under an
//! ambient scope) gets a new file under the name written, and its other names keep the old
//! content.
//!
//! The new file keeps the old one's permission bits, owner (where the process may set
//! it) and extended attributes (those the process may set: `user.*` always, `security.*`
//! and `trusted.*` only with privileges). `edit` checks, just before the rename, that the
//! name still holds the file it read, unchanged (device, inode, size, modification and
//! change times); if not, it reads and edits the file again, and after a second change
//! refuses with `FS_STALE_VERSION`, writing nothing. Bytes appended to the old file after
//! that check (by a writer that opened it before the rename) are carried over to the new
//! file during 15 milliseconds after the rename; a writer that stalls longer between
//! its open and its write, across the rename, writes to the replaced file, and that
//! append is lost: no rename-based replacement can close this window.

use std::io::{self, ErrorKind, Write as _};
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt as _};
use dsh_runtime::ToolError;

/// The longest path text (in characters) that error messages and rendered output echo
/// whole; longer paths are cut, ending with `…`. Linux paths are at most 4096 bytes, so a
/// real path is never cut.
pub const MAX_ECHOED_PATH_CHARS: usize = 4096;

/// The error code for a path or file that leads outside a confined scope's root.
pub const OUTSIDE_ROOT: &str = "FS_OUTSIDE_ROOT";

/// The error code for a path over [`MAX_PATH_BYTES`] bytes or
/// [`MAX_PATH_COMPONENTS`] components, refused before it is resolved.
pub const PATH_TOO_LONG: &str = "FS_PATH_TOO_LONG";

/// Where the file tools resolve paths and what they may reach (see the [module
/// documentation](self)). Cheap to clone.
#[derive(Clone, Debug)]
pub struct FsScope {
    root: Option<Arc<Root>>,
}

#[derive(Debug)]
struct Root {
    /// Canonical.
    path: PathBuf,
    dir: Dir,
}

impl FsScope {
    /// Relative paths resolve against the working directory at call time; every path the
    /// process can reach is reachable.
    pub fn ambient() -> FsScope {
        FsScope { root: None }
    }

    /// Confined to `root`, an existing directory: relative paths resolve against it and
    /// nothing outside it is reachable.
    ///
    /// # Errors
    ///
    /// When `root` does not exist, is not a directory, or cannot be opened.
    pub fn confined(root: impl AsRef<Path>) -> io::Result<FsScope> {
        let path = root.as_ref().canonicalize()?;
        let dir = Dir::open_ambient_dir(&path, cap_std::ambient_authority())?;
        Ok(FsScope {
            root: Some(Arc::new(Root { path, dir })),
        })
    }

    /// The root of a confined scope (canonical), `None` for an ambient one.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref().map(|r| r.path.as_path())
    }

    /// The directory relative paths resolve against: the root, or the canonical working
    /// directory.
    pub(crate) fn base(&self) -> io::Result<PathBuf> {
        match &self.root {
            Some(root) => Ok(root.path.clone()),
            None => std::env::current_dir()?.canonicalize(),
        }
    }

    /// Resolve a path given by the model for `verb` (`read`, `write`, ...).
    pub(crate) fn locate(&self, verb: &str, given: &str) -> Result<Target, ToolError> {
        check_path_size(given.as_bytes()).map_err(|why| {
            ToolError::with_code(
                PATH_TOO_LONG,
                format!("cannot {verb} \"{}\": {why}", shown(given)),
            )
        })?;
        let base = self.base().map_err(|e| {
            ToolError::with_code(
                "FS_IO_ERROR",
                format!(
                    "cannot {verb} \"{}\": no working directory ({e})",
                    shown(given)
                ),
            )
        })?;
        let display = lexical(&base, Path::new(given));
        let display_text = display.to_string_lossy().into_owned();
        let real = resolve(&base, Path::new(given)).map_err(|e| {
            ToolError::with_code(
                "FS_NOT_FOUND",
                format!("cannot resolve \"{}\": {e}", shown(&display_text)),
            )
        })?;
        let rel = match &self.root {
            None => None,
            Some(root) => match real.strip_prefix(&root.path) {
                Ok(rel) => Some(rel.to_path_buf()),
                Err(_) => {
                    return Err(outside(verb, &display_text, &root.path));
                }
            },
        };
        Ok(Target {
            display: display_text,
            real,
            rel,
        })
    }

    /// Metadata of the file `target` names, following symbolic links; `None` when it (or a
    /// directory on the way) does not exist.
    pub(crate) fn stat(&self, target: &Target) -> io::Result<Option<Stat>> {
        let meta = match (&self.root, &target.rel) {
            (Some(root), Some(rel)) => root.dir.metadata(dot(rel)).map(Stat::from_cap),
            _ => std::fs::metadata(&target.real).map(|m| Stat::from_std(&m)),
        };
        match meta {
            Ok(stat) => Ok(Some(stat)),
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Open the regular file `target` names for reading, without blocking on special files;
    /// under a confined scope, a file with several hard links is refused.
    pub(crate) fn open_file(
        &self,
        verb: &str,
        target: &Target,
    ) -> Result<std::fs::File, ToolError> {
        let file = match (&self.root, &target.rel) {
            (Some(root), Some(rel)) => root
                .dir
                .open_with(dot(rel), &read_options())
                .map(cap_std::fs::File::into_std),
            _ => std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(&target.real),
        }
        .map_err(|e| self.io_error(verb, &target.display, e))?;
        let meta = file
            .metadata()
            .map_err(|e| self.io_error(verb, &target.display, e))?;
        if !meta.is_file() {
            return Err(not_regular(verb, &target.display));
        }
        if self.root.is_some() && meta.nlink() > 1 {
            return Err(ToolError::with_code(
                OUTSIDE_ROOT,
                format!(
                    "cannot {verb} \"{}\": it has {} hard links, and under --root a file with more than one link is refused (another link may be outside the root)",
                    shown(&target.display),
                    meta.nlink()
                ),
            ));
        }
        Ok(file)
    }

    /// Replace (or create) the file `target` names with `bytes`, atomically: missing parent
    /// directories are created, the content goes to a temporary file beside the target, which
    /// is synced and renamed over it. `like`: the file replaced, whose permission bits (and,
    /// where the process may set it, owner) the new file gets; `None` creates it with the
    /// default mode (`0o666` less the umask).
    #[cfg(test)]
    pub(crate) fn write_atomic(
        &self,
        target: &Target,
        bytes: &[u8],
        like: Option<Stat>,
    ) -> io::Result<()> {
        self.write_atomic_with(target, like, None, |file| file.write_all(bytes))
    }

    /// [`write_atomic`](Self::write_atomic) with the content produced by `fill` (which may
    /// fail: the target is then left as it was). `old`: the file replaced, as opened and
    /// read: its extended attributes are copied to the new file, and when `old.expect` is
    /// set the replacement is refused ([`is_stale`]) if the file under the name is no
    /// longer the one read, unchanged, just before the rename.
    pub(crate) fn write_atomic_with(
        &self,
        target: &Target,
        like: Option<Stat>,
        old: Option<Old<'_>>,
        fill: impl FnOnce(&mut std::fs::File) -> io::Result<()>,
    ) -> io::Result<()> {
        let (parent, name) = match (&self.root, &target.rel) {
            (Some(root), Some(rel)) => {
                let name = rel.file_name().ok_or_else(not_a_file_name)?;
                let parent_rel = rel.parent().unwrap_or(Path::new(""));
                if !parent_rel.as_os_str().is_empty() {
                    root.dir.create_dir_all(parent_rel)?;
                }
                (root.dir.open_dir(dot(parent_rel))?, name.to_os_string())
            }
            _ => {
                let name = target.real.file_name().ok_or_else(not_a_file_name)?;
                let parent_path = target.real.parent().unwrap_or(Path::new("/"));
                std::fs::create_dir_all(parent_path)?;
                (
                    Dir::open_ambient_dir(parent_path, cap_std::ambient_authority())?,
                    name.to_os_string(),
                )
            }
        };
        replace_in(&parent, Path::new(&name), like, old, fill)
    }

    /// Open a file a directory walk found at `path` (absolute, under the walk's directory),
    /// through the root handle under a confined scope; special files and (confined) files
    /// with several hard links are refused.
    pub(crate) fn open_walked(&self, path: &Path) -> io::Result<std::fs::File> {
        let file = match &self.root {
            Some(root) => {
                let rel = path.strip_prefix(&root.path).map_err(|_| escaped())?;
                root.dir.open_with(dot(rel), &read_options())?.into_std()
            }
            None => std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(path)?,
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        if self.root.is_some() && meta.nlink() > 1 {
            return Err(escaped());
        }
        Ok(file)
    }

    /// The directory that bounds the files a walk of `search_dir` (absolute, real) reads on
    /// its own (ignore files), with a handle on it: the root under a confined scope; under
    /// an ambient one, the working directory when `search_dir` is inside it, else
    /// `search_dir` itself.
    pub(crate) fn walk_boundary(&self, search_dir: &Path) -> io::Result<(PathBuf, Dir)> {
        match &self.root {
            Some(root) => Ok((root.path.clone(), root.dir.try_clone()?)),
            None => {
                let cwd = self.base()?;
                let boundary = if search_dir.starts_with(&cwd) {
                    cwd
                } else {
                    search_dir.to_path_buf()
                };
                let dir = Dir::open_ambient_dir(&boundary, cap_std::ambient_authority())?;
                Ok((boundary, dir))
            }
        }
    }

    /// The content of the file at `rel` under `boundary` (a handle from
    /// [`walk_boundary`](Self::walk_boundary)), opened like every file the tools read: through
    /// the handle (a path, or a symbolic link, that leads out of it is refused), without
    /// blocking, regular files only, and (confined) not a file with several hard links; a
    /// file over `max` bytes is refused without being read whole.
    pub(crate) fn read_bounded(&self, boundary: &Dir, rel: &Path, max: u64) -> io::Result<Vec<u8>> {
        use std::io::Read as _;
        let file = boundary.open_with(dot(rel), &read_options())?.into_std();
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        if self.root.is_some() && meta.nlink() > 1 {
            return Err(escaped());
        }
        let mut bytes = Vec::new();
        file.take(max + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max {
            return Err(io::Error::new(
                ErrorKind::FileTooLarge,
                format!("over {max} bytes"),
            ));
        }
        Ok(bytes)
    }

    /// The modification time of a regular file a directory walk found at `path` (absolute),
    /// checked through the root handle under a confined scope (without following a final
    /// symbolic link); an error when it is not a regular file (any more) or not reachable.
    pub(crate) fn walked_file_mtime(&self, path: &Path) -> io::Result<SystemTime> {
        match &self.root {
            Some(root) => {
                let rel = path.strip_prefix(&root.path).map_err(|_| escaped())?;
                let meta = root.dir.symlink_metadata(dot(rel))?;
                if !meta.is_file() {
                    return Err(io::Error::new(
                        ErrorKind::InvalidInput,
                        "not a regular file",
                    ));
                }
                meta.modified().map(|t| t.into_std())
            }
            None => {
                let meta = std::fs::symlink_metadata(path)?;
                if !meta.is_file() {
                    return Err(io::Error::new(
                        ErrorKind::InvalidInput,
                        "not a regular file",
                    ));
                }
                meta.modified()
            }
        }
    }

    /// The coded error for an I/O failure of `verb` on `display`, with the reference tools'
    /// wording.
    pub(crate) fn io_error(&self, verb: &str, display: &str, e: io::Error) -> ToolError {
        let path = shown(display);
        if let (true, Some(root)) = (is_escape(&e), &self.root) {
            return outside(verb, display, &root.path);
        }
        match e.kind() {
            ErrorKind::NotFound | ErrorKind::NotADirectory => ToolError::with_code(
                "FS_NOT_FOUND",
                format!("cannot {verb} \"{path}\": not found"),
            ),
            ErrorKind::PermissionDenied => ToolError::with_code(
                "FS_PERMISSION_DENIED",
                format!("cannot {verb} \"{path}\": permission denied"),
            ),
            ErrorKind::IsADirectory => not_regular(verb, display),
            _ => ToolError::with_code("FS_IO_ERROR", format!("cannot {verb} \"{path}\": {e}")),
        }
    }
}

/// A path resolved by [`FsScope::locate`].
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The absolute path as the model should see it: the base joined with the given path,
    /// `.` and `..` applied lexically (symbolic links are not resolved).
    pub display: String,
    /// The real path: symbolic links followed.
    pub real: PathBuf,
    /// Under a confined scope: `real` relative to the root.
    rel: Option<PathBuf>,
}

/// What the tools need to know about a file before opening it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stat {
    pub is_file: bool,
    pub is_dir: bool,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

impl Stat {
    fn from_std(meta: &std::fs::Metadata) -> Stat {
        Stat {
            is_file: meta.is_file(),
            is_dir: meta.is_dir(),
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
        }
    }

    fn from_cap(meta: cap_std::fs::Metadata) -> Stat {
        use cap_std::fs::MetadataExt as _;
        Stat {
            is_file: meta.is_file(),
            is_dir: meta.is_dir(),
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
        }
    }
}

/// `FS_NOT_REGULAR_FILE`: a directory, a FIFO, a device.
pub(crate) fn not_regular(verb: &str, display: &str) -> ToolError {
    ToolError::with_code(
        "FS_NOT_REGULAR_FILE",
        format!("cannot {verb} \"{}\": not a regular file", shown(display)),
    )
}

fn outside(verb: &str, display: &str, root: &Path) -> ToolError {
    ToolError::with_code(
        OUTSIDE_ROOT,
        format!(
            "cannot {verb} \"{}\": the path leads outside the root {}",
            shown(display),
            root.display()
        ),
    )
}

/// Read-only, never blocking on a FIFO, never acquiring a controlling terminal.
fn read_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    options
}

/// `cap-std` wants `.` for the directory itself.
fn dot(rel: &Path) -> &Path {
    if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    }
}

/// The error `cap-std` reports for a path that would leave its directory.
fn is_escape(e: &io::Error) -> bool {
    e.kind() == ErrorKind::PermissionDenied && e.to_string().contains("outside of the filesystem")
}

fn escaped() -> io::Error {
    io::Error::new(
        ErrorKind::PermissionDenied,
        "a path led outside of the filesystem",
    )
}

fn not_a_file_name() -> io::Error {
    io::Error::new(ErrorKind::IsADirectory, "the path names a directory")
}

/// `base` joined with `path`, `.` dropped and `..` applied lexically (never above `/`).
pub(crate) fn lexical(base: &Path, path: &Path) -> PathBuf {
    let mut out = if path.is_absolute() {
        PathBuf::new()
    } else {
        base.to_path_buf()
    };
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out = PathBuf::from(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// `text` cut to [`MAX_ECHOED_PATH_CHARS`] characters (ending with `…` when cut).
pub(crate) fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    cut(text, MAX_ECHOED_PATH_CHARS)
}

/// The file a replacement replaces, as the tool opened and read it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Old<'a> {
    /// The open file: its extended attributes go to the new file.
    pub file: &'a std::fs::File,
    /// What it was when read; `None`: no check before the rename.
    pub expect: Option<Identity>,
}

/// Which file, at which size and modification time: two equal identities are taken to be
/// the same unchanged file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: i64,
    mtime_nsec: i64,
    ctime: i64,
    ctime_nsec: i64,
}

impl Identity {
    /// The identity of an open file.
    pub(crate) fn of(file: &std::fs::File) -> io::Result<Identity> {
        Ok(Identity::from_meta(&file.metadata()?))
    }

    fn from_meta(m: &std::fs::Metadata) -> Identity {
        Identity {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: m.mtime(),
            mtime_nsec: m.mtime_nsec(),
            ctime: m.ctime(),
            ctime_nsec: m.ctime_nsec(),
        }
    }
}

/// The error of a replacement refused because the file changed after it was read.
#[derive(Debug)]
struct Stale;

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the file changed after it was read")
    }
}

impl std::error::Error for Stale {}

/// Whether `e` is a replacement refused because the file changed after it was read.
pub(crate) fn is_stale(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Stale>())
}

/// Copy the extended attributes of `from` to `to`, best effort: an attribute the file
/// system or the process's privileges do not allow setting (`security.*`, `trusted.*`
/// for an unprivileged process) is skipped.
#[allow(unsafe_code)]
fn copy_xattrs(from: &std::fs::File, to: &std::fs::File) {
    use std::os::fd::AsRawFd as _;
    let (src, dst) = (from.as_raw_fd(), to.as_raw_fd());
    // SAFETY (all calls below): valid descriptors borrowed for the call, and buffers whose
    // lengths are passed with them.
    let size = unsafe { libc::flistxattr(src, std::ptr::null_mut(), 0) };
    let Ok(size) = usize::try_from(size) else {
        return;
    };
    if size == 0 {
        return;
    }
    let mut names = vec![0u8; size];
    let got = unsafe { libc::flistxattr(src, names.as_mut_ptr().cast(), names.len()) };
    let Ok(got) = usize::try_from(got) else {
        return;
    };
    names.truncate(got);
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let Ok(cname) = std::ffi::CString::new(name) else {
            continue;
        };
        let len = unsafe { libc::fgetxattr(src, cname.as_ptr(), std::ptr::null_mut(), 0) };
        let Ok(len) = usize::try_from(len) else {
            continue;
        };
        let mut value = vec![0u8; len];
        let read = unsafe { libc::fgetxattr(src, cname.as_ptr(), value.as_mut_ptr().cast(), len) };
        let Ok(read) = usize::try_from(read) else {
            continue;
        };
        unsafe {
            libc::fsetxattr(dst, cname.as_ptr(), value.as_ptr().cast(), read, 0);
        }
    }
}

/// The atomic replacement inside one directory handle: temporary file, fill, sync, set the
/// mode (and copy the old file's extended attributes), check the old file is unchanged,
/// rename over `name`; the temporary file is removed on failure.
fn replace_in(
    parent: &Dir,
    name: &Path,
    like: Option<Stat>,
    old: Option<Old<'_>>,
    fill: impl FnOnce(&mut std::fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let (temp_name, mut file) = create_temp(parent, name, like)?;
    let written =
        fill(&mut file).and_then(|()| commit_temp(parent, name, &temp_name, file, like, old));
    if let Err(e) = written {
        let _ = parent.remove_file(&temp_name);
        return Err(e);
    }
    // Make the rename itself durable (best effort: not every file system supports it).
    if let Ok(dir) = parent.open(".") {
        let _ = dir.sync_all();
    }
    // An append that reached the old file after the last look (through a descriptor opened
    // before the rename) is carried over to the new file: looked for now, and again during
    // 15 ms, for a writer caught between its open and its write.
    if let Some(Old {
        file: old_file,
        expect: Some(expect),
    }) = old
    {
        let mut copied = expect.size;
        for pause in CARRY_OVER_PAUSES_MS {
            copied = carry_over_appends(parent, name, old_file, copied);
            std::thread::sleep(std::time::Duration::from_millis(*pause));
        }
        carry_over_appends(parent, name, old_file, copied);
    }
    Ok(())
}

/// A new temporary file beside `name` in `parent` (owner-only while it is filled when it
/// will take `like`'s mode), under a name no other replacement uses; its name and file.
fn create_temp(
    parent: &Dir,
    name: &Path,
    like: Option<Stat>,
) -> io::Result<(String, std::fs::File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let nonce = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let temp_name = format!(
            ".{}.{}.{}.{nonce:08x}.tmp",
            name.to_string_lossy(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .mode(if like.is_some() { 0o600 } else { 0o666 });
        match parent.open_with(&temp_name, &options) {
            Ok(file) => return Ok((temp_name, file.into_std())),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The filled temporary file made final: owner and mode of `like`, the old file's
/// extended attributes, synced, the old file checked unchanged, renamed over `name`.
fn commit_temp(
    parent: &Dir,
    name: &Path,
    temp_name: &str,
    file: std::fs::File,
    like: Option<Stat>,
    old: Option<Old<'_>>,
) -> io::Result<()> {
    if let Some(like) = like {
        use std::os::unix::fs::PermissionsExt as _;
        // Only a privileged process may give a file away; anyone else keeps ownership.
        let _ = std::os::unix::fs::fchown(&file, Some(like.uid), Some(like.gid));
        file.set_permissions(std::fs::Permissions::from_mode(like.mode))?;
    }
    if let Some(old) = old {
        copy_xattrs(old.file, &file);
    }
    file.sync_all()?;
    drop(file);
    if let Some(Old {
        expect: Some(expect),
        ..
    }) = old
    {
        // The last look before the rename: the name must still be the file read, as
        // it was read.
        let now = parent
            .open_with(name, &read_options())
            .map(cap_std::fs::File::into_std)
            .and_then(|f| Identity::of(&f));
        if now.ok() != Some(expect) {
            return Err(io::Error::other(Stale));
        }
    }
    parent.rename(temp_name, parent, name)
}

/// The pauses between the looks a replacement takes for appends that reached the file it
/// replaced (15 ms in all).
const CARRY_OVER_PAUSES_MS: &[u64] = &[1, 2, 4, 8];

/// Append to `name` what was appended to `old` past `size` (best effort); the size of
/// `old` now carried over.
fn carry_over_appends(parent: &Dir, name: &Path, old: &std::fs::File, size: u64) -> u64 {
    use std::os::unix::fs::FileExt as _;
    let Ok(now) = old.metadata().map(|m| m.len()) else {
        return size;
    };
    if now <= size {
        return size;
    }
    let Ok(len) = usize::try_from(now - size) else {
        return size;
    };
    let mut tail = vec![0u8; len.min(64 * 1024 * 1024)];
    let Ok(n) = old.read_at(&mut tail, size) else {
        return size;
    };
    let mut options = OpenOptions::new();
    options.append(true);
    if let Ok(new) = parent.open_with(name, &options) {
        let mut new = new.into_std();
        if new.write_all(&tail[..n]).is_ok() {
            return size + n as u64;
        }
    }
    size
}

/// How many symbolic links one resolution follows before giving up (as Linux does).
const MAX_SYMLINKS: usize = 40;

/// The real path `path` names, relative paths starting from `base` (which must be
/// canonical): `.` is dropped, `..` goes to the parent of the real directory reached so
/// far, and each existing symbolic link is replaced by its target. Components that do
/// not exist are kept as written.
///
/// A path longer than [`MAX_PATH_BYTES`] bytes or with more than [`MAX_PATH_COMPONENTS`]
/// components is refused before anything is looked up. The work is linear in the length
/// of the path (and of the link targets followed): once a component does not exist, the
/// components below it are applied without asking the file system, until `..` climbs
/// back to a directory that exists.
pub fn resolve(base: &Path, path: &Path) -> Result<PathBuf, String> {
    check_path_size(path.as_os_str().as_encoded_bytes())?;
    let mut links = 0;
    resolve_from(base.to_path_buf(), path, &mut links)
}

/// The longest path, in bytes, that the file tools and the root guard resolve (Linux's
/// `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// The most components (names, `.` and `..`, separated by `/`) in a path that the file
/// tools and the root guard resolve.
pub const MAX_PATH_COMPONENTS: usize = 1024;

/// Refuse a path over [`MAX_PATH_BYTES`] or [`MAX_PATH_COMPONENTS`], naming the limit.
pub(crate) fn check_path_size(path: &[u8]) -> Result<(), String> {
    if path.len() > MAX_PATH_BYTES {
        return Err(format!(
            "the path is {} bytes long, over the limit of {MAX_PATH_BYTES} bytes",
            path.len()
        ));
    }
    let components = path
        .split(|b| *b == b'/')
        .filter(|part| !part.is_empty())
        .count();
    if components > MAX_PATH_COMPONENTS {
        return Err(format!(
            "the path has {components} components, over the limit of {MAX_PATH_COMPONENTS}"
        ));
    }
    Ok(())
}

fn resolve_from(mut out: PathBuf, path: &Path, links: &mut usize) -> Result<PathBuf, String> {
    // How many components at the end of `out` lie below one that does not exist: those
    // cannot be links, so they are not looked up.
    let mut missing = 0usize;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                out = PathBuf::from(component.as_os_str());
                missing = 0;
            }
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
                missing = missing.saturating_sub(1);
            }
            Component::Normal(name) => {
                out.push(name);
                if missing > 0 {
                    missing += 1;
                    continue;
                }
                let meta = match std::fs::symlink_metadata(&out) {
                    Ok(meta) => meta,
                    Err(_) => {
                        missing = 1;
                        continue;
                    }
                };
                if meta.file_type().is_symlink() {
                    *links += 1;
                    if *links > MAX_SYMLINKS {
                        return Err("too many levels of symbolic links".to_string());
                    }
                    let target = std::fs::read_link(&out).map_err(|e| e.to_string())?;
                    out.pop();
                    out = resolve_from(out, &target, links)?;
                }
            }
        }
    }
    Ok(out)
}

/// The first `max` characters of `text`, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]).into(),
        None => text.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_joins_and_normalizes() {
        let base = Path::new("/r/w");
        assert_eq!(
            lexical(base, Path::new("a/./b/../c")),
            Path::new("/r/w/a/c")
        );
        assert_eq!(lexical(base, Path::new("../../../x")), Path::new("/x"));
        assert_eq!(lexical(base, Path::new("/abs/./y/")), Path::new("/abs/y"));
        assert_eq!(lexical(base, Path::new(".")), Path::new("/r/w"));
    }

    #[test]
    fn a_failing_writer_leaves_the_original_whole_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("keep.txt");
        std::fs::write(&file, "original\n").unwrap();
        for scope in [FsScope::ambient(), FsScope::confined(dir.path()).unwrap()] {
            let target = scope
                .locate("write", file.to_str().unwrap())
                .expect("inside");
            let err = scope
                .write_atomic_with(&target, None, None, |f| {
                    f.write_all(b"half of the new con")?;
                    Err(io::Error::other("no space left on device"))
                })
                .unwrap_err();
            assert_eq!(err.to_string(), "no space left on device");
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "original\n");
            let names: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["keep.txt"], "no temporary file is left behind");
        }
        // And a write that succeeds replaces the content and keeps the mode.
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let scope = FsScope::confined(dir.path()).unwrap();
        let target = scope.locate("write", "keep.txt").unwrap();
        let like = scope.stat(&target).unwrap();
        scope.write_atomic(&target, b"new\n", like).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }
}
