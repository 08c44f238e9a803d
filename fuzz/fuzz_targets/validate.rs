//! The validator against the `jsonschema` crate on the projected schema.
//!
//! The body is [`dsh_fuzz::validate::run`] (`src/validate.rs`, whose documentation lists the
//! invariants), shared with the main workspace's replay test. Inputs the body cannot use
//! are kept out of the corpus.
#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    if dsh_fuzz::validate::run(data) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});
