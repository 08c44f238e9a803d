//! Typed elicitation forms (`ToolContext::elicit`, `dsh_runtime::caller::form_schema`),
//! grouped in one test binary: the form each Rust shape derives, the answers read back,
//! properties against MCP's `requestedSchema` definition (the `jsonschema` crate as the
//! oracle, `mcp_requested_schema_2025_11_25.json` as the definition), and calls that
//! ask through `Registry::execute`. The compile errors of types outside the form subset
//! are ui cases (`ui-tests/tests/ui/derive/form_*.rs`).

mod forms_answers;
mod forms_e2e;
mod forms_property;
mod forms_shapes;

// Shared helpers.
mod forms_support;
