//! Small runnable programs that teach dsh-rs, one binary each under `src/bin/`.
