//! The host's root guard, in process: paths inside the root pass, `..`, absolute paths
//! and symbolic links that lead outside are denied with a reason naming path and root.

mod support;

use std::path::Path;

use dsh_tools::host::{Host, HostError, check_within, resolve};
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

fn denial(root: &Path, given: &str, resolved: &Path) -> String {
    format!(
        "path {given:?} is outside the root {} (it resolves to {})",
        root.display(),
        resolved.display()
    )
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
    assert_eq!(value(&r)["total"].as_u64(), Some(2));
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
            None,
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
        (None, denial(&f.root, &sneaky, &secret).as_str())
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
async fn an_omitted_search_path_is_the_working_directory() {
    let f = fixture();
    // This test process runs in the crate directory, which is not under the root.
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    let r = f.host.call("c", "glob", r#"{"pattern":"*"}"#).await;
    assert_eq!(failure(&r).1, denial(&f.root, ".", &cwd));
    let r = f
        .host
        .call("c", "grep", r#"{"pattern":"x","path":null}"#)
        .await;
    assert_eq!(failure(&r).1, denial(&f.root, ".", &cwd));
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
        Err(e @ HostError::Root { .. }) => assert!(
            e.to_string()
                .starts_with(&format!("invalid root {}: ", missing.display())),
            "{e}"
        ),
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
