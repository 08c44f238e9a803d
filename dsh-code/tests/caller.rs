//! What a program's tool calls ask of their caller: the caller handler installed around
//! the outer `run_code` call (as an MCP session or a host installs one) answers the
//! sub-calls, which run on the run's thread; without one they get `CALLER_UNAVAILABLE`.

mod support;

use std::sync::{Arc, Mutex};

use dsh_runtime::caller::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerHandler, CallerRequest, Elicited,
    FormAnswer, LogLevel, LogMessage, with_caller,
};
use dsh_runtime::{RegistrationHandle, ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;
use support::*;

/// Where to deploy.
#[derive(ToolSchema, Deserialize)]
struct Target {
    /// The branch to deploy.
    branch: String,
}

/// Deploy the branch the user picks.
#[tool]
async fn deploy(cx: ToolContext) -> Result<String, ToolError> {
    cx.log(LogLevel::Info, "choosing a branch");
    match cx.elicit::<Target>("Which branch?").await? {
        Elicited::Accepted(target) => Ok(format!("deploying {}", target.branch)),
        Elicited::Declined | Elicited::Cancelled => Ok("nothing deployed".into()),
    }
}

/// A user answering every form with `branch` and keeping what it was asked.
#[derive(Default)]
struct User {
    branch: String,
    asked: Mutex<Vec<(String, String)>>,
    logs: Mutex<Vec<(String, LogMessage)>>,
}

impl CallerHandler for User {
    fn request<'a>(
        &'a self,
        call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>> {
        Box::pin(async move {
            match request {
                CallerRequest::Form(form) => {
                    self.asked
                        .lock()
                        .unwrap()
                        .push((call.id.to_string(), form.message));
                    let answer = v(&format!(r#"{{"branch":"{}"}}"#, self.branch));
                    Ok(CallerAnswer::Form(FormAnswer::Accepted(answer)))
                }
                _ => Err(CallerError::Unsupported {
                    capability: "sampling",
                }),
            }
        })
    }

    fn log(&self, call: AskingCall<'_>, message: LogMessage) {
        self.logs
            .lock()
            .unwrap()
            .push((call.id.to_string(), message));
    }
}

fn with_deploy(env: &Env) -> RegistrationHandle {
    env.registry.register(Deploy).unwrap()
}

const DEPLOY_TWICE: &str = "const a = await tools.deploy({});\n\
     const b = await tools.deploy({});\n\
     return [a, b];";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_calls_a_tool_whose_form_the_caller_handler_answers() {
    let env = default_env();
    let _deploy = with_deploy(&env);
    let user = Arc::new(User {
        branch: "main".into(),
        ..User::default()
    });
    let result = with_caller(
        user.clone(),
        env.registry
            .execute(run_code_call(DEPLOY_TWICE).with_agent(env.scope.id())),
    )
    .await;
    assert!(result.is_success(), "{:?}", result.message());
    assert_eq!(
        result.value().unwrap().get("result"),
        Some(&v(r#"["deploying main","deploying main"]"#))
    );
    // Each sub-call asked under its own id, in submission order.
    assert_eq!(
        *user.asked.lock().unwrap(),
        [
            ("outer:code:1".to_string(), "Which branch?".to_string()),
            ("outer:code:2".to_string(), "Which branch?".to_string()),
        ]
    );
    let logs = user.logs.lock().unwrap().clone();
    assert_eq!(logs.len(), 2, "{logs:?}");
    assert_eq!(logs[0].0, "outer:code:1");
    assert_eq!(logs[0].1.level, LogLevel::Info);
    assert_eq!(logs[0].1.data, v(r#""choosing a branch""#));
    assert_eq!(logs[1].0, "outer:code:2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_caller_handler_the_sub_call_gets_caller_unavailable() {
    let env = default_env();
    let _deploy = with_deploy(&env);
    let program = "try { await tools.deploy({}); return \"asked\"; } \
         catch (e) { return (e as ToolCallError).message; }";
    // The program sees the message of the sub-call's `CALLER_UNAVAILABLE` error.
    assert_eq!(
        env.value(program).await,
        v(r#""nobody can be asked: no caller handler is installed around this call""#)
    );
    let direct = env.direct("deploy", "{}").await;
    assert_eq!(direct.code_str(), Some("CALLER_UNAVAILABLE"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_call_waiting_for_its_caller_ends_with_the_outer_call() {
    let env = default_env();
    let _deploy = with_deploy(&env);
    let never = dsh_runtime::caller::caller_fn(|_| std::future::pending());
    let cancel = dsh_runtime::CancellationToken::new();
    let call = run_code_call("return await tools.deploy({});")
        .with_agent(env.scope.id())
        .with_cancellation(cancel.clone());
    let registry = env.registry.clone();
    let run = tokio::spawn(with_caller(
        never,
        async move { registry.execute(call).await },
    ));
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(!run.is_finished(), "the program waits for the form");
    cancel.cancel();
    let result = tokio::time::timeout(std::time::Duration::from_secs(10), run)
        .await
        .expect("the cancelled run ends")
        .unwrap();
    assert!(!result.is_success());
}
