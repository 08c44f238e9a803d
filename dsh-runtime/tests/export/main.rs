//! Integration tests of `dsh-runtime`, grouped in one test binary (one link instead of one per file).

mod export_props;
mod export_rules;
