use dsh_runtime::resource;

/// One user.
#[resource("users://{id}", size = 64)]
async fn user(id: u64) -> String {
    id.to_string()
}

fn main() {}
