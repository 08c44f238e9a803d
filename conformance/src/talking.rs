//! The fixtures of tools that talk to their caller: logs, forms, sampling, roots, and
//! the `InputRequiredResult` round trips of revision 2026-07-28.

use std::time::Duration;

use dsh_runtime::caller::{
    CallerAnswer, CallerError, CallerRequest, Elicited, FormAnswer, FormRequest, LogLevel,
    Question, SampleRequest,
};
use dsh_runtime::{ToolContext, ToolError, ToolSchema, json, tool};
use serde::Deserialize;

/// Log three messages at `info`, about 50 ms apart, then answer.
#[tool(read_only)]
pub(crate) async fn test_tool_with_logging(cx: ToolContext) -> String {
    cx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.log(LogLevel::Info, "Tool execution completed");
    "Logging test completed: 3 messages sent.".to_string()
}

/// Log one message at each level, then answer (a 2026-07-28 request without
/// `logLevel` gets none of them).
#[tool(read_only)]
pub(crate) async fn test_logging_tool(cx: ToolContext) -> String {
    for level in LogLevel::ALL {
        cx.log(level, format!("a log message at {}", level.as_str()));
    }
    "Logging evaluated".to_string()
}

/// Ask the client's model about `prompt`.
#[tool(read_only)]
pub(crate) async fn test_sampling(
    cx: ToolContext,
    /// What to ask the model.
    prompt: String,
) -> Result<String, ToolError> {
    let message = cx.sample(SampleRequest::new(prompt, 100)).await?;
    Ok(format!("LLM response: {}", message.text()))
}

/// Ask the client's model something: a call that needs the client's `sampling`
/// capability (refused with `-32021` on 2026-07-28 when the client did not declare it).
#[tool(read_only)]
pub(crate) async fn test_missing_capability(cx: ToolContext) -> Result<String, ToolError> {
    let message = cx.sample(SampleRequest::new("Say anything.", 20)).await?;
    Ok(format!("LLM response: {}", message.text()))
}

/// Who the user is.
#[derive(ToolSchema, Deserialize, Debug)]
pub(crate) struct UserInfo {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Ask the user who they are, with `message`.
#[tool(read_only)]
pub(crate) async fn test_elicitation(
    cx: ToolContext,
    /// The message to show the user.
    message: String,
) -> Result<String, ToolError> {
    Ok(match cx.elicit::<UserInfo>(message).await? {
        Elicited::Accepted(info) => format!(
            "User response: action=accept, content={{\"username\":{:?},\"email\":{:?}}}",
            info.username, info.email
        ),
        Elicited::Declined => "User response: action=decline".to_string(),
        Elicited::Cancelled => "User response: action=cancel".to_string(),
    })
}

/// A form written as JSON Schema.
fn form(message: &str, schema: &str) -> Result<FormRequest, ToolError> {
    let schema = json::parse(schema).map_err(|e| ToolError::new(format!("fixture schema: {e}")))?;
    Ok(FormRequest::new(message, schema))
}

/// Answer with what the form's answer was.
async fn ask_form(cx: &ToolContext, request: FormRequest) -> Result<String, ToolError> {
    Ok(match cx.elicit_form(request).await? {
        FormAnswer::Accepted(content) => {
            format!("Elicitation completed: action=accept, content={content}")
        }
        FormAnswer::Declined => "Elicitation completed: action=decline, content={}".to_string(),
        _ => "Elicitation completed: action=cancel, content={}".to_string(),
    })
}

/// Ask a form with a default for every primitive type (SEP-1034).
#[tool(read_only)]
pub(crate) async fn test_elicitation_sep1034_defaults(
    cx: ToolContext,
) -> Result<String, ToolError> {
    let request = form(
        "Please review your profile",
        r#"{"type":"object","properties":{
            "name":{"type":"string","description":"Your name","default":"John Doe"},
            "age":{"type":"integer","description":"Your age","default":30},
            "score":{"type":"number","description":"Your score","default":95.5},
            "status":{"type":"string","description":"Your status","enum":["active","inactive","pending"],"default":"active"},
            "verified":{"type":"boolean","description":"Verified","default":true}
        }}"#,
    )?;
    ask_form(&cx, request).await
}

/// Ask a form with each of the five enum shapes (SEP-1330).
#[tool(read_only)]
pub(crate) async fn test_elicitation_sep1330_enums(cx: ToolContext) -> Result<String, ToolError> {
    let request = form(
        "Please choose",
        r#"{"type":"object","properties":{
            "untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
            "titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
            "legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
            "untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
            "titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}
        }}"#,
    )?;
    ask_form(&cx, request).await
}

/// The one answer of a one-question round.
fn only(mut answers: Vec<Result<CallerAnswer, CallerError>>) -> Result<CallerAnswer, ToolError> {
    Ok(answers.pop().unwrap_or(Err(CallerError::Cancelled))?)
}

/// A form's accepted content, or an error for any other answer.
fn accepted(answer: CallerAnswer) -> Result<json::Value, ToolError> {
    match answer {
        CallerAnswer::Form(FormAnswer::Accepted(content)) => Ok(content),
        other => Err(ToolError::new(format!(
            "the form was not accepted: {other:?}"
        ))),
    }
}

/// A question under `key`.
fn keyed(key: &str, request: CallerRequest) -> Question {
    Question::new(request).with_key(key)
}

/// The name form of the `InputRequiredResult` scenarios.
fn name_form(message: &str) -> Result<CallerRequest, ToolError> {
    Ok(CallerRequest::Form(form(
        message,
        r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#,
    )?))
}

/// A string field of a form's content.
fn field(content: &json::Value, key: &str) -> String {
    content
        .get(key)
        .and_then(json::Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Ask the user's name (`user_name`), then greet them.
#[tool(read_only)]
pub(crate) async fn test_input_required_result_elicitation(
    cx: ToolContext,
) -> Result<String, ToolError> {
    let question = keyed("user_name", name_form("What is your name?")?);
    let content = accepted(only(cx.ask_all(vec![question]).await)?)?;
    Ok(format!("Hello, {}!", field(&content, "name")))
}

/// Ask the client's model for the capital of France (`capital_question`).
#[tool(read_only)]
pub(crate) async fn test_input_required_result_sampling(
    cx: ToolContext,
) -> Result<String, ToolError> {
    let request = CallerRequest::Sample(SampleRequest::new("What is the capital of France?", 100));
    match only(cx.ask_all(vec![keyed("capital_question", request)]).await)? {
        CallerAnswer::Sample(message) => Ok(format!("The model answered: {}", message.text())),
        other => Err(ToolError::new(format!("not a message: {other:?}"))),
    }
}

/// List the client's roots (`client_roots`).
#[tool(read_only)]
pub(crate) async fn test_input_required_result_list_roots(
    cx: ToolContext,
) -> Result<String, ToolError> {
    match only(
        cx.ask_all(vec![keyed("client_roots", CallerRequest::Roots)])
            .await,
    )? {
        CallerAnswer::Roots(roots) => {
            let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
            Ok(format!("Client roots: {}", uris.join(", ")))
        }
        other => Err(ToolError::new(format!("not a roots list: {other:?}"))),
    }
}

/// Ask for a confirmation (`confirm`) under dsh-mcp's sealed request state.
#[tool(read_only)]
pub(crate) async fn test_input_required_result_request_state(
    cx: ToolContext,
) -> Result<String, ToolError> {
    let request = CallerRequest::Form(form(
        "Please confirm",
        r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#,
    )?);
    let content = accepted(only(cx.ask_all(vec![keyed("confirm", request)]).await)?)?;
    let ok = content
        .get("ok")
        .and_then(json::Value::as_bool)
        .unwrap_or(false);
    Ok(format!(
        "state-ok: the request state was validated (ok = {ok})"
    ))
}

/// Ask a name, a greeting of the model and the roots, in one round.
#[tool(read_only)]
pub(crate) async fn test_input_required_result_multiple_inputs(
    cx: ToolContext,
) -> Result<String, ToolError> {
    let questions = vec![
        keyed("user_name", name_form("What is your name?")?),
        keyed(
            "greeting",
            CallerRequest::Sample(SampleRequest::new("Generate a greeting", 50)),
        ),
        keyed("client_roots", CallerRequest::Roots),
    ];
    let mut answers = cx.ask_all(questions).await.into_iter();
    let mut next = || answers.next().unwrap_or(Err(CallerError::Cancelled));
    let name = field(&accepted(next()?)?, "name");
    let greeting = match next()? {
        CallerAnswer::Sample(message) => message.text().to_string(),
        _ => String::new(),
    };
    let roots = match next()? {
        CallerAnswer::Roots(roots) => roots.len(),
        _ => 0,
    };
    Ok(format!("{greeting} {name} ({roots} roots)"))
}

/// Ask a name (`step1`), then a colour (`step2`), in two rounds.
#[tool(read_only)]
pub(crate) async fn test_input_required_result_multi_round(
    cx: ToolContext,
) -> Result<String, ToolError> {
    let step1 = keyed("step1", name_form("Step 1: What is your name?")?);
    let name = field(&accepted(only(cx.ask_all(vec![step1]).await)?)?, "name");
    let colour = CallerRequest::Form(form(
        "Step 2: What is your favorite color?",
        r#"{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}"#,
    )?);
    let content = accepted(only(cx.ask_all(vec![keyed("step2", colour)]).await)?)?;
    Ok(format!("{name} likes {}", field(&content, "color")))
}

/// Ask a form and the model together: only what the client declared it can answer is
/// asked.
#[tool(read_only)]
pub(crate) async fn test_input_required_result_capabilities(
    cx: ToolContext,
) -> Result<String, ToolError> {
    let questions = vec![
        keyed("user_name", name_form("What is your name?")?),
        keyed(
            "greeting",
            CallerRequest::Sample(SampleRequest::new("Generate a greeting", 50)),
        ),
    ];
    let answered = cx
        .ask_all(questions)
        .await
        .into_iter()
        .filter(Result::is_ok)
        .count();
    Ok(format!("{answered} of 2 questions answered"))
}

/// Ask the user's name (`user_name`), then go on as a task that greets them: the
/// composition of `InputRequiredResult` rounds and a task (SEP-2663).
#[tool(read_only, task = "required", task_after_input)]
pub(crate) async fn test_tool_with_task(cx: ToolContext) -> Result<String, ToolError> {
    let question = keyed("user_name", name_form("What is your name?")?);
    let name = field(&accepted(only(cx.ask_all(vec![question]).await)?)?, "name");
    cx.continue_as_task().await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(format!("Hello, {name}! (from a task)"))
}
