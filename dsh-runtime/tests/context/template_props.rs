//! Template matching as a property: a URI built from values (`UriTemplate::expand`)
//! matches back to the same values, whatever the values hold (percent-encoded where they
//! are not unreserved characters, or would end the value early) and whatever literal text
//! separates the placeholders; and a macro-generated resource reads them back.

use dsh_runtime::content::ResourceContents;
use dsh_runtime::resource;
use dsh_runtime::resources::{Resources, UriTemplate};
use proptest::prelude::*;

use super::block_on;

/// A literal part after a placeholder: any text of a URI but `{` and `}`, starting
/// with an unreserved character (which `expand` then encodes in the value before it) or
/// not.
fn separator() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9._~/:,;=@!$&'()*+?#\\[\\]-][a-zA-Z0-9._~/:,;=@!$&'()*+?#-]{0,4}"
}

/// A template of 1 to 4 placeholders, with the values to put in them.
fn template_and_values() -> impl Strategy<Value = (String, Vec<(String, String)>)> {
    (
        "[a-z][a-z0-9+.-]{0,5}://[a-z0-9._~/-]{0,6}",
        prop::collection::vec(
            (
                separator(),
                any::<String>().prop_filter("a value", |v| !v.is_empty()),
            ),
            1..=4,
        ),
        prop::option::of(separator()),
    )
        .prop_map(|(head, parts, tail)| {
            let mut text = head;
            let mut values = Vec::new();
            for (i, (sep, value)) in parts.into_iter().enumerate() {
                if i > 0 {
                    text.push_str(&sep);
                }
                let name = format!("p{i}");
                text.push_str(&format!("{{{name}}}"));
                values.push((name, value));
            }
            if let Some(tail) = tail {
                text.push_str(&tail);
            }
            (text, values)
        })
}

proptest! {
    #[test]
    fn a_uri_built_from_values_matches_back_to_them((text, values) in template_and_values()) {
        let template = UriTemplate::parse(&text).unwrap();
        let pairs: Vec<(&str, &str)> = values.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let uri = template.expand(&pairs);
        prop_assert_eq!(template.matches(&uri), Some(values));
    }

    #[test]
    fn a_generated_resource_reads_its_placeholders_back(
        name in any::<String>().prop_filter("a value", |v| !v.is_empty()),
        n in any::<i64>(),
    ) {
        let uri = UriTemplate::parse(ECHO).unwrap()
            .expand(&[("name", name.as_str()), ("n", n.to_string().as_str())]);
        let resources = Resources::new();
        let _h = resources.register(Echo).unwrap();
        let read = block_on(resources.read(&uri)).unwrap();
        prop_assert_eq!(read, vec![ResourceContents::text(uri.clone(), format!("{name}|{n}"))]);
    }
}

const ECHO: &str = "echo://{name}/{n}.txt";

#[resource("echo://{name}/{n}.txt")]
async fn echo(name: String, n: i64) -> String {
    format!("{name}|{n}")
}

#[test]
fn values_needing_encoding_round_trip() {
    let template = UriTemplate::parse("a://x/{p0}/{p1}").unwrap();
    let values = [("p0", "a b/c?d%e"), ("p1", "é{}~")];
    let uri = template.expand(&values);
    assert_eq!(uri, "a://x/a%20b%2Fc%3Fd%25e/%C3%A9%7B%7D~");
    let back: Vec<(String, String)> = values
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    assert_eq!(template.matches(&uri), Some(back));
}
