//! Integration tests of `dsh-runtime`, grouped in one test binary (one link instead of one per file).

mod derive_agreement;
mod derive_schemas;
mod fuzz_replay;
mod serde_defaults;
mod tool_macro;
mod tool_param_attrs;
mod tool_reader_agreement;
mod validate_agreement;
mod validate_bounds;
mod verbatim;
mod verbatim_agreement;
mod vocabulary;

// Shared helpers.
mod derive_support;

// Random-schema generators shared with the other grouped test binary.
#[path = "../common/random_json_schema.rs"]
mod random_json_schema;
#[path = "../common/random_schema.rs"]
mod random_schema;
