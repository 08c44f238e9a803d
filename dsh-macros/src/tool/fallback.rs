//! Stand-in items emitted next to compile errors.
//!
//! When a tool has a macro error, the user's fn is still emitted and so are a tool struct
//! and an args struct with the fields that could be read, implementing the same traits
//! with bodies that never run. Code that names `ReadFile` or `ReadFileArgs { path, .. }`
//! then keeps compiling, so the user sees the macro's error and not a cascade of
//! "cannot find type" errors (and an IDE keeps its completions).

use proc_macro2::TokenStream;
use quote::quote;

use super::expand::{allows, tool_struct};
use super::model::ToolDef;

pub(super) fn fallback(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let tool = def.tool_path();
    let tool_struct = tool_struct(def);
    let allows = allows();
    let unreachable = quote!(::core::unreachable!("`#[tool]` reported a compile error"));
    let cfgs = &def.cfgs;

    // With `#[tool(args)]` the user's struct is the args type; its impls are not ours to
    // stand in for, so the stand-in tool takes raw JSON.
    let (args_struct, args_ty) = if def.args_param().is_some() {
        (TokenStream::new(), quote!(#krate::json::Value))
    } else {
        let args = &def.args_ident;
        (args_stand_in(def), quote!(#args))
    };

    let tool_name = &def.name;
    quote! {
        #tool_struct
        #args_struct
        #(#cfgs)*
        #allows
        const _: () = {
            #[automatically_derived]
            impl #krate::NamedTool for #tool {
                const NAME: &'static str = #tool_name;
            }
            #[automatically_derived]
            impl #krate::Tool for #tool {
                type Args = #args_ty;
                type Output = #krate::json::Value;
                fn definition(&self) -> &#krate::ToolDefinition {
                    #unreachable
                }
                fn call(
                    &self,
                    _: <Self as #krate::Tool>::Args,
                    _: #krate::ToolContext,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<<Self as #krate::Tool>::Output, #krate::ToolError>,
                > + ::core::marker::Send {
                    async { #unreachable }
                }
            }
        };
    }
}

/// The stand-in args struct: the fields that could be read, and impls that never run.
fn args_stand_in(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let cfgs = &def.cfgs;
    let allows = allows();
    let unreachable = quote!(::core::unreachable!("`#[tool]` reported a compile error"));
    let vis = &def.vis;
    let args = &def.args_ident;
    let mut seen: Vec<&str> = Vec::new();
    let fields = def.fields().filter(|f| {
        // Duplicate names were reported; declaring them twice would add an error.
        let fresh = !seen.contains(&f.name.as_str());
        seen.push(&f.name);
        fresh
    });
    let fields = fields.map(|f| {
        let ident = &f.ident;
        let ty = &f.ty;
        quote!(pub #ident: #ty,)
    });
    let serde = quote!(#krate::__private::serde);
    quote! {
        #(#cfgs)*
        #[doc = "Stand-in for a tool's arguments (`#[tool]` reported an error)."]
        #vis struct #args { #(#fields)* }

        #(#cfgs)*
        #allows
        const _: () = {
            #[automatically_derived]
            impl<'de> #serde::Deserialize<'de> for #args {
                fn deserialize<D: #serde::Deserializer<'de>>(_: D) -> ::core::result::Result<Self, D::Error> {
                    #unreachable
                }
            }
            #[automatically_derived]
            impl #serde::Serialize for #args {
                fn serialize<S: #serde::Serializer>(&self, _: S) -> ::core::result::Result<S::Ok, S::Error> {
                    #unreachable
                }
            }
            #[automatically_derived]
            impl #krate::ToolSchema for #args {
                fn build_schema() -> #krate::schema::Schema {
                    #unreachable
                }
            }
        };
    }
}
