//! Every placeholder of the URI template is a parameter: an error at the URI, naming it.
use dsh_runtime::resource;

/// One page of one book.
#[resource("books://{book}/pages/{page}")]
async fn page(book: String) -> String {
    book
}

fn main() {}
