//! The code-mode SDK renderers never fail on random schemas, report nothing for them
//! (but a map with declared properties in TypeScript), and are deterministic.
//!
//! `PROPTEST_CASES` raises the case count.

use std::sync::Arc;

use dsh_code::sdk::{python, typescript};
use dsh_runtime::ToolDefinition;
use dsh_runtime::schema::{Additional, Property, Schema};
use proptest::prelude::*;

use crate::random_schema::*;

/// A parameter root: an object (open or closed) with random properties.
fn params_strategy() -> impl Strategy<Value = Schema> {
    (
        proptest::collection::vec((schema_strategy(), any::<bool>()), 0..5),
        any::<bool>(),
    )
        .prop_map(|(props, open)| {
            let properties = props
                .into_iter()
                .enumerate()
                .map(|(i, (s, req))| Property::new(["p", "q", "items", "x y", "n"][i], s, req))
                .collect();
            Schema::object(
                properties,
                if open {
                    Additional::Open
                } else {
                    Additional::Closed
                },
            )
        })
}

fn tool(params: Schema, output: Schema) -> ToolDefinition {
    ToolDefinition::new(
        "random_tool",
        "A random tool.",
        Arc::new(params),
        Arc::new(output),
    )
}

proptest! {
    #![proptest_config(cases(600))]

    #[test]
    fn sdks_render_random_schemas_without_degrading(params in params_strategy(), output in schema_strategy()) {
        let d = tool(params, output);
        let ts = typescript::render([&d]);
        prop_assert!(ts.code.contains("  random_tool: "));
        prop_assert!(ts.warnings.is_empty() || ts.warnings.iter().all(|w| w.lost.contains("map with declared properties")), "{:?}", ts.warnings);
        let py = python::render([&d]);
        prop_assert!(py.code.contains("    async def random_tool(self, args: "));
        prop_assert_eq!(ts.code, typescript::render([&d]).code);
    }
}
