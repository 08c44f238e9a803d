//! `#[tool]` and `#[toolbox]`.

use proc_macro2::TokenStream;

pub fn expand_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let _ = attr;
    item
}

pub fn expand_toolbox(attr: TokenStream, item: TokenStream) -> TokenStream {
    let _ = attr;
    item
}
