use dsh_runtime::toolbox;

#[toolbox]
pub struct Server;

// The key is reported too (the macro's error context is checked on every path).
#[toolbox(mystery)]
pub fn helper() {}

fn main() {}
