use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Raw {
    value: i64,
}

#[derive(Deserialize, ToolSchema)]
#[serde(try_from = "Raw")]
struct Positive {
    value: u64,
}

impl TryFrom<Raw> for Positive {
    type Error = String;

    fn try_from(raw: Raw) -> Result<Self, String> {
        u64::try_from(raw.value)
            .map(|value| Positive { value })
            .map_err(|e| e.to_string())
    }
}

fn main() {}
