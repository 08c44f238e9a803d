//! Provider export rules, one behaviour per test: what each target keeps, rewrites,
//! reports and refuses, and the strict OpenAI round trip into a tool body.

use std::collections::HashMap;
use std::sync::Arc;

use dsh_providers::export::{self, Fit, Target, check};
use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Additional, Pattern, Property, Schema};
use dsh_runtime::{Registry, Tool, ToolCall, ToolDefinition, ToolSchema, tool};

fn def(name: &str, params: Schema, output: Schema) -> ToolDefinition {
    ToolDefinition::new(
        name.to_string(),
        "A tool.",
        Arc::new(params),
        Arc::new(output),
    )
}

fn p(name: &str, schema: Schema, required: bool) -> Property {
    Property::new(name.to_string(), schema, required)
}

fn one(d: &ToolDefinition, target: Target) -> export::Export {
    let e = export::export(std::slice::from_ref(d), target);
    let problems = check::check(target, &e.fragment());
    assert!(problems.is_empty(), "{target}: checker: {problems:#?}");
    e
}

fn params_of(e: &export::Export) -> String {
    let entry = &e.tools[0].definition;
    let v = entry
        .get("parameters")
        .or_else(|| entry.get("function").and_then(|f| f.get("parameters")))
        .or_else(|| entry.get("input_schema"))
        .or_else(|| entry.get("parametersJsonSchema"))
        .or_else(|| entry.get("inputSchema"))
        .expect("a schema");
    v.to_string()
}

fn sample() -> ToolDefinition {
    let union = Schema::one_of(vec![
        Arc::new(Schema::closed_object(vec![p(
            "kind",
            Schema::string_const("a"),
            true,
        )])),
        Arc::new(Schema::closed_object(vec![p(
            "kind",
            Schema::string_const("b"),
            true,
        )])),
    ]);
    def(
        "sample",
        Schema::object(
            vec![
                p(
                    "name",
                    Schema::string()
                        .with_length(Some(1), Some(10))
                        .with_description("Who."),
                    true,
                ),
                p("count", Schema::integer_range(Some(1), Some(5)), false),
                p("mode", Schema::string_enum(["x", "y"]), false),
                p("pick", union, false),
                p(
                    "tags",
                    Schema::array(Some(Arc::new(Schema::string()))).with_length(Some(2), None),
                    false,
                ),
                p(
                    "level",
                    Schema::integer().with_enum(vec![Value::from(1u64), Value::from(2u64)]),
                    false,
                ),
            ],
            Additional::Open,
        ),
        Schema::string(),
    )
}

#[test]
fn lossless_targets_keep_our_schema() {
    let d = sample();
    for t in [
        Target::OpenAiResponses,
        Target::OpenAiChat,
        Target::Anthropic,
        Target::GeminiJsonSchema,
        Target::Mcp2026_07_28,
    ] {
        let e = one(&d, t);
        assert!(e.warnings.is_empty(), "{t}: {:?}", e.warnings);
        let text = params_of(&e);
        // The open root carries no additionalProperties; nested objects stay explicit.
        assert!(
            text.starts_with(r#"{"type":"object","properties":{"name":{"type":"string","description":"Who.","minLength":1,"maxLength":10}"#),
            "{t}: {text}"
        );
        assert!(text.contains(r#""oneOf":[{"type":"object","additionalProperties":false"#));
    }
    let e = one(&d, Target::OpenAiResponses);
    assert_eq!(e.tools[0].definition["strict"], Value::Bool(false));
    assert_eq!(e.tools[0].definition["type"], Value::from("function"));
}

#[test]
fn openai_strict_closes_requires_and_nulls() {
    let d = sample();
    let e = one(&d, Target::OpenAiResponsesStrict);
    let text = params_of(&e);
    assert_eq!(
        text,
        concat!(
            r#"{"type":"object","additionalProperties":false,"properties":{"#,
            r#""name":{"type":"string","description":"Who. (minLength: 1, maxLength: 10)"},"#,
            r#""count":{"type":["integer","null"],"minimum":1,"maximum":5},"#,
            r#""mode":{"type":["string","null"],"enum":["x","y",null]},"#,
            r#""pick":{"anyOf":[{"type":"object","additionalProperties":false,"properties":{"kind":{"type":"string","const":"a"}},"required":["kind"]},"#,
            r#"{"type":"object","additionalProperties":false,"properties":{"kind":{"type":"string","const":"b"}},"required":["kind"]},{"type":"null"}]},"#,
            r#""tags":{"type":["array","null"],"minItems":2,"items":{"type":"string"}},"#,
            r#""level":{"type":["integer","null"],"enum":[1,2,null]}},"#,
            r#""required":["name","count","mode","pick","tags","level"]}"#
        )
    );
    let lost: Vec<String> = e
        .warnings
        .iter()
        .map(|w| format!("{} {}", w.path, w.lost))
        .collect();
    assert_eq!(lost.len(), 4, "{lost:#?}");
    assert!(lost[0].starts_with("parameters open root closed"));
    assert!(lost[1].starts_with("parameters.properties.name minLength is not supported"));
    assert!(lost[2].starts_with("parameters.properties.name maxLength is not supported"));
    assert!(lost[3].starts_with("parameters.properties.pick oneOf rewritten as anyOf"));
    assert!(e.warnings.iter().all(|w| w.tool == "sample"));
    assert_eq!(e.tools[0].definition["strict"], Value::Bool(true));
}

#[test]
fn strict_refuses_maps_and_any_json_with_the_reason() {
    let map = def(
        "mapper",
        Schema::closed_object(vec![p(
            "env",
            Schema::object(vec![], Additional::Schema(Arc::new(Schema::string()))),
            true,
        )]),
        Schema::null(),
    );
    let any = def(
        "anything",
        Schema::closed_object(vec![p("v", Schema::json(), false)]),
        Schema::null(),
    );
    for t in [
        Target::OpenAiResponsesStrict,
        Target::OpenAiChatStrict,
        Target::AnthropicStrict,
    ] {
        let e = export::export([&map, &any], t);
        assert!(e.tools.is_empty());
        let errors: Vec<String> = e.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with("mapper: parameters.properties.env: is a map"),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("anything: parameters.properties.v: accepts any JSON value"),
            "{errors:?}"
        );
    }
    // The lossless targets take both.
    assert!(export::export([&map, &any], Target::Anthropic).is_complete());
    let report = export::portability(&[map, any], &[Target::Anthropic, Target::OpenAiChatStrict]);
    assert_eq!(report.rows[0].1[0], Fit::AsIs);
    assert!(matches!(&report.rows[0].1[1], Fit::NotAtAll(r) if r.contains("is a map")));
    assert!(
        report
            .to_string()
            .contains("| mapper | as is | not at all |")
    );
}

#[test]
fn anthropic_strict_moves_unsupported_keywords_and_keeps_optionals() {
    let d = sample();
    let e = one(&d, Target::AnthropicStrict);
    let v = json::parse(&params_of(&e)).unwrap();
    let props = &v["properties"];
    assert_eq!(
        props["count"].to_string(),
        r#"{"type":"integer","description":"minimum: 1, maximum: 5"}"#
    );
    assert_eq!(
        props["tags"].to_string(),
        r#"{"type":"array","description":"minItems: 2","items":{"type":"string"}}"#
    );
    assert_eq!(v["required"].to_string(), r#"["name"]"#);
    assert_eq!(v["additionalProperties"], Value::Bool(false));
    assert_eq!(e.tools[0].definition["strict"], Value::Bool(true));
}

#[test]
fn anthropic_budgets_are_per_request() {
    // 5 optional properties per tool, 5 tools: 25 > 24.
    let tools: Vec<ToolDefinition> = (0..5)
        .map(|i| {
            def(
                &format!("t{i}"),
                Schema::closed_object(
                    (0..5)
                        .map(|j| p(&format!("o{j}"), Schema::string(), false))
                        .collect(),
                ),
                Schema::null(),
            )
        })
        .collect();
    let e = export::export(&tools, Target::AnthropicStrict);
    assert_eq!(e.tools.len(), 5);
    assert_eq!(e.errors.len(), 1);
    assert_eq!(e.errors[0].tool, None);
    assert!(e.errors[0].to_string().starts_with("request: 25 optional properties across strict tools; Anthropic allows at most 24 per request"));
    assert!(export::export(&tools[..4], Target::AnthropicStrict).is_complete());
    // 21 strict tools.
    let many: Vec<ToolDefinition> = (0..21)
        .map(|i| {
            def(
                &format!("n{i}"),
                Schema::closed_object(vec![]),
                Schema::null(),
            )
        })
        .collect();
    let e = export::export(&many, Target::AnthropicStrict);
    assert!(
        e.errors
            .iter()
            .any(|e| e.reason.starts_with("21 strict tools"))
    );
}

#[test]
fn openai_strict_limits() {
    // 11 levels of object nesting.
    let mut s = Schema::closed_object(vec![p("leaf", Schema::string(), true)]);
    for _ in 0..10 {
        s = Schema::closed_object(vec![p("x", s, true)]);
    }
    let deep = def("deep", s, Schema::null());
    let e = export::export([&deep], Target::OpenAiResponsesStrict);
    assert_eq!(e.errors.len(), 1);
    assert!(
        e.errors[0]
            .reason
            .contains("11 levels of object nesting; OpenAI strict allows at most 10")
    );
    // 10 levels are fine.
    let mut s = Schema::closed_object(vec![p("leaf", Schema::string(), true)]);
    for _ in 0..9 {
        s = Schema::closed_object(vec![p("x", s, true)]);
    }
    assert!(
        export::export(
            [&def("ok", s, Schema::null())],
            Target::OpenAiResponsesStrict
        )
        .is_complete()
    );
    // 1001 enum values.
    let big = Schema::string_enum((0..1001).map(|i| format!("v{i}")));
    let e = export::export(
        [&def(
            "big",
            Schema::closed_object(vec![p("e", big, true)]),
            Schema::null(),
        )],
        Target::OpenAiChatStrict,
    );
    assert!(
        e.errors
            .iter()
            .any(|e| e.reason.contains("1001 enum and const values"))
    );
    // A string enum of 300 values of 60 characters: 18,000 > 15,000.
    let long = Schema::string_enum((0..300).map(|i| format!("{i:060}")));
    let e = export::export(
        [&def(
            "long",
            Schema::closed_object(vec![p("e", long, true)]),
            Schema::null(),
        )],
        Target::OpenAiChatStrict,
    );
    assert!(
        e.errors.iter().any(|e| e
            .reason
            .contains("a string enum of 300 values totals 18000 characters")),
        "{:?}",
        e.errors
    );
}

#[test]
fn names_each_provider_refuses() {
    let dotted = def("fs.read", Schema::closed_object(vec![]), Schema::null());
    let e = export::export([&dotted], Target::OpenAiResponses);
    assert_eq!(
        e.errors[0].to_string(),
        "fs.read: name: the provider requires tool names matching ^[a-zA-Z0-9_-]{1,64}$"
    );
    // Gemini and MCP take dots.
    assert!(export::export([&dotted], Target::GeminiJsonSchema).is_complete());
    let mcp = export::export([&dotted], Target::Mcp2025_11_25);
    assert!(mcp.is_complete() && mcp.warnings.iter().all(|w| w.path != "name"));
    let digit = def("1st", Schema::closed_object(vec![]), Schema::null());
    assert!(!export::export([&digit], Target::GeminiOpenApi).is_complete());
    assert!(export::export([&digit], Target::Anthropic).is_complete());
    let spaced = def("a b", Schema::closed_object(vec![]), Schema::null());
    let e = export::export([&spaced], Target::Mcp2025_11_25);
    assert!(e.is_complete());
    assert_eq!(e.warnings[0].path, "name");
    // Duplicates.
    let e = export::export([&digit, &digit], Target::Anthropic);
    assert_eq!(e.tools.len(), 1);
    assert!(e.errors[0].reason.contains("exported already"));
}

#[test]
fn gemini_openapi_subset() {
    let d = def(
        "g",
        Schema::closed_object(vec![
            p(
                "s",
                Schema::string().with_pattern(Pattern::new("^a").unwrap()),
                true,
            ),
            p("c", Schema::string_const("only"), false),
            p(
                "n",
                Schema::integer().with_enum(vec![Value::from(1u64), Value::from(2u64)]),
                false,
            ),
            p(
                "maybe",
                Schema::one_of(vec![Arc::new(Schema::number()), Arc::new(Schema::null())])
                    .with_description("A number or nothing."),
                false,
            ),
            p(
                "either",
                Schema::one_of(vec![
                    Arc::new(Schema::string()),
                    Arc::new(Schema::boolean()),
                ]),
                false,
            ),
            p(
                "any",
                Schema::json().with_examples(vec![Value::from(1u64), Value::from(2u64)]),
                false,
            ),
            p("free", Schema::object(vec![], Additional::Open), false),
        ]),
        Schema::null(),
    );
    let e = one(&d, Target::GeminiOpenApi);
    assert_eq!(
        params_of(&e),
        concat!(
            r#"{"type":"OBJECT","properties":{"s":{"type":"STRING","pattern":"^a"},"#,
            r#""c":{"type":"STRING","enum":["only"]},"#,
            r#""n":{"type":"INTEGER","description":"enum: [1,2]"},"#,
            r#""maybe":{"type":"NUMBER","description":"A number or nothing.","nullable":true},"#,
            r#""either":{"anyOf":[{"type":"STRING"},{"type":"BOOLEAN"}]},"#,
            r#""any":{"description":"examples: [2]","example":1},"#,
            r#""free":{"description":"a JSON object"}},"required":["s"]}"#
        )
    );
    let paths: Vec<&str> = e.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "parameters",
            "parameters.properties.n",
            "parameters.properties.either",
            "parameters.properties.any",
            "parameters.properties.free"
        ]
    );
    // A property name outside [A-Za-z_][A-Za-z0-9_]*.
    let bad = def(
        "b",
        Schema::closed_object(vec![p("x-y", Schema::string(), true)]),
        Schema::null(),
    );
    let e = export::export([&bad], Target::GeminiOpenApi);
    assert_eq!(e.errors[0].path, r#"parameters.properties["x-y"]"#);
    assert!(export::export([&bad], Target::GeminiJsonSchema).is_complete());
}

#[test]
fn mcp_wraps_non_object_outputs_for_2025_11_25_only() {
    let d = def(
        "count",
        Schema::closed_object(vec![]),
        Schema::array(Some(Arc::new(Schema::integer()))),
    );
    let old = one(&d, Target::Mcp2025_11_25);
    assert_eq!(
        old.tools[0].definition["outputSchema"].to_string(),
        r#"{"type":"object","additionalProperties":false,"properties":{"result":{"type":"array","items":{"type":"integer"}}},"required":["result"]}"#
    );
    assert_eq!(old.warnings.len(), 1);
    assert!(
        old.warnings[0]
            .lost
            .starts_with("an array output is wrapped as {\"result\": …}")
    );
    let new = one(&d, Target::Mcp2026_07_28);
    assert_eq!(
        new.tools[0].definition["outputSchema"].to_string(),
        r#"{"type":"array","items":{"type":"integer"}}"#
    );
    assert!(new.warnings.is_empty());
    let value = json::parse("[1,2]").unwrap();
    assert_eq!(
        export::mcp_structured_content(&d.output, &value, Target::Mcp2025_11_25).to_string(),
        r#"{"result":[1,2]}"#
    );
    assert_eq!(
        export::mcp_structured_content(&d.output, &value, Target::Mcp2026_07_28),
        value
    );
    // An object output is never wrapped.
    let obj = def(
        "o",
        Schema::closed_object(vec![]),
        Schema::closed_object(vec![p("a", Schema::string(), true)]),
    );
    assert!(!export::mcp_output_is_wrapped(
        &obj.output,
        Target::Mcp2025_11_25
    ));
    assert!(one(&obj, Target::Mcp2025_11_25).warnings.is_empty());
}

/// Read a file.
#[tool(read_only, idempotent)]
async fn peek(path: String) -> String {
    path
}

/// Delete a file.
#[tool(destructive)]
async fn remove(path: String) -> bool {
    path.is_empty()
}

#[test]
fn mcp_annotations_follow_the_tool_flags() {
    let e = export::export(
        [Peek.definition(), Remove.definition()],
        Target::Mcp2025_11_25,
    );
    assert_eq!(
        e.tools[0].definition["annotations"].to_string(),
        r#"{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true}"#
    );
    assert_eq!(
        e.tools[1].definition["annotations"].to_string(),
        r#"{"readOnlyHint":false,"destructiveHint":true}"#
    );
}

#[test]
fn target_names_round_trip() {
    for t in Target::ALL {
        assert_eq!(t.name().parse::<Target>(), Ok(t));
    }
    let err = "openai-turbo".parse::<Target>().unwrap_err().to_string();
    assert!(
        err.starts_with(
            "unknown provider \"openai-turbo\"; expected one of: openai, openai-strict"
        )
    );
}

/// Options with explicit `null`s: what a strict OpenAI model sends.
#[derive(serde::Deserialize, ToolSchema)]
struct Opts {
    /// A nested optional.
    depth: Option<u8>,
}

/// Report which options arrived.
#[tool(read_only)]
async fn probe(
    /// Required.
    name: String,
    limit: Option<u32>,
    mode: Option<String>,
    opts: Option<Opts>,
    inner: Opts,
    tags: Option<Vec<String>>,
    extra: Option<HashMap<String, u8>>,
) -> String {
    format!(
        "{name} limit={limit:?} mode={mode:?} opts={:?} inner={:?} tags={tags:?} extra={}",
        opts.map(|o| o.depth),
        inner.depth,
        extra.is_some()
    )
}

#[tokio::test]
async fn strict_openai_arguments_reach_the_body_as_none() {
    let registry = Registry::new();
    let _reg = registry.register(Probe).unwrap();
    let strict = export::export([Probe.definition()], Target::OpenAiChatStrict);
    // The map cannot be strict: the tool is refused, saying why...
    assert!(
        strict.errors[0]
            .to_string()
            .contains("parameters.properties.extra: is a map")
    );
    // ...so check the round trip on the same tool without the map.
    let def = {
        let mut d = Probe.definition().clone();
        let mut params = (*d.parameters).clone();
        if let dsh_runtime::schema::Kind::Object(o) = &mut params.kind {
            o.properties.retain(|p| p.name != "extra");
        }
        d.parameters = Arc::new(params);
        d
    };
    let strict = export::export([&def], Target::OpenAiChatStrict);
    assert!(strict.is_complete(), "{:?}", strict.errors);
    let schema = json::to_serde(&strict.tools[0].definition["function"]["parameters"]);
    let args =
        r#"{"name":"n","limit":null,"mode":null,"opts":null,"inner":{"depth":null},"tags":null}"#;
    let validator = jsonschema::validator_for(&schema).expect("the export compiles as JSON Schema");
    let parsed: serde_json::Value = serde_json::from_str(args).unwrap();
    assert!(validator.is_valid(&parsed), "valid under the strict export");
    let result = registry.execute(ToolCall::new("c1", "probe", args)).await;
    assert!(result.is_success(), "{}", result.text());
    assert_eq!(
        result.text(),
        "n limit=None mode=None opts=None inner=None tags=None extra=false"
    );
}

#[test]
fn x_mcp_header_reaches_mcp_targets_only() {
    let params = Schema::object(
        vec![
            p(
                "region",
                Schema::string()
                    .with_description("Where.")
                    .with_header("Region"),
                true,
            ),
            p("replicas", Schema::integer().with_header("Replicas"), false),
        ],
        Additional::Closed,
    );
    let d = def("deploy", params.clone(), Schema::string());
    for target in Target::ALL {
        let text = params_of(&one(&d, target));
        let mcp = matches!(target, Target::Mcp2025_11_25 | Target::Mcp2026_07_28);
        assert_eq!(text.contains("x-mcp-header"), mcp, "{target}: {text}");
        if mcp {
            // Byte for byte the vocabulary's own projection.
            assert_eq!(text, params.to_json_string(), "{target}");
        }
    }
}
