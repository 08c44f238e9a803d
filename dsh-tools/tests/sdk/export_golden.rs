//! What a model is shown of the reference tools, in every format, checked in under
//! `tests/golden/` and reviewed once: a change in any provider's view shows up in review.
//! Every export also passes its provider's checker.
//!
//! Regenerate after an intended change with
//!
//!     UPDATE_GOLDEN=1 cargo test -p dsh-tools --test sdk export_golden
//!
//! and review the diff.

use crate::sdk_check;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use dsh_code::sdk::{python, typescript};
use dsh_providers::export::{self, Target, check};
use dsh_tools::host::Host;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn host_definitions() -> Vec<dsh_runtime::ToolDefinition> {
    let host = Host::new(env!("CARGO_MANIFEST_DIR")).expect("host");
    host.registry().view().definitions()
}

/// Compare `text` with the golden file `name` (or write it under `UPDATE_GOLDEN=1`).
fn golden(name: &str, text: &str, stale: &mut Vec<String>) {
    let path = golden_dir().join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).expect("golden dir");
        std::fs::write(&path, text).expect("write golden");
        return;
    }
    match std::fs::read_to_string(&path) {
        Ok(old) if old == text => {}
        Ok(_) => stale.push(format!("{name} differs")),
        Err(e) => stale.push(format!("{name}: {e}")),
    }
}

#[test]
fn reference_tools_in_every_format() {
    let defs = host_definitions();
    let mut stale = Vec::new();
    let mut report = String::new();
    for target in Target::ALL {
        let e = export::export(&defs, target);
        golden(
            &format!("export-{}.json", target.name()),
            &e.to_pretty_string(),
            &mut stale,
        );
        let _ = writeln!(report, "## {target}\n");
        for w in &e.warnings {
            let _ = writeln!(report, "warning: {w}");
        }
        for err in &e.errors {
            let _ = writeln!(report, "error: {err}");
        }
        if e.warnings.is_empty() && e.errors.is_empty() {
            report.push_str("(nothing lost)\n");
        }
        report.push('\n');
    }
    golden("export-warnings.txt", &report, &mut stale);
    golden(
        "portability.md",
        &export::portability(&defs, &Target::ALL).to_string(),
        &mut stale,
    );
    let ts = typescript::render(&defs);
    let py = python::render(&defs);
    golden(
        "sdk.ts.md",
        &format!("{}\n", ts.prompt_section()),
        &mut stale,
    );
    golden(
        "sdk.py.md",
        &format!("{}\n", py.prompt_section()),
        &mut stale,
    );
    assert!(
        stale.is_empty(),
        "golden files are stale: {stale:?}\nRegenerate with `UPDATE_GOLDEN=1 cargo test -p dsh-tools --test sdk export_golden` and review the diff."
    );
}

/// Every reference tool exports to every provider (the strict forms included), and the
/// SDKs render them without degrading anything.
#[test]
fn reference_tools_export_everywhere() {
    let defs = host_definitions();
    for target in Target::ALL {
        let e = export::export(&defs, target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        assert_eq!(e.tools.len(), defs.len());
    }
    assert!(typescript::render(&defs).warnings.is_empty());
    assert!(python::render(&defs).warnings.is_empty());
}

/// The checker of every provider passes on everything exported, for every tool in the
/// repository's reference set and the test tools with other shapes.
#[test]
fn every_export_passes_its_checker() {
    let mut defs = sdk_check::definitions();
    defs.extend(host_definitions().into_iter().map(|mut d| {
        // The same tools under other names, so the set also exercises budgets.
        d.name = format!("{}_again", d.name).into();
        d
    }));
    for target in Target::ALL {
        let e = export::export(&defs, target);
        let problems = check::check(target, &e.fragment());
        if target == Target::AnthropicStrict {
            // The set is over the per-request budget: exporter and checker agree on it.
            let budgets: Vec<&str> = problems.iter().map(String::as_str).collect();
            assert_eq!(
                budgets,
                ["request: 26 optional properties (at most 24 per request)"]
            );
            let request: Vec<&str> = e
                .errors
                .iter()
                .filter(|e| e.tool.is_none())
                .map(|e| e.reason.as_str())
                .collect();
            assert_eq!(request.len(), 1, "{request:?}");
            assert!(
                request[0].starts_with("26 optional properties"),
                "{request:?}"
            );
        } else {
            assert!(problems.is_empty(), "{target}: {problems:#?}");
        }
        // One by one too (the request budgets then never apply).
        for def in &defs {
            let one = export::export(std::slice::from_ref(def), target);
            let problems = check::check(target, &one.fragment());
            assert!(problems.is_empty(), "{target} {}: {problems:#?}", def.name);
        }
    }
}

/// Byte-identical output for an unchanged tool set, across fresh hosts.
#[test]
fn exports_are_byte_stable() {
    for target in Target::ALL {
        let a = export::export(&host_definitions(), target).to_pretty_string();
        let b = export::export(&host_definitions(), target).to_pretty_string();
        assert_eq!(a, b, "{target}");
    }
}
