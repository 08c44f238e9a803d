//! The one way every phase of every macro collects errors.
//!
//! Like serde_derive's `Ctxt`: parse and validate push every problem they find and carry
//! on, and the expansion asks once, between phases, whether anything went wrong. Errors
//! are kept as `syn::Error`, which remembers both ends of a multi-token span (`<T>`,
//! `&str`), so the underline covers the whole offending syntax; darling's results (its
//! `FromDeriveInput` walk, the `#[tool]` key parser) are folded in with [`Ctxt::handle`].

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// Errors of one expansion, in the order they were found.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub fn new() -> Ctxt {
        Ctxt::default()
    }

    /// Record an error (a `syn::Error`, or a darling error with all it holds).
    pub fn push(&mut self, error: impl Into<Error>) {
        match error.into() {
            Error::Syn(e) => self.errors.push(e),
            Error::Darling(e) => self.errors.extend(e.flatten().into_iter().map(Into::into)),
        }
    }

    /// An error at `span`.
    pub fn error_at(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    /// An error underlining all of `tokens`.
    pub fn error_spanned(&mut self, tokens: impl ToTokens, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(tokens, msg));
    }

    /// The value of a darling result, recording its error.
    pub fn handle<T>(&mut self, result: darling::Result<T>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(e);
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// The messages, for tests.
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.errors.iter().map(ToString::to_string).collect()
    }

    /// `compile_error!` invocations for every error.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}

/// What [`Ctxt::push`] accepts.
pub enum Error {
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
