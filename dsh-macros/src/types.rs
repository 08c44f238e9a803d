//! Rust types as text, for messages and for generated names.

use quote::quote;

/// A type as written, with the spacing of source code (`Vec<String>`).
pub(crate) fn type_text(ty: &syn::Type) -> String {
    let raw = quote!(#ty).to_string();
    let mut s = raw
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" <", "<")
        .replace(" >", ">")
        .replace(" , ", ", ")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace("& ", "&")
        .replace(" ;", ";");
    while s.contains("> >") {
        s = s.replace("> >", ">>");
    }
    s
}
