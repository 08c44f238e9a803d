//! Every parameter is a placeholder of the URI template: an error at the parameter.
use dsh_runtime::resource;

/// One book.
#[resource("books://{book}")]
async fn book(book: String, page: u32) -> String {
    format!("{book} {page}")
}

/// A fixed URI takes no parameter.
#[resource("books://index")]
async fn index(limit: u32) -> String {
    limit.to_string()
}

fn main() {}
