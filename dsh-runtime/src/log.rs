//! Call log records: one JSON Lines record per finished call, as a host writes them
//! (`dsh-tools call --log FILE`) and as replays read them.
//!
//! ```json
//! {"call":{"id":"call_1","name":"read","arguments":{"file_path":"README.md","limit":5}},"result":{"content":[{"type":"text","text":"..."}],"isError":false}}
//! ```
//!
//! - `call.id`: the call id (optional; `""` when absent);
//! - `call.name`: the tool name as called;
//! - `call.arguments`: the arguments as a JSON value, or as a string holding JSON (the
//!   way model APIs transport them); a string that is not JSON is kept as a string;
//! - `result` (optional, e.g. for a call still running when the log was cut): the
//!   persisted part of the result, [`ResultSummary`]: final `content`, `isError`, and the
//!   presentation `meta` when the tool produced one. The canonical value is never logged.
//!
//! Unknown keys are ignored, so a log may carry more (timestamps, usage).
//!
//! ```
//! use dsh_runtime::log::LogRecord;
//!
//! let line = r#"{"call":{"id":"c1","name":"add","arguments":"{\"a\":1}"},"result":{"content":[{"type":"text","text":"1"}],"isError":false}}"#;
//! let record: LogRecord = dsh_runtime::json::from_value(&dsh_runtime::json::parse(line).unwrap()).unwrap();
//! assert_eq!(record.call.name, "add");
//! assert_eq!(record.call.arguments_value().to_string(), r#"{"a":1}"#);
//! assert_eq!(record.result.map(|r| r.is_error), Some(false));
//! ```

use serde::{Deserialize, Serialize};

use crate::cards::ResultSummary;
use crate::json::{self, Value};

/// One line of a call log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogRecord {
    /// The call.
    pub call: LoggedCall,
    /// Its result, when it was logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultSummary>,
}

/// The call part of a [`LogRecord`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoggedCall {
    /// The call id.
    #[serde(default)]
    pub id: String,
    /// The tool name as called.
    pub name: String,
    /// The arguments: a JSON value, or a string holding JSON.
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(json::Object::new())
}

impl LoggedCall {
    /// The arguments as a JSON value: a string holding JSON is parsed; anything else
    /// (including a string that is not JSON) is returned as it is.
    pub fn arguments_value(&self) -> Value {
        match &self.arguments {
            Value::String(text) => json::parse(text).unwrap_or_else(|_| self.arguments.clone()),
            other => other.clone(),
        }
    }
}
