//! TypeScript type stripping: erasable syntax only, positions preserved.
//!
//! The program is wrapped as the body of an async arrow function on the *same* first
//! line ([`PREFIX`]), so the stripped output keeps every line of the model's code where
//! it was: types are blanked with spaces, never removed. Diagnostics are reported as
//! `<line>:<column>: <message>` in the model's own coordinates (1-based), with the
//! wrapper's columns taken off the first line.
//!
//! Syntax that needs code generation (`enum`, runtime `namespace`, parameter
//! properties, `import x = require(...)`, angle-bracket casts) is rejected with the
//! stripper's own message.

use std::sync::{Arc, Mutex};

use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::sync::Lrc;
use swc_common::{GLOBALS, Globals, SourceMap};
use swc_ts_fast_strip::{Mode, Options, operate};

/// What goes before the program on its first line.
pub(crate) const PREFIX: &str = "(async () => {";
/// What goes after the program, on a line of its own (a trailing `//` comment in the
/// program cannot swallow it).
pub(crate) const SUFFIX: &str = "\n})()";

/// The wrapped, type-stripped program, ready to evaluate as a script.
pub(crate) fn strip(program: &str) -> Result<String, String> {
    let wrapped = format!("{PREFIX}{program}{SUFFIX}");
    let cm: Lrc<SourceMap> = Lrc::default();
    let found = Arc::new(Mutex::new(Vec::new()));
    let emitter = Collect {
        cm: cm.clone(),
        found: found.clone(),
        last_line: program.lines().count().max(1),
    };
    let handler = Handler::with_emitter(false, false, Box::new(emitter));
    let options = Options {
        module: Some(false),
        mode: Mode::StripOnly,
        ..Default::default()
    };
    let out = GLOBALS.set(&Globals::new(), || operate(&cm, &handler, wrapped, options));
    match out {
        Ok(output) => Ok(output.code),
        Err(e) => {
            let found = std::mem::take(&mut *found.lock().unwrap_or_else(|p| p.into_inner()));
            if found.is_empty() {
                Err(e.message)
            } else {
                Err(found.join("\n"))
            }
        }
    }
}

/// Collects diagnostics as `<line>:<column>: <message>` in program coordinates.
struct Collect {
    cm: Lrc<SourceMap>,
    found: Arc<Mutex<Vec<String>>>,
    /// The program's last line (positions in the wrapper's suffix are clamped to it).
    last_line: usize,
}

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let message = db.message();
        let place = db
            .span
            .primary_span()
            .and_then(|span| self.cm.try_lookup_char_pos(span.lo).ok())
            .map(|loc| {
                let mut col = loc.col.0 + 1;
                if loc.line == 1 {
                    col = col.saturating_sub(PREFIX.chars().count()).max(1);
                }
                (loc.line.min(self.last_line), col)
            });
        let text = match place {
            Some((line, col)) => format!("{line}:{col}: {message}"),
            None => message,
        };
        self.found
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_blanked_in_place() {
        let out = strip("const x: number = 1;\nreturn x as number;").unwrap();
        assert!(out.starts_with(PREFIX));
        let body: Vec<&str> = out.lines().collect();
        assert_eq!(body[0].trim_end(), "(async () => {const x         = 1;");
        assert_eq!(body[1].trim_end(), "return x          ;");
        assert_eq!(body.len(), 3);
    }

    #[test]
    fn enum_is_rejected_at_the_models_line() {
        let err = strip("const a = 1;\nenum E { A }\nreturn a;").unwrap_err();
        assert!(err.starts_with("2:1: "), "{err}");
        assert!(err.contains("enum"), "{err}");
    }

    #[test]
    fn first_line_columns_exclude_the_wrapper() {
        let err = strip("const = 5;").unwrap_err();
        assert!(err.starts_with("1:"), "{err}");
        let col: usize = err.split(':').nth(1).unwrap().parse().unwrap();
        assert!((5..=7).contains(&col), "{err}");
    }
}
