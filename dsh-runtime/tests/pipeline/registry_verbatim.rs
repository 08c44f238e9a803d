//! Tools that publish their own JSON Schema (`RawTool::with_json_schema`) through the
//! registry and the pipeline: registration, what the view publishes, argument and output
//! validation, and the pipeline's other guarantees.

use std::sync::{Arc, Mutex};

use dsh_runtime::hooks::{PreDecision, pre_execute_fn};
use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Schema, VerbatimSchema};
use dsh_runtime::{
    DynTool, RawTool, RegisterError, Registry, ToolCall, ToolDefinition, ToolError, Toolbox,
};

/// The MCP conformance suite's `json_schema_2020_12_tool` input schema, in its key order.
const FIXTURE: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}"##;

fn v(text: &str) -> Value {
    json::parse(text).expect("test JSON")
}

/// The fixture's tool, its body recording the arguments it receives.
fn fixture_tool(seen: Arc<Mutex<Vec<Value>>>) -> RawTool {
    RawTool::with_json_schema(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        v(FIXTURE),
        Some(v(r#"{"type":"string"}"#)),
        move |args, _cx| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(args);
                Ok(Value::from("accepted"))
            }
        },
    )
    .expect("the conformance fixture is accepted")
}

#[tokio::test]
async fn the_conformance_fixture_registers_and_is_published_as_written() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let registry = Registry::new();
    let _h = registry.register(fixture_tool(seen.clone())).unwrap();
    let def = registry
        .view()
        .get("json_schema_2020_12_tool")
        .expect("registered")
        .definition()
        .clone();
    assert_eq!(def.parameters_json_schema().to_string(), FIXTURE);
    assert_eq!(
        def.verbatim_parameters
            .as_ref()
            .map(VerbatimSchema::to_json_string),
        Some(FIXTURE.to_string())
    );
    assert_eq!(def.output_json_schema().to_string(), r#"{"type":"string"}"#);
    // The vocabulary stand-ins: any object in, any JSON out (the root is not an object).
    assert_eq!(
        def.parameters.to_json_string(),
        r#"{"type":"object","additionalProperties":true}"#
    );
    assert_eq!(def.output.to_json_string(), "{}");

    let ok = registry
        .execute(ToolCall::new(
            "1",
            "json_schema_2020_12_tool",
            r#"{"name":"Ada","contactMethod":"phone","phone":"555","address":{"city":"London"}}"#,
        ))
        .await;
    assert!(!ok.is_error(), "{}", ok.text());
    assert_eq!(ok.value(), Some(&Value::from("accepted")));
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [v(
            r#"{"name":"Ada","contactMethod":"phone","phone":"555","address":{"city":"London"}}"#
        )]
    );
}

#[tokio::test]
async fn bad_arguments_are_invalid_args_with_every_path_and_reach_no_policy() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let registry = Registry::new();
    let _h = registry.register(fixture_tool(seen.clone())).unwrap();
    let policy = Arc::new(Mutex::new(0usize));
    let counter = policy.clone();
    let _p = registry.add_pre_execute(pre_execute_fn(move |_info| {
        *counter.lock().unwrap() += 1;
        Some(PreDecision::Allow)
    }));
    let bad = registry
        .execute(ToolCall::new(
            "1",
            "json_schema_2020_12_tool",
            r#"{"contactMethod":"phone","email":"a@b.c","address":{"city":7},"fax":"1"}"#,
        ))
        .await;
    assert_eq!(bad.code_str(), Some("INVALID_ARGS"));
    assert_eq!(
        bad.text(),
        concat!(
            r#"Error: invalid arguments: "address.city" must be a string; "#,
            r#""fax" is not a declared property (additionalProperties: false); "#,
            r#"missing required property "phone" (from `then`: the `if` schema matches)"#
        )
    );
    let not_object = registry
        .execute(ToolCall::new("2", "json_schema_2020_12_tool", "[]"))
        .await;
    assert_eq!(
        not_object.text(),
        r#"Error: invalid arguments: "arguments" must be an object"#
    );
    // Arguments that are not lossless JSON fail at the snapshot, as for every tool.
    let lossy = registry
        .execute(ToolCall::new(
            "3",
            "json_schema_2020_12_tool",
            r#"{"email":"a","n":-0}"#,
        ))
        .await;
    assert_eq!(lossy.code_str(), Some("INVALID_ARGS"));
    assert_eq!(*policy.lock().unwrap(), 0, "policy saw invalid arguments");
    assert!(seen.lock().unwrap().is_empty(), "the body ran");
}

#[tokio::test]
async fn null_means_omitted_where_only_that_matches() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let registry = Registry::new();
    let _h = registry.register(fixture_tool(seen.clone())).unwrap();
    // A strict export made `phone` nullable: the model sends null for "no phone".
    let r = registry
        .execute(ToolCall::new(
            "1",
            "json_schema_2020_12_tool",
            r#"{"email":"a@b.c","phone":null,"address":{"street":null}}"#,
        ))
        .await;
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [v(r#"{"email":"a@b.c","address":{}}"#)]
    );
    // Where the null is needed, it is not read as omitted: `phone` is required.
    let r = registry
        .execute(ToolCall::new(
            "2",
            "json_schema_2020_12_tool",
            r#"{"contactMethod":"phone","phone":null}"#,
        ))
        .await;
    assert_eq!(r.code_str(), Some("INVALID_ARGS"));
    assert!(
        r.text().contains(r#""phone" must be a string"#),
        "{}",
        r.text()
    );
    // A schema that admits null keeps it.
    let keeps = RawTool::with_json_schema(
        "keeps",
        "Keeps nulls.",
        v(r#"{"type":"object","properties":{"x":{"type":["string","null"]}}}"#),
        None,
        |args, _cx| async move { Ok(args) },
    )
    .unwrap();
    let _k = registry.register(keeps).unwrap();
    let r = registry
        .execute(ToolCall::new("3", "keeps", r#"{"x":null}"#))
        .await;
    assert_eq!(r.value(), Some(&v(r#"{"x":null}"#)));
}

#[tokio::test]
async fn outputs_are_validated_against_the_verbatim_output_schema() {
    let output =
        r#"{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"]}"#;
    let make = |value: &'static str| {
        RawTool::with_json_schema(
            format!("out_{}", value.len()),
            "Returns a fixed value.",
            v(r#"{"type":"object"}"#),
            Some(v(output)),
            move |_args, _cx| async move { Ok(v(value)) },
        )
        .unwrap()
    };
    let registry = Registry::new();
    let good = make(r#"{"n":1}"#);
    assert_eq!(good.definition().output_json_schema().to_string(), output);
    // An object-rooted document: the stand-in is an object (MCP does not wrap it).
    assert!(good.definition().output.as_object().is_some());
    let name_good = good.definition().name.to_string();
    let bad = make(r#"{"n":-1,"x":[]}"#);
    let name_bad = bad.definition().name.to_string();
    let _g = registry.register(good).unwrap();
    let _b = registry.register(bad).unwrap();
    let r = registry
        .execute(ToolCall::new("1", name_good.as_str(), "{}"))
        .await;
    assert_eq!(r.value(), Some(&v(r#"{"n":1}"#)));
    let r = registry
        .execute(ToolCall::new("2", name_bad.as_str(), "{}"))
        .await;
    assert_eq!(r.code_str(), Some("INVALID_TOOL_OUTPUT"));
    assert_eq!(
        r.text(),
        format!(
            r#"Error: tool "{name_bad}" returned invalid output: "value.n" must be at least 0"#
        )
    );
}

#[tokio::test]
async fn panics_and_tool_errors_keep_their_codes() {
    let registry = Registry::new();
    let panics = RawTool::with_json_schema(
        "panics",
        "Panics.",
        v(r#"{"type":"object"}"#),
        None,
        |_args, _cx| async move {
            if true {
                panic!("boom");
            }
            Ok(Value::Null)
        },
    )
    .unwrap();
    let fails = RawTool::with_json_schema(
        "fails",
        "Fails.",
        v(r#"{"type":"object"}"#),
        None,
        |_args, _cx| async move { Err(ToolError::with_code("MY_CODE", "no")) },
    )
    .unwrap();
    let _p = registry.register(panics).unwrap();
    let _f = registry.register(fails).unwrap();
    let r = registry.execute(ToolCall::new("1", "panics", "{}")).await;
    assert_eq!(r.code_str(), Some("TOOL_PANICKED"));
    let r = registry.execute(ToolCall::new("2", "fails", "{}")).await;
    assert_eq!(r.code_str(), Some("MY_CODE"));
}

#[test]
fn refused_schemas_name_both_documents() {
    let e = RawTool::with_json_schema(
        "t",
        "T.",
        v(r##"{"type":"object","properties":{"a":{"$ref":"other.json"}}}"##),
        Some(v(r#"{"type":"object","required":[1]}"#)),
        |args, _cx| async move { Ok(args) },
    )
    .unwrap_err();
    assert_eq!(e.violations().len(), 2, "{e}");
    assert!(
        e.violations()[0].starts_with(
            r#"parameters.properties.a: `$ref` "other.json" points outside the document"#
        ),
        "{e}"
    );
    assert!(
        e.violations()[1].starts_with("output: `required` entries must be strings, found 1"),
        "{e}"
    );
}

/// Two tools registered at once.
struct Pair(Vec<DynTool>);

impl Toolbox for Pair {
    fn tools(self: Arc<Self>) -> Vec<DynTool> {
        self.0.clone()
    }
}

#[test]
fn registration_refuses_inconsistent_definitions_and_changes_nothing() {
    let registry = Registry::new();
    let existing = RawTool::with_json_schema(
        "existing",
        "Already here.",
        v(r#"{"type":"object"}"#),
        None,
        |args, _cx| async move { Ok(args) },
    )
    .unwrap();
    let _e = registry.register(existing).unwrap();
    let before: Vec<String> = registry
        .view()
        .definitions()
        .iter()
        .map(|d| d.name.to_string())
        .collect();

    // A definition whose verbatim output disagrees with its stand-in (what MCP's output
    // wrapping is decided from), next to a valid tool: neither is registered.
    let mut def = ToolDefinition::new(
        "mismatch",
        "Mismatched.",
        Arc::new(Schema::closed_object(vec![])),
        Arc::new(Schema::json()),
    )
    .with_verbatim_output(VerbatimSchema::output(v(r#"{"type":"object"}"#)).unwrap());
    def.output = Arc::new(Schema::string());
    let bad = DynTool::new(DefinedTool(def));
    let good = DynTool::new(
        RawTool::with_json_schema(
            "fine",
            "Fine.",
            v(r#"{"type":"object"}"#),
            None,
            |args, _cx| async move { Ok(args) },
        )
        .unwrap(),
    );
    let err = registry
        .register_toolbox(Arc::new(Pair(vec![good, bad])))
        .unwrap_err();
    let RegisterError::Schema { name, error } = &err else {
        panic!("{err}");
    };
    assert_eq!(name, "mismatch");
    assert_eq!(
        error.violations(),
        [
            "output: the output schema (string) disagrees with the verbatim output document's root (object); set the document with `ToolDefinition::with_verbatim_output`, which sets both"
        ]
    );
    // A verbatim parameter document that is not object-rooted.
    let mut def = ToolDefinition::new(
        "array_root",
        "Array root.",
        Arc::new(Schema::closed_object(vec![])),
        Arc::new(Schema::json()),
    );
    def.verbatim_parameters = Some(VerbatimSchema::new(v(r#"{"type":"array"}"#)).unwrap());
    let err = registry.register(DefinedTool(def)).unwrap_err();
    assert!(
        err.to_string()
            .contains("must say \"type\": \"object\" at its root"),
        "{err}"
    );
    let after: Vec<String> = registry
        .view()
        .definitions()
        .iter()
        .map(|d| d.name.to_string())
        .collect();
    assert_eq!(before, after);
}

/// A tool that is only a definition (its body echoes its arguments).
struct DefinedTool(ToolDefinition);

impl dsh_runtime::ErasedTool for DefinedTool {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }
    fn call_json<'a>(
        &'a self,
        args: &'a Value,
        _cx: dsh_runtime::ToolContext,
    ) -> dsh_runtime::BoxFuture<'a, dsh_runtime::BodyOutcome> {
        Box::pin(async move { dsh_runtime::BodyOutcome::Value(args.clone()) })
    }
    fn render(
        &self,
        _args: &Value,
        value: &Value,
    ) -> Result<Vec<dsh_runtime::content::ContentBlock>, ToolError> {
        Ok(vec![dsh_runtime::content::ContentBlock::text(
            value.to_string(),
        )])
    }
    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        false
    }
    fn present_call(&self, _args: &Value) -> Option<dsh_runtime::cards::CallView> {
        None
    }
    fn present_result(
        &self,
        _args: &Value,
        _result: &dsh_runtime::cards::ResultSummary,
    ) -> Option<dsh_runtime::cards::ResultView> {
        None
    }
    fn presentation_meta(&self, _args: &Value, _value: &Value) -> Result<Option<Value>, ToolError> {
        Ok(None)
    }
    fn finalize_content(
        &self,
        _args: &Value,
        _content: &[dsh_runtime::content::ContentBlock],
    ) -> Option<Vec<dsh_runtime::content::ContentBlock>> {
        None
    }
}

#[tokio::test]
async fn input_examples_are_checked_against_the_verbatim_schema() {
    let registry = Registry::new();
    let tool = RawTool::with_json_schema(
        "ex",
        "Examples.",
        v(r#"{"type":"object","properties":{"q":{"type":"string","minLength":2}},"required":["q"]}"#),
        None,
        |args, _cx| async move { Ok(args) },
    )
    .unwrap();
    let good = tool
        .definition()
        .clone()
        .with_input_examples(vec![v(r#"{"q":"xy"}"#)]);
    let _g = registry.register(DefinedTool(good)).unwrap();
    let bad = tool
        .definition()
        .clone()
        .with_input_examples(vec![v(r#"{"q":"xy"}"#), v(r#"{"q":"x"}"#)]);
    let err = Registry::new()
        .register(DefinedTool(bad))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(r#""input_examples[1].q" must be at least 2 characters long"#),
        "{err}"
    );
}
