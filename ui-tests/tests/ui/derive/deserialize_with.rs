use dsh_runtime::ToolSchema;
use serde::{Deserialize, Deserializer};

fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    u32::deserialize(d)
}

mod as_text {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        u32::deserialize(d)
    }
}

#[derive(Deserialize, ToolSchema)]
struct Limits {
    #[serde(deserialize_with = "lenient")]
    max: u32,
    #[serde(with = "as_text")]
    min: u32,
}

fn main() {}
