//! The provider round trip: recorded conversations of a small notes assistant, for each
//! provider, run through `round_trip::run_turn` with the registry; the requests it builds
//! are checked here and by the providers' official client libraries' own models
//! (`tests/round_trip/check_models.py`, in a virtual environment under the target
//! directory with `openai`, `anthropic` and `google-genai` installed on first run).
//!
//! Plus: malformed responses name what is missing, `conclude_turn` and `max_rounds` stop
//! the loop, and any set of calls survives the round trip (ids, order, contexts).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use dsh_providers::round_trip::{
    self, Anthropic, Gemini, OpenAiChat, OpenAiResponses, Provider, RoundTripError, Stop,
    TurnOptions,
};
use dsh_runtime::{
    RegistrationHandle, Registry, ToolContext, ToolError, content::ContentBlock, tool,
};
use proptest::prelude::*;
use serde_json::{Value as J, json};

/// Search the notes.
#[tool(read_only, concurrency_safe)]
async fn search_notes(
    /// Words to look for.
    query: String,
    /// At most this many notes.
    limit: Option<u32>,
) -> Result<Vec<String>, ToolError> {
    let _ = limit;
    Ok(vec![format!("Launch plan ({query})")])
}

/// Show the notes board as a picture.
#[tool(read_only)]
async fn snapshot(cx: ToolContext) -> Result<String, ToolError> {
    cx.attach_content(ContentBlock::image("iVBORw0KGgo=", "image/png"));
    cx.defer_context("The board was last changed today.");
    Ok("the board, 3 notes".into())
}

/// Add a note.
#[tool]
async fn add_note(
    /// The note's title.
    title: String,
    /// The note's text.
    body: String,
) -> Result<String, ToolError> {
    Ok(format!("added {title:?} ({} bytes)", body.len()))
}

/// Hand the conversation back to the user.
#[tool]
async fn ask_user(question: String, cx: ToolContext) -> Result<String, ToolError> {
    cx.conclude_turn();
    Ok(question)
}

fn notes() -> (Registry, Vec<RegistrationHandle>) {
    let registry = Registry::new();
    let regs = vec![
        registry.register(SearchNotes).unwrap(),
        registry.register(Snapshot).unwrap(),
        registry.register(AddNote).unwrap(),
        registry.register(AskUser).unwrap(),
    ];
    (registry, regs)
}

fn fixture(name: &str) -> J {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/round_trip")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// A `send` that answers with the recorded responses in order and keeps the requests.
type Sent = Arc<Mutex<Vec<J>>>;

fn recorded(responses: Vec<J>) -> (impl FnMut(J) -> std::future::Ready<Result<J, String>>, Sent) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = sent.clone();
    let mut queue = VecDeque::from(responses);
    let send = move |request: J| {
        log.lock().unwrap().push(request);
        std::future::ready(
            queue
                .pop_front()
                .ok_or_else(|| "no more responses".to_string()),
        )
    };
    (send, sent)
}

/// Runs a provider's recorded conversation; returns the final request.
async fn converse(provider: &dyn Provider, name: &str) -> J {
    let (registry, _regs) = notes();
    let case = fixture(name);
    let responses = case["responses"].as_array().unwrap().clone();
    let (send, sent) = recorded(responses.clone());
    let outcome = round_trip::run_turn(
        &registry,
        provider,
        case["request"].clone(),
        &TurnOptions::default(),
        send,
    )
    .await
    .unwrap();
    assert_eq!(outcome.stop, Stop::Answered);
    assert_eq!(outcome.rounds, 3);
    assert_eq!(outcome.response, responses[2]);
    assert_eq!(outcome.results.len(), 4);
    assert_eq!(sent.lock().unwrap().len(), 3);
    // The request the last round sent is the final conversation.
    assert_eq!(sent.lock().unwrap()[2], outcome.request);
    outcome.request
}

const NOTE: &str = "ignored unknown argument \"limt\"";

#[tokio::test]
async fn openai_chat_conversation() {
    let request = converse(&OpenAiChat, "openai_chat").await;
    let m = request["messages"].as_array().unwrap();
    let roles: Vec<&str> = m.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "tool",
            "tool",
            "assistant",
            "tool"
        ]
    );
    assert_eq!(m[1]["tool_calls"].as_array().unwrap().len(), 3);
    let ids: Vec<&str> = m
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(ids, ["call_a1", "call_a2", "call_a3", "call_b1"]);
    let search = m[2]["content"].as_str().unwrap();
    assert!(
        search.contains("Launch plan (launch)") && search.contains(NOTE),
        "{search}"
    );
    let snap = m[3]["content"].as_str().unwrap();
    assert!(
        snap.contains("the board, 3 notes")
            && snap.contains("an image (image/png) was left out")
            && snap.contains("last changed today"),
        "{snap}"
    );
    let unknown = m[4]["content"].as_str().unwrap();
    assert!(unknown.starts_with("Error: "), "{unknown}");
    assert_eq!(m[5]["content"], "Adding it now.");
}

#[tokio::test]
async fn openai_responses_conversation() {
    let request = converse(&OpenAiResponses, "openai_responses").await;
    let input = request["input"].as_array().unwrap();
    assert_eq!(
        input[0],
        json!({"role": "user", "content": "Find my note about the launch and add one with the date."})
    );
    let kinds: Vec<&str> = input[1..]
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "reasoning",
            "function_call",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "function_call_output",
            "function_call",
            "function_call_output"
        ]
    );
    assert!(input[5]["output"].as_str().unwrap().contains(NOTE));
    let snap = input[6]["output"].as_array().unwrap();
    assert_eq!(snap[0]["type"], "input_text");
    assert!(
        snap[0]["text"]
            .as_str()
            .unwrap()
            .contains("last changed today")
    );
    assert_eq!(
        snap[1],
        json!({"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="})
    );
}

#[tokio::test]
async fn anthropic_conversation() {
    let request = converse(&Anthropic, "anthropic").await;
    let m = request["messages"].as_array().unwrap();
    let roles: Vec<&str> = m.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    let results = m[2]["content"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_a1", "toolu_a2", "toolu_a3"]);
    let errors: Vec<bool> = results
        .iter()
        .map(|b| b["is_error"].as_bool().unwrap())
        .collect();
    assert_eq!(errors, [false, false, true]);
    assert!(
        results[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(NOTE)
    );
    assert_eq!(
        results[1]["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
}

#[tokio::test]
async fn gemini_conversation() {
    let request = converse(&Gemini, "gemini").await;
    let c = request["contents"].as_array().unwrap();
    let roles: Vec<&str> = c.iter().map(|c| c["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "model", "user", "model", "user"]);
    let parts = c[2]["parts"].as_array().unwrap();
    let responses: Vec<&J> = parts.iter().map(|p| &p["functionResponse"]).collect();
    assert_eq!(responses[0]["id"], "fc-a1");
    assert!(
        responses[0]["response"]["output"]
            .as_str()
            .unwrap()
            .contains(NOTE)
    );
    // The call without an id is answered without one, by name.
    assert!(responses[1].get("id").is_none());
    assert_eq!(responses[1]["name"], "snapshot");
    assert_eq!(
        responses[1]["parts"][0],
        json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}})
    );
    assert!(
        responses[2]["response"]["error"]
            .as_str()
            .unwrap()
            .starts_with("Error: ")
    );
}

/// `<target>/provider-venv/bin/python` with the providers' client libraries.
pub(crate) fn python_with_provider_libraries() -> PathBuf {
    // The test binary is `<target>/<profile>/deps/pipeline-<hash>`.
    let exe = std::env::current_exe().unwrap();
    let target = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .expect("the target directory");
    let venv = target.join("provider-venv");
    let python = venv.join("bin/python");
    let probe = |python: &Path| {
        Command::new(python)
            .args(["-c", "import openai, anthropic, google.genai"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if python.exists() && probe(&python) {
        return python;
    }
    let out = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .expect("`python3` is needed (3.10 or later)");
    assert!(
        out.status.success(),
        "`python3 -m venv` failed (on Debian, install python3-venv): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["openai", "anthropic", "google-genai"])
        .output()
        .expect("run pip");
    assert!(
        out.status.success() && probe(&python),
        "installing openai, anthropic and google-genai failed (PyPI must be reachable): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    python
}

/// Every recorded response parses with the provider's own response model, and every
/// item of every request we built validates against the library's request types,
/// unchanged.
#[tokio::test]
async fn official_client_libraries_accept_the_responses_and_our_requests() {
    let mut cases = serde_json::Map::new();
    let providers: [(&dyn Provider, &str); 4] = [
        (&OpenAiChat, "openai_chat"),
        (&OpenAiResponses, "openai_responses"),
        (&Anthropic, "anthropic"),
        (&Gemini, "gemini"),
    ];
    for (provider, name) in providers {
        let request = converse(provider, name).await;
        let mut case = fixture(name);
        case["request"] = request;
        cases.insert(name.to_string(), case);
    }
    // The tool entries of the targets that defer, one tool deferred: each entry must
    // validate, unchanged, as the library's tool parameter type.
    let (registry, _regs) = notes();
    let defs: Vec<_> = registry
        .view()
        .definitions()
        .into_iter()
        .map(|d| {
            let defer = d.name == "search_notes";
            d.with_defer_loading(defer)
        })
        .collect();
    for (target, name) in [
        (dsh_providers::export::Target::Anthropic, "anthropic"),
        (
            dsh_providers::export::Target::OpenAiResponses,
            "openai_responses",
        ),
    ] {
        // Anthropic takes input examples in the tool entry (`input_examples`).
        let defs: Vec<_> = defs
            .iter()
            .cloned()
            .map(|d| {
                if target == dsh_providers::export::Target::Anthropic && d.name == "search_notes" {
                    d.with_input_examples(vec![
                        dsh_runtime::json::parse(r#"{"query":"groceries","limit":5}"#).unwrap(),
                    ])
                } else {
                    d
                }
            })
            .collect();
        let e = dsh_providers::export::export(&defs, target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        cases[name]["tools"] = e.to_serde();
    }
    for (provider, name, target) in [
        (
            &Anthropic as &dyn Provider,
            "anthropic_tool_search",
            dsh_providers::export::Target::Anthropic,
        ),
        (
            &OpenAiResponses,
            "openai_responses_tool_search",
            dsh_providers::export::Target::OpenAiResponses,
        ),
    ] {
        cases.insert(
            name.to_string(),
            provider_tool_search(provider, name, target).await,
        );
    }
    let dir = tempfile_dir();
    let file = dir.join("round_trips.json");
    std::fs::write(&file, serde_json::to_string(&J::Object(cases)).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/round_trip/check_models.py");
    let out = Command::new(python_with_provider_libraries())
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end().starts_with("ok: "),
        "the client libraries rejected a round trip:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A recorded conversation in which the model finds a deferred tool with the provider's
/// own tool search (Anthropic's BM25 tool search tool; OpenAI's hosted `tool_search`,
/// with the tool in a namespace) and calls it: the provider's search blocks go back
/// unchanged in the next request, and the call runs like any other. Returns the case for
/// the client-library check: the final request and the exported tools.
async fn provider_tool_search(
    provider: &dyn Provider,
    name: &str,
    target: dsh_providers::export::Target,
) -> J {
    let (registry, _regs) = notes();
    let notes_ns = dsh_runtime::Namespace::new("notes", "The user's notes.");
    let defs: Vec<_> = registry
        .view()
        .definitions()
        .into_iter()
        .map(|d| {
            let search = d.name == "search_notes";
            d.with_defer_loading(search)
                .with_namespace(search.then(|| notes_ns.clone()))
        })
        .collect();
    let tools = dsh_providers::export::export(&defs, target);
    assert!(tools.is_complete(), "{target}: {:?}", tools.errors);
    let mut case = fixture(name);
    case["request"]["tools"] = tools.to_serde();
    let responses = case["responses"].as_array().unwrap().clone();
    let (send, sent) = recorded(responses.clone());
    let outcome = round_trip::run_turn(
        &registry,
        provider,
        case["request"].clone(),
        &TurnOptions::default(),
        send,
    )
    .await
    .unwrap();
    assert_eq!(outcome.stop, Stop::Answered, "{name}");
    assert_eq!(outcome.rounds, 2, "{name}");
    assert_eq!(outcome.results.len(), 1, "{name}");
    let result = &outcome.results[0];
    assert!(!result.is_error(), "{name}: {}", result.text());
    assert_eq!(result.text(), r#"["Launch plan (launch)"]"#, "{name}");
    // The second request carries the first response's search blocks as they came.
    let second = sent.lock().unwrap()[1].clone();
    let first_output = match target {
        dsh_providers::export::Target::Anthropic => &second["messages"][1]["content"],
        _ => &second["input"],
    };
    let text = first_output.to_string();
    assert!(
        text.contains("tool_search_tool_result") || text.contains("tool_search_output"),
        "{name}: {text}"
    );
    case["request"] = outcome.request;
    case["tools"] = tools.to_serde();
    case
}

pub(crate) fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dsh-round-trip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn malformed_responses_name_what_is_missing() {
    let err = |p: &dyn Provider, r: J| p.calls(&r).unwrap_err().to_string();
    assert_eq!(
        err(&OpenAiChat, json!({"choices": []})),
        "the OpenAI Chat Completions response is malformed: `choices` must be a non-empty array"
    );
    assert_eq!(
        err(
            &OpenAiChat,
            json!({"choices": [{"message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "x"}}]}}]})
        ),
        "the OpenAI Chat Completions response is malformed: `choices[0].message.tool_calls[0].function.arguments` must be a string"
    );
    assert_eq!(
        err(
            &OpenAiResponses,
            json!({"output": [{"type": "function_call", "name": "x", "arguments": "{}"}]})
        ),
        "the OpenAI Responses response is malformed: `output[0].call_id` must be a string"
    );
    assert_eq!(
        err(
            &Anthropic,
            json!({"content": [{"type": "tool_use", "id": "t", "name": "x"}]})
        ),
        "the Anthropic Messages response is malformed: `content[0].input` must be present"
    );
    assert_eq!(
        err(
            &Gemini,
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]})
        ),
        "the Gemini response is malformed: `candidates[0].content.parts[0].functionCall.name` must be a string"
    );
    assert_eq!(
        err(&Anthropic, json!([1, 2])),
        "the Anthropic Messages response is malformed: `(the response)` must be an object"
    );
    assert!(matches!(
        OpenAiChat.calls_from_text("{not json"),
        Err(RoundTripError::NotJson { .. })
    ));
    // No tool calls: none, for every provider.
    assert!(OpenAiChat.calls(&json!({"choices": [{"message": {"role": "assistant", "content": "hi", "tool_calls": null}}]})).unwrap().is_empty());
    assert!(
        OpenAiResponses
            .calls(&json!({"output": []}))
            .unwrap()
            .is_empty()
    );
    assert!(
        Anthropic
            .calls(&json!({"content": [{"type": "text", "text": "hi"}]}))
            .unwrap()
            .is_empty()
    );
    assert!(
        Gemini
            .calls(
                &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}}]})
            )
            .unwrap()
            .is_empty()
    );
}

/// OpenAI's argument text reaches the snapshot as sent: a duplicate key is
/// `INVALID_ARGS`, not "the last one wins".
#[tokio::test]
async fn openai_argument_text_is_kept_for_the_lossless_snapshot() {
    let (registry, _regs) = notes();
    let response = json!({"output": [{"type": "function_call", "call_id": "c1", "name": "search_notes",
        "arguments": "{\"query\":\"a\",\"query\":\"b\"}"}]});
    let calls = OpenAiResponses.calls(&response).unwrap();
    let results = round_trip::run_calls(&registry, calls, None).await;
    assert_eq!(results[0].code_str(), Some("INVALID_ARGS"));
    assert!(
        results[0].message().unwrap().contains("duplicate key"),
        "{:?}",
        results[0].message()
    );
}

#[tokio::test]
async fn a_tool_that_concludes_the_turn_stops_the_loop() {
    let (registry, _regs) = notes();
    let response = json!({"content": [{"type": "tool_use", "id": "t1", "name": "ask_user", "input": {"question": "Which note?"}}]});
    let (send, sent) = recorded(vec![response.clone(), response]);
    let request = json!({"messages": [{"role": "user", "content": "hi"}]});
    let outcome = round_trip::run_turn(
        &registry,
        &Anthropic,
        request,
        &TurnOptions::default(),
        send,
    )
    .await
    .unwrap();
    assert_eq!(outcome.stop, Stop::Concluded);
    assert_eq!(outcome.rounds, 1);
    assert_eq!(sent.lock().unwrap().len(), 1);
    // The result is in the conversation, ready for the user's answer.
    assert_eq!(
        outcome.request["messages"][2]["content"][0]["tool_use_id"],
        "t1"
    );
}

#[tokio::test]
async fn max_rounds_stops_a_model_that_keeps_calling() {
    let (registry, _regs) = notes();
    let response = json!({"output": [{"type": "function_call", "call_id": "c", "name": "search_notes", "arguments": "{\"query\":\"q\"}"}]});
    let (send, sent) = recorded(vec![response.clone(), response.clone(), response]);
    let outcome = round_trip::run_turn(
        &registry,
        &OpenAiResponses,
        json!({"input": []}),
        &TurnOptions::default().with_max_rounds(2),
        send,
    )
    .await
    .unwrap();
    assert_eq!(outcome.stop, Stop::MaxRounds);
    assert_eq!((outcome.rounds, sent.lock().unwrap().len()), (2, 2));
    assert_eq!(outcome.results.len(), 2);
    // A send failure is the caller's error, unchanged.
    let failing = |_r: J| std::future::ready(Err::<J, _>("offline".to_string()));
    let err = round_trip::run_turn(
        &registry,
        &OpenAiResponses,
        json!({}),
        &TurnOptions::default(),
        failing,
    )
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "sending the request failed: offline");
}

/// An echoing tool with a context of its own, for the property.
#[tool]
async fn echo(n: u32, cx: ToolContext) -> Result<u32, ToolError> {
    cx.defer_context(format!("context of {n}"));
    Ok(n)
}

fn call_ids() -> impl Strategy<Value = Vec<(String, u32)>> {
    proptest::collection::vec(("[A-Za-z0-9_-]{1,12}", any::<u32>()), 0..8).prop_map(|v| {
        // Distinct ids, as providers give them.
        v.into_iter()
            .enumerate()
            .map(|(i, (id, n))| (format!("{id}{i}"), n))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any set of calls survives the round trip: every call comes back once, in order,
    /// under its id, with its own output and context.
    #[test]
    fn any_calls_survive_the_round_trip(calls in call_ids(), which in 0usize..4) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let registry = Registry::new();
            let _echo = registry.register(Echo).unwrap();
            let args = |n: u32| format!("{{\"n\":{n}}}");
            let (provider, response): (&dyn Provider, J) = match which {
                0 => (&OpenAiChat, json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls":
                    calls.iter().map(|(id, n)| json!({"id": id, "type": "function", "function": {"name": "echo", "arguments": args(*n)}})).collect::<Vec<_>>()}}]})),
                1 => (&OpenAiResponses, json!({"output":
                    calls.iter().map(|(id, n)| json!({"type": "function_call", "call_id": id, "name": "echo", "arguments": args(*n)})).collect::<Vec<_>>()})),
                2 => (&Anthropic, json!({"content":
                    calls.iter().map(|(id, n)| json!({"type": "tool_use", "id": id, "name": "echo", "input": {"n": n}})).collect::<Vec<_>>()})),
                _ => (&Gemini, json!({"candidates": [{"content": {"role": "model", "parts":
                    calls.iter().map(|(id, n)| json!({"functionCall": {"id": id, "name": "echo", "args": {"n": n}}})).collect::<Vec<_>>()}}]})),
            };
            let parsed = provider.calls(&response).unwrap();
            let ids: Vec<&str> = parsed.iter().map(|c| c.call_id()).collect();
            let expected: Vec<&str> = calls.iter().map(|(id, _)| id.as_str()).collect();
            assert_eq!(ids, expected);
            let results = round_trip::run_calls(&registry, parsed.clone(), None).await;
            let messages = provider.messages(&parsed, &results);
            // Flatten to (id, text) per result, whatever the provider's shape.
            let items: Vec<(String, String)> = match which {
                0 | 1 => messages.iter().map(|m| (
                    m.get("tool_call_id").or_else(|| m.get("call_id")).unwrap().as_str().unwrap().to_string(),
                    m.get("content").or_else(|| m.get("output")).unwrap().as_str().unwrap().to_string(),
                )).collect(),
                2 => messages.iter().flat_map(|m| m["content"].as_array().unwrap().clone()).map(|b| (
                    b["tool_use_id"].as_str().unwrap().to_string(),
                    b["content"][0]["text"].as_str().unwrap().to_string(),
                )).collect(),
                _ => messages.iter().flat_map(|m| m["parts"].as_array().unwrap().clone()).map(|p| (
                    p["functionResponse"]["id"].as_str().unwrap().to_string(),
                    p["functionResponse"]["response"]["output"].as_str().unwrap().to_string(),
                )).collect(),
            };
            assert_eq!(items.len(), calls.len());
            for ((id, n), (got_id, text)) in calls.iter().zip(&items) {
                assert_eq!(id, got_id);
                assert_eq!(text, &format!("{n}\n\ncontext of {n}"));
            }
            let mut request = match which {
                1 => json!({"input": "go"}),
                3 => json!({"contents": []}),
                _ => json!({"messages": []}),
            };
            provider.extend_request(&mut request, &response, messages).unwrap();
        });
    }
}

/// How urgent a ticket is.
#[derive(serde::Deserialize, dsh_runtime::ToolSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Urgency {
    /// Whenever someone has time.
    Low,
    /// Before the end of the day.
    High,
}

/// Open a ticket.
#[tool]
async fn open_ticket(
    /// What is wrong.
    title: String,
    /// How urgent it is.
    urgency: Urgency,
    /// How urgent it may become.
    ceiling: Option<Urgency>,
) -> String {
    let _ = (urgency, ceiling);
    title
}

/// A documented unit enum exported for the strict targets is what the providers' own
/// libraries make of a strict schema: OpenAI's strict-schema pass
/// (`openai.lib._pydantic._ensure_strict_json_schema`) and Anthropic's
/// (`anthropic.lib._parse._transform.transform_schema`, which only drops `type` beside an
/// `enum`) leave it unchanged, and each tool entry validates unchanged as the library's
/// tool parameter type.
#[test]
fn client_libraries_keep_a_documented_enum_exported_for_strict_targets() {
    use dsh_runtime::Tool;
    let defs = [OpenTicket.definition().clone()];
    let openai =
        dsh_providers::export::export(&defs, dsh_providers::export::Target::OpenAiResponsesStrict);
    let anthropic =
        dsh_providers::export::export(&defs, dsh_providers::export::Target::AnthropicStrict);
    assert!(openai.is_complete() && anthropic.is_complete());
    let cases = json!({"openai": openai.to_serde(), "anthropic": anthropic.to_serde()});
    let text = cases.to_string();
    assert!(
        text.contains(r#""enum":["low","high"]"#) && !text.contains("anyOf\":[{\"const"),
        "{text}"
    );
    let dir = tempfile_dir();
    let file = dir.join("strict_enum.json");
    std::fs::write(&file, text).unwrap();
    let script = r#"
import json, sys
from pydantic import TypeAdapter
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.responses import FunctionToolParam
from anthropic.lib._parse._transform import transform_schema
from anthropic.types import ToolParam

cases = json.load(open(sys.argv[1]))
(o,) = cases["openai"]
params = o["parameters"]
def norm(s):
    # Key order is not meaning: `required` compared as a set.
    if isinstance(s, dict):
        return {k: sorted(v) if k == "required" else norm(v) for k, v in s.items()}
    if isinstance(s, list):
        return [norm(v) for v in s]
    return s

strict = _ensure_strict_json_schema(json.loads(json.dumps(params)), path=(), root=params)
assert norm(strict) == norm(params), ("openai strict pass changed it", strict)
assert TypeAdapter(FunctionToolParam).validate_python(o) == o, "openai tool entry"

def without_enum_type(s):
    if isinstance(s, dict):
        out = {k: without_enum_type(v) for k, v in s.items()}
        if "enum" in out:
            out.pop("type", None)
        return out
    if isinstance(s, list):
        return [without_enum_type(v) for v in s]
    return s

(a,) = cases["anthropic"]
schema = a["input_schema"]
assert norm(transform_schema(schema)) == norm(without_enum_type(schema)), transform_schema(schema)
assert TypeAdapter(ToolParam).validate_python(a) == a, "anthropic tool entry"
print("ok")
"#;
    let out = Command::new(python_with_provider_libraries())
        .args(["-c", script])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
