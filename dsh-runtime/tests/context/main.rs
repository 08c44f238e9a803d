//! Integration tests of `#[resource]`, `#[prompt]` and `#[context]`, grouped in one test
//! binary: macro-generated resources and prompts registered and read in process, their
//! errors, derived completion, and template matching as a property.

mod complete;
mod group;
mod prompts;
mod resources;
mod template_props;

/// Run `f` to completion on a current-thread runtime.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(f)
}
