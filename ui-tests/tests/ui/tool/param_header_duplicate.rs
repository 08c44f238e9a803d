use dsh_runtime::tool;

/// Copy between regions.
#[tool]
async fn copy(
    #[schema(header = "Region")] from: String,
    #[schema(header = "region")] to: String,
    #[schema(header = "Zone")] zone: String,
) -> String {
    format!("{from} -> {to} in {zone}")
}

fn main() {}
