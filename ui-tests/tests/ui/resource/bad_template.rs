//! The URI template is RFC 6570 level 1, after a scheme: each mistake at the URI.
use dsh_runtime::resource;

#[resource("files://{path")]
async fn unclosed(path: String) -> String {
    path
}

#[resource("files://{+path}")]
async fn operator(path: String) -> String {
    path
}

#[resource("files://{dir}{name}")]
async fn adjacent(dir: String, name: String) -> String {
    dir + &name
}

#[resource("files://{name}/{name}")]
async fn twice(name: String) -> String {
    name
}

#[resource("files://{}")]
async fn empty() -> String {
    String::new()
}

#[resource("/etc/{name}")]
async fn no_scheme(name: String) -> String {
    name
}

fn main() {}
