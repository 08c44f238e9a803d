//! Stages 9 and 10: post-execute, then finalize and observe.

use std::fmt::Write as _;

use super::output::success;
use super::stage::{Call, Outcome};
use crate::content::ContentBlock;
use crate::error_code::PipelineCode;
use crate::hooks::{Accept, Block, PostDecision, PostNext, Replacement};
use crate::json::Object;
use crate::panic;
use crate::result::{Kind, ResultData, ToolResult};
use crate::schema::{Additional, ObjectRules, json_quote_into};
use crate::tool::DynTool;

/// Stage 9: the post-execute waterfall, for outcomes that pass it; then a caller abort
/// turns a success into the cancellation result.
pub(super) async fn post_execute(call: &Call, outcome: Outcome) -> ResultData {
    let Outcome {
        mut data,
        post,
        invoked,
    } = outcome;
    if !post {
        return data;
    }
    let hooks = &call.snap.view().post;
    if !hooks.is_empty() {
        let info = call.info();
        let current = data.freeze();
        let decision = {
            let next = PostNext {
                hooks,
                call: &info,
                result: &current,
            };
            panic::contained(|| next.run()).await
        };
        data = ResultData::thaw(current);
        data = match decision {
            Err(p) => ResultData::panicked(format!("post-execute hook panicked: {p}")),
            Ok(Err(e)) => ResultData::from_error(e),
            Ok(Ok(PostDecision::Accept(a))) => accept(call, data, a),
            Ok(Ok(PostDecision::Block(b))) => block(b),
        };
    }
    if data.is_success() && call.cancelled() {
        data = data.into_aborted(invoked);
    }
    data
}

fn accept(call: &Call, mut data: ResultData, a: Accept) -> ResultData {
    match a.replacement {
        Replacement::Value(value) => {
            let (Kind::Success { concludes_turn, .. }, Some(tool)) = (&data.kind, &call.tool)
            else {
                return ResultData::failure(
                    None,
                    "tools/post-execute cannot replace the value of a failed result".to_string(),
                );
            };
            let concludes = *concludes_turn;
            let mut replaced = success(tool, &call.exec, value);
            if !replaced.is_success() {
                return replaced;
            }
            if let Kind::Success { concludes_turn, .. } = &mut replaced.kind {
                *concludes_turn = concludes;
            }
            replaced.contexts = std::mem::take(&mut data.contexts);
            data = replaced;
        }
        Replacement::Content(content) => data.set_content(content.into()),
        // `Replacement` is this crate's own: a later variant gets its arm here.
        Replacement::Unchanged => {}
    }
    data.contexts.extend(a.contexts);
    data
}

fn block(b: Block) -> ResultData {
    let parts: Vec<String> = b
        .feedback
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text, .. } => text.clone(),
            ContentBlock::Image { .. } => "[image content]".to_string(),
            _ => "[content]".to_string(),
        })
        .collect();
    let message = if parts.is_empty() {
        "tool result blocked by post-execute policy".to_string()
    } else {
        parts.join("\n")
    };
    let mut data = ResultData::code(PipelineCode::ResultBlocked, message);
    if !b.feedback.is_empty() {
        data.set_content(b.feedback.into());
    }
    data.contexts = b.contexts;
    data
}

/// Stage 10: finalize the content once (with the finalizer captured at entry), name the
/// ignored arguments (`note`, first among the contexts), freeze, observe.
pub(super) fn finalize(call: &Call, mut data: ResultData, note: Option<String>) -> ToolResult {
    let info = call.info();
    if let Some(tool) = &call.tool
        && tool.erased().overridden_hooks() & crate::__private::tool_hooks::FINALIZE_CONTENT != 0
    {
        let finalized = panic::contain(|| {
            tool.erased()
                .finalize_content(info.arguments(), data.content())
        });
        match finalized {
            Ok(Some(content)) => data.set_content(content.into()),
            Ok(None) => {}
            Err(p) => data = ResultData::panicked(format!("finalize_content panicked: {p}")),
        }
    }
    if let Some(note) = note {
        data.contexts.insert(0, note);
    }
    let result = data.freeze();
    for observer in &call.snap.view().observers {
        if let Err(p) = panic::contain(|| observer.observe(&info, &result)) {
            tracing::warn!(
                tool = info.name(),
                call_id = info.call_id(),
                "result observer panicked: {p}"
            );
        }
    }
    result
}

/// At most this many ignored keys are named, each cut to [`MAX_KEY_CHARS`] characters.
const MAX_NAMED_KEYS: usize = 8;
const MAX_KEY_CHARS: usize = 64;
/// At most this many parameters are listed.
const MAX_NAMED_PARAMETERS: usize = 32;

/// The note naming the undeclared root keys a `#[tool]` ignored, e.g.
/// `ignored unknown argument "limt": did you mean "limit"? (tool "read" takes "path", "offset", "limit")`.
pub(super) fn ignored_arguments(call: &Call, tool: &DynTool) -> Option<String> {
    let rules = tool.definition().parameters.as_object()?;
    if rules.additional != Additional::Ignored {
        return None;
    }
    ignored_note(rules, call.exec.arguments.as_object()?, &call.exec.name)
}

/// The note for arguments `args` of the tool `name` whose parameter root is `rules`, built
/// in one string. A named key that is a likely misspelling of an optional parameter the
/// call left out says so (`"tag": did you mean "tags"?`), as a misspelt required one does
/// in the call's failure.
fn ignored_note(rules: &ObjectRules, args: &Object, name: &str) -> Option<String> {
    // One pass over the keys: the undeclared ones are counted and the first few kept.
    let mut named: smallvec::SmallVec<[(&str, Option<&str>); MAX_NAMED_KEYS]> =
        smallvec::SmallVec::new();
    let mut count = 0usize;
    // A key that stands for a missing required property is named by the call's failure
    // (`unknown argument "qeury": did you mean "query"?`), not noted again.
    // Computed at the first undeclared key only: a call without any pays nothing.
    let mut misspelt: Option<Vec<(&str, &str)>> = None;
    for (k, _) in args.iter() {
        let k: &str = k;
        if rules.declares(k) {
            continue;
        }
        let misspelt =
            misspelt.get_or_insert_with(|| crate::validate::misspelt_required(rules, args));
        if misspelt.iter().any(|(given, _)| *given == k) {
            continue;
        }
        count += 1;
        if count > MAX_NAMED_KEYS {
            continue;
        }
        let meant = misspelt_optional(rules, args, k, &named);
        named.push((k, meant));
    }
    if named.is_empty() {
        return None;
    }
    let mut text = String::with_capacity(128);
    text.push_str(if count == 1 {
        "ignored unknown argument "
    } else {
        "ignored unknown arguments "
    });
    for (i, (k, meant)) in named.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        // A key of at most `MAX_KEY_CHARS` bytes has at most that many characters.
        let cut = match k.len() > MAX_KEY_CHARS {
            true => k.char_indices().nth(MAX_KEY_CHARS),
            false => None,
        };
        match cut {
            Some((cut, _)) => {
                json_quote_into(&mut text, &k[..cut]);
                text.push('…');
            }
            None => json_quote_into(&mut text, k),
        }
        if let Some(meant) = meant {
            // One key reads as the required case does; in a list, each in parentheses.
            text.push_str(if count == 1 {
                ": did you mean "
            } else {
                " (did you mean "
            });
            json_quote_into(&mut text, meant);
            text.push_str(if count == 1 { "?" } else { "?)" });
        }
    }
    if count > MAX_NAMED_KEYS {
        let _ = write!(text, " and {} more", count - MAX_NAMED_KEYS);
    }
    write_takes(&mut text, rules, name);
    Some(text)
}

/// The note's tail: ` (tool "name" takes "a", "b")`, at most [`MAX_NAMED_PARAMETERS`]
/// named.
fn write_takes(text: &mut String, rules: &ObjectRules, name: &str) {
    text.push_str(" (tool ");
    json_quote_into(text, name);
    if rules.properties.is_empty() {
        text.push_str(" takes no arguments)");
        return;
    }
    text.push_str(" takes ");
    for (i, p) in rules
        .properties
        .iter()
        .take(MAX_NAMED_PARAMETERS)
        .enumerate()
    {
        if i > 0 {
            text.push_str(", ");
        }
        json_quote_into(text, &p.name);
    }
    if rules.properties.len() > MAX_NAMED_PARAMETERS {
        text.push_str(", …");
    }
    text.push(')');
}

/// The optional parameter that the undeclared key `given` most likely misspells: the
/// closest one the call left out and no earlier key in `named` was taken for.
fn misspelt_optional<'r>(
    rules: &'r ObjectRules,
    args: &Object,
    given: &str,
    named: &[(&str, Option<&str>)],
) -> Option<&'r str> {
    let candidates = rules
        .properties
        .iter()
        .filter(|p| !p.required && args.get(&p.name).is_none())
        .map(|p| -> &str { &p.name })
        .filter(|p| !named.iter().any(|(_, taken)| *taken == Some(*p)));
    crate::suggest::closest(given, candidates, 1)
        .first()
        .copied()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::json::Value;
    use crate::schema::{Schema, json_quote};

    /// The note as it was built before it was written into one string: the reference.
    fn reference(rules: &ObjectRules, args: &Object, name: &str) -> Option<String> {
        if args.len() <= rules.properties.len() && args.iter().all(|(k, _)| rules.declares(k)) {
            return None;
        }
        let ignored: Vec<&str> = args
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !rules.declares(k))
            .collect();
        if ignored.is_empty() {
            return None;
        }
        let quote = |k: &str| match k.char_indices().nth(MAX_KEY_CHARS) {
            Some((cut, _)) => format!("{}…", json_quote(&k[..cut])),
            None => json_quote(k),
        };
        let mut text = String::from(if ignored.len() == 1 {
            "ignored unknown argument "
        } else {
            "ignored unknown arguments "
        });
        // Each named key with the closest optional parameter left out and not yet taken.
        let mut taken: Vec<&str> = Vec::new();
        let mut named: Vec<String> = Vec::new();
        for k in ignored.iter().take(MAX_NAMED_KEYS) {
            let mut best: Option<(f64, &str)> = None;
            for p in &rules.properties {
                let p: &str = &p.name;
                if args.get(p).is_some() || taken.contains(&p) || p == *k {
                    continue;
                }
                let score = strsim::jaro_winkler(k, p);
                if score >= 0.8 && best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, p));
                }
            }
            named.push(match best {
                Some((_, p)) if ignored.len() == 1 => {
                    format!("{}: did you mean {}?", quote(k), json_quote(p))
                }
                Some((_, p)) => format!("{} (did you mean {}?)", quote(k), json_quote(p)),
                None => quote(k),
            });
            taken.extend(best.map(|(_, p)| p));
        }
        text.push_str(&named.join(", "));
        if ignored.len() > MAX_NAMED_KEYS {
            text.push_str(&format!(" and {} more", ignored.len() - MAX_NAMED_KEYS));
        }
        text.push_str(&format!(" (tool {} ", json_quote(name)));
        if rules.properties.is_empty() {
            text.push_str("takes no arguments)");
        } else {
            let mut params: Vec<String> = rules
                .properties
                .iter()
                .take(MAX_NAMED_PARAMETERS)
                .map(|p| json_quote(&p.name))
                .collect();
            if rules.properties.len() > MAX_NAMED_PARAMETERS {
                params.push("…".to_string());
            }
            text.push_str(&format!("takes {})", params.join(", ")));
        }
        Some(text)
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-d]{1,3}",
            "[a-z\"\\\\\n\u{1}é]{0,8}",
            "[a-z]{60,70}",
            "[a-zé\"]{62,66}",
        ]
    }

    proptest! {
        #[test]
        fn json_quote_agrees_with_serde_json(s in any::<String>(), t in "[\"\\\\\u{0}-\u{1f}a-zé\u{7f}]{0,24}") {
            for s in [&s, &t] {
                prop_assert_eq!(json_quote(s), serde_json::to_string(s).expect("a string"));
            }
        }

        #[test]
        fn the_note_agrees_with_the_reference(
            declared in proptest::collection::btree_set(key(), 0..40),
            sent in proptest::collection::btree_set(key(), 0..14),
            name in key(),
        ) {
            let mut props = crate::json::Object::new();
            for d in &declared {
                props.insert(d.as_str(), Value::Object(Default::default()));
            }
            let mut root = crate::json::Object::new();
            root.insert("type", Value::from("object"));
            root.insert("properties", Value::Object(props));
            let schema = Schema::parameters_from_json_schema(&Value::Object(root))
                .expect("a parameter schema");
            let rules = schema.as_object().expect("an object node");
            let mut args = crate::json::Object::new();
            for k in declared.iter().take(3).chain(sent.iter()) {
                args.insert(k.as_str(), Value::Null);
            }
            prop_assert_eq!(
                ignored_note(rules, &args, &name),
                reference(rules, &args, &name)
            );
        }
    }
}
