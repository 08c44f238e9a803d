//! `tools.search(query, options)`: the program's search over the deferred tools its scope
//! sees (the index of [`dsh_providers::tool_search`]), answered on the run's thread without
//! a tool call.

use dsh_providers::tool_search::{DEFAULT_LIMIT, MAX_LIMIT, Mode, ToolIndex};
use dsh_runtime::json::{self, Object, Value};

use crate::sdk::typescript;

/// Answer one search: `text` is the JSON of `[query, options]` as the prelude encoded
/// it. `Ok` holds the JSON text of the matches (`[{name, description, signature}]`),
/// `Err` the message the promise rejects with.
pub(crate) fn answer(index: &ToolIndex, text: &str) -> Result<String, String> {
    let request = json::parse(text).map_err(|e| format!("tools.search: {e}"))?;
    let (query, options) = match request.as_array().map(|a| &a[..]) {
        Some([query, options]) => (query, options),
        _ => return Err("tools.search: expected (query, options)".to_string()),
    };
    let query = query
        .as_str()
        .ok_or_else(|| "tools.search(query): `query` must be a string".to_string())?;
    let mut mode = Mode::Bm25;
    let mut limit = DEFAULT_LIMIT;
    match options {
        Value::Null => {}
        Value::Object(o) => {
            for (key, value) in o.iter() {
                match key {
                    "mode" => {
                        mode = match value.as_str() {
                            Some("bm25") => Mode::Bm25,
                            Some("regex") => Mode::Regex,
                            _ => {
                                return Err(format!(
                                    "tools.search: `options.mode` must be \"bm25\" or \"regex\", not {value}"
                                ));
                            }
                        }
                    }
                    "limit" => {
                        limit = value
                            .as_u64()
                            .and_then(|n| usize::try_from(n).ok())
                            .filter(|n| (1..=MAX_LIMIT).contains(n))
                            .ok_or_else(|| {
                                format!(
                                    "tools.search: `options.limit` must be an integer from 1 to {MAX_LIMIT}, not {value}"
                                )
                            })?;
                    }
                    other => {
                        return Err(format!(
                            "tools.search: unknown option {}; the options are `mode` and `limit`",
                            Value::from(other)
                        ));
                    }
                }
            }
        }
        other => {
            return Err(format!(
                "tools.search: `options` must be an object, not {}",
                other.type_name()
            ));
        }
    }
    let found = index
        .search(query, mode, limit)
        .map_err(|e| format!("tools.search: {e}"))?;
    let matches: Vec<Value> = found
        .iter()
        .map(|m| {
            let d = m.definition;
            let mut o = Object::new();
            o.insert("name", Value::from(d.name.as_ref()));
            o.insert("description", Value::from(d.description.as_ref()));
            o.insert("signature", Value::from(typescript::signature(d)));
            Value::Object(o)
        })
        .collect();
    Ok(Value::from(matches).to_string())
}
