use dsh_runtime::resource;

#[derive(Debug)]
struct Oops;

#[resource("reports://today")]
async fn today() -> Result<String, Oops> {
    Err(Oops)
}

fn main() {}
