//! `#[context]`: the resources and prompts of an impl block share one value and register
//! together, all or none, under one handle; `#[toolbox]` may mark the same block.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_runtime::complete::CompletionRequest;
use dsh_runtime::content::ResourceContents;
use dsh_runtime::prompts::{PromptGroup, Prompts};
use dsh_runtime::resources::{ResourceError, ResourceGroup, Resources};
use dsh_runtime::{Toolbox, context, prompt, resource, tool, toolbox};

use super::block_on;

pub struct Docs {
    reads: AtomicU64,
    prefix: String,
}

#[context]
#[toolbox]
impl Docs {
    /// The README.
    #[resource("docs://readme", mime_type = "text/markdown")]
    pub async fn readme(&self) -> String {
        let n = self.reads.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{} readme, read {n} times", self.prefix)
    }

    /// One page.
    #[resource("docs://pages/{page}")]
    async fn page(
        self: Arc<Self>,
        #[complete(with = Self::page_numbers)] page: u32,
    ) -> Result<String, ResourceError> {
        Ok(format!("{} page {page}", self.prefix))
    }

    /// The version.
    #[resource("docs://version")]
    async fn version() -> &'static str {
        "1.0"
    }

    /// Summarise a page.
    #[prompt(name = "summarise")]
    async fn summarise(
        &self,
        /// The page.
        page: u32,
    ) -> String {
        format!("Summarise {} page {page}.", self.prefix)
    }

    /// Count the reads.
    #[tool(read_only)]
    async fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }

    /// Completes page numbers (an associated fn, named `Self::page_numbers`).
    async fn page_numbers(request: CompletionRequest) -> Vec<String> {
        (1..=12)
            .map(|n| n.to_string())
            .filter(|n| n.starts_with(&request.prefix))
            .collect()
    }

    /// A plain method, left alone.
    fn prefix(&self) -> &str {
        &self.prefix
    }
}

fn docs() -> Arc<Docs> {
    Arc::new(Docs {
        reads: AtomicU64::new(0),
        prefix: "guide".into(),
    })
}

#[test]
fn a_group_registers_together_and_shares_the_value() {
    block_on(async {
        let docs = docs();
        assert_eq!(docs.prefix(), "guide");
        let resources = Resources::new();
        let prompts = Prompts::new();
        let handle = resources.register_group(Arc::clone(&docs)).unwrap();
        let _p = prompts.register_group(Arc::clone(&docs)).unwrap();
        let names: Vec<String> = resources.list().into_iter().map(|r| r.name).collect();
        assert_eq!(names, ["readme", "version"]);
        assert_eq!(resources.templates()[0].uri, "docs://pages/{page}");
        assert_eq!(
            resources.read("docs://readme").await.unwrap(),
            [
                ResourceContents::text("docs://readme", "guide readme, read 1 times")
                    .with_mime_type("text/markdown")
            ]
        );
        assert_eq!(
            resources.read("docs://pages/3").await.unwrap(),
            [ResourceContents::text("docs://pages/3", "guide page 3")]
        );
        assert_eq!(
            resources.read("docs://version").await.unwrap(),
            [ResourceContents::text("docs://version", "1.0")]
        );
        let got = prompts.get("summarise", [("page", "2")]).await.unwrap();
        assert_eq!(
            got.messages[0].content.as_text(),
            Some("Summarise guide page 2.")
        );
        assert_eq!(
            prompts.list()[0].arguments[0].description.as_deref(),
            Some("The page.")
        );
        let pages = resources
            .complete("docs://pages/{page}", CompletionRequest::new("page", "1"))
            .await
            .unwrap();
        assert_eq!(pages.values, ["1", "10", "11", "12"]);
        // The tool of the same block sees the reads.
        let tools = Arc::clone(&docs).tools();
        assert_eq!(tools.len(), 1);
        assert_eq!(docs.reads.load(Ordering::SeqCst), 1);

        // All or none: a second registration clashes and adds nothing.
        assert!(resources.register_group(Arc::clone(&docs)).is_err());
        assert_eq!(resources.list().len() + resources.templates().len(), 3);
        // The handle unregisters every one.
        drop(handle);
        assert!(resources.is_empty());
        assert!(matches!(
            resources.read("docs://readme").await,
            Err(ResourceError::NotFound(_))
        ));
    });
}

#[test]
fn one_member_of_a_group_on_its_own() {
    block_on(async {
        let resources = Resources::new();
        let _h = resources.register(DocsPage(docs())).unwrap();
        assert_eq!(
            resources.read("docs://pages/1").await.unwrap(),
            [ResourceContents::text("docs://pages/1", "guide page 1")]
        );
        let prompts: Vec<_> = docs().prompts();
        assert_eq!(prompts.len(), 1);
        assert_eq!(docs().resources().len(), 3);
    });
}
