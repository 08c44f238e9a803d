//! Reference tools for dsh-rs, written as ordinary `#[tool]` functions: the SDK's
//! teaching material, and the tool set of the `dsh-tools` host binary.
//!
//! - [`fs`]: `read`, `write`, `edit`;
//! - [`search`]: `grep`, `glob`;
//! - [`bash`]: `bash` (foreground with timeout and abort, or in the background as a job);
//! - [`job_tools`]: `job_output`, `job_list`, `job_kill`;
//! - [`host`]: the registry the `dsh-tools` binary serves, with its `--root` guard.
#![warn(missing_docs)]

pub mod bash;
pub mod fs;
pub mod host;
pub mod job_tools;
pub mod search;
