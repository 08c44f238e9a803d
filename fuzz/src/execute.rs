//! `Registry::execute` on generated tools with arbitrary argument text.
//!
//! A tool is generated per input: its parameters are a generated object schema, its
//! output schema is the same schema, and its body echoes the arguments, fails with a
//! coded error, or returns a fixed value (which may not match the output schema). The
//! arguments are the fuzzer's raw bytes as text, or a mostly conforming value printed as
//! JSON. Nothing may panic, and every result is a success or carries a code:
//! `INVALID_ARGS` exactly when the value does not validate, the body's own code, or
//! `INVALID_TOOL_OUTPUT`. One known gap is tolerated (and only with its exact message):
//! text that is not lossless JSON fails without a code today, where it should be
//! `INVALID_ARGS`.

use std::sync::{Arc, OnceLock};

use super::generate::{schema, value_for};
use arbitrary::Unstructured;
use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Additional, Kind, Schema};
use dsh_runtime::{Registry, Tool, ToolCall, ToolContext, ToolDefinition, ToolError};

struct Generated {
    def: ToolDefinition,
    mode: u8,
}

impl Tool for Generated {
    type Args = Value;
    type Output = Value;

    fn definition(&self) -> &ToolDefinition {
        &self.def
    }

    async fn call(&self, args: Value, _cx: ToolContext) -> Result<Value, ToolError> {
        match self.mode % 3 {
            0 => Ok(args),
            1 => Err(ToolError::with_code("E_FUZZ", "the body failed")),
            _ => Ok(json::parse(r#"{"a":1}"#).unwrap_or_default()),
        }
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

/// Check one input; panics when an invariant breaks. Returns whether the input reached
/// the checks (`false`: it ran out before a tool and its arguments were generated).
pub fn run(data: &[u8]) -> bool {
    let mut u = Unstructured::new(data);
    let Ok(generated) = schema(&mut u, 3) else {
        return false;
    };
    // The parameters must be an object: wrap anything else as the property `a`.
    let params = match generated.kind {
        Kind::Object(_) => generated,
        _ => Schema::object(
            vec![dsh_runtime::schema::Property::new("a", generated, true)],
            Additional::Closed,
        ),
    };
    let Ok(mode) = u.arbitrary::<u8>() else {
        return false;
    };
    let Ok(structured) = u.arbitrary::<bool>() else {
        return false;
    };
    let text = if structured {
        let Ok(v) = value_for(&mut u, &params, 5) else {
            return false;
        };
        v.to_string()
    } else {
        String::from_utf8_lossy(u.take_rest()).into_owned()
    };

    let params = Arc::new(params);
    let def = ToolDefinition::new(
        "generated",
        "A generated tool.",
        params.clone(),
        params.clone(),
    );
    let registry = Registry::new();
    let _registration = registry
        .register(Generated { def, mode })
        .expect("a checked object schema registers");
    let result =
        runtime().block_on(registry.execute(ToolCall::new("c1", "generated", text.as_str())));

    let parsed = json::parse(&text).ok();
    let valid = parsed
        .as_ref()
        .is_some_and(|v| dsh_runtime::validate::is_valid(&params, v));
    if result.is_success() {
        assert!(valid, "accepted invalid arguments {text}");
        return true;
    }
    if parsed.is_none() && result.code_str().is_none() {
        // Known gap: text that is not lossless JSON fails without a code today, where it
        // should be `INVALID_ARGS`. Accept exactly that
        // message until the pipeline gives the code; everything else must carry one.
        let message = result.message().unwrap_or_default();
        assert!(
            message.starts_with("tool execution arguments must be losslessly JSON-serializable: "),
            "{message}"
        );
        assert!(message.len() < 1024, "{} byte message", message.len());
        return true;
    }
    let code = result
        .code_str()
        .unwrap_or_else(|| panic!("a failure without a code: {:?}", result.message()));
    if !valid {
        assert_eq!(code, "INVALID_ARGS", "{text}: {:?}", result.message());
    } else {
        match mode % 3 {
            1 => assert_eq!(code, "E_FUZZ"),
            _ => assert_eq!(
                code,
                "INVALID_TOOL_OUTPUT",
                "{text}: {:?}",
                result.message()
            ),
        }
    }
    true
}
