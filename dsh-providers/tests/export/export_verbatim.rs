//! Tools that publish their own JSON Schema 2020-12 document (`RawTool::with_json_schema`):
//! what each target publishes, checked by the provider's rules (`check::check`) and, where
//! the export keeps the document's meaning, by standard JSON Schema (the `jsonschema`
//! crate) on generated values.

use dsh_providers::catalog;
use dsh_providers::export::{self, Fit, Target, check};
use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::VerbatimSchema;
use dsh_runtime::{RawTool, Registry, ToolDefinition};
use proptest::prelude::*;

/// The MCP conformance suite's `json_schema_2020_12_tool` input schema, in its key order.
const FIXTURE: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}"##;

/// A document every target can take (references by pointer, anchor and `$dynamicRef`,
/// a `$ref` with a sibling, optional properties, a union, moved constraints).
const PORTABLE: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addr","type":"object","properties":{"city":{"type":"string","minLength":1},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"],"additionalProperties":false},"unused":{"not":{"type":"null"}}},"properties":{"name":{"type":"string","description":"Who."},"home":{"$ref":"#addr","description":"Where they live."},"work":{"$dynamicRef":"#/$defs/address"},"tags":{"type":"array","items":{"type":"string"},"maxItems":3},"kind":{"oneOf":[{"const":"person"},{"const":"company"}]},"age":{"type":["integer","null"],"minimum":0}},"required":["name"],"additionalProperties":false}"##;

/// A tree: recursion through `items`.
const TREE: &str = r##"{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"],"additionalProperties":false}"##;

fn v(text: &str) -> Value {
    json::parse(text).expect("test JSON")
}

fn def(name: &str, input: &str, output: Option<&str>) -> ToolDefinition {
    RawTool::with_json_schema(
        name,
        "A tool.",
        v(input),
        output.map(v),
        |args, _cx| async move { Ok(args) },
    )
    .expect("accepted")
    .definition()
    .clone()
}

/// The export of one definition, which the target's checker passes.
fn one(d: &ToolDefinition, target: Target) -> export::Export {
    let e = export::export([d], target);
    let problems = check::check(target, &e.fragment());
    assert!(
        problems.is_empty(),
        "{target}: checker: {problems:#?}\n{}",
        e.to_pretty_string()
    );
    e
}

fn schema_of(target: Target, entry: &Value) -> Option<Value> {
    let key = match target {
        Target::OpenAiChat | Target::OpenAiChatStrict => {
            return entry
                .get("function")
                .and_then(|f| f.get("parameters"))
                .cloned();
        }
        Target::OpenAiResponses | Target::OpenAiResponsesStrict | Target::GeminiOpenApi => {
            "parameters"
        }
        Target::Anthropic | Target::AnthropicStrict => "input_schema",
        Target::GeminiJsonSchema => "parametersJsonSchema",
        _ => "inputSchema",
    };
    entry.get(key).cloned()
}

fn without_dialect(text: &str) -> String {
    text.replacen(
        r#""$schema":"https://json-schema.org/draft/2020-12/schema","#,
        "",
        1,
    )
}

#[test]
fn mcp_publishes_the_conformance_fixture_byte_for_byte() {
    let d = def(
        "json_schema_2020_12_tool",
        FIXTURE,
        Some(r#"{"type":"string"}"#),
    );
    for target in [Target::Mcp2025_11_25, Target::Mcp2026_07_28] {
        let e = one(&d, target);
        let entry = &e.tools[0].definition;
        assert_eq!(entry["inputSchema"].to_string(), FIXTURE, "{target}");
        // Through the whole `tools/list` fragment too.
        assert!(e.fragment().to_string().contains(FIXTURE));
        let output = entry["outputSchema"].to_string();
        if target == Target::Mcp2025_11_25 {
            assert_eq!(
                output,
                r#"{"type":"object","additionalProperties":false,"properties":{"result":{"type":"string"}},"required":["result"]}"#
            );
            assert_eq!(e.warnings.len(), 1, "{:?}", e.warnings);
            assert!(export::mcp_output_is_wrapped(&d.output, target));
        } else {
            assert_eq!(output, r#"{"type":"string"}"#);
            assert!(e.warnings.is_empty(), "{:?}", e.warnings);
        }
    }
    // A registry's list is the same.
    let registry = Registry::new();
    let _t = registry
        .register(
            RawTool::with_json_schema(
                "json_schema_2020_12_tool",
                "T.",
                v(FIXTURE),
                None,
                |a, _| async move { Ok(a) },
            )
            .unwrap(),
        )
        .unwrap();
    let list = export::export_registry(&registry, Target::Mcp2026_07_28);
    assert_eq!(list.tools[0].definition["inputSchema"].to_string(), FIXTURE);
    assert_eq!(list.tools[0].definition["outputSchema"].to_string(), "{}");
}

#[test]
fn plain_json_schema_targets_drop_only_the_dialect() {
    let d = def("contact", FIXTURE, None);
    for target in [
        Target::OpenAiResponses,
        Target::OpenAiChat,
        Target::Anthropic,
    ] {
        let e = one(&d, target);
        let published = schema_of(target, &e.tools[0].definition).expect("a schema");
        assert_eq!(published.to_string(), without_dialect(FIXTURE), "{target}");
        let lost: Vec<String> = e
            .warnings
            .iter()
            .map(|w| format!("{}: {}", w.path, w.lost))
            .collect();
        assert_eq!(
            lost,
            [
                "parameters: $schema left out: providers are sent the schema, not its dialect (it is JSON Schema 2020-12 either way)"
            ],
            "{target}"
        );
    }
    // Gemini's JSON Schema field too, with `$ref` alone where it stands.
    let e = one(&d, Target::GeminiJsonSchema);
    let published = schema_of(Target::GeminiJsonSchema, &e.tools[0].definition).unwrap();
    assert_eq!(published.to_string(), without_dialect(FIXTURE));
}

#[test]
fn x_mcp_header_reaches_mcp_only() {
    let doc = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"],"additionalProperties":false}"#;
    let d = def("regional", doc, None);
    for target in Target::ALL {
        let e = one(&d, target);
        let published = schema_of(target, &e.tools[0].definition).expect("a schema");
        let region = &published["properties"]["region"];
        let mcp = matches!(target, Target::Mcp2025_11_25 | Target::Mcp2026_07_28);
        assert_eq!(
            region.get("x-mcp-header").is_some(),
            mcp,
            "{target}: {published}"
        );
        // Left out silently, as for the vocabulary's schemas.
        assert!(
            e.warnings.iter().all(|w| !w.lost.contains("x-mcp-header")),
            "{target}: {:?}",
            e.warnings
        );
    }
}

#[test]
fn strict_and_openapi_targets_refuse_what_they_cannot_state() {
    let d = def("json_schema_2020_12_tool", FIXTURE, None);
    for target in [
        Target::OpenAiResponsesStrict,
        Target::OpenAiChatStrict,
        Target::AnthropicStrict,
        Target::GeminiOpenApi,
    ] {
        let e = one(&d, target);
        assert!(e.tools.is_empty(), "{target}");
        assert_eq!(e.errors.len(), 1, "{target}: {:?}", e.errors);
        assert_eq!(
            e.errors[0].to_string(),
            format!(
                "json_schema_2020_12_tool: parameters: uses `allOf`, which {target} cannot state"
            )
        );
    }
    // `if`/`then`/`else` alone is refused the same way, with its path.
    let d = def(
        "cond",
        r#"{"type":"object","properties":{"p":{"type":"object","properties":{"a":{"type":"string"}},"if":{"required":["a"]},"then":{"required":["a"]}}}}"#,
        None,
    );
    let e = one(&d, Target::OpenAiResponsesStrict);
    assert_eq!(
        e.errors[0].to_string(),
        "cond: parameters.properties.p: uses `if`, which openai-strict cannot state"
    );
    let table = export::portability(&[d], &[Target::Mcp2026_07_28, Target::AnthropicStrict]);
    assert_eq!(table.rows[0].1[0], Fit::AsIs);
    assert!(matches!(&table.rows[0].1[1], Fit::NotAtAll(r) if r.contains("uses `if`")));
}

#[test]
fn openai_strict_keeps_defs_rewrites_references_and_nulls_optionals() {
    let d = def("portable", PORTABLE, None);
    let e = one(&d, Target::OpenAiResponsesStrict);
    let published = schema_of(Target::OpenAiResponsesStrict, &e.tools[0].definition).unwrap();
    assert_eq!(
        published.to_string(),
        concat!(
            r#"{"type":"object","additionalProperties":false,"properties":{"#,
            r#""name":{"type":"string","description":"Who."},"#,
            r##""home":{"anyOf":[{"$ref":"#/$defs/address","description":"Where they live."},{"type":"null"}]},"##,
            r##""work":{"anyOf":[{"$ref":"#/$defs/address"},{"type":"null"}]},"##,
            r#""tags":{"type":["array","null"],"items":{"type":"string"},"maxItems":3},"#,
            r#""kind":{"anyOf":[{"type":"string","const":"person"},{"type":"string","const":"company"},{"type":"null"}]},"#,
            r#""age":{"type":["integer","null"],"minimum":0}},"#,
            r#""required":["name","home","work","tags","kind","age"],"#,
            r#""$defs":{"address":{"type":"object","additionalProperties":false,"properties":{"#,
            r#""city":{"type":"string","description":"minLength: 1"},"zip":{"type":["string","null"],"pattern":"^[0-9]{5}$"}},"#,
            r#""required":["city","zip"]}}}"#
        )
    );
    let lost: Vec<String> = e
        .warnings
        .iter()
        .map(|w| format!("{} {}", w.path, w.lost))
        .collect();
    assert_eq!(lost.len(), 3, "{lost:#?}");
    assert!(lost[0].starts_with("parameters $schema left out"));
    assert!(lost[1].starts_with("parameters.properties.kind oneOf rewritten as anyOf"));
    assert!(
        lost[2].starts_with(
            "parameters.$defs.address.properties.city minLength is not supported here"
        )
    );
}

#[test]
fn anthropic_strict_and_gemini_take_the_portable_document() {
    let d = def("portable", PORTABLE, None);
    let e = one(&d, Target::AnthropicStrict);
    let a = schema_of(Target::AnthropicStrict, &e.tools[0].definition).unwrap();
    assert_eq!(
        a["properties"]["home"].to_string(),
        r##"{"$ref":"#/$defs/address","description":"Where they live."}"##
    );
    assert_eq!(
        a["properties"]["age"].to_string(),
        r#"{"type":["integer","null"],"description":"minimum: 0"}"#
    );
    assert_eq!(a["required"].to_string(), r#"["name"]"#);

    // Gemini's OpenAPI form inlines every reference.
    let e = one(&d, Target::GeminiOpenApi);
    let g = schema_of(Target::GeminiOpenApi, &e.tools[0].definition).unwrap();
    assert_eq!(
        g["properties"]["home"].to_string(),
        r#"{"type":"OBJECT","description":"Where they live.","properties":{"city":{"type":"STRING","minLength":1},"zip":{"type":"STRING","pattern":"^[0-9]{5}$"}},"required":["city"]}"#
    );
    assert_eq!(
        g["properties"]["age"].to_string(),
        r#"{"type":"INTEGER","minimum":0,"nullable":true}"#
    );
    assert!(g.get("$defs").is_none());

    // Gemini's JSON Schema field: `$ref` with a sibling becomes a one-branch `anyOf`,
    // `$dynamicRef` a `$ref`.
    let e = one(&d, Target::GeminiJsonSchema);
    let j = schema_of(Target::GeminiJsonSchema, &e.tools[0].definition).unwrap();
    assert_eq!(
        j["properties"]["home"].to_string(),
        r##"{"anyOf":[{"$ref":"#addr"}],"description":"Where they live."}"##
    );
    assert_eq!(
        j["properties"]["work"].to_string(),
        r##"{"$ref":"#/$defs/address"}"##
    );
}

#[test]
fn recursive_documents_per_target() {
    let d = def("tree", TREE, None);
    for target in [
        Target::Mcp2026_07_28,
        Target::OpenAiResponses,
        Target::Anthropic,
    ] {
        let e = one(&d, target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
    }
    // OpenAI strict takes a reference to the root.
    let e = one(&d, Target::OpenAiResponsesStrict);
    assert!(e.is_complete(), "{:?}", e.errors);
    let s = schema_of(Target::OpenAiResponsesStrict, &e.tools[0].definition).unwrap();
    assert_eq!(
        s["properties"]["children"]["items"].to_string(),
        r##"{"$ref":"#"}"##
    );
    // The others cannot state it.
    for (target, reason) in [
        (
            Target::AnthropicStrict,
            "tree: parameters: is a recursive schema, which Anthropic strict mode does not support",
        ),
        (
            Target::GeminiJsonSchema,
            "tree: parameters: is a recursive schema: Gemini unrolls cyclic references only to a limited degree, and only under properties that are not required",
        ),
        (
            Target::GeminiOpenApi,
            "tree: parameters.properties.children.items.properties.children.items: refers back to # (a recursive reference), which gemini-openapi cannot state once references are inlined",
        ),
    ] {
        let e = one(&d, target);
        assert_eq!(
            e.errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [reason],
            "{target}"
        );
    }
}

#[test]
fn the_2025_11_25_wrapper_keeps_references_working() {
    let output = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"n":{"type":"integer"}},"type":"array","items":{"$ref":"#/$defs/n"}}"##;
    let d = def("listing", r#"{"type":"object"}"#, Some(output));
    let e = one(&d, Target::Mcp2025_11_25);
    assert_eq!(
        e.tools[0].definition["outputSchema"].to_string(),
        concat!(
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"#,
            r##""properties":{"result":{"$defs":{"n":{"type":"integer"}},"type":"array","items":{"$ref":"#/properties/result/$defs/n"}}},"##,
            r#""required":["result"]}"#
        )
    );
    let e = one(&d, Target::Mcp2026_07_28);
    assert_eq!(e.tools[0].definition["outputSchema"].to_string(), output);
}

#[test]
fn the_checker_applies_the_reference_rules() {
    let entry = |schema: &str| {
        v(&format!(
            r#"[{{"type":"function","name":"t","parameters":{schema},"strict":true}}]"#
        ))
    };
    let p = check::check(
        Target::OpenAiResponsesStrict,
        &entry(
            r##"{"type":"object","properties":{"a":{"$ref":"#/properties/b"},"b":{"type":"string"}},"required":["a","b"],"additionalProperties":false}"##,
        ),
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("strict mode takes `$ref` to the root"),
        "{p:?}"
    );
    let p = check::check(
        Target::OpenAiResponsesStrict,
        &entry(
            r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}},"required":["a"],"additionalProperties":false}"##,
        ),
    );
    assert!(p.iter().any(|m| m.contains("does not resolve")), "{p:?}");
    let gemini = v(
        r##"[{"functionDeclarations":[{"name":"t","parametersJsonSchema":{"type":"object","$defs":{"x":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/x","description":"d"}}}}]}]"##,
    );
    let p = check::check(Target::GeminiJsonSchema, &gemini);
    assert_eq!(
        p,
        ["t: parametersJsonSchema.a: Gemini takes only `$`-keywords beside a `$ref`"]
    );
    // MCP takes `$schema`; the providers are not sent it.
    let mcp = v(&format!(
        r#"{{"tools":[{{"name":"t","inputSchema":{FIXTURE},"outputSchema":{{"type":"object"}}}}]}}"#
    ));
    assert!(check::check(Target::Mcp2025_11_25, &mcp).is_empty());
    let anthropic = v(&format!(r#"[{{"name":"t","input_schema":{FIXTURE}}}]"#));
    assert_eq!(
        check::check(Target::Anthropic, &anthropic),
        ["t: input_schema: $schema is not sent"]
    );
}

#[test]
fn the_catalog_shows_verbatim_schemas() {
    let d = def(
        "json_schema_2020_12_tool",
        FIXTURE,
        Some(r#"{"type":"array","items":{"type":"string"},"description":"Names."}"#),
    );
    let md = catalog::markdown_of(&[d], None);
    assert!(
        md.contains("| `address` | `#/$defs/address` | no |  |"),
        "{md}"
    );
    assert!(
        md.contains("| `contactMethod` | \"phone\" \\| \"email\" | no |  |"),
        "{md}"
    );
    assert!(
        md.contains("<details><summary>Parameter JSON schema</summary>"),
        "{md}"
    );
    assert!(md.contains(r#""$anchor": "addressDef""#), "{md}");
    assert!(md.contains("`array of string`: Names."), "{md}");
    // A document without properties, and a boolean output.
    let d = def("bare", r#"{"type":"object"}"#, Some("true"));
    let md = catalog::markdown_of(&[d], None);
    assert!(md.contains("None declared."), "{md}");
    assert!(md.contains("`any JSON`"), "{md}");
}

/// Documents whose exports to the plain JSON Schema targets must mean what they do.
const LOSSLESS: [&str; 4] = [
    FIXTURE,
    PORTABLE,
    TREE,
    r##"{"$id":"https://example.com/s","type":"object","$defs":{"p":{"$dynamicAnchor":"p","type":"integer"}},"properties":{"a":{"$dynamicRef":"#p","minimum":2},"b":{"$ref":"https://example.com/s#/$defs/p","title":"B"}},"dependentRequired":{"a":["b"]}}"##,
];

/// Output documents whose root is not an object (wrapped for 2025-11-25).
const OUTPUTS: [&str; 3] = [
    r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"n":{"type":"integer","minimum":0}},"type":"array","items":{"$ref":"#/$defs/n"}}"##,
    r##"{"type":["string","null"],"minLength":1}"##,
    r##"{"$defs":{"t":{"type":"object","properties":{"a":{"$ref":"#/$defs/t"},"b":{"$ref":"#"}}}},"anyOf":[{"$ref":"#/$defs/t"},{"type":"integer"}]}"##,
];

fn instance() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::json!(null)),
        any::<bool>().prop_map(serde_json::Value::from),
        (-1i64..4).prop_map(serde_json::Value::from),
        prop::sample::select(vec!["", "Paris", "12345", "phone", "email", "person"])
            .prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 20, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(serde_json::Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "name",
                        "address",
                        "city",
                        "contactMethod",
                        "phone",
                        "email",
                        "home",
                        "work",
                        "zip",
                        "tags",
                        "kind",
                        "age",
                        "children",
                        "a",
                        "b"
                    ]),
                    inner,
                ),
                0..5,
            )
            .prop_map(|m| serde_json::Value::Object(
                m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .build(&json::to_serde(schema))
        .expect("an exported schema compiles")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn plain_exports_mean_what_the_document_means(which in 0..LOSSLESS.len(), value in instance()) {
        let doc = LOSSLESS[which];
        let original = validator(&v(doc)).is_valid(&value);
        let d = def("t", doc, Some(doc));
        for target in [Target::Mcp2025_11_25, Target::Mcp2026_07_28, Target::OpenAiResponses, Target::Anthropic, Target::GeminiJsonSchema] {
            let e = export::export([&d], target);
            if e.tools.is_empty() {
                // Only Gemini refuses, and only the recursive tree.
                prop_assert!(target == Target::GeminiJsonSchema && doc == TREE, "{}: {:?}", target, e.errors);
                continue;
            }
            let published = schema_of(target, &e.tools[0].definition).unwrap();
            prop_assert_eq!(validator(&published).is_valid(&value), original, "{}: {}", target, published);
            // The output, wrapped or not, takes the value exactly when the document does.
            if let Some(out) = e.tools[0].definition.get("outputSchema") {
                let sent = if export::mcp_output_is_wrapped(&d.output, target) {
                    serde_json::json!({ "result": value })
                } else {
                    value.clone()
                };
                prop_assert_eq!(validator(out).is_valid(&sent), original, "{}: {}", target, out);
            }
        }
    }

    #[test]
    fn the_2025_11_25_wrapper_means_what_the_output_document_means(which in 0..OUTPUTS.len(), value in instance()) {
        let doc = OUTPUTS[which];
        let original = validator(&v(doc)).is_valid(&value);
        let d = def("t", r#"{"type":"object"}"#, Some(doc));
        let e = one(&d, Target::Mcp2025_11_25);
        prop_assert!(export::mcp_output_is_wrapped(&d.output, Target::Mcp2025_11_25));
        let wrapped = &e.tools[0].definition["outputSchema"];
        prop_assert_eq!(validator(wrapped).is_valid(&serde_json::json!({ "result": value })), original, "{}", wrapped);
    }

    #[test]
    fn what_a_strict_export_accepts_the_tool_accepts(value in instance()) {
        // OpenAI strict closes objects and makes optional properties nullable: every value
        // the export lets the model send passes the tool's own validation, once its nulls
        // are read as omitted (as the registry does).
        let d = def("portable", PORTABLE, None);
        let schema = VerbatimSchema::parameters(v(PORTABLE)).unwrap();
        let e = export::export([&d], Target::OpenAiResponsesStrict);
        let published = schema_of(Target::OpenAiResponsesStrict, &e.tools[0].definition).unwrap();
        if validator(&published).is_valid(&value) {
            let ours: Value = json::from_serde(&strip_nulls(value.clone())).unwrap();
            // `minLength` moved into a description is the one rule the export loosens.
            let loosened = ours.get("home").and_then(|h| h.get("city")).and_then(Value::as_str) == Some("")
                || ours.get("work").and_then(|h| h.get("city")).and_then(Value::as_str) == Some("");
            prop_assume!(!loosened);
            prop_assert!(schema.validate(&ours, "arguments", false).is_ok(), "{} {}", value, published);
        }
    }
}

fn strip_nulls(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(o) => serde_json::Value::Object(
            o.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.into_iter().map(strip_nulls).collect())
        }
        other => other,
    }
}

/// A generated document as a parameter schema (its root typed as an object).
fn parameter_document() -> impl Strategy<Value = serde_json::Value> {
    crate::random_json_schema::document().prop_map(|mut doc| {
        doc["type"] = serde_json::json!("object");
        doc
    })
}

proptest! {
    #![proptest_config(crate::random_schema::cases(300))]

    #[test]
    fn every_verbatim_export_passes_its_checker_and_plain_ones_keep_the_meaning(
        doc in parameter_document(),
        values in prop::collection::vec(crate::random_json_schema::instance(), 1..4),
    ) {
        let d = def("generated", &doc.to_string(), None);
        let original = validator(&json::from_serde(&doc).unwrap());
        for target in Target::ALL {
            let e = export::export([&d], target);
            let problems = check::check(target, &e.fragment());
            prop_assert!(problems.is_empty(), "{}: {:#?}\n{}\n{}", target, problems, doc, e.to_pretty_string());
            for err in &e.errors {
                prop_assert!(!err.reason.is_empty() && !err.path.is_empty(), "{}: {}", target, err);
            }
            prop_assert_eq!(e.to_pretty_string(), export::export([&d], target).to_pretty_string());
            let plain = matches!(target, Target::Mcp2025_11_25 | Target::Mcp2026_07_28 | Target::OpenAiResponses | Target::OpenAiChat | Target::Anthropic | Target::GeminiJsonSchema);
            if plain && let Some(tool) = e.tools.first() {
                let published = validator(&schema_of(target, &tool.definition).unwrap());
                for value in &values {
                    prop_assert_eq!(published.is_valid(value), original.is_valid(value), "{}: {}\n{}", target, doc, value);
                }
            }
        }
    }
}

#[test]
fn tool_search_indexes_the_properties_of_a_verbatim_schema() {
    use dsh_providers::tool_search::{Mode, ToolIndex};
    let deferred = |name: &str, input: &str| def(name, input, None).with_defer_loading(true);
    let defs = [
        deferred("json_schema_2020_12_tool", FIXTURE),
        deferred(
            "lookup",
            r#"{"type":"object","properties":{"query":{"type":"string","description":"Free text."}}}"#,
        ),
    ];
    let index = ToolIndex::new(&defs);
    // `contactMethod` and the nested `city` are only in the document.
    for (query, want) in [
        ("contactMethod", "json_schema_2020_12_tool"),
        ("city", "json_schema_2020_12_tool"),
        ("free text", "lookup"),
    ] {
        let hits = index
            .search(query, Mode::Bm25, 1)
            .expect("bm25 never fails");
        assert_eq!(
            hits.first().map(|m| m.definition.name.as_ref()),
            Some(want),
            "{query}"
        );
    }
}
