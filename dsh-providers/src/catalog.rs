//! Documentation generated from tool definitions: a Markdown catalog of a registry's
//! tools, from their doc comments (descriptions), parameter and output schemas, and
//! annotations.
//!
//! The output depends only on the definitions, in publication order, so it is stable
//! enough to check in (the `dsh-tools` crate keeps its `TOOLS.md` in sync by a test).
//! [`context_markdown`] does the same for a server's resources and prompts.

use std::fmt::Write as _;

use dsh_runtime::json::Value;
use dsh_runtime::schema::{Additional, Kind, Property, Schema};
use dsh_runtime::{Registry, ToolDefinition};

/// The catalog of every tool `registry` publishes to the global view, in publication order.
///
/// `regenerate`, when given, is the command that regenerates a checked-in copy; the
/// catalog's header names it.
pub fn markdown(registry: &Registry, regenerate: Option<&str>) -> String {
    let definitions: Vec<ToolDefinition> = registry.view().definitions();
    markdown_of(&definitions, regenerate)
}

/// The catalog of these definitions, in the order given (see [`markdown`]).
pub fn markdown_of(definitions: &[ToolDefinition], regenerate: Option<&str>) -> String {
    let mut out = String::new();
    out.push_str("# Tool catalog\n\n");
    match regenerate {
        Some(command) => {
            let _ = writeln!(
                out,
                "<!-- Generated from the tool definitions; do not edit by hand.\n     Regenerate from the repository root with:\n     {command} -->\n"
            );
        }
        None => {
            out.push_str("<!-- Generated from the tool definitions; do not edit by hand. -->\n\n")
        }
    }
    out.push_str("| tool | summary | annotations |\n| --- | --- | --- |\n");
    for def in definitions {
        let _ = writeln!(
            out,
            "| [`{name}`](#{name}) | {summary} | {annotations} |",
            name = def.name,
            summary = cell(first_paragraph(&def.description)),
            annotations = cell(&annotations(def)),
        );
    }
    for def in definitions {
        out.push('\n');
        tool_section(&mut out, def);
    }
    out
}

fn tool_section(out: &mut String, def: &ToolDefinition) {
    let _ = writeln!(out, "## {}\n", def.name);
    if let Some(title) = &def.title {
        let _ = writeln!(out, "*{title}*\n");
    }
    let _ = writeln!(out, "{}\n", def.description.trim());
    let mut facts = vec![format!("**Annotations:** {}", annotations(def))];
    if let Some(ms) = def.timeout_ms {
        facts.push(format!("**Timeout:** {ms} ms"));
    }
    let _ = writeln!(out, "{}\n", facts.join(" · "));

    out.push_str("### Parameters\n\n");
    if let Some(schema) = &def.verbatim_parameters {
        verbatim_section(out, schema.as_value(), "name", "Parameter JSON schema");
    } else {
        parameters_section(out, def);
    }

    out.push_str("### Output\n\n");
    if let Some(schema) = &def.verbatim_output {
        let root = schema.as_value();
        let what = root
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        let _ = writeln!(
            out,
            "`{}`{}{what}\n",
            verbatim_type_text(root).replace('`', "'"),
            if what.is_empty() { "" } else { ": " }
        );
        verbatim_section(out, root, "field", "Output JSON schema");
        return;
    }
    output_section(out, def);
}

/// The parameters of a vocabulary schema: a table of the root's properties.
fn parameters_section(out: &mut String, def: &ToolDefinition) {
    match def.parameters.as_object() {
        Some(rules) if !rules.properties.is_empty() => {
            out.push_str("| name | type | required | description |\n| --- | --- | --- | --- |\n");
            for p in &rules.properties {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    p.name,
                    cell(&type_text(&p.schema)),
                    if p.required { "yes" } else { "no" },
                    cell(description(p)),
                );
            }
            match rules.additional {
                Additional::Open => {
                    out.push_str("\nOther keys are accepted and passed to the tool.\n");
                }
                Additional::Ignored => {
                    out.push_str("\nOther keys are ignored, and the result names them.\n");
                }
                _ => {}
            }
            out.push('\n');
        }
        _ => out.push_str("None.\n\n"),
    }
}

/// The output of a vocabulary schema: its type, the root's fields, the JSON Schema.
fn output_section(out: &mut String, def: &ToolDefinition) {
    let what = def.output.description.as_deref().unwrap_or("").trim();
    let _ = writeln!(
        out,
        "`{}`{}{what}\n",
        type_text(&def.output).replace('`', "'"),
        if what.is_empty() { "" } else { ": " }
    );
    match def.output.as_object() {
        Some(rules) if !rules.properties.is_empty() => {
            out.push_str("| field | type | required | description |\n| --- | --- | --- | --- |\n");
            for p in &rules.properties {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    p.name,
                    cell(&type_text(&p.schema)),
                    if p.required { "yes" } else { "no" },
                    cell(description(p)),
                );
            }
            out.push('\n');
        }
        _ => {}
    }
    let schema = serde_json::to_string_pretty(&def.output.to_json_schema())
        .unwrap_or_else(|e| format!("(the output schema cannot be printed: {e})"));
    let _ = writeln!(
        out,
        "<details><summary>Output JSON schema</summary>\n\n```json\n{schema}\n```\n\n</details>"
    );
}

/// A verbatim JSON Schema document (a tool that publishes its own): the root's
/// properties as a table (`column` names the first column), then the document as
/// written.
fn verbatim_section(out: &mut String, root: &Value, column: &str, summary: &str) {
    let required: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match root.get("properties").and_then(Value::as_object) {
        Some(props) if !props.is_empty() => {
            let _ = writeln!(
                out,
                "| {column} | type | required | description |\n| --- | --- | --- | --- |"
            );
            for (name, schema) in props.iter() {
                let name: &str = name;
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    name,
                    cell(&verbatim_type_text(schema)),
                    if required.contains(&name) {
                        "yes"
                    } else {
                        "no"
                    },
                    cell(
                        schema
                            .get("description")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                    ),
                );
            }
            out.push('\n');
        }
        _ if column == "name" => out.push_str("None declared.\n\n"),
        _ => {}
    }
    let text = serde_json::to_string_pretty(root)
        .unwrap_or_else(|e| format!("(the schema cannot be printed: {e})"));
    let _ = writeln!(
        out,
        "<details><summary>{summary}</summary>\n\n```json\n{text}\n```\n\n</details>"
    );
    if column == "name" {
        out.push('\n');
    }
}

/// A short type description of a JSON Schema node as written: its `type`, `enum` or
/// `const`, the reference it makes, or `schema` for anything else (the document, shown
/// in full, says the rest).
pub fn verbatim_type_text(schema: &Value) -> String {
    if let Some(c) = schema.get("const") {
        return c.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(r) = schema
        .get("$ref")
        .or_else(|| schema.get("$dynamicRef"))
        .and_then(Value::as_str)
    {
        return format!("`{r}`");
    }
    match (schema.get("type"), schema) {
        (Some(Value::String(t)), _) if t.as_ref() == "array" => {
            match schema.get("items").map(verbatim_type_text) {
                Some(items) if items != "schema" => format!("array of {}", grouped(&items)),
                _ => "array".to_string(),
            }
        }
        (Some(Value::String(t)), _) => t.to_string(),
        (Some(Value::Array(types)), _) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        (None, Value::Bool(true)) => "any JSON".to_string(),
        (None, Value::Bool(false)) => "nothing".to_string(),
        _ => "schema".to_string(),
    }
}

/// A short type description of a schema node: `string`, `integer (0..=255)`,
/// `array of string`, `"a" | "b"`, `object`, ...
pub fn type_text(schema: &Schema) -> String {
    if let Some(value) = &schema.const_value {
        return value.to_string();
    }
    if let Some(values) = &schema.enum_values {
        return values
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match &schema.kind {
        Kind::String(rules) => {
            let mut notes = Vec::new();
            match (rules.min_length, rules.max_length) {
                (None | Some(0), None) => {}
                (Some(1), None) => notes.push("non-empty".to_string()),
                (min, max) => notes.push(format!("length {}", range(min, max))),
            }
            if let Some(pattern) = &rules.pattern {
                notes.push(format!("matching `{}`", pattern.as_str()));
            }
            with_notes("string", &notes)
        }
        Kind::Integer(rules) => {
            let min = rules.minimum.filter(|&m| m > i128::from(i64::MIN));
            let max = rules
                .maximum
                .filter(|&m| m != i128::from(i64::MAX) && m != i128::from(u64::MAX));
            if min.is_none() && max.is_none() {
                "integer".to_string()
            } else {
                format!("integer ({})", range(min, max))
            }
        }
        Kind::Number(rules) => match (rules.minimum, rules.maximum) {
            (None, None) => "number".to_string(),
            (min, max) => format!("number ({})", range(min, max)),
        },
        Kind::Boolean => "boolean".to_string(),
        Kind::Null => "null".to_string(),
        Kind::Json => "any JSON".to_string(),
        Kind::Array(rules) => {
            let base = match &rules.items {
                Some(items) => format!("array of {}", grouped(&type_text(items))),
                None => "array".to_string(),
            };
            match (rules.min_items, rules.max_items) {
                (None | Some(0), None) => base,
                (min, max) => format!("{base} ({} items)", range(min, max)),
            }
        }
        Kind::Object(rules) => match &rules.additional {
            Additional::Schema(values) => format!("map of {}", grouped(&type_text(values))),
            _ => "object".to_string(),
        },
        Kind::OneOf(branches) => {
            let mut parts: Vec<String> = Vec::new();
            for branch in branches {
                let text = type_text(branch);
                if !parts.contains(&text) {
                    parts.push(text);
                }
            }
            parts.join(" | ")
        }
    }
}

/// `min..=max`, `min..` or `..=max`.
fn range<T: std::fmt::Display>(min: Option<T>, max: Option<T>) -> String {
    match (min, max) {
        (Some(min), Some(max)) => format!("{min}..={max}"),
        (Some(min), None) => format!("{min}.."),
        (None, Some(max)) => format!("..={max}"),
        (None, None) => "..".to_string(),
    }
}

fn with_notes(base: &str, notes: &[String]) -> String {
    if notes.is_empty() {
        base.to_string()
    } else {
        format!("{base} ({})", notes.join(", "))
    }
}

/// Parenthesize a union inside a larger type (`array of (string | null)`).
fn grouped(text: &str) -> String {
    if text.contains(" | ") {
        format!("({text})")
    } else {
        text.to_string()
    }
}

fn description(p: &Property) -> &str {
    p.schema.description.as_deref().unwrap_or("")
}

fn annotations(def: &ToolDefinition) -> String {
    let a = def.annotations;
    let names: Vec<&str> = [
        (a.read_only, "read-only"),
        (a.destructive, "destructive"),
        (a.idempotent, "idempotent"),
        (a.open_world, "open-world"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The catalog of a server's resources, resource templates and prompts (what
/// `dsh_mcp::McpServer::with_resources` and `with_prompts` serve), in registration
/// order: a table of each, with their descriptions, MIME types and prompt arguments.
///
/// ```
/// use dsh_providers::catalog;
/// use dsh_runtime::prompts::{Prompt, PromptArgument, Prompts};
/// use dsh_runtime::resources::{Resource, Resources};
///
/// let resources = Resources::new();
/// let _r = resources
///     .register(Resource::fixed("docs://readme", "readme", |_, _| async { Ok(vec![]) }).with_mime_type("text/markdown"))
///     .unwrap();
/// let prompts = Prompts::new();
/// let _p = prompts
///     .register(Prompt::new("review", |_| async { Ok(vec![]) }).with_argument(PromptArgument::required("file")))
///     .unwrap();
/// let md = catalog::context_markdown(&resources, &prompts);
/// assert!(md.contains("| `docs://readme` | readme | text/markdown |"));
/// assert!(md.contains("| `review` |  | `file` (required) |"));
/// ```
pub fn context_markdown(
    resources: &dsh_runtime::resources::Resources,
    prompts: &dsh_runtime::prompts::Prompts,
) -> String {
    let mut out = String::from(
        "# Resources\n\n| URI | name | MIME type | summary |\n| --- | --- | --- | --- |\n",
    );
    let row = |out: &mut String, info: &dsh_runtime::resources::ResourceInfo| {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            cell(&info.uri),
            cell(&info.name),
            cell(info.mime_type.as_deref().unwrap_or("")),
            cell(first_paragraph(info.description.as_deref().unwrap_or(""))),
        );
    };
    for info in resources.list() {
        row(&mut out, &info);
    }
    out.push_str("\n# Resource templates\n\n| URI template | name | MIME type | summary |\n| --- | --- | --- | --- |\n");
    for info in resources.templates() {
        row(&mut out, &info);
    }
    out.push_str("\n# Prompts\n\n| prompt | summary | arguments |\n| --- | --- | --- |\n");
    for info in prompts.list() {
        let arguments: Vec<String> = info
            .arguments
            .iter()
            .map(|a| {
                let required = if a.required { " (required)" } else { "" };
                match &a.description {
                    Some(d) => format!("`{}`{required}: {}", a.name, cell(d)),
                    None => format!("`{}`{required}", a.name),
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            cell(&info.name),
            cell(first_paragraph(info.description.as_deref().unwrap_or(""))),
            arguments.join("; "),
        );
    }
    out
}

fn first_paragraph(text: &str) -> &str {
    text.trim().split("\n\n").next().unwrap_or("")
}

/// Text fit for one Markdown table cell.
fn cell(text: &str) -> String {
    text.trim().replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_runtime::ToolSchema;
    use dsh_runtime::schema::{Bound, Pattern};
    use std::sync::Arc;

    #[test]
    fn type_texts() {
        assert_eq!(type_text(&String::schema()), "string");
        assert_eq!(type_text(&u8::schema()), "integer (0..=255)");
        assert_eq!(type_text(&u64::schema()), "integer (0..)");
        assert_eq!(type_text(&i64::schema()), "integer");
        assert_eq!(type_text(&Vec::<String>::schema()), "array of string");
        assert_eq!(type_text(&bool::schema()), "boolean");
        assert_eq!(type_text(&Schema::string_enum(["a", "b"])), r#""a" | "b""#);
        assert_eq!(type_text(&Schema::string_const("x")), r#""x""#);
        assert_eq!(type_text(&Schema::closed_object(vec![])), "object");
        assert_eq!(type_text(&Schema::json()), "any JSON");
        assert_eq!(
            type_text(&Schema::string().with_length(Some(1), None)),
            "string (non-empty)"
        );
        assert_eq!(
            type_text(
                &Schema::string()
                    .with_length(Some(2), Some(8))
                    .with_pattern(Pattern::new("^[a-z]+$").unwrap())
            ),
            "string (length 2..=8, matching `^[a-z]+$`)"
        );
        assert_eq!(
            type_text(&Schema::number().with_range(Some(Bound::Float(0.5)), None)),
            "number (0.5..)"
        );
        let union = Schema::one_of(vec![Arc::new(Schema::string()), Arc::new(Schema::null())]);
        assert_eq!(
            type_text(&Schema::array(Some(Arc::new(union))).with_length(Some(1), Some(3))),
            "array of (string | null) (1..=3 items)"
        );
        assert_eq!(
            type_text(&std::collections::BTreeMap::<String, u8>::schema()),
            "map of integer (0..=255)"
        );
    }

    #[test]
    fn cells_escape_pipes_and_newlines() {
        assert_eq!(cell("a | b\nc"), "a \\| b c");
    }
}
