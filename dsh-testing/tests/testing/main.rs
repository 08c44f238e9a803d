//! Tests of `dsh_testing`: the argument generators, `check_tool` on correct and
//! deliberately broken tools, the in-memory client and log replay.

mod broken_tools;
mod client;
mod generators;
mod replay;

#[path = "../../../dsh-runtime/tests/common/random_schema.rs"]
mod random_schema;
