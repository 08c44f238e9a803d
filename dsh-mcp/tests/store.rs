//! The store conformance suite on the in-memory store, the server's default.

use std::sync::Arc;

use dsh_mcp::store::{MemoryStore, Store};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_store_conforms() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    dsh_mcp::store::conformance::run(store).await;
}
