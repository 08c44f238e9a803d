//! `#[tool]` and `#[toolbox]` end to end, without a registry: definitions and exact
//! schemas, validation and deserialization of arguments, calling the body through the
//! trait, the erased interface and the original fn, presenters, render, toolboxes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_runtime::BodyOutcome;
use dsh_runtime::cards::{CallView, ResultSummary, ResultView, ToolCallKind};
use dsh_runtime::json::{self, Value, parse};
use dsh_runtime::schema::Schema;
use dsh_runtime::validate::validate_arguments;
use dsh_runtime::{
    Tool, ToolContext, ToolError, ToolSchema, Toolbox, content::ContentBlock, tool, toolbox,
};

fn v(text: &str) -> Value {
    parse(text).expect("test JSON parses")
}

fn cx(name: &str) -> ToolContext {
    ToolContext::detached(name)
}

// --- individual parameters, context by value, `Result<T, ToolError>` ---

/// Read a file from disk.
///
/// Returns the text.
#[tool(read_only, concurrency_safe)]
async fn read_file(
    /// Absolute path of the file.
    path: String,
    /// 1-based first line.
    offset: Option<u64>,
    limit: Option<u64>,
    cx: ToolContext,
) -> Result<String, ToolError> {
    if path.is_empty() {
        return Err(ToolError::with_code("FS_EMPTY", "empty path"));
    }
    Ok(format!("{}:{path}:{offset:?}:{limit:?}", cx.name()))
}

/// The parameter root is open (no `additionalProperties`), and a `u64` publishes only its
/// minimum.
const READ_FILE_PARAMETERS: &str = r#"{"type":"object","properties":{"path":{"type":"string","description":"Absolute path of the file."},"offset":{"type":"integer","description":"1-based first line.","minimum":0},"limit":{"type":"integer","minimum":0}},"required":["path"]}"#;

#[test]
fn definition_comes_from_the_signature_and_docs() {
    let def = ReadFile.definition();
    assert_eq!(def.name, "read_file");
    assert_eq!(
        def.description,
        "Read a file from disk.\n\nReturns the text."
    );
    assert_eq!(def.title, None);
    assert_eq!(def.timeout_ms, None);
    assert!(def.annotations.read_only);
    assert!(
        !def.annotations.destructive && !def.annotations.idempotent && !def.annotations.open_world
    );
    assert_eq!(def.parameters.to_json_string(), READ_FILE_PARAMETERS);
    assert_eq!(def.output.to_json_string(), r#"{"type":"string"}"#);
    // Built once: the same static every time.
    assert!(std::ptr::eq(def, ReadFile.definition()));
    // The args struct publishes the same schema.
    assert_eq!(
        ReadFileArgs::schema().to_json_string(),
        READ_FILE_PARAMETERS
    );
}

#[test]
fn arguments_validate_and_deserialize() {
    let def = ReadFile.definition();
    let good = v(r#"{"path":"/etc/hosts","limit":null,"offset":3}"#);
    let validated = validate_arguments(&def.parameters, &good).expect("valid");
    let normalized = validated.normalized(&def.parameters, &good);
    let args: ReadFileArgs = json::from_value(&normalized).expect("deserializes");
    assert_eq!(args.path, "/etc/hosts");
    assert_eq!(args.offset, Some(3));
    assert_eq!(args.limit, None);

    let bad = v(r#"{"offset":-1,"extra":true}"#);
    let err = validate_arguments(&def.parameters, &bad).expect_err("invalid");
    assert_eq!(
        err.violations(),
        [
            r#"missing required property "path""#,
            r#""offset" must be at least 0"#,
        ]
    );
    // An unknown key passes the open root, and normalization removes it.
    let extra = v(r#"{"path":"p","extra":1}"#);
    let validated = validate_arguments(&def.parameters, &extra).expect("open root");
    assert_eq!(
        *validated.normalized(&def.parameters, &extra),
        v(r#"{"path":"p"}"#)
    );
    // serde, and the generated reader, ignore it too.
    assert!(json::from_value::<ReadFileArgs>(&extra).is_ok());
    assert_eq!(
        ReadFile::args_from_json(&extra).map(|a| a.path).ok(),
        Some("p".to_string())
    );
    // The type's range is still enforced although `maximum` is not published.
    let huge = v(r#"{"path":"p","limit":18446744073709551616}"#);
    assert_eq!(
        validate_arguments(&def.parameters, &huge)
            .expect_err("out of range")
            .violations(),
        [r#""limit" must be at most 18446744073709551615"#]
    );
}

/// Read strictly.
#[tool(deny_unknown_args)]
async fn read_strictly(path: String) -> String {
    path
}

#[test]
fn deny_unknown_args_closes_the_root() {
    let def = ReadStrictly.definition();
    assert_eq!(
        def.parameters.to_json_string(),
        r#"{"type":"object","additionalProperties":false,"properties":{"path":{"type":"string"}},"required":["path"]}"#
    );
    let extra = v(r#"{"path":"p","limt":1}"#);
    assert_eq!(
        validate_arguments(&def.parameters, &extra)
            .expect_err("closed")
            .violations(),
        [r#""limt" is not a declared property (additionalProperties: false)"#]
    );
    // The generated struct and reader reject it too.
    assert!(json::from_value::<ReadStrictlyArgs>(&extra).is_err());
    assert!(ReadStrictly::args_from_json(&extra).is_err());
}

#[tokio::test]
async fn the_body_runs_through_the_trait_the_erased_tool_and_the_fn() {
    let args = ReadFileArgs {
        path: "/a".into(),
        offset: None,
        limit: Some(2),
    };
    let out = ReadFile.call(args, cx("read_file")).await;
    assert_eq!(out, Ok("read_file:/a:None:Some(2)".to_string()));

    let direct = read_file("/b".into(), Some(1), None, cx("direct")).await;
    assert_eq!(direct, Ok("direct:/b:Some(1):None".to_string()));

    let failed = ReadFile
        .call(
            ReadFileArgs {
                path: String::new(),
                offset: None,
                limit: None,
            },
            cx("read_file"),
        )
        .await
        .expect_err("empty path fails");
    assert_eq!(failed.code_str(), Some("FS_EMPTY"));

    let erased: &dyn dsh_runtime::ErasedTool = &ReadFile;
    let raw = v(r#"{"path":"/c"}"#);
    match erased.call_json(&raw, cx("read_file")).await {
        BodyOutcome::Value(out) => assert_eq!(out, v(r#""read_file:/c:None:None""#)),
        other => panic!("unexpected outcome {other:?}"),
    }
}

#[test]
fn concurrency_flag_soft_validates() {
    assert!(ReadFile.is_concurrency_safe(&v(r#"{"path":"/x"}"#)));
    assert!(!ReadFile.is_concurrency_safe(&v(r#"{"path":7}"#)));
    assert!(!ReadFile.is_concurrency_safe(&v("[]")));
    // The default without the key.
    assert!(!Ping.is_concurrency_safe(&v("{}")));
}

// --- no parameters, no return type; plain `T`; `io::Result<T>`; other errors ---

/// Check the tool host is alive.
#[tool]
async fn ping() {}

/// Add two numbers.
#[tool(idempotent)]
pub(crate) async fn add(a: i32, b: i32) -> i64 {
    i64::from(a) + i64::from(b)
}

/// Fail with an I/O error.
#[tool]
async fn broken(code: u8) -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::other(format!("disk {code} on fire")))
}

#[derive(Debug)]
struct MyError;

impl std::fmt::Display for MyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("my error")
    }
}

impl std::error::Error for MyError {}

/// Fail with a custom error.
#[tool]
async fn custom_error() -> Result<bool, MyError> {
    Err(MyError)
}

#[tokio::test]
async fn return_forms() {
    assert_eq!(
        Ping.definition().parameters.to_json_string(),
        r#"{"type":"object"}"#
    );
    assert_eq!(
        Ping.definition().output.to_json_string(),
        r#"{"type":"null"}"#
    );
    assert_eq!(Ping.call(PingArgs {}, cx("ping")).await, Ok(()));

    assert!(Add.definition().annotations.idempotent);
    assert_eq!(
        Add.definition().parameters.to_json_string(),
        r#"{"type":"object","properties":{"a":{"type":"integer","minimum":-2147483648,"maximum":2147483647},"b":{"type":"integer","minimum":-2147483648,"maximum":2147483647}},"required":["a","b"]}"#
    );
    assert_eq!(Add.call(AddArgs { a: 2, b: 40 }, cx("add")).await, Ok(42));
    assert_eq!(add(1, 1).await, 2);

    let e = Broken
        .call(BrokenArgs { code: 7 }, cx("broken"))
        .await
        .expect_err("fails");
    assert_eq!(e.message(), "disk 7 on fire");
    assert_eq!(
        Broken.definition().output.to_json_string(),
        r#"{"type":"array","items":{"type":"integer","minimum":0,"maximum":255}}"#
    );
    let e = CustomError
        .call(CustomErrorArgs {}, cx("custom_error"))
        .await
        .expect_err("fails");
    assert_eq!(e.message(), "my error");
}

// --- `# Arguments`, context by reference, raw identifiers, `#[doc = macro!()]` ---

#[doc = concat!(" Search ", "the index.")]
///
/// # Arguments
///
/// * `query` - What to look for,
///   in plain words.
/// * `r#type`: The kind of document.
/// * `cx` - The call context (not a property).
///
/// # Errors
///
/// Never.
#[tool(name = "search-index")]
async fn search(
    query: String,
    r#type: Option<String>,
    cx: &ToolContext,
) -> Result<Vec<String>, ToolError> {
    Ok(vec![
        query,
        r#type.unwrap_or_default(),
        cx.call_id().to_string(),
    ])
}

#[tokio::test]
async fn arguments_section_context_by_ref_and_raw_names() {
    let def = Search.definition();
    assert_eq!(def.name, "search-index");
    assert_eq!(def.description, "Search the index.\n\n# Errors\n\nNever.");
    assert_eq!(
        def.parameters.to_json_string(),
        r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for,\nin plain words."},"type":{"type":"string","description":"The kind of document."}},"required":["query"]}"#
    );
    let args: SearchArgs =
        json::from_value(&v(r#"{"query":"q","type":"pdf"}"#)).expect("deserializes");
    assert_eq!(args.r#type.as_deref(), Some("pdf"));
    let out = Search.call(args, cx("search-index")).await;
    assert_eq!(
        out,
        Ok(vec![
            "q".to_string(),
            "pdf".to_string(),
            "direct".to_string()
        ])
    );
}

// --- every key ---

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, ToolSchema)]
struct Edit {
    path: String,
    lines: u64,
}

fn edit_is_safe(args: &EditFileArgs) -> bool {
    if args.path == "panic" {
        panic!("predicate exploded");
    }
    args.dry_run
}

fn edit_render(args: &EditFileArgs, out: &Edit) -> Vec<ContentBlock> {
    if args.path == "panic" {
        panic!("render exploded");
    }
    vec![ContentBlock::text(format!(
        "edited {} ({} lines)",
        out.path, out.lines
    ))]
}

fn edit_call(args: &EditFileArgs) -> CallView {
    if args.path == "panic" {
        panic!("presenter exploded");
    }
    CallView::Generic {
        title: format!("Edit {}", args.path),
        kind: Some(ToolCallKind::Edit),
        raw_input: None,
        content: None,
        locations: None,
    }
}

fn edit_result(args: &EditFileArgs, result: &ResultSummary) -> Option<ResultView> {
    if result.is_error {
        return None;
    }
    Some(ResultView::Generic {
        title: Some(format!("Edited {}", args.path)),
        content: None,
    })
}

fn edit_meta(args: &EditFileArgs, out: &Edit) -> Option<Value> {
    if args.path == "panic" {
        panic!("meta exploded");
    }
    (!args.dry_run).then(|| v(&format!(r#"{{"lines":{}}}"#, out.lines)))
}

fn edit_finalize(args: &EditFileArgs, content: &[ContentBlock]) -> Option<Vec<ContentBlock>> {
    let mut c = content.to_vec();
    c.push(ContentBlock::text(format!("[{}]", args.path)));
    Some(c)
}

/// Ignored: the `description` key wins.
#[tool(
    name = "edit",
    description = "Edit a file in place.",
    title = "Edit file",
    timeout_ms = 30000,
    concurrency_safe = edit_is_safe,
    destructive,
    idempotent,
    open_world,
    render = edit_render,
    present_call = edit_call,
    present_result = edit_result,
    presentation_meta = edit_meta,
    finalize_content = edit_finalize
)]
async fn edit_file(path: String, dry_run: bool) -> Result<Edit, ToolError> {
    Ok(Edit {
        path,
        lines: if dry_run { 0 } else { 3 },
    })
}

#[tokio::test]
async fn every_key() {
    let def = EditFile.definition();
    assert_eq!(def.name, "edit");
    assert_eq!(def.description, "Edit a file in place.");
    assert_eq!(def.title.as_deref(), Some("Edit file"));
    assert_eq!(def.timeout_ms.map(|t| t.get()), Some(30000));
    let a = def.annotations;
    assert!(!a.read_only && a.destructive && a.idempotent && a.open_world);
    assert_eq!(
        def.output.to_json_string(),
        r#"{"type":"object","additionalProperties":false,"properties":{"path":{"type":"string"},"lines":{"type":"integer","minimum":0}},"required":["path","lines"]}"#
    );

    let good = v(r#"{"path":"/f","dry_run":true}"#);
    let stale = v(r#"{"file":"/f"}"#);
    let boom = v(r#"{"path":"panic","dry_run":true}"#);

    // concurrency_safe = predicate: invalid or panicking -> false.
    assert!(EditFile.is_concurrency_safe(&good));
    assert!(!EditFile.is_concurrency_safe(&v(r#"{"path":"/f","dry_run":false}"#)));
    assert!(!EditFile.is_concurrency_safe(&stale));
    assert!(!EditFile.is_concurrency_safe(&boom));

    // present_call returning a plain `CallView`; stale args and panics -> None.
    match EditFile.present_call(&good) {
        Some(CallView::Generic { title, kind, .. }) => {
            assert_eq!(title, "Edit /f");
            assert_eq!(kind, Some(ToolCallKind::Edit));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(EditFile.present_call(&stale), None);
    assert_eq!(EditFile.present_call(&boom), None);

    let summary = ResultSummary {
        content: vec![ContentBlock::text("ok")],
        is_error: false,
        meta: None,
    };
    assert_eq!(
        EditFile.present_result(&good, &summary),
        Some(ResultView::Generic {
            title: Some("Edited /f".into()),
            content: None
        })
    );
    assert_eq!(EditFile.present_result(&stale, &summary), None);

    let value = json::to_value(
        &EditFile
            .call(
                json::from_value(&v(r#"{"path":"/f","dry_run":false}"#)).expect("args"),
                cx("edit"),
            )
            .await
            .expect("ok"),
    )
    .expect("json");
    let live = v(r#"{"path":"/f","dry_run":false}"#);
    assert_eq!(
        EditFile.render(&live, &value),
        Ok(vec![ContentBlock::text("edited /f (3 lines)")])
    );
    // Render runs on validated args: a mismatch or a panic is an error.
    let e = EditFile.render(&stale, &value).expect_err("stale args");
    assert!(
        e.message().starts_with("render: invalid arguments: "),
        "{e:?}"
    );
    let e = EditFile.render(&boom, &value).expect_err("panic");
    assert_eq!(e.message(), "render panicked: render exploded");
    let e = EditFile.render(&live, &v("1")).expect_err("wrong value");
    assert!(
        e.message()
            .starts_with("render: the value does not deserialize"),
        "{e:?}"
    );

    assert_eq!(
        EditFile.presentation_meta(&live, &value),
        Ok(Some(v(r#"{"lines":3}"#)))
    );
    assert_eq!(EditFile.presentation_meta(&good, &value), Ok(None));
    assert_eq!(EditFile.presentation_meta(&stale, &value), Ok(None));
    // A live projection: a panic is an error, not a silent fallback.
    let e = EditFile
        .presentation_meta(&boom, &value)
        .expect_err("panic");
    assert_eq!(e.message(), "presentation_meta panicked: meta exploded");

    assert_eq!(
        EditFile.finalize_content(&good, &[ContentBlock::text("a")]),
        Some(vec![ContentBlock::text("a"), ContentBlock::text("[/f]")])
    );
    assert_eq!(EditFile.finalize_content(&stale, &[]), None);
}

#[test]
fn tools_without_hooks_use_the_defaults() {
    let value = v(r#""text""#);
    assert_eq!(
        Ping.render(&v("{}"), &value),
        Ok(vec![ContentBlock::text("text")])
    );
    assert_eq!(Ping.present_call(&v("{}")), None);
    assert_eq!(Ping.presentation_meta(&v("{}"), &value), Ok(None));
}

// --- one struct as the whole arguments (`#[tool(args)]`) ---

/// An edit that rejects unknown fields.
#[derive(Debug, serde::Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StrictEdit {
    path: String,
}

/// Apply an edit, strictly.
#[tool(args)]
async fn apply_strict(edit: StrictEdit) -> String {
    edit.path
}

/// Apply an edit.
#[tool(args)]
async fn apply(edit: Edit, cx: ToolContext) -> String {
    format!("{} {} {}", cx.name(), edit.path, edit.lines)
}

#[tokio::test]
async fn args_struct() {
    // The struct's schema as the parameter root: open (nested, `Edit` stays closed), and
    // without the struct's own annotations (the root carries none; the tool's description
    // is what the model reads).
    let root = |schema: &dsh_runtime::schema::Schema| {
        let mut s = schema.clone();
        s.description = None;
        s.title = None;
        s.to_json_string()
    };
    assert!(StrictEdit::schema().description.is_some());
    assert_eq!(
        Apply.definition().parameters.to_json_string(),
        root(&Edit::schema()).replace(r#""additionalProperties":false,"#, "")
    );
    assert!(
        Edit::schema()
            .to_json_string()
            .contains(r#""additionalProperties":false"#)
    );
    // A struct with `deny_unknown_fields` keeps the root closed.
    assert_eq!(
        ApplyStrict.definition().parameters.to_json_string(),
        root(&StrictEdit::schema())
    );
    assert!(
        ApplyStrict
            .definition()
            .parameters
            .to_json_string()
            .starts_with(r#"{"type":"object","additionalProperties":false,"properties""#)
    );
    let edit: <Apply as Tool>::Args =
        json::from_value(&v(r#"{"path":"p","lines":2}"#)).expect("args");
    assert_eq!(
        Apply.call(edit, cx("apply")).await,
        Ok("apply p 2".to_string())
    );
}

// --- toolbox ---

struct Counter {
    prefix: String,
    count: AtomicU64,
}

#[toolbox]
impl Counter {
    /// Greet someone.
    #[tool]
    pub(crate) async fn greet(
        &self,
        /// Who to greet.
        name: String,
    ) -> String {
        self.count.fetch_add(1, Ordering::SeqCst);
        format!("{} {name}", self.prefix)
    }

    /// Read the counter.
    #[tool(name = "count", read_only, present_call = Self::count_card)]
    async fn current(self: Arc<Self>, cx: &ToolContext) -> Result<u64, ToolError> {
        let _ = cx;
        Ok(self.count.load(Ordering::SeqCst))
    }

    /// Reset nothing, statelessly.
    #[tool]
    async fn version() -> String {
        "1".into()
    }

    fn count_card(_: &CounterCurrentArgs) -> Option<CallView> {
        Some(CallView::generic("count", None))
    }

    /// Not a tool.
    fn helper(&self) -> usize {
        self.prefix.len()
    }
}

#[tokio::test]
async fn toolbox_exposes_every_tool_method() {
    let counter = Arc::new(Counter {
        prefix: "hello".into(),
        count: AtomicU64::new(0),
    });
    let tools = Arc::clone(&counter).tools();
    let names: Vec<&str> = tools.iter().map(|t| &*t.definition().name).collect();
    assert_eq!(names, ["greet", "count", "version"]);
    assert_eq!(
        tools[0].definition().parameters.to_json_string(),
        r#"{"type":"object","properties":{"name":{"type":"string","description":"Who to greet."}},"required":["name"]}"#
    );
    assert!(tools[1].definition().annotations.read_only);

    match tools[0]
        .erased()
        .call_json(&v(r#"{"name":"ann"}"#), cx("greet"))
        .await
    {
        BodyOutcome::Value(out) => assert_eq!(out, v(r#""hello ann""#)),
        other => panic!("unexpected {other:?}"),
    }
    let n = CounterCurrent(Arc::clone(&counter))
        .call(CounterCurrentArgs {}, cx("count"))
        .await;
    assert_eq!(n, Ok(1));
    assert!(tools[1].erased().present_call(&v("{}")).is_some());
    assert_eq!(
        CounterVersion(Arc::clone(&counter))
            .call(CounterVersionArgs {}, cx("version"))
            .await,
        Ok("1".to_string())
    );

    // The methods are still ordinary methods.
    assert_eq!(counter.greet("bob".into()).await, "hello bob");
    assert_eq!(counter.helper(), 5);
    assert_eq!(Arc::clone(&counter).current(&cx("count")).await, Ok(2));
}

// --- a parameter type that is only `Deserialize`; a tool defined in a block ---

#[derive(Debug, serde::Deserialize)]
struct Window {
    start: u32,
    end: u32,
}

impl ToolSchema for Window {
    fn build_schema() -> Schema {
        dsh_runtime::__private::closed(vec![
            dsh_runtime::__private::field::<u32>("start", "", false),
            dsh_runtime::__private::field::<u32>("end", "", false),
        ])
    }
}

/// Measure a window.
#[tool]
async fn width(window: Window) -> u32 {
    window.end - window.start
}

#[tokio::test]
async fn parameter_types_need_not_serialize() {
    // `AddArgs` serializes (typed calls send JSON); `WidthArgs` need not, and still
    // compiles and deserializes.
    assert_eq!(
        json::to_value(&AddArgs { a: 1, b: 2 }),
        Ok(v(r#"{"a":1,"b":2}"#))
    );
    let args: WidthArgs =
        json::from_value(&v(r#"{"window":{"start":2,"end":7}}"#)).expect("deserializes");
    assert_eq!(Width.call(args, cx("width")).await, Ok(5));
}

#[tokio::test]
async fn tools_can_be_defined_in_a_block() {
    /// Double a number.
    #[tool]
    async fn double(n: u32) -> u64 {
        u64::from(n) * 2
    }
    assert_eq!(Double.definition().name, "double");
    assert_eq!(Double.call(DoubleArgs { n: 4 }, cx("double")).await, Ok(8));
}

// --- `#[cfg]` on a tool fn removes its generated items too ---

/// Never compiled.
#[tool]
#[cfg(any())]
async fn configured_out(x: MissingType) {}

struct Gated;

#[toolbox]
impl Gated {
    /// Compiled.
    #[tool]
    async fn present(&self) {}

    /// Never compiled.
    #[tool]
    #[cfg(any())]
    async fn absent(&self, x: MissingType) {}
}

#[test]
fn cfg_applies_to_generated_items() {
    let names: Vec<String> = Arc::new(Gated)
        .tools()
        .iter()
        .map(|t| t.definition().name.to_string())
        .collect();
    assert_eq!(names, ["present"]);
}

/// The generated argument reader gives exactly what the args struct's serde
/// `Deserialize` gives, values and errors alike.
#[test]
fn generated_argument_reader_agrees_with_serde() {
    // The generated args structs read their members by hand (both `Tool::args_from_json`
    // and their `Deserialize` impl); serde's derive on a struct with the same fields is
    // the reference. The parameter root is open, so unknown keys are ignored, as serde's
    // derive does by default.
    #[derive(serde::Deserialize, serde::Serialize)]
    struct ReadFileMirror {
        path: String,
        offset: Option<u64>,
        limit: Option<u64>,
    }
    #[derive(serde::Deserialize, serde::Serialize)]
    struct SearchMirror {
        query: String,
        r#type: Option<String>,
    }
    fn both<T: Tool, M: serde::de::DeserializeOwned + serde::Serialize>(
        text: &str,
    ) -> [Result<String, String>; 3]
    where
        T::Args: serde::Serialize,
    {
        let value = v(text);
        let ours = T::args_from_json(&value)
            .map(|a| {
                json::to_value(&a)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            })
            .map_err(|e| e.to_string());
        let deserialized = json::from_value::<T::Args>(&value)
            .map(|a| {
                json::to_value(&a)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            })
            .map_err(|e| e.to_string());
        let serde = json::from_value::<M>(&value)
            .map(|a| {
                json::to_value(&a)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            })
            .map_err(|e| e.to_string());
        [ours, deserialized, serde]
    }
    for text in [
        r#"{"path":"/a","offset":2,"limit":3}"#,
        r#"{"limit":3,"path":"/a"}"#,
        r#"{"path":"/a"}"#,
        r#"{"offset":1}"#,
        r#"{"path":"/a","extra":1}"#,
        r#"{"path":7}"#,
        r#"{"path":"/a","offset":-1}"#,
        r#"{"path":"/a","offset":null}"#,
    ] {
        let [ours, deserialized, serde] = both::<ReadFile, ReadFileMirror>(text);
        assert_eq!(ours, serde, "{text}");
        assert_eq!(deserialized, serde, "{text}");
    }
    // Raw identifiers read their unprefixed key.
    let [ours, deserialized, serde] = both::<Search, SearchMirror>(r#"{"query":"q","type":"t"}"#);
    assert_eq!(ours, serde);
    assert_eq!(deserialized, serde);
    assert_eq!(ours.unwrap(), r#"{"query":"q","type":"t"}"#);
    // Tool arguments are always an object; the snapshot deserializer never reads a
    // struct from an array either (unlike `serde_json`).
    let [ours, deserialized, serde] = both::<ReadFile, ReadFileMirror>(r#"["/a",1,2]"#);
    assert_eq!(ours.unwrap_err(), "tool arguments must be a JSON object");
    assert_eq!(
        deserialized.unwrap_err(),
        "tool arguments must be a JSON object"
    );
    assert!(
        serde
            .unwrap_err()
            .contains("expected struct ReadFileMirror")
    );
}

/// `#[tool]` declares exactly the hooks it generates; the erased tool runs the defaults
/// of the others itself.
#[test]
fn overridden_hooks_are_exactly_the_generated_ones() {
    use dsh_runtime::__private::tool_hooks as hooks;
    assert_eq!(ReadFile::OVERRIDDEN_HOOKS, hooks::IS_CONCURRENCY_SAFE);
    assert_eq!(Search::OVERRIDDEN_HOOKS, 0);
    assert_eq!(EditFile::OVERRIDDEN_HOOKS, hooks::ALL);
    // Defaults, run by the erased tool for a tool that overrides nothing.
    let erased = dsh_runtime::DynTool::new(Search);
    let args = v(r#"{"query":"q"}"#);
    assert!(!erased.erased().is_concurrency_safe(&args));
    assert!(erased.erased().present_call(&args).is_none());
    let out = Value::from("text");
    let rendered = erased.erased().render(&args, &out).expect("default render");
    assert_eq!(rendered, vec![ContentBlock::text("text")]);
    assert!(
        erased
            .erased()
            .presentation_meta(&args, &out)
            .expect("meta")
            .is_none()
    );
    assert!(erased.erased().finalize_content(&args, &rendered).is_none());
}
