//! What the test modules share: the tools they serve ([`tools`]), the transport ×
//! revision matrix with one way to start a server over each ([`wire`]), the scripted
//! client user for rmcp's client ([`user`]), one raw Streamable HTTP client with the
//! raw-TCP helpers ([`http`]), one raw JSON-RPC client over either transport ([`rpc`]),
//! and the OAuth test keys ([`keys`]).

pub(crate) mod http;
pub(crate) mod keys;
pub(crate) mod rpc;
pub(crate) mod tools;
pub(crate) mod user;
pub(crate) mod wire;

/// How long a test waits for an answer, a message or a body before it fails.
pub(crate) const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// One `#[tokio::test]` per case, each running its shared async body with its own
/// arguments, so that a failing transport (or revision, or configuration) does not hide
/// the others: `name => body(args...);`.
macro_rules! cases {
    ($($name:ident => $body:ident($($arg:expr),* $(,)?);)+) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $body($($arg),*).await
        }
    )+};
}
pub(crate) use cases;
