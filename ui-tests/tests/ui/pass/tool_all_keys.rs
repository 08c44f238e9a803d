//! Every `#[tool]` key.
use dsh_runtime::cards::{CallView, ResultSummary, ResultView};
use dsh_runtime::{content::ContentBlock, Tool, ToolError, tool};

fn safe(args: &EditArgs) -> bool {
    args.dry_run
}
fn render(args: &EditArgs, out: &String) -> Vec<ContentBlock> {
    vec![ContentBlock::text(format!("{} {out}", args.path))]
}
fn call_card(args: &EditArgs) -> Option<CallView> {
    Some(CallView::generic(&args.path, None))
}
fn result_card(_: &EditArgs, _: &ResultSummary) -> ResultView {
    ResultView::Generic {
        title: None,
        content: None,
    }
}
fn meta(_: &EditArgs, out: &String) -> Option<usize> {
    Some(out.len())
}
fn finalize(_: &EditArgs, content: &[ContentBlock]) -> Option<Vec<ContentBlock>> {
    Some(content.to_vec())
}

/// Ignored doc.
#[tool(
    name = "edit-file",
    description = "Edit a file.",
    title = "Edit",
    timeout_ms = 1000,
    concurrency_safe = safe,
    read_only,
    destructive,
    idempotent,
    open_world,
    render = render,
    present_call = call_card,
    present_result = result_card,
    presentation_meta = meta,
    finalize_content = finalize,
    crate = "::dsh_runtime"
)]
async fn edit(path: String, dry_run: bool) -> Result<String, ToolError> {
    let _ = dry_run;
    Ok(path)
}

/// Meta as a raw value; a flag `concurrency_safe`; a description from `include_str!`.
#[tool(concurrency_safe, presentation_meta = meta_value2, description = include_str!("tool_all_keys.rs"))]
async fn other(path: String) -> String {
    path
}
fn meta_value2(_: &OtherArgs, _: &String) -> serde_json::Value {
    serde_json::Value::Null
}

pub fn main() {
    let _ = (Edit.definition(), Other.definition());
}
