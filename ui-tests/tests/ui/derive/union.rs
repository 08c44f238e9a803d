use dsh_runtime::ToolSchema;

#[derive(ToolSchema)]
union Bits {
    a: u32,
    b: f32,
}

fn main() {}
