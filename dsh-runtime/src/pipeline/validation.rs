//! A call's arguments and a tool's output against the tool's definition: its schemas in
//! the vocabulary, then the JSON Schema document it publishes as written, if any. Here,
//! above both `validate` and the tool definition, so that neither depends on the other.

use std::borrow::Cow;

use crate::json::Value;
use crate::validate::{ToolArgsError, Violations, validate_arguments, validate_output};

/// Validate a call's arguments against a tool's definition: its parameter schema, then,
/// for a tool that publishes its own JSON Schema
/// ([`ToolDefinition::verbatim_parameters`](crate::ToolDefinition::verbatim_parameters)),
/// that document. Returns what the body reads (nulls meaning "omitted" and ignored keys
/// removed).
pub(crate) fn validate_call<'v>(
    def: &crate::tool::ToolDefinition,
    args: &'v Value,
) -> Result<Cow<'v, Value>, ToolArgsError> {
    let params = &def.parameters;
    let normalized = validate_arguments(params, args)?.normalized(params, args);
    match &def.verbatim_parameters {
        None => Ok(normalized),
        Some(schema) => match schema.check_arguments(&normalized) {
            Ok(None) => Ok(normalized),
            Ok(Some(stripped)) => Ok(Cow::Owned(stripped)),
            Err(violations) => Err(ToolArgsError::from(violations)),
        },
    }
}

/// Validate a tool's output against its definition: [`validate_output`] on its output
/// schema, then the verbatim document when there is one
/// ([`ToolDefinition::verbatim_output`](crate::ToolDefinition::verbatim_output)).
pub(crate) fn validate_definition_output(
    def: &crate::tool::ToolDefinition,
    value: Value,
) -> Result<Value, Violations> {
    let value = validate_output(&def.output, value)?;
    match &def.verbatim_output {
        None => Ok(value),
        Some(schema) => schema.check_output(&value).map(|()| value),
    }
}
