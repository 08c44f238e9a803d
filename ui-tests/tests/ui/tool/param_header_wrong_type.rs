use dsh_runtime::tool;

/// Deploy an image.
#[tool]
async fn deploy(
    #[schema(header = "Weight")] weight: f64,
    #[schema(header = "Tags")] tags: Vec<String>,
    #[schema(header = "Region")] region: Option<String>,
    #[schema(header = "Replicas")] replicas: u32,
    #[schema(header = "DryRun")] dry_run: bool,
) -> String {
    format!("{weight} {tags:?} {region:?} {replicas} {dry_run}")
}

fn main() {}
