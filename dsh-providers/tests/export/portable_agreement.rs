//! `#[tool(portable = "..")]` and the export agree: for every type below and every
#![allow(dead_code)] // the fields are read by serde only
//! checked target, the compile-time facts report a loss exactly when exporting a tool
//! with a parameter of that type changes its schema (an export error, or a warning other
//! than the two every tool gets from the target's form: an open parameter root closed
//! under strict mode, `additionalProperties: false` dropped by Gemini's OpenAPI form).
//! Each rule of `schema::portable` is exercised by at least one type here, so the rules
//! cannot drift from the export's.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use dsh_providers::export::{self, ExportWarning, Target};
use dsh_runtime::schema::portable::{self, Facts, feature};
use dsh_runtime::schema::{Property, Schema};
use dsh_runtime::{ToolDefinition, ToolSchema};
use serde::{Deserialize, Serialize};

/// Every warning here that is not the target form's own.
fn changes(w: &ExportWarning) -> bool {
    // A documented unit enum written as an `enum` under strict mode keeps its values
    // (the warning states where the descriptions went): not a change either.
    let inherent = (w.path == "parameters" && w.lost.starts_with("open root closed"))
        || w.lost.starts_with("additionalProperties: false dropped")
        || w.lost
            .starts_with("documented string constants written as an enum");
    !inherent
}

const TARGETS: [(u8, Target); 3] = [
    (portable::OPENAI_STRICT, Target::OpenAiResponsesStrict),
    (portable::ANTHROPIC_STRICT, Target::AnthropicStrict),
    (portable::GEMINI, Target::GeminiOpenApi),
];

/// (facts say lost, export lost, export's reasons) for a parameter `p` of type `T`.
fn verdicts<T: ToolSchema + 'static>(target: (u8, Target)) -> (Option<String>, Vec<String>) {
    let facts: Facts = T::PROPERTY_PORTABILITY;
    let said = portable::check(&facts, target.0, "p", std::any::type_name::<T>())
        .map(|m| m.as_str().to_string());
    let root = Schema::closed_object(vec![Property::new("p", T::property_schema(), !T::OPTIONAL)]);
    let def = ToolDefinition::new("t", "A tool.", Arc::new(root), Arc::new(Schema::json()));
    let e = export::export(std::slice::from_ref(&def), target.1);
    let mut lost: Vec<String> = e.errors.iter().map(ToString::to_string).collect();
    lost.extend(
        e.warnings
            .iter()
            .filter(|w| changes(w))
            .map(ToString::to_string),
    );
    (said, lost)
}

/// Asserts agreement for `T` on every target, and returns the facts' features.
fn agree<T: ToolSchema + 'static>() -> u32 {
    for target in TARGETS {
        let (said, lost) = verdicts::<T>(target);
        assert_eq!(
            said.is_some(),
            !lost.is_empty(),
            "{} under {}: the facts say {said:?}, the export lost {lost:?}",
            std::any::type_name::<T>(),
            target.1
        );
    }
    T::PROPERTY_PORTABILITY.features
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Plain {
    pub a: i64,
    pub b: String,
    pub c: Option<bool>,
}

#[derive(Deserialize, ToolSchema)]
#[schema(open)]
pub(crate) struct Loose {
    pub a: i64,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Empty {}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Bounded {
    #[schema(length(min = 1, max = 3))]
    pub s: String,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct ItemBounds {
    #[schema(length(min = 0, max = 3))]
    pub v: Vec<i64>,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct MinItems {
    #[schema(length(min = 2))]
    pub v: Vec<i64>,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Ranged {
    #[schema(range(min = 0))]
    pub n: i64,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct WithDefault {
    #[schema(default = 3)]
    pub n: i64,
}

#[derive(Deserialize, Serialize, Default, ToolSchema)]
pub(crate) struct SerdeDefault {
    #[serde(default)]
    pub n: i64,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct OneExample {
    #[schema(example = "x")]
    pub s: String,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct TwoExamples {
    #[schema(examples = ["x", "y"])]
    pub s: String,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct NumberEnum {
    #[schema(enum = [1, 2])]
    pub n: i64,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Dashed {
    #[serde(rename = "dry-run")]
    pub dry_run: bool,
}

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct Kebab {
    pub max_count: i64,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) struct HoldsMap {
    pub tags: Vec<BTreeMap<String, String>>,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) enum Unit {
    A,
    B,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) enum DocUnit {
    /// The first.
    A,
    /// The second.
    B,
}

#[derive(Deserialize, ToolSchema)]
pub(crate) enum External {
    A { x: i64 },
    B(String),
}

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "kind")]
pub(crate) enum Internal {
    A { x: i64 },
    B { y: String },
}

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "kind", content = "data")]
pub(crate) enum Adjacent {
    A(i64),
    B { y: String },
}

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
pub(crate) enum Untagged {
    A(i64),
    B(String),
}

#[derive(Deserialize, ToolSchema)]
pub(crate) enum Single {
    Only { x: i64 },
}

#[derive(Deserialize, ToolSchema)]
#[serde(transparent)]
pub(crate) struct Newtype(Vec<Option<i64>>);

#[derive(Deserialize, ToolSchema)]
pub(crate) struct Wrap<T> {
    pub w: T,
}

type Deep9 = Wrap<Wrap<Wrap<Wrap<Wrap<Wrap<Wrap<Wrap<Wrap<i64>>>>>>>>>;
type Deep10 = Wrap<Deep9>;

#[test]
fn facts_and_export_agree_type_by_type() {
    let mut seen = 0u32;
    macro_rules! all {
        ($($t:ty),* $(,)?) => {$( seen |= agree::<$t>(); )*};
    }
    all!(
        i64, f64, String, bool, u8, u16, u32, u64, usize, i8, i32, i128, u128, f32, char,
        std::num::NonZeroU32, std::path::PathBuf, Option<i64>, Option<String>, Vec<String>,
        Vec<u8>, [i64; 2], [String; 1], Vec<Option<i64>>, Option<Vec<Option<String>>>,
        HashMap<String, i64>, BTreeMap<String, String>, serde_json::Value,
        serde_json::Map<String, serde_json::Value>, Box<Plain>, Arc<String>,
        Plain, Loose, Empty, Bounded, ItemBounds, MinItems, Ranged, WithDefault, SerdeDefault,
        OneExample, TwoExamples, NumberEnum, Dashed, Kebab, HoldsMap, Unit, DocUnit, External,
        Internal, Adjacent, Untagged, Single, Newtype, Vec<Plain>, Option<Plain>, Deep9, Deep10,
    );
    // Every feature the facts know (but the hand-written "unknown") was exercised.
    let all = (1u32 << feature::COUNT) - 1;
    assert_eq!(
        seen | feature::UNKNOWN,
        all,
        "features never exercised: {:#b}",
        all & !seen
    );
}

#[test]
fn each_rule_is_lost_on_its_targets_only() {
    use portable::{ANTHROPIC_STRICT as A, GEMINI as G, OPENAI_STRICT as O};
    // (a type showing the rule, the targets that lose it)
    fn lost_on<T: ToolSchema + 'static>() -> Vec<u8> {
        TARGETS
            .iter()
            .filter(|t| verdicts::<T>(**t).0.is_some())
            .map(|t| t.0)
            .collect()
    }
    assert_eq!(lost_on::<HashMap<String, i64>>(), [O, A, G]);
    assert_eq!(lost_on::<serde_json::Value>(), [O, A]);
    assert_eq!(lost_on::<Loose>(), [O, A]);
    assert_eq!(lost_on::<Empty>(), [G]);
    assert_eq!(lost_on::<Bounded>(), [O, A]);
    assert_eq!(lost_on::<u32>(), [A]);
    assert_eq!(lost_on::<Ranged>(), [A]);
    assert_eq!(lost_on::<[i64; 2]>(), [A]);
    assert_eq!(lost_on::<MinItems>(), [A]);
    assert_eq!(lost_on::<WithDefault>(), [O]);
    assert_eq!(lost_on::<OneExample>(), [O, A]);
    assert_eq!(lost_on::<TwoExamples>(), [O, A, G]);
    assert_eq!(lost_on::<External>(), [O, A, G]);
    assert_eq!(lost_on::<Vec<Option<i64>>>(), [O, A]);
    assert_eq!(lost_on::<NumberEnum>(), [G]);
    assert_eq!(lost_on::<Dashed>(), [G]);
    assert_eq!(lost_on::<Deep10>(), [O]);
    assert!(lost_on::<Deep9>().is_empty());
    assert!(lost_on::<Plain>().is_empty());
    assert!(lost_on::<Unit>().is_empty());
    // Documented unit variants: an `enum` on the strict targets, a union on Gemini.
    assert_eq!(lost_on::<DocUnit>(), [G]);
    assert_eq!(lost_on::<ExampleUnit>(), [O, A, G]);
}

#[derive(Deserialize, ToolSchema)]
pub(crate) enum ExampleUnit {
    /// The first.
    #[schema(example = "A")]
    A,
    B,
}

#[test]
fn a_documented_unit_enum_exports_as_an_enum_on_the_strict_targets() {
    let root = Schema::closed_object(vec![Property::new("p", DocUnit::property_schema(), true)]);
    let def = ToolDefinition::new("t", "A tool.", Arc::new(root), Arc::new(Schema::json()));
    for target in [Target::OpenAiResponsesStrict, Target::AnthropicStrict] {
        let e = export::export(std::slice::from_ref(&def), target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        let entry = &e.to_serde()[0];
        let p = match target {
            Target::AnthropicStrict => &entry["input_schema"]["properties"]["p"],
            _ => &entry["parameters"]["properties"]["p"],
        };
        assert_eq!(
            *p,
            serde_json::json!({
                "type": "string",
                "enum": ["A", "B"],
                "description": "\"A\": The first.\n\"B\": The second."
            }),
            "{target}: {entry}"
        );
        let warned: Vec<&ExportWarning> = e
            .warnings
            .iter()
            .filter(|w| w.lost.starts_with("documented string constants"))
            .collect();
        assert_eq!(warned.len(), 1, "{target}: {:?}", e.warnings);
        assert_eq!(warned[0].path, "parameters.properties.p");
    }
    // A lossless export keeps the `oneOf` with each variant's description.
    let e = export::export(std::slice::from_ref(&def), Target::OpenAiResponses);
    let p = &e.to_serde()[0]["parameters"]["properties"]["p"];
    assert_eq!(
        p["oneOf"][0],
        serde_json::json!({"type": "string", "const": "A", "description": "The first."}),
        "{p}"
    );
}

#[test]
fn a_nested_rule_names_its_field_path() {
    let m = portable::check(
        &<HoldsMap as ToolSchema>::PORTABILITY,
        portable::OPENAI_STRICT,
        "q",
        "HoldsMap",
    )
    .map(|m| m.as_str().to_string());
    assert_eq!(
        m.as_deref(),
        Some(
            "`q.tags[]` (in `q: HoldsMap`) is a map, which OpenAI strict mode cannot express (every object must be closed); use a Vec of key/value structs, or drop `openai-strict` from `portable`"
        )
    );
}

/// A filter.
#[derive(Deserialize, ToolSchema)]
pub(crate) struct Filter {
    pub field: String,
    pub equals: Option<String>,
}

/// Search.
#[dsh_runtime::tool(
    portable("openai-strict", "anthropic-strict", "gemini"),
    deny_unknown_args
)]
async fn search(
    query: String,
    order: Option<Unit>,
    filters: Option<Vec<Filter>>,
    limit: Option<i64>,
) -> i64 {
    let _ = (query, order, filters);
    limit.unwrap_or(0)
}

#[test]
fn a_tool_that_compiles_with_portable_exports_unchanged() {
    let registry = dsh_runtime::Registry::new();
    let _r = registry.register(Search).unwrap();
    for (_, target) in TARGETS {
        let e = export::export_registry(&registry, target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        let changed: Vec<&ExportWarning> = e.warnings.iter().filter(|w| changes(w)).collect();
        assert!(changed.is_empty(), "{target}: {changed:?}");
    }
}

/// Pick a level: compiles with `portable` on both strict targets, whose exports keep
/// every value (the descriptions move into the parameter's description, with a warning).
#[dsh_runtime::tool(portable("openai-strict", "anthropic-strict"))]
async fn pick(level: DocUnit, fallback: Option<DocUnit>) -> String {
    let _ = (level, fallback);
    String::new()
}

#[test]
fn a_documented_unit_enum_is_portable_to_the_strict_targets() {
    let registry = dsh_runtime::Registry::new();
    let _r = registry.register(Pick).unwrap();
    for target in [Target::OpenAiResponsesStrict, Target::AnthropicStrict] {
        let e = export::export_registry(&registry, target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        let changed: Vec<&ExportWarning> = e.warnings.iter().filter(|w| changes(w)).collect();
        assert!(changed.is_empty(), "{target}: {changed:?}");
        let stated = e
            .warnings
            .iter()
            .filter(|w| {
                w.lost
                    .starts_with("documented string constants written as an enum")
            })
            .count();
        assert_eq!(stated, 2, "{target}: {:?}", e.warnings);
    }
}
