//! dsh-runtime

pub mod json;
