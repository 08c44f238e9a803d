//! `#[complete(with = path)]` names a function; anything else is an error at it.
use dsh_runtime::complete::CompletionRequest;
use dsh_runtime::resource;

async fn names(_request: CompletionRequest) -> Vec<String> {
    Vec::new()
}

fn not_async(_request: CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[resource("users://{a}/{b}/{c}")]
async fn user(
    #[complete(values = names)] a: String,
    #[complete(with = "names")] b: String,
    #[complete(with = names)]
    #[complete(with = names)]
    c: String,
) -> String {
    a + &b + &c
}

#[resource("teams://{team}")]
async fn team(#[complete(with = not_async)] team: String) -> String {
    team
}

fn main() {}
