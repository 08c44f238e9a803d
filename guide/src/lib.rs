//! # The dsh-rs guide
//!
//! The chapters of the guide, in the order to read them. Each is a Markdown file under
//! `guide/chapters/` (readable as it is on the repository's web pages) and a doc-only
//! module here, so `cargo test --workspace` compiles and runs every Rust example in it as
//! a doctest, and `cargo doc -p dsh-guide --open` shows the guide with the rest of the
//! documentation. A block that cannot run says why in the text next to it.
//!
//! 1. [`tools`]: a first tool, argument structs, schema attributes, examples and portability.
//! 2. [`pipeline`]: running calls through the registry: policy, guards, timeouts, typed calls.
//! 3. [`caller`]: tools that talk to their caller: logs, forms, sampling, roots.
//! 4. [`resources`]: resources and prompts.
//! 5. [`providers`]: handing the tools to OpenAI, Anthropic, Gemini or MCP, and the round trip.
//! 6. [`mcp`]: serving tools over MCP (stdio and Streamable HTTP), approval.
//! 7. [`mcp_oauth`]: serving many users: OAuth.
//! 8. [`mcp_instances`]: running several instances behind a load balancer.
//! 9. [`mcp_tasks`]: long work as tasks.
//! 10. [`mcp_import`]: importing an MCP server's tools.
//! 11. [`mcp_conformance`]: the official clients and the conformance suite.
//! 12. [`code_mode`]: code mode (`dsh-code`).
//! 13. [`host`]: the `dsh-tools` host.
//! 14. [`schemas`]: schemas and validation.
//! 15. [`testing`]: testing your tools.
//! 16. [`workspace`]: the repository's layout and tests.

#[doc = include_str!("../chapters/tools.md")]
pub mod tools {}
#[doc = include_str!("../chapters/pipeline.md")]
pub mod pipeline {}
#[doc = include_str!("../chapters/caller.md")]
pub mod caller {}
#[doc = include_str!("../chapters/resources.md")]
pub mod resources {}
#[doc = include_str!("../chapters/providers.md")]
pub mod providers {}
#[doc = include_str!("../chapters/mcp.md")]
pub mod mcp {}
#[doc = include_str!("../chapters/mcp_oauth.md")]
pub mod mcp_oauth {}
#[doc = include_str!("../chapters/mcp_instances.md")]
pub mod mcp_instances {}
#[doc = include_str!("../chapters/mcp_tasks.md")]
pub mod mcp_tasks {}
#[doc = include_str!("../chapters/mcp_import.md")]
pub mod mcp_import {}
#[doc = include_str!("../chapters/mcp_conformance.md")]
pub mod mcp_conformance {}
#[doc = include_str!("../chapters/code_mode.md")]
pub mod code_mode {}
#[doc = include_str!("../chapters/host.md")]
pub mod host {}
#[doc = include_str!("../chapters/schemas.md")]
pub mod schemas {}
#[doc = include_str!("../chapters/testing.md")]
pub mod testing {}
#[doc = include_str!("../chapters/workspace.md")]
pub mod workspace {}
