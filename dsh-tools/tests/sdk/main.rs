//! Integration tests of `dsh-tools`, grouped in one test binary (one link instead of one per file).

mod export_golden;
mod sdk_python;
mod sdk_typescript;

// Shared helpers.
mod sdk_check;
