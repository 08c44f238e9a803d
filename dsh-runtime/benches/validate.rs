//! `validate`: the cost of checking a model's arguments, on two shapes.
//!
//! - A = `{path: String, offset: Option<u64>, limit: Option<u64>}`
//! - B = `{query: String, filters: Vec<Filter{field, op: enum, value: Value}>,
//!   page: Option<Page{size: u32, cursor: Option<String>}>}` with 5 filters
//!
//! Each shape, valid and invalid, measured in the same run:
//! - `ours`: lossless snapshot of the raw text + validation (every violation reported);
//! - `jsonschema`: the `jsonschema` crate validating an already-parsed `serde_json::Value`
//!   against the same projected schema (`is_valid` when valid, `iter_errors` collecting
//!   every error when invalid), so its parse is *not* counted;
//! - `jsonschema_from_text`: the same plus `serde_json::from_str` (same work as ours);
//! - `serde_floor`: `serde_json::from_str` into the Rust struct alone, no validation.
//!
//! Run: `cargo bench -p dsh-runtime --bench validate`. See BENCHMARKS.md.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use dsh_runtime::__private::field;
use dsh_runtime::json;
use dsh_runtime::validate::validate_arguments;
use dsh_runtime::{ToolSchema, schema::Schema};
use serde::Deserialize;

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeA {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

impl ToolSchema for ShapeA {
    fn build_schema() -> Schema {
        Schema::closed_object(vec![
            field::<String>("path", "", false),
            field::<Option<u64>>("offset", "", false),
            field::<Option<u64>>("limit", "", false),
        ])
    }
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Contains,
}

impl ToolSchema for Op {
    fn build_schema() -> Schema {
        Schema::string_enum(["eq", "ne", "lt", "gt", "contains"])
    }
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Filter {
    field: String,
    op: Op,
    value: serde_json::Value,
}

impl ToolSchema for Filter {
    fn build_schema() -> Schema {
        Schema::closed_object(vec![
            field::<String>("field", "", false),
            field::<Op>("op", "", false),
            field::<serde_json::Value>("value", "", false),
        ])
    }
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Page {
    size: u32,
    cursor: Option<String>,
}

impl ToolSchema for Page {
    fn build_schema() -> Schema {
        Schema::closed_object(vec![
            field::<u32>("size", "", false),
            field::<Option<String>>("cursor", "", false),
        ])
    }
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeB {
    query: String,
    filters: Vec<Filter>,
    page: Option<Page>,
}

impl ToolSchema for ShapeB {
    fn build_schema() -> Schema {
        Schema::closed_object(vec![
            field::<String>("query", "", false),
            field::<Vec<Filter>>("filters", "", false),
            field::<Option<Page>>("page", "", false),
        ])
    }
}

const A_VALID: &str = r#"{"path":"/tmp/x","offset":10}"#;
const A_INVALID: &str = r#"{"path":7,"offset":-1,"extra":true}"#;
const B_VALID: &str = r#"{"query":"rust async","filters":[{"field":"lang","op":"eq","value":"rust"},{"field":"stars","op":"gt","value":100},{"field":"archived","op":"ne","value":true},{"field":"topics","op":"contains","value":["cli","tools"]},{"field":"updated","op":"lt","value":{"days":30}}],"page":{"size":20,"cursor":"abc"}}"#;
const B_INVALID: &str = r#"{"query":"rust async","filters":[{"field":"lang","op":"equals","value":"rust"},{"field":"stars","op":"gt"},{"field":1,"op":"ne","value":true},{"field":"topics","op":"contains","value":["cli","tools"],"x":1},{"field":"updated","op":"lt","value":{"days":30}}],"page":{"size":-20,"cursor":5}}"#;

fn shape<T: ToolSchema + for<'de> Deserialize<'de> + 'static>(
    c: &mut Criterion,
    name: &str,
    text: &'static str,
    valid: bool,
) {
    let schema: Arc<Schema> = T::schema();
    let projected = json::to_serde(&schema.to_json_schema());
    let oracle = jsonschema::validator_for(&projected).expect("schema compiles");
    let parsed: serde_json::Value = serde_json::from_str(text).expect("bench input parses");
    // The verdicts must be what the bench claims.
    let ours = validate_arguments(&schema, &json::parse(text).expect("snapshot"));
    assert_eq!(ours.is_ok(), valid, "{name}: {ours:?}");
    assert_eq!(oracle.is_valid(&parsed), valid, "{name}");
    if !valid {
        let ours_count = ours.err().map_or(0, |e| e.violations().len());
        let theirs_count = oracle.iter_errors(&parsed).count();
        eprintln!("{name}: ours reports {ours_count} violations, jsonschema {theirs_count} errors");
    }

    let mut g = c.benchmark_group(name);
    g.bench_function("ours", |b| {
        b.iter(|| {
            let v = json::parse(black_box(text)).expect("snapshot");
            match validate_arguments(&schema, &v) {
                Ok(ok) => black_box(ok.has_omitted_nulls()) as usize,
                Err(e) => black_box(e.violations().len()),
            }
        })
    });
    let snapshot = json::parse(text).expect("snapshot");
    g.bench_function("ours_parse_only", |b| {
        b.iter(|| black_box(json::parse(black_box(text)).is_ok()))
    });
    g.bench_function("ours_validate_only", |b| {
        b.iter(|| match validate_arguments(&schema, black_box(&snapshot)) {
            Ok(ok) => black_box(ok.has_omitted_nulls()) as usize,
            Err(e) => black_box(e.violations().len()),
        })
    });
    g.bench_function("jsonschema", |b| {
        b.iter(|| {
            if valid {
                black_box(oracle.is_valid(black_box(&parsed))) as usize
            } else {
                black_box(oracle.iter_errors(black_box(&parsed)).count())
            }
        })
    });
    g.bench_function("jsonschema_from_text", |b| {
        b.iter(|| {
            let v: serde_json::Value = serde_json::from_str(black_box(text)).expect("parses");
            if valid {
                black_box(oracle.is_valid(&v)) as usize
            } else {
                black_box(oracle.iter_errors(&v).count())
            }
        })
    });
    g.bench_function("serde_floor", |b| {
        b.iter(|| black_box(serde_json::from_str::<T>(black_box(text)).is_ok()))
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    shape::<ShapeA>(c, "A_valid", A_VALID, true);
    shape::<ShapeA>(c, "A_invalid", A_INVALID, false);
    shape::<ShapeB>(c, "B_valid", B_VALID, true);
    shape::<ShapeB>(c, "B_invalid", B_INVALID, false);
}

criterion_group!(validate, benches);
criterion_main!(validate);
