//! The lossless parser against serde_json (with correctly rounded floats).
//!
//! The body is [`dsh_fuzz::parse::run`] (`src/parse.rs`, whose documentation lists the
//! invariants), shared with the main workspace's replay test. Inputs the body cannot use
//! are kept out of the corpus.
#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    if dsh_fuzz::parse::run(data) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});
