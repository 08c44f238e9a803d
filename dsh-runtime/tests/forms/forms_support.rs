//! Helpers shared by the form tests: the form of a type as `serde_json`, and the MCP
//! oracle.

use std::sync::OnceLock;

use dsh_runtime::caller::{ElicitForm, form_schema_of};
use dsh_runtime::json;

/// MCP 2025-11-25 `requestedSchema`, as the fixture writes it.
pub(crate) fn definition() -> &'static serde_json::Value {
    static DEFINITION: OnceLock<serde_json::Value> = OnceLock::new();
    DEFINITION.get_or_init(|| {
        serde_json::from_str(include_str!("mcp_requested_schema_2025_11_25.json"))
            .expect("the fixture is JSON")
    })
}

/// The fixture, compiled.
pub(crate) fn oracle() -> &'static jsonschema::Validator {
    static ORACLE: OnceLock<jsonschema::Validator> = OnceLock::new();
    ORACLE.get_or_init(|| {
        assert!(
            jsonschema::draft202012::meta::is_valid(definition()),
            "the fixture is a JSON Schema 2020-12 document"
        );
        jsonschema::draft202012::new(definition()).expect("the fixture compiles")
    })
}

/// Every way `form` is not an MCP `requestedSchema`, plus the names `required` lists
/// that are no property (a rule the definition's types cannot state).
pub(crate) fn mcp_violations(form: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = oracle()
        .iter_errors(form)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if let (Some(required), Some(properties)) = (
        form.get("required").and_then(|r| r.as_array()),
        form.get("properties").and_then(|p| p.as_object()),
    ) {
        for name in required {
            let name = name.as_str().unwrap_or_default();
            if !properties.contains_key(name) {
                out.push(format!("`required` names `{name}`, which is no property"));
            }
        }
    }
    out
}

/// Panic unless `form` is an MCP `requestedSchema`.
#[track_caller]
pub(crate) fn assert_mcp(form: &serde_json::Value) {
    let violations = mcp_violations(form);
    assert!(
        violations.is_empty(),
        "not an MCP form: {violations:#?}\n{form:#}"
    );
}

/// The form `elicit::<T>` sends, checked against MCP's definition.
#[track_caller]
pub(crate) fn form_of<T: ElicitForm>() -> serde_json::Value {
    let form = form_schema_of::<T>().unwrap_or_else(|e| {
        panic!(
            "the form of `{}` is written: {e}",
            std::any::type_name::<T>()
        )
    });
    let form = json::to_serde(&form);
    assert_mcp(&form);
    form
}

/// One property of `T`'s form.
#[track_caller]
pub(crate) fn property_of<T: ElicitForm>(name: &str) -> serde_json::Value {
    let form = form_of::<T>();
    form["properties"]
        .get(name)
        .unwrap_or_else(|| panic!("no property `{name}` in {form:#}"))
        .clone()
}

/// The names `T`'s form requires.
pub(crate) fn required_of<T: ElicitForm>() -> Vec<String> {
    form_of::<T>()
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .map(|n| n.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `text` as the runtime's JSON.
pub(crate) fn value(text: &str) -> json::Value {
    json::parse(text).expect("test JSON parses")
}
