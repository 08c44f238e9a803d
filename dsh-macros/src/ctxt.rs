//! The one way every phase of every macro collects errors.
//!
//! Like serde_derive's `Ctxt`: parse and validate push every problem they find and carry
//! on, and the expansion asks once, between phases, whether anything went wrong. Errors
//! are kept as `syn::Error`, which remembers both ends of a multi-token span (`<T>`,
//! `&str`), so the underline covers the whole offending syntax; darling's results (its
//! `FromDeriveInput` walk, the `#[tool]` key parser) are folded in with [`Ctxt::handle`].
//!
//! As with serde's, a `Ctxt` must be consumed by [`Ctxt::check`]: dropping one unchecked
//! panics ("forgot to check for errors"), so no expansion path can lose its errors.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// Errors of one expansion, in the order they were found.
pub(crate) struct Ctxt {
    /// `None` once checked.
    errors: Option<Vec<syn::Error>>,
}

impl Ctxt {
    pub(crate) fn new() -> Ctxt {
        Ctxt {
            errors: Some(Vec::new()),
        }
    }

    fn list(&mut self) -> &mut Vec<syn::Error> {
        // `check` consumes the context, so the list is always there while it can be used.
        self.errors.get_or_insert_with(Vec::new)
    }

    /// Record an error (a `syn::Error`, or a darling error with all it holds).
    pub(crate) fn push(&mut self, error: impl Into<Error>) {
        match error.into() {
            Error::Syn(e) => self.list().push(e),
            Error::Darling(e) => self.list().extend(e.flatten().into_iter().map(Into::into)),
        }
    }

    /// An error at `span`.
    pub(crate) fn error_at(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.list().push(syn::Error::new(span, msg));
    }

    /// An error underlining all of `tokens`.
    pub(crate) fn error_spanned(&mut self, tokens: impl ToTokens, msg: impl std::fmt::Display) {
        self.list().push(syn::Error::new_spanned(tokens, msg));
    }

    /// The value of a darling result, recording its error.
    pub(crate) fn handle<T>(&mut self, result: darling::Result<T>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(e);
                None
            }
        }
    }

    /// Whether no error was recorded so far (for tests).
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.errors.as_ref().is_none_or(Vec::is_empty)
    }

    /// Consume the context: `Err` with a `compile_error!` invocation for every recorded
    /// error, in order, or `Ok` when there was none.
    pub(crate) fn check(mut self) -> Result<(), TokenStream> {
        let errors = self.errors.take().unwrap_or_default();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.iter().map(syn::Error::to_compile_error).collect())
        }
    }

    /// The messages, consuming the context (for tests).
    #[cfg(test)]
    pub(crate) fn messages(mut self) -> Vec<String> {
        let errors = self.errors.take().unwrap_or_default();
        errors.iter().map(ToString::to_string).collect()
    }

    /// The number of errors, consuming the context (for tests).
    #[cfg(test)]
    pub(crate) fn len(self) -> usize {
        self.messages().len()
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.is_some() {
            panic!("forgot to check for errors");
        }
    }
}

/// What [`Ctxt::push`] accepts.
pub(crate) enum Error {
    Syn(syn::Error),
    Darling(darling::Error),
}

impl From<syn::Error> for Error {
    fn from(e: syn::Error) -> Error {
        Error::Syn(e)
    }
}

impl From<darling::Error> for Error {
    fn from(e: darling::Error) -> Error {
        Error::Darling(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "forgot to check for errors")]
    fn an_unchecked_context_panics_when_dropped() {
        let mut errors = Ctxt::new();
        errors.error_at(Span::call_site(), "lost");
    }

    #[test]
    #[should_panic(expected = "forgot to check for errors")]
    fn an_unchecked_empty_context_panics_too() {
        let _errors = Ctxt::new();
    }

    #[test]
    fn check_returns_every_error_in_order() {
        let mut errors = Ctxt::new();
        assert!(errors.is_empty());
        errors.error_at(Span::call_site(), "first");
        errors.push(darling::Error::multiple(vec![
            darling::Error::custom("second"),
            darling::Error::custom("third"),
        ]));
        assert!(!errors.is_empty());
        let tokens = errors
            .check()
            .err()
            .map(|t| t.to_string())
            .unwrap_or_default();
        let first = tokens.find("first");
        let second = tokens.find("second");
        let third = tokens.find("third");
        assert!(
            first < second && second < third && first.is_some(),
            "{tokens}"
        );
        assert!(Ctxt::new().check().is_ok());
    }
}
