//! ui-tests: trybuild cases live under tests/ui
