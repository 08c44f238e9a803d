//! The transports: byte streams, one message a line ([`stdio`]), and Streamable HTTP
//! (`http`, feature `http`).

pub(crate) mod stdio;

#[cfg(feature = "http")]
pub(crate) mod http;
