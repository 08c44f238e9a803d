//! After a macro error the struct still exists (a stand-in), so code registering it
//! compiles and only the macro's error shows.
use dsh_runtime::resource;
use dsh_runtime::resources::Resources;

#[resource("books://{book}")]
async fn book(title: String) -> String {
    title
}

fn main() {
    let resources = Resources::new();
    let _h = resources.register(Book).unwrap();
}
