//! dsh-runtime
