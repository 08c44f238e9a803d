//! Procedural macros for dsh-rs. Depend on `dsh-runtime`, which re-exports them.
