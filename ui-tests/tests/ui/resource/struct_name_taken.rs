//! The generated struct is named after the fn: a type of that name already here is an
//! error at the fn name, saying to use `struct_name`.
use dsh_runtime::resource;

struct Readme {
    text: String,
}

#[resource("docs://readme")]
async fn readme() -> String {
    String::new()
}

fn main() {
    let _ = Readme {
        text: String::new(),
    }
    .text;
}
