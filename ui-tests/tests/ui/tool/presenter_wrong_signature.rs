use dsh_runtime::cards::CallView;
use dsh_runtime::tool;

fn card(path: &String) -> Option<CallView> {
    Some(CallView::generic(path, None))
}

/// Reads.
#[tool(present_call = card)]
async fn read(path: String) -> String {
    path
}

fn main() {}
