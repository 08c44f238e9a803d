//! Stages 9 and 10: post-execute, then finalize and observe.

use std::fmt::Write as _;

use super::output::success;
use super::stage::{Call, Outcome};
use crate::content::ContentBlock;
use crate::hooks::{Accept, Block, PostDecision, PostNext, Replacement};
use crate::json::Object;
use crate::panic;
use crate::result::{Kind, PipelineCode, ResultData, ToolResult};
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
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Image { .. } => "[image content]".to_string(),
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
/// `ignored unknown argument "limt" (tool "read" takes "path", "offset", "limit")`.
pub(super) fn ignored_arguments(call: &Call, tool: &DynTool) -> Option<String> {
    let rules = tool.definition().parameters.as_object()?;
    if rules.additional != Additional::Ignored {
        return None;
    }
    ignored_note(rules, call.exec.arguments.as_object()?, &call.exec.name)
}

/// The note for arguments `args` of the tool `name` whose parameter root is `rules`, built
/// in one string.
fn ignored_note(rules: &ObjectRules, args: &Object, name: &str) -> Option<String> {
    // One pass over the keys: the undeclared ones are counted and the first few quoted.
    let mut listed: Option<String> = None;
    let mut count = 0usize;
    // A key that stands for a missing required property is named by the call's failure
    // (`unknown argument "qeury": did you mean "query"?`), not noted again.
    // Computed at the first undeclared key only: a call without any pays nothing.
    let mut misspelt: Option<Vec<(&str, &str)>> = None;
    for (k, _) in args.iter() {
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
        let text = listed.get_or_insert_with(|| String::with_capacity(128));
        if count > 1 {
            text.push_str(", ");
        }
        // A key of at most `MAX_KEY_CHARS` bytes has at most that many characters.
        let cut = match k.len() > MAX_KEY_CHARS {
            true => k.char_indices().nth(MAX_KEY_CHARS),
            false => None,
        };
        match cut {
            Some((cut, _)) => {
                json_quote_into(text, &k[..cut]);
                text.push('…');
            }
            None => json_quote_into(text, k),
        }
    }
    let mut text = listed?;
    text.insert_str(
        0,
        if count == 1 {
            "ignored unknown argument "
        } else {
            "ignored unknown arguments "
        },
    );
    if count > MAX_NAMED_KEYS {
        let _ = write!(text, " and {} more", count - MAX_NAMED_KEYS);
    }
    text.push_str(" (tool ");
    json_quote_into(&mut text, name);
    if rules.properties.is_empty() {
        text.push_str(" takes no arguments)");
    } else {
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
            json_quote_into(&mut text, &p.name);
        }
        if rules.properties.len() > MAX_NAMED_PARAMETERS {
            text.push_str(", …");
        }
        text.push(')');
    }
    Some(text)
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
        let named: Vec<String> = ignored
            .iter()
            .take(MAX_NAMED_KEYS)
            .map(|k| quote(k))
            .collect();
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
