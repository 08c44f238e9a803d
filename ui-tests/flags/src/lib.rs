//! `rustc_flags!()`: the flags the ui harness needs to compile its cases against the
//! very artifacts Cargo linked the harness with.
//!
//! Why a proc macro: a proc macro runs inside the rustc process compiling its caller, so
//! `std::env::args()` there is that rustc's command line, with Cargo's exact
//! `--extern name=path` and `-L dependency=dir` flags. Those name the artifacts of the
//! current build (its profile, features and hashes), so a case compiles against the
//! workspace's own build instead of a second copy of every dependency (which is what
//! `trybuild` does: a target directory, rustflags and feature set of its own). Picking
//! `libdsh_runtime-*.rlib` by name would not work: a target directory holds one per
//! feature set and profile that was ever built.

use proc_macro::TokenStream;

/// Expands to `(driver, flags): (&str, &[&str])`: the compiler executable running this
/// macro, and the `--edition`, `--extern`, `-L` and `-C linker` flags of its command line.
#[proc_macro]
pub fn rustc_flags(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return r#"::core::compile_error!("`rustc_flags!()` takes no input")"#
            .parse()
            .unwrap_or_default();
    }
    let args = expand_argfiles(std::env::args().skip(1));
    let flags = dependency_flags(&args);
    let driver = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "rustc".to_string());
    let list: Vec<String> = flags.iter().map(|f| format!("{f:?}")).collect();
    format!("({driver:?}, &[{}] as &[&str])", list.join(", "))
        .parse()
        .unwrap_or_default()
}

/// Cargo passes the arguments in an `@file` when the command line is too long.
fn expand_argfiles(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    for arg in args {
        match arg.strip_prefix('@') {
            Some(path) => match std::fs::read_to_string(path) {
                Ok(text) => out.extend(text.lines().map(str::to_string)),
                Err(_) => out.push(arg),
            },
            None => out.push(arg),
        }
    }
    out
}

/// The flags that select dependencies and how to link them, each as one argument
/// (`--extern=x=y`, `-Ldependency=dir`, `--edition=2024`, `-Clinker=cc`), from either
/// spelling rustc accepts.
fn dependency_flags(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let a = arg.as_str();
        if a == "--extern" || a == "--edition" {
            if let Some(value) = it.next() {
                out.push(format!("{a}={value}"));
            }
        } else if a == "-L" {
            if let Some(value) = it.next() {
                out.push(format!("-L{value}"));
            }
        } else if a.starts_with("--extern=") || a.starts_with("--edition=") || a.starts_with("-L") {
            out.push(arg.clone());
        } else if a == "-C"
            && let Some(value) = it.clone().next()
            && value.starts_with("linker=")
        {
            out.push(format!("-Clinker={}", &value["linker=".len()..]));
            it.next();
        } else if let Some(linker) = a.strip_prefix("-Clinker=") {
            out.push(format!("-Clinker={linker}"));
        }
    }
    out
}
