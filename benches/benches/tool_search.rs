//! `tool_search`: one query over the deferred tools of a 1,000-tool registry.
//!
//! Cases: a BM25 query and a regex query on the built index (`ToolIndex::search`), the
//! same BM25 query as a `tool_search` call through `Registry::execute` (the cached
//! index, the pipeline and the JSON result), and building the index (what a registry
//! change costs the next query). The target is under 1 ms per query.
//!
//! Run: `cargo bench -p dsh-benches --bench tool_search`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../../dsh-runtime/tests/common/generated_tools.rs"]
mod generated_tools;
use dsh_providers::tool_search::{self, Mode, ToolIndex};
use dsh_runtime::json::Value;
use dsh_runtime::{RawTool, Registry, ToolCall, ToolDefinition};
use generated_tools::{GENERATED, generated_tool};

/// 1,000 generated deferred tools.
fn definitions() -> Vec<ToolDefinition> {
    (0..GENERATED).map(|i| generated_tool(i, true)).collect()
}

fn search(c: &mut Criterion) {
    let defs = definitions();
    let index = ToolIndex::new(&defs);
    assert_eq!(index.len(), 1_000);
    let mut group = c.benchmark_group("tool_search");
    group.bench_function("bm25_query_1000", |b| {
        b.iter(|| {
            black_box(
                index
                    .search(black_box("archive the invoice record"), Mode::Bm25, 5)
                    .map(|m| m.len()),
            )
        })
    });
    group.bench_function("regex_query_1000", |b| {
        b.iter(|| {
            black_box(
                index
                    .search(black_box("(?i)archive_(invoice|order)"), Mode::Regex, 5)
                    .map(|m| m.len()),
            )
        })
    });
    group.bench_function("build_index_1000", |b| {
        b.iter(|| black_box(ToolIndex::new(black_box(&defs)).len()))
    });

    let registry = Registry::new();
    for def in &defs {
        let tool = RawTool::from_schemas(
            def.name.to_string(),
            def.description.to_string(),
            (*def.parameters).clone(),
            (*def.output).clone(),
            |_, _| async { Ok(Value::Null) },
        )
        .with_defer_loading(true);
        registry.register(tool).expect("register");
    }
    let _search = tool_search::register(&registry).expect("register tool_search");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    group.bench_function("execute_bm25_1000", |b| {
        b.iter(|| {
            let call = ToolCall::new(
                "c1",
                tool_search::NAME,
                r#"{"query":"archive the invoice record"}"#,
            );
            let result = rt.block_on(registry.execute(call));
            assert!(result.is_success());
            black_box(result)
        })
    });
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
