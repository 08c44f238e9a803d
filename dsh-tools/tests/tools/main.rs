//! Integration tests of `dsh-tools`, grouped in one test binary (one link instead of one per file).

mod bash_tool;
mod check_tool;
mod fs_tools;
mod host_guard;
mod job_tools;
mod output_schemas;
mod process_jobs;
mod search_tools;

// Shared helpers.
mod support;
