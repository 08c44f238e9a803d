//! `#[derive(ToolSchema)]`: parse (darling + attribute readers, `parse.rs`, `attr.rs`) ->
//! model (`model.rs`) -> validate (`validate.rs`) -> expand (`expand.rs`, with the
//! elicitation-form impls of `form.rs`); on any error, the errors plus stand-in impls
//! (`fallback.rs`, `form.rs`).

pub(crate) mod attr;
mod case;
pub(crate) mod default;
pub(crate) mod expand;
mod fallback;
mod form;
pub(crate) mod keys;
mod model;
mod parse;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;

pub(crate) fn expand(item: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Ctxt::new();
    let model = parse::from_ast(&input, &mut errors);
    if let Some(model) = &model {
        validate::validate(model, &mut errors);
    }
    match (model, errors.check()) {
        (Some(model), Ok(())) => expand::expand(&model),
        (model, errors) => {
            let p = match &model {
                Some(m) => expand::support_path(m),
                None => quote!(::dsh_runtime::__private::derive),
            };
            let errors = errors.err();
            let stand_in = fallback::expand(&input, &p);
            let krate = model.as_ref().and_then(|m| m.schema.krate.as_ref());
            let form_stand_in = form::stand_in(&input, krate);
            quote!(#errors #stand_in const _: () = { #form_stand_in };)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_count(item: TokenStream) -> usize {
        let input: syn::DeriveInput = syn::parse2(item).expect("test input parses");
        let mut errors = Ctxt::new();
        if let Some(model) = parse::from_ast(&input, &mut errors) {
            validate::validate(&model, &mut errors);
        }
        errors.len()
    }

    #[test]
    fn accepted_forms() {
        for item in [
            quote!(
                struct A {
                    x: u32,
                    #[serde(default)]
                    y: String,
                }
            ),
            quote!(
                struct B(u32);
            ),
            quote!(
                struct C;
            ),
            quote!(
                #[serde(rename_all = "camelCase", deny_unknown_fields)]
                struct D {
                    a_b: u8,
                }
            ),
            quote!(
                enum E {
                    A,
                    B,
                }
            ),
            quote!(
                #[serde(tag = "t")]
                enum F {
                    A { x: u8 },
                    B(Inner),
                    C,
                }
            ),
            quote!(
                #[serde(tag = "t", content = "c")]
                enum G {
                    A(u8),
                    B { x: u8 },
                    C,
                }
            ),
            quote!(
                #[serde(untagged)]
                enum H {
                    A(u8),
                    B(String),
                    C,
                }
            ),
            quote!(
                struct I<T> {
                    t: T,
                }
            ),
            quote!(
                #[schema(enum_names)]
                enum K {
                    /// A.
                    A,
                    B,
                }
            ),
            quote!(
                #[serde(transparent)]
                struct J {
                    #[serde(skip)]
                    a: u8,
                    b: String,
                }
            ),
        ] {
            assert_eq!(error_count(item.clone()), 0, "{item}");
        }
    }

    #[test]
    fn every_error_is_reported() {
        let cases = [
            (
                quote!(
                    struct A(u8, u8);
                ),
                1,
            ),
            (
                quote!(
                    struct A {
                        #[serde(flatten)]
                        x: B,
                        #[serde(alias = "z")]
                        y: u8,
                    }
                ),
                2,
            ),
            (
                quote!(
                    struct Node {
                        children: Vec<Node>,
                        next: Option<Box<Self>>,
                    }
                ),
                2,
            ),
            (
                quote!(
                    struct A {
                        #[serde(rename = "x")]
                        a: u8,
                        x: u8,
                    }
                ),
                1,
            ),
            (
                quote!(
                    #[serde(untagged)]
                    enum U {
                        A,
                        B,
                    }
                ),
                1,
            ),
            (
                quote!(
                    enum E {
                        A(u8, u8),
                    }
                ),
                1,
            ),
            (
                quote!(
                    #[serde(tag = "t")]
                    enum E {
                        A { t: u8 },
                    }
                ),
                // serde's own derive reports a field named like the tag
                0,
            ),
            (
                quote!(
                    struct A {
                        #[serde(deserialize_with = "f")]
                        a: u8,
                    }
                ),
                1,
            ),
            (
                quote!(
                    struct A<'a> {
                        a: &'a str,
                    }
                ),
                1,
            ),
            (quote!(union U { a: u8 }), 1),
            (
                quote!(
                    #[serde(other_thing)]
                    enum E {
                        A,
                    }
                ),
                1,
            ),
            (
                quote!(
                    #[schema(open)]
                    enum E {
                        A,
                    }
                ),
                1,
            ),
            (
                quote!(
                    #[schema(enum_names)]
                    struct S {
                        a: u8,
                    }
                ),
                1,
            ),
            (
                quote!(
                    #[schema(enum_names)]
                    enum E {
                        A,
                        B(u8),
                    }
                ),
                1,
            ),
            (
                quote!(
                    #[schema(enum_names)]
                    #[serde(tag = "t")]
                    enum E {
                        A,
                    }
                ),
                1,
            ),
            (
                quote!(
                    #[schema(enum_names = true)]
                    enum E {
                        A,
                    }
                ),
                1,
            ),
        ];
        for (item, n) in cases {
            assert_eq!(error_count(item.clone()), n, "{item}");
        }
    }
}
