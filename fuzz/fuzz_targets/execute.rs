//! `Registry::execute` on generated tools with arbitrary argument text.
//!
//! The body is [`dsh_fuzz::execute::run`] (`src/execute.rs`, whose documentation lists the
//! invariants), shared with the main workspace's replay test. Inputs the body cannot use
//! are kept out of the corpus.
#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    if dsh_fuzz::execute::run(data) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});
