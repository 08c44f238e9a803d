//! Stand-in impls emitted next to errors, so that code using the type keeps compiling and
//! only the real mistake is reported (no "`T` has no tool schema" cascade).

use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn expand(input: &syn::DeriveInput, p: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    let params: Vec<syn::Ident> = generics.type_params().map(|t| t.ident.clone()).collect();
    let clause = generics.make_where_clause();
    for t in params {
        clause
            .predicates
            .push(syn::parse_quote!(#t: #p::ToolSchema + 'static));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let object = match &input.data {
        syn::Data::Struct(s) if matches!(s.fields, syn::Fields::Named(_)) => quote! {
            #[diagnostic::do_not_recommend]
            impl #impl_generics #p::SchemaObject for #ident #ty_generics #where_clause {}
        },
        _ => quote!(),
    };
    quote! {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            impl #impl_generics #p::ToolSchema for #ident #ty_generics #where_clause {
                fn build_schema() -> #p::Schema {
                    #p::Schema::json()
                }
            }
            #[diagnostic::do_not_recommend]
            impl #impl_generics #p::JsonShape for #ident #ty_generics #where_clause {
                const SHAPE: #p::Shape = #p::Shape::of(#p::kind::ANY);
            }
            #object
        };
    }
}
