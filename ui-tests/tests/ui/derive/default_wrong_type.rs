//! A field's `#[schema(default = ..)]` must fit the field's type, as on a `#[tool]`
//! parameter; each error points at the default.
use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
pub enum Mode {
    Fast,
    Slow,
}

#[derive(Deserialize, ToolSchema)]
pub struct Filter {
    #[schema(default = true)]
    mode: Option<Mode>,
    #[schema(default = "Medium")]
    speed: Option<Mode>,
    #[schema(default = 300)]
    small: Option<u8>,
    #[schema(default = "Fast")]
    fine: Option<Mode>,
}

fn main() {}
