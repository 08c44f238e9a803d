//! `#[toolbox]`: `&self` and `Arc<Self>` receivers, associated fns, `Self` in types and
//! paths, ordinary methods alongside, a private type with public methods, plain comments
//! on the impl block.
use std::sync::Arc;

use dsh_runtime::cards::CallView;
use dsh_runtime::{Tool, ToolContext, Toolbox, tool, toolbox};

pub mod api {
    pub struct Server {
        pub greeting: String,
    }
}

struct Local {
    name: String,
}

#[dsh_runtime::toolbox]
impl api::Server {
    /// Greet someone.
    #[tool]
    pub async fn greet(&self, name: String) -> String {
        format!("{} {name}", self.greeting)
    }

    /// Count the greetings.
    #[dsh_runtime::tool(read_only, present_call = Self::card)]
    pub async fn count(self: Arc<Self>, cx: &ToolContext) -> u64 {
        let _ = cx;
        0
    }

    fn card(_: &ServerCountArgs) -> Option<CallView> {
        None
    }
}

// A plain comment on the impl block is fine: only doc comments describe tools.
#[toolbox]
// Also after the attribute.
impl Local {
    /// Name it.
    #[tool]
    pub async fn name(&self) -> String {
        self.name.clone()
    }

    /// A stateless tool in the box.
    #[tool]
    async fn version() -> String {
        "1".into()
    }

    fn plain(&self) -> usize {
        self.name.len()
    }
}

pub fn main() {
    let server = Arc::new(api::Server {
        greeting: "hi".into(),
    });
    let tools = Arc::clone(&server).tools();
    assert_eq!(tools.len(), 2);
    let _ = ServerGreet(Arc::clone(&server)).definition();
    let local = Arc::new(Local { name: "x".into() });
    let _ = local.plain();
    let _ = (
        LocalName(Arc::clone(&local)),
        LocalVersion(local).tools_len(),
    );
}

trait Len {
    fn tools_len(&self) -> usize;
}
impl Len for LocalVersion {
    fn tools_len(&self) -> usize {
        Arc::clone(&self.0).tools().len()
    }
}
