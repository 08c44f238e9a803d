//! The host's root guard, in process: paths inside the root pass, `..`, absolute paths
//! and symbolic links that lead outside are denied with a reason naming path and root.

use crate::support;

use std::path::Path;

use dsh_tools::host::{Host, HostError, check_within};
use dsh_tools::scope::resolve;
use support::{failure, q, value, write};

struct Fixture {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    host: Host,
}

/// `<tmp>/root/inside.txt` and `<tmp>/outside/secret.txt`, with a host confined to root.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    write(&root.join("inside.txt"), "in\n");
    write(&outside.join("secret.txt"), "secret\n");
    let host = Host::new(&root).unwrap();
    Fixture {
        _dir: dir,
        root,
        outside,
        host,
    }
}

/// The guard's denial: the path as given and the root, never where the path led.
fn denial(root: &Path, given: &str, _resolved: &Path) -> String {
    format!("path {given:?} leads outside the root {}", root.display())
}

#[tokio::test]
async fn paths_inside_the_root_pass() {
    let f = fixture();
    let inside = f.root.join("inside.txt");
    let r = f
        .host
        .call("c", "read", &format!(r#"{{"file_path":{}}}"#, q(&inside)))
        .await;
    assert_eq!(value(&r)["totalLines"].as_u64(), Some(1));
    // `..` that stays inside is fine.
    std::fs::create_dir(f.root.join("sub")).unwrap();
    let roundabout = format!("{}/sub/../inside.txt", f.root.display());
    let r = f
        .host
        .call("c", "read", &format!(r#"{{"file_path":{roundabout:?}}}"#))
        .await;
    assert!(r.is_success(), "{r:?}");
    // A file that does not exist yet, in a directory that does not either.
    let new = f.root.join("new/dir/file.txt");
    let r = f
        .host
        .call(
            "c",
            "write",
            &format!(r#"{{"file_path":{},"content":"x"}}"#, q(&new)),
        )
        .await;
    assert!(r.is_success(), "{r:?}");
    assert!(new.exists());
    let r = f
        .host
        .call(
            "c",
            "glob",
            &format!(r#"{{"pattern":"**","path":{}}}"#, q(&f.root)),
        )
        .await;
    assert_eq!(value(&r)["paths"].as_array().map(|p| p.len()), Some(2));
}

#[tokio::test]
async fn escapes_are_denied() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");

    // Absolute path outside.
    let r = f
        .host
        .call("c", "read", &format!(r#"{{"file_path":{}}}"#, q(&secret)))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("GUARD_DENIED"),
            denial(&f.root, secret.to_str().unwrap(), &secret).as_str()
        )
    );

    // `..` out of the root.
    let sneaky = format!("{}/../outside/secret.txt", f.root.display());
    let r = f
        .host
        .call("c", "read", &format!(r#"{{"file_path":{sneaky:?}}}"#))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("GUARD_DENIED"),
            denial(&f.root, &sneaky, &secret).as_str()
        )
    );

    // A sibling whose name merely starts with the root's.
    let sibling = f.root.with_file_name("root2");
    let r = f
        .host
        .call(
            "c",
            "write",
            &format!(r#"{{"file_path":{},"content":"x"}}"#, q(&sibling.join("f"))),
        )
        .await;
    assert_eq!(
        failure(&r).1,
        denial(
            &f.root,
            sibling.join("f").to_str().unwrap(),
            &sibling.join("f")
        )
    );
    assert!(!sibling.exists());

    // Search tools: an explicit path outside.
    let r = f
        .host
        .call(
            "c",
            "grep",
            &format!(r#"{{"pattern":"s","path":{}}}"#, q(&f.outside)),
        )
        .await;
    assert_eq!(
        failure(&r).1,
        denial(&f.root, f.outside.to_str().unwrap(), &f.outside)
    );
}

#[tokio::test]
async fn relative_paths_and_an_omitted_search_path_are_the_root() {
    let f = fixture();
    // This test process runs in the crate directory, which is not the root.
    let r = f.host.call("c", "glob", r#"{"pattern":"*"}"#).await;
    assert_eq!(value(&r)["paths"], support::v(r#"["inside.txt"]"#));
    let r = f
        .host
        .call("c", "grep", r#"{"pattern":"in","path":null}"#)
        .await;
    assert_eq!(
        value(&r)["matches"],
        support::v(r#"[{"path":"inside.txt","lineNumber":1,"line":"in"}]"#)
    );
    let r = f
        .host
        .call("c", "read", r#"{"file_path":"inside.txt"}"#)
        .await;
    assert_eq!(
        value(&r)["path"].as_str(),
        f.root.join("inside.txt").to_str()
    );
}

#[tokio::test]
async fn hard_links_to_files_outside_are_refused() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");
    let link = f.root.join("hard.txt");
    std::fs::hard_link(&secret, &link).unwrap();
    for (tool, args) in [
        ("read", r#"{"file_path":"hard.txt"}"#),
        (
            "edit",
            r#"{"file_path":"hard.txt","old_string":"secret","new_string":"changed"}"#,
        ),
        ("write", r#"{"file_path":"hard.txt","content":"x"}"#),
    ] {
        let r = f.host.call("c", tool, args).await;
        let (code, message) = failure(&r);
        assert_eq!(code, Some("FS_OUTSIDE_ROOT"), "{tool}: {message}");
        assert!(message.contains("2 hard links"), "{message}");
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "secret\n");
    let r = f.host.call("c", "grep", r#"{"pattern":"secret"}"#).await;
    assert_eq!(value(&r)["matches"], support::v("[]"));
}

/// A directory inside the root is swapped for a symbolic link to a directory outside, and
/// back, as fast as possible, while the tools run: the guard may check the directory and the
/// tool then meet the link. Nothing from outside may come back, and nothing may be written
/// there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_racing_symlink_swap_leaks_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let f = fixture();
    let sub = f.root.join("sub");
    write(&sub.join("f.txt"), "inside\n");
    write(&f.outside.join("f.txt"), "SECRET\n");
    write(&f.outside.join("only-outside.txt"), "SECRET\n");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, root, outside) = (stop.clone(), f.root.clone(), f.outside.clone());
        std::thread::spawn(move || {
            let (sub, hold) = (root.join("sub"), root.join("hold"));
            let mut swaps = 0u64;
            // A `write` may create `sub` as a directory while it is missing: clear that away
            // (retrying, since a write may add to it meanwhile).
            let clear = |path: &Path| match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => {
                    let _ = std::fs::remove_dir_all(path);
                }
                Ok(_) => {
                    let _ = std::fs::remove_file(path);
                }
                Err(_) => {}
            };
            while !stop.load(Ordering::Relaxed) {
                if std::fs::rename(&sub, &hold).is_err() {
                    continue;
                }
                clear(&sub);
                let _ = std::os::unix::fs::symlink(&outside, &sub);
                std::thread::sleep(std::time::Duration::from_micros(50));
                loop {
                    clear(&sub);
                    if std::fs::rename(&hold, &sub).is_ok() {
                        break;
                    }
                }
                swaps += 1;
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            swaps
        })
    };
    let mut successes = 0;
    for i in 0..2000 {
        let (tool, args) = match i % 5 {
            0..=2 => ("read", r#"{"file_path":"sub/f.txt"}"#.to_string()),
            3 if i % 10 == 3 => ("grep", r#"{"pattern":"SECRET|inside"}"#.to_string()),
            3 => ("glob", r#"{"pattern":"*.txt"}"#.to_string()),
            _ => (
                "write",
                r#"{"file_path":"sub/new.txt","content":"x"}"#.to_string(),
            ),
        };
        let r = f.host.call("c", tool, &args).await;
        if let Some(v) = r.value() {
            successes += 1;
            let text = v.to_string();
            assert!(!text.contains("SECRET"), "{tool} leaked: {text}");
            assert!(!text.contains("only-outside"), "{tool} leaked: {text}");
        }
        assert!(!r.text().contains("SECRET"), "{tool} leaked: {}", r.text());
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 10, "the swapper barely ran ({swaps} swaps)");
    assert!(
        successes > 0,
        "no call succeeded: the race never let one through"
    );
    let outside: Vec<_> = std::fs::read_dir(&f.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("new"))
        .collect();
    assert!(outside.is_empty(), "writes landed outside: {outside:?}");
}

#[cfg(unix)]
#[tokio::test]
async fn symbolic_links_are_followed() {
    use std::os::unix::fs::symlink;
    let f = fixture();
    let secret = f.outside.join("secret.txt");

    // A link to a file outside.
    let link = f.root.join("link.txt");
    symlink(&secret, &link).unwrap();
    let r = f
        .host
        .call("c", "read", &format!(r#"{{"file_path":{}}}"#, q(&link)))
        .await;
    assert_eq!(
        failure(&r).1,
        denial(&f.root, link.to_str().unwrap(), &secret)
    );

    // A link to a directory outside, used as a path prefix.
    let dir_link = f.root.join("out");
    symlink(&f.outside, &dir_link).unwrap();
    let through = dir_link.join("secret.txt");
    let r = f
        .host
        .call("c", "read", &format!(r#"{{"file_path":{}}}"#, q(&through)))
        .await;
    assert_eq!(
        failure(&r).1,
        denial(&f.root, through.to_str().unwrap(), &secret)
    );

    // A dangling link whose target is outside: writing through it would create the file
    // there.
    let dangling = f.root.join("dangling");
    let target = f.outside.join("created-by-write.txt");
    symlink(&target, &dangling).unwrap();
    let r = f
        .host
        .call(
            "c",
            "write",
            &format!(r#"{{"file_path":{},"content":"x"}}"#, q(&dangling)),
        )
        .await;
    assert_eq!(
        failure(&r).1,
        denial(&f.root, dangling.to_str().unwrap(), &target)
    );
    assert!(!target.exists());

    // A relative link that stays inside is fine.
    symlink("inside.txt", f.root.join("alias.txt")).unwrap();
    let r = f
        .host
        .call(
            "c",
            "read",
            &format!(r#"{{"file_path":{}}}"#, q(&f.root.join("alias.txt"))),
        )
        .await;
    assert!(r.is_success(), "{r:?}");

    // A link loop is an error, not a hang.
    symlink(f.root.join("loop-b"), f.root.join("loop-a")).unwrap();
    symlink(f.root.join("loop-a"), f.root.join("loop-b")).unwrap();
    let err = resolve(&f.root, Path::new("loop-a/x")).unwrap_err();
    assert_eq!(err, "too many levels of symbolic links");
    let err = check_within(&f.root, &f.root, "loop-a").unwrap_err();
    assert_eq!(
        err,
        "cannot resolve path \"loop-a\": too many levels of symbolic links"
    );
}

#[test]
fn the_root_must_be_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    match Host::new(&missing) {
        Err(e @ HostError::Root { .. }) => {
            assert!(
                e.to_string()
                    .starts_with(&format!("invalid root {}: ", missing.display())),
                "{e}"
            );
            // The cause is chained: the io error, as `source()`.
            let source = std::error::Error::source(&e).expect("a source");
            let io = source
                .downcast_ref::<std::io::Error>()
                .expect("an io error");
            assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    let file = dir.path().join("file");
    write(&file, "");
    assert!(matches!(Host::new(&file), Err(HostError::Root { .. })));
}

#[test]
fn the_host_publishes_the_reference_tools() {
    let f = fixture();
    let names: Vec<String> = f
        .host
        .registry()
        .view()
        .names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    for name in ["read", "write", "edit", "grep", "glob"] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    assert_eq!(f.host.root(), f.root);
}

#[tokio::test]
async fn a_denial_does_not_say_where_an_outside_link_points() {
    let f = fixture();
    let token = "api-token-3f9c1d77e2";
    let target = format!("/nonexistent/{token}/key");
    std::os::unix::fs::symlink(&target, f.root.join("creds")).unwrap();
    for args in [
        r#"{"file_path":"creds"}"#.to_string(),
        r#"{"file_path":"creds/deeper.txt"}"#.to_string(),
    ] {
        let r = f.host.call("c", "read", &args).await;
        let (_, message) = failure(&r);
        assert!(message.contains("leads outside the root"), "{message}");
        assert!(
            !message.contains(token),
            "the link's target is echoed: {message}"
        );
        assert!(!message.contains("/nonexistent"), "{message}");
    }
    // The targets of /proc/self/fd entries are not echoed either.
    let file = std::fs::File::open(f.outside.join("secret.txt")).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let r = f
        .host
        .call(
            "c",
            "read",
            &format!(r#"{{"file_path":"/proc/self/fd/{fd}"}}"#),
        )
        .await;
    let (_, message) = failure(&r);
    assert!(message.contains("leads outside the root"), "{message}");
    assert!(
        !message.contains("secret.txt"),
        "the fd's target is echoed: {message}"
    );
    assert!(
        !message.contains(f.outside.to_str().unwrap()),
        "the fd's target is echoed: {message}"
    );
    drop(file);
    // The tools themselves (without the guard) do not say it either.
    let tools = support::Tools::confined(&f.root);
    let r = tools.call("read", r#"{"file_path":"creds"}"#).await;
    let (_, message) = failure(&r);
    assert!(!message.contains(token), "{message}");
}

#[tokio::test]
async fn an_overlong_path_is_refused_naming_the_limit() {
    let f = fixture();
    // 2 MB of components: refused before it is resolved (resolving it component by
    // component used to take minutes).
    let long = "a/".repeat(1_000_000);
    let args = format!(r#"{{"file_path":"{long}"}}"#);
    let r = f.host.call("c", "read", &args).await;
    let (_, message) = failure(&r);
    assert!(
        message.contains("over the limit of 4096 bytes"),
        "{}",
        &message[..message.len().min(300)]
    );
    // The tools refuse it with their own code (no guard in front of them here).
    let tools = support::Tools::confined(&f.root);
    for (tool, args) in [
        ("read", format!(r#"{{"file_path":"{long}"}}"#)),
        (
            "write",
            format!(r#"{{"file_path":"{long}","content":"x"}}"#),
        ),
        ("grep", format!(r#"{{"pattern":"x","path":"{long}"}}"#)),
    ] {
        let r = tools.call(tool, &args).await;
        let (code, message) = failure(&r);
        assert_eq!(code, Some("FS_PATH_TOO_LONG"), "{tool}");
        assert!(message.contains("over the limit of 4096 bytes"), "{tool}");
    }
    // Many short components: the component limit.
    let many = "./".repeat(1500);
    let r = tools
        .call("read", &format!(r#"{{"file_path":"{many}inside.txt"}}"#))
        .await;
    let (code, message) = failure(&r);
    assert_eq!(code, Some("FS_PATH_TOO_LONG"));
    assert!(
        message.contains("1501 components, over the limit of 1024"),
        "{message}"
    );
    // Resolution stays correct below the limits: a path through a missing directory and
    // back up reaches a real link again.
    std::os::unix::fs::symlink(&f.outside, f.root.join("out")).unwrap();
    let resolved = resolve(&f.root, Path::new("missing/x/../../out/secret.txt")).unwrap();
    assert_eq!(resolved, f.outside.join("secret.txt"));
    assert!(check_within(&f.root, &f.root, "missing/x/../../out/secret.txt").is_err());
}

// ---- spill files ---------------------------------------------------------------------------

#[tokio::test]
async fn the_spill_directory_is_private_and_removed_with_the_host() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = fixture();
    let spill_dir = f.host.spill_dir().to_path_buf();
    let mode = std::fs::metadata(&spill_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", spill_dir.display());
    // 200 000 bytes of stdout: more than a result keeps, so it spills.
    let r = f
        .host
        .call(
            "c",
            "bash",
            r#"{"command":"head -c 200000 /dev/zero | tr '\\0' a","description":"Long"}"#,
        )
        .await;
    let spill = value(&r)["stdout"]["spillPath"]
        .as_str()
        .unwrap_or_else(|| panic!("no spill file: {r:?}"))
        .to_string();
    assert!(Path::new(&spill).starts_with(&spill_dir), "{spill}");
    assert_eq!(std::fs::metadata(&spill).unwrap().len(), 200_000);
    let file_mode = std::fs::metadata(&spill).unwrap().permissions().mode() & 0o777;
    assert_eq!(file_mode, 0o600);
    f.host.shutdown().await;
    assert!(
        !Path::new(&spill).exists(),
        "the spill file outlived the host"
    );
    assert!(!spill_dir.exists(), "the spill directory outlived the host");
}

#[tokio::test]
async fn spill_bytes_are_capped_per_session() {
    use dsh_tools::bash::BashConfig;
    use dsh_tools::process::SpillBudget;
    let dir = tempfile::tempdir().unwrap();
    let jobs = dsh_runtime::jobs::JobRuntime::new();
    let registry = dsh_runtime::Registry::builder().jobs(jobs.clone()).build();
    let budget = SpillBudget::new(100_000);
    let config = BashConfig::default()
        .with_spill_dir(dir.path())
        .with_max_output_bytes(1000)
        .with_spill_budget(budget.clone());
    let _regs = dsh_tools::bash::register_with(&registry, config).unwrap();
    let long = r#"{"command":"head -c 80000 /dev/zero | tr '\\0' a","description":"Long"}"#;
    let mut results = Vec::new();
    for n in 0..3 {
        let r = registry
            .execute(dsh_runtime::ToolCall::new(format!("c{n}"), "bash", long))
            .await;
        results.push(r);
    }
    // The first spills whole, the second gets what is left and says it was cut, the
    // third gets no file.
    let stdout = |r: &dsh_runtime::ToolResult| value(r)["stdout"].clone();
    let first = stdout(&results[0]);
    let path = first["spillPath"]
        .as_str()
        .expect("first spill")
        .to_string();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 80_000);
    assert!(first["spillTruncated"].is_null(), "{first}");
    let second = stdout(&results[1]);
    let path = second["spillPath"]
        .as_str()
        .expect("second spill")
        .to_string();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 20_000);
    assert_eq!(second["spillTruncated"].as_bool(), Some(true), "{second}");
    assert!(
        results[1]
            .text()
            .contains("[output truncated; the first part is in: "),
        "{}",
        results[1].text()
    );
    let third = stdout(&results[2]);
    assert!(third["spillPath"].is_null(), "{third}");
    assert_eq!(budget.remaining(), 0);
    let total: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert_eq!(total, 100_000, "spill bytes on disk");
    jobs.shutdown().await;
}

#[tokio::test]
async fn the_default_private_spill_directory_is_0700() {
    use std::os::unix::fs::PermissionsExt as _;
    // Without a spill directory configured, `bash` makes a private one on first use.
    let jobs = dsh_runtime::jobs::JobRuntime::new();
    let registry = dsh_runtime::Registry::builder().jobs(jobs.clone()).build();
    let config = dsh_tools::bash::BashConfig::default().with_max_output_bytes(1000);
    let _regs = dsh_tools::bash::register_with(&registry, config).unwrap();
    let r = registry
        .execute(dsh_runtime::ToolCall::new(
            "c",
            "bash",
            r#"{"command":"head -c 5000 /dev/zero | tr '\\0' a","description":"Long"}"#,
        ))
        .await;
    let spill = value(&r)["stdout"]["spillPath"]
        .as_str()
        .unwrap_or_else(|| panic!("no spill file: {r:?}"))
        .to_string();
    let dir = Path::new(&spill).parent().unwrap();
    let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", dir.display());
    jobs.shutdown().await;
}
