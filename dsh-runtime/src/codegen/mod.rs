//! Text generated from tool definitions: what people and models read about a tool set.
//!
//! - [`markdown`]: a Markdown catalog of a registry's tools (descriptions, parameter and
//!   output schemas, annotations), stable enough to check in.

pub mod markdown;
