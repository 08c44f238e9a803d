//! A parameter's type is read from the placeholder's text: `FromStr`, or serde from a
//! string. A type read neither way is an error at the type.
use dsh_runtime::resource;

struct Point {
    x: i32,
}

#[resource("points://{at}")]
async fn locate(at: Point) -> String {
    at.x.to_string()
}

fn main() {}
