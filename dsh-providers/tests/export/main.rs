//! Integration tests of `dsh-providers`, grouped in one test binary (one link instead of one per file).

mod content_blocks;
mod export_defer;
mod export_examples;
mod export_props;
mod export_rules;
mod export_verbatim;
mod optional_output;
mod output_agreement;
mod portable_agreement;
mod round_trip;
mod tool_search;

// The 1,000-tool set shared with the `tool_search` benchmark.
#[path = "../../../dsh-runtime/tests/common/generated_tools.rs"]
mod generated_tools;
// Random-schema generators shared with the other grouped test binary.
#[path = "../../../dsh-runtime/tests/common/random_json_schema.rs"]
mod random_json_schema;
#[path = "../../../dsh-runtime/tests/common/random_schema.rs"]
mod random_schema;
