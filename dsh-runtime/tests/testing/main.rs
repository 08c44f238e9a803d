//! Tests of `dsh_runtime::testing`: the argument generators, `check_tool` on correct and
//! deliberately broken tools, the in-memory client and log replay.

mod broken_tools;
mod client;
mod generators;
mod replay;

#[path = "../common/random_schema.rs"]
mod random_schema;
