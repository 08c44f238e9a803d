use dsh_runtime::tool;

/// Deploy an image.
#[tool]
async fn deploy(
    #[schema(header = "My Region")] region: String,
    #[schema(header = "Zone:Primary")] zone: String,
    #[schema(header = "")] image: String,
) -> String {
    format!("{image} to {region}/{zone}")
}

fn main() {}
