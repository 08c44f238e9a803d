use dsh_runtime::context;

struct Docs;

#[context]
impl Docs {
    fn readme(&self) -> String {
        String::new()
    }
}

fn main() {}
