//! Integration tests of `dsh-runtime`, grouped in one test binary (one link instead of one per file).

mod pipeline_ask;
mod pipeline_batch;
mod pipeline_cancel;
mod pipeline_detach;
mod pipeline_fast_paths;
mod pipeline_outcomes;
mod pipeline_policy;
mod pipeline_readme;
mod pipeline_stress;
mod pipeline_string_output;
mod pipeline_timeout_progress;
mod pipeline_typed;
mod registry_depth;
mod registry_global;
mod registry_present;
mod registry_registration;
mod registry_scopes;
mod registry_verbatim;
mod send_sync;

// Shared helpers.
mod pipeline_support;
