//! Derived completion: a unit enum's variants, filtered by the prefix and cut at 100
//! with the total and `has_more`; `#[complete(with = path)]` for the rest.

use dsh_runtime::complete::{CompletionRequest, MAX_COMPLETIONS};
use dsh_runtime::prompts::Prompts;
use dsh_runtime::resources::Resources;
use dsh_runtime::{ToolSchema, prompt, resource};
use serde::Deserialize;

use super::block_on;

/// 120 variants, `v000` to `v119` as serde writes them.
#[derive(Clone, Copy, Debug, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
enum Many {
    V000,
    V001,
    V002,
    V003,
    V004,
    V005,
    V006,
    V007,
    V008,
    V009,
    V010,
    V011,
    V012,
    V013,
    V014,
    V015,
    V016,
    V017,
    V018,
    V019,
    V020,
    V021,
    V022,
    V023,
    V024,
    V025,
    V026,
    V027,
    V028,
    V029,
    V030,
    V031,
    V032,
    V033,
    V034,
    V035,
    V036,
    V037,
    V038,
    V039,
    V040,
    V041,
    V042,
    V043,
    V044,
    V045,
    V046,
    V047,
    V048,
    V049,
    V050,
    V051,
    V052,
    V053,
    V054,
    V055,
    V056,
    V057,
    V058,
    V059,
    V060,
    V061,
    V062,
    V063,
    V064,
    V065,
    V066,
    V067,
    V068,
    V069,
    V070,
    V071,
    V072,
    V073,
    V074,
    V075,
    V076,
    V077,
    V078,
    V079,
    V080,
    V081,
    V082,
    V083,
    V084,
    V085,
    V086,
    V087,
    V088,
    V089,
    V090,
    V091,
    V092,
    V093,
    V094,
    V095,
    V096,
    V097,
    V098,
    V099,
    V100,
    V101,
    V102,
    V103,
    V104,
    V105,
    V106,
    V107,
    V108,
    V109,
    V110,
    V111,
    V112,
    V113,
    V114,
    V115,
    V116,
    V117,
    V118,
    V119,
}

#[derive(Clone, Copy, Debug, Deserialize, ToolSchema)]
#[serde(rename_all = "kebab-case")]
enum Language {
    /// Rust.
    RustLang,
    /// Python.
    Python,
    /// Ruby.
    Ruby,
}

async fn users(request: CompletionRequest) -> Vec<String> {
    ["ada", "alan", "grace"]
        .into_iter()
        .filter(|u| u.starts_with(&request.prefix))
        .map(String::from)
        .collect()
}

#[resource("items://{many}/{user}/{id}")]
async fn item(many: Many, #[complete(with = users)] user: String, id: u64) -> String {
    format!("{many:?} {user} {id}")
}

#[prompt]
async fn translate(
    lang: Language,
    target: Option<Language>,
    #[complete(with = users)] user: String,
) -> String {
    format!("{lang:?} {target:?} {user}")
}

#[test]
fn a_unit_enum_placeholder_completes_from_its_variants() {
    block_on(async {
        let resources = Resources::new();
        let _h = resources.register(Item).unwrap();
        let template = "items://{many}/{user}/{id}";
        let all = resources
            .complete(template, CompletionRequest::new("many", ""))
            .await
            .unwrap();
        assert_eq!(all.values.len(), MAX_COMPLETIONS);
        assert_eq!(all.total, Some(120));
        assert!(all.has_more);
        assert_eq!(all.values[0], "v000");
        assert_eq!(all.values[99], "v099");
        let some = resources
            .complete(template, CompletionRequest::new("many", "v11"))
            .await
            .unwrap();
        assert_eq!(
            some.values,
            [
                "v110", "v111", "v112", "v113", "v114", "v115", "v116", "v117", "v118", "v119"
            ]
        );
        assert_eq!(some.total, Some(10));
        assert!(!some.has_more);
        let none = resources
            .complete(template, CompletionRequest::new("many", "x"))
            .await
            .unwrap();
        assert!(none.values.is_empty() && !none.has_more);
        // `#[complete(with = ..)]`.
        let named = resources
            .complete(template, CompletionRequest::new("user", "a"))
            .await
            .unwrap();
        assert_eq!(named.values, ["ada", "alan"]);
        // A number completes to nothing.
        let id = resources
            .complete(template, CompletionRequest::new("id", "1"))
            .await
            .unwrap();
        assert!(id.values.is_empty());
    });
}

#[test]
fn a_unit_enum_prompt_argument_completes_from_its_variants() {
    block_on(async {
        let prompts = Prompts::new();
        let _h = prompts.register(Translate).unwrap();
        // Variants with docs (a `oneOf` of `const`s), required or optional.
        for argument in ["lang", "target"] {
            let c = prompts
                .complete("translate", CompletionRequest::new(argument, "r"))
                .await
                .unwrap();
            assert_eq!(c.values, ["rust-lang", "ruby"], "{argument}");
            assert_eq!(c.total, Some(2));
        }
        let c = prompts
            .complete("translate", CompletionRequest::new("user", "g"))
            .await
            .unwrap();
        assert_eq!(c.values, ["grace"]);
        let got = prompts
            .get("translate", [("lang", "rust-lang"), ("user", "ada")])
            .await
            .unwrap();
        assert_eq!(got.messages[0].content.as_text(), Some("RustLang None ada"));
    });
}
