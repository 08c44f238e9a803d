//! Integration tests of `dsh-runtime`, grouped in one test binary (one link instead of one per file).

mod jobs;
