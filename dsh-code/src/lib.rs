//! # dsh-code
//!
//! Code mode for [`dsh_runtime`]: the `run_code` tool, which runs a model-written
//! TypeScript program in an embedded, sandboxed QuickJS engine, where every tool the
//! calling scope sees is `await tools.<name>(args)` and runs through the registry's full
//! pipeline.
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! use dsh_code::{CodeMode, Mode};
//! use dsh_runtime::{Registry, ToolCall};
//!
//! let registry = Registry::new();
//! let scope = registry.scope();
//! let _presentation = CodeMode::new().present_as(&scope, Mode::Both).unwrap();
//! let call = ToolCall::new(
//!     "call_1",
//!     "run_code",
//!     r#"{"code":"const xs: number[] = [1, 2, 3];\nconsole.log('sum');\nreturn xs.reduce((a, b) => a + b, 0);","description":"Add three numbers"}"#,
//! )
//! .with_agent(scope.id());
//! let result = registry.execute(call).await;
//! assert_eq!(result.text(), "sum\n6");
//! # });
//! ```
//!
//! # Runs
//!
//! `run_code {code, description}` strips the TypeScript types (erasable syntax only;
//! errors carry the program's own line numbers), then runs the program as the body of
//! an async function in a fresh engine (on an engine thread reused across runs), and returns
//! `{logs: string[], result?: json}`. Its content is the logs joined with newlines,
//! then the result (a string as is, other values as indented JSON), or
//! `(run_code completed with no output)`. A failed run is `CODE_RUN_FAILED`:
//! `code run failed (<kind>): <message>`, plus `Captured output:` and the logs.
//! Kinds: `exception` (the program threw, or its TypeScript was rejected), `timeout`,
//! `abort` (the outer call was cancelled), `worker-exit` (out of memory, or the engine
//! could not run), `invalid-output` (the result is not lossless JSON), `output-limit`.
//!
//! # The bridge
//!
//! - The program sees the tools its caller's scope sees, except `run_code`.
//! - A call's arguments are copied to lossless JSON first; anything else (NaN, `-0`,
//!   `undefined`, cycles, holes, class instances, accessors…) rejects only that call,
//!   with `tool arguments must be lossless JSON: <path> <why>`, and uses no number.
//! - Call `n` (in submission order) has the id `<callId>:code:<n>`, the outer call's
//!   root id and agent, and the outer execution's token as `parent`; its cancellation
//!   token follows the outer call's and is cancelled when the run settles.
//! - Scheduling: consecutive parallel-safe calls
//!   overlap up to [`CodeConfig::max_parallel_sub_calls`] (default 10), an exclusive
//!   call runs alone, and results are delivered in submission order.
//! - A success resolves to the final value (after post-execute); a failure rejects with
//!   a `ToolCallError` whose only properties are `name`, `toolName` and `message`.
//! - Contexts attached to sub-call results and their `concludes_turn` are forwarded to
//!   the outer call in dispatch order, and so is the content of every successful call
//!   whose content holds an image: it is appended to the outer result's content, after
//!   the program's output (a model sees the images the program looked at).
//! - The policy stages of overlapping calls (pre-execute, approval, guards) run one call
//!   at a time in submission order, and so do their closing stages (post-execute,
//!   finalize, observers).
//! - The approval handler and the caller handler installed around the outer call
//!   (`dsh_runtime::hooks::with_approval`, `dsh_runtime::caller::with_caller`: an MCP
//!   session's client, a host's own) are installed around every sub-call too, so a
//!   tool the program calls can ask for approval, log, elicit a form, sample or list
//!   roots, and reach the same caller while the program waits.
//! - A [`SubCallObserver`] hears each started call start and settle.
//! - When the run settles, queued calls are abandoned
//!   (`run_code run is over (<reason>); <name> tool call abandoned`) and running ones
//!   are cancelled and awaited before `run_code` returns.
//!
//! # The sandbox
//!
//! The program has the language's builtins, `console`, `tools` and `ToolCallError`:
//! no file system, network, timers, `require`, modules or process. The engine has a
//! memory limit and a stack limit; an interrupt stops code that never yields (busy
//! loops, catastrophic regular expressions) at the run's deadline or when the outer
//! call is cancelled, and the same deadline ends a run stuck awaiting a tool. Captured
//! output is capped in bytes. See [`CodeConfig`].
//!
//! # Modes and prompts
//!
//! [`CodeMode::present_as`] sets a scope's [`Mode`]; [`prompt`] assembles what a model
//! in a scope is shown, with the typed SDK from [`sdk::sdk_text`] (the TypeScript generator of
//! [`sdk`], which also renders the Python SDK) and its warnings.
//!
//! # One path per name
//!
//! Every public name of this crate has one path: code mode itself at the root, the SDKs
//! and what they are made of in [`sdk`] ([`sdk::Sdk`], [`sdk::CODE_ONLY_RULE`],
//! [`sdk::typescript::INSTRUCTIONS`], ...), never both.

mod args;
mod bridge;
mod config;
mod engine;
mod events;
mod mode;
pub mod sdk;
mod search;
mod strip;
mod tool;

pub use config::{CodeConfig, Mode};
pub use engine::RunFailure;
pub use events::{SubCall, SubCallObserver};
pub use mode::{
    CodeMode, CodePrompt, PresentAsError, Presentation, collapse_message, effective_mode,
    offered_tools, prompt,
};
pub use tool::{
    DESCRIPTION, RunCode, RunCodeArgs, RunCodeOutput, output_value, render_json, render_output,
};
