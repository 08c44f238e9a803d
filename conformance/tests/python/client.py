"""The everything server's talking-back fixtures with the official MCP Python SDK (`mcp` 2.x).

Usage: python client.py TRANSPORT REVISION TARGET

- TRANSPORT `stdio`: TARGET is the `everything-server` binary, which the SDK starts with
  `--stdio`; `http`: TARGET is the URL of a running server (Streamable HTTP);
- REVISION `2025-11-25` (`Client(mode="legacy")`: `initialize`, a session; the server's
  questions are server-to-client requests, its logs `notifications/message` filtered by
  `logging/setLevel`) or `2026-07-28` (`Client(mode="auto")`: `server/discover`, then
  stateless requests carrying the revision in `_meta`; the server
  answers `InputRequiredResult`s, which the SDK's `Client.call_tool` fulfils through the
  same callbacks and retries with `inputResponses` and the `requestState`; logs only
  for a request carrying `io.modelcontextprotocol/logLevel` in its `_meta`).

The SDK speaks both revisions, so every check runs on both:

1. The revision negotiated, the server's name.
2. The client declares sampling, elicitation and roots (by passing the callbacks) and
   answers: a form with `{username: "ada", email: "ada@example.com"}`, or `{name: "ada"}`
   for a form asking a `name`; the model with an assistant text "Paris"; roots with
   `file:///work`. `test_elicitation`, `test_sampling`,
   `test_input_required_result_list_roots` and `test_input_required_result_multiple_inputs`
   answer exactly the expected texts, and each callback was asked what the fixture asks,
   once per question.
3. On 2026-07-28, one round by hand (`ClientSession.call_tool(..., allow_input_required=True)`):
   `test_input_required_result_multiple_inputs` first answers an `InputRequiredResult`
   with its three questions in one round, keyed `user_name`, `greeting` and
   `client_roots`, and a `requestState`; retried with the answers and the state, it
   completes.
4. Logging with `test_tool_with_logging` (three `info` messages): on 2025-11-25 they
   arrive at the default level (`info`), none after `set_logging_level("warning")`, all
   three after `set_logging_level("debug")`; on 2026-07-28 none without `logLevel` (the
   client's `log_level` left unset), none with `logLevel` `warning`, all three with
   `debug` (the call's `meta`).

Over HTTP on 2025-11-25 the SDK logs `Session termination failed: 202` as it closes: the
server (rmcp's Streamable HTTP session manager, under dsh-mcp) answers the session's
`DELETE` with 202 Accepted, and the SDK counts only 200 and 204 as success. The session
is ended all the same (a later request with its id is answered 404), so this is not
checked.

Each check raises on failure; the last line printed is `ok: N checks` on success.
"""

from __future__ import annotations

import json
import sys
import warnings

import anyio
from mcp import Client, StdioServerParameters, types

TRANSPORT, REVISION, TARGET = sys.argv[1:4]
CHECKS = 0
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
# `logging/setLevel` is deprecated as of 2026-07-28; on 2025-11-25 it is the way to set a level.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")
LOGGED = ["Tool execution started", "Tool processing data", "Tool execution completed"]


def check(condition: bool, what: str) -> None:
    global CHECKS
    if not condition:
        raise AssertionError(f"[{TRANSPORT}/{REVISION}] {what}")
    CHECKS += 1


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


def schema_of(params) -> dict:
    """A form's requested schema, as a plain dict."""
    schema = params.requested_schema
    return schema.model_dump(by_alias=True, exclude_none=True) if hasattr(schema, "model_dump") else dict(schema)


class User:
    """Answers every question the server asks, and records the questions and the logs."""

    def __init__(self) -> None:
        self.forms: list = []
        self.samples: list = []
        self.roots = 0
        self.logs: list = []

    async def elicit(self, context, params) -> types.ElicitResult:
        self.forms.append(params)
        if "name" in schema_of(params).get("properties", {}):
            return types.ElicitResult(action="accept", content={"name": "ada"})
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async def sample(self, context, params) -> types.CreateMessageResult:
        self.samples.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="scripted-model",
            stop_reason="endTurn",
        )

    async def list_roots(self, context) -> types.ListRootsResult:
        self.roots += 1
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async def log(self, params) -> None:
        self.logs.append(params)


def connect(user: User) -> Client:
    target = StdioServerParameters(command=TARGET, args=["--stdio"]) if TRANSPORT == "stdio" else TARGET
    # 2026-07-28 through `server/discover` ("auto"), which the server answers with its
    # revisions and its name (a pinned mode would skip the probe and know no name).
    mode = "legacy" if REVISION == "2025-11-25" else "auto"
    return Client(
        target,
        mode=mode,
        elicitation_callback=user.elicit,
        sampling_callback=user.sample,
        list_roots_callback=user.list_roots,
        logging_callback=user.log,
        cache=None,
    )


async def asking_fixtures(client: Client, user: User) -> None:
    async def call(name: str, arguments: dict | None = None) -> str:
        result = await client.call_tool(name, arguments or {})
        check(not result.is_error, f"{name} failed: {text_of(result)}")
        return text_of(result)

    # A typed form {username, email}: its answer comes back in the result.
    text = await call("test_elicitation", {"message": "Who are you?"})
    check(
        text == 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
        f"test_elicitation: {text!r}",
    )
    check(len(user.forms) == 1, f"one form asked: {user.forms!r}")
    check(user.forms[0].message == "Who are you?", f"the form's message: {user.forms[0].message!r}")
    schema = schema_of(user.forms[0])
    properties = schema.get("properties", {})
    check(
        schema.get("type") == "object"
        and properties.get("username", {}).get("type") == "string"
        and properties.get("email", {}).get("type") == "string",
        f"the form's schema: {schema!r}",
    )
    check(sorted(schema.get("required", [])) == ["email", "username"], f"both fields required: {schema!r}")

    # The model is asked the prompt, as a user message.
    text = await call("test_sampling", {"prompt": "What is the capital of France?"})
    check(text == "LLM response: Paris", f"test_sampling: {text!r}")
    check(len(user.samples) == 1, f"one sampling request: {user.samples!r}")
    sample = user.samples[0]
    check(
        len(sample.messages) == 1
        and sample.messages[0].role == "user"
        and getattr(sample.messages[0].content, "text", None) == "What is the capital of France?",
        f"the sampling request's messages: {sample.messages!r}",
    )
    check(sample.max_tokens == 100, f"maxTokens: {sample.max_tokens}")

    # Roots: the URI of each root the client listed.
    text = await call("test_input_required_result_list_roots")
    check(text == "Client roots: file:///work", f"test_input_required_result_list_roots: {text!r}")
    check(user.roots == 1, f"roots listed once: {user.roots}")

    # A form asking `name`, the model and the roots together (one round on 2026-07-28).
    text = await call("test_input_required_result_multiple_inputs")
    check(text == "Paris ada (1 roots)", f"test_input_required_result_multiple_inputs: {text!r}")
    check(len(user.forms) == 2, f"one more form: {len(user.forms)}")
    check(user.forms[1].message == "What is your name?", f"the name form: {user.forms[1].message!r}")
    check(len(user.samples) == 2, f"one more sampling request: {len(user.samples)}")
    greeting = user.samples[1]
    check(
        getattr(greeting.messages[0].content, "text", None) == "Generate a greeting" and greeting.max_tokens == 50,
        f"the greeting request: {greeting!r}",
    )
    check(user.roots == 2, f"roots listed once more: {user.roots}")


async def round_by_hand(client: Client) -> None:
    """On 2026-07-28: `test_input_required_result_multiple_inputs` one round at a time."""
    session = client.session
    name = "test_input_required_result_multiple_inputs"
    first = await session.call_tool(name, {}, allow_input_required=True)
    check(isinstance(first, types.InputRequiredResult), f"input required first: {first!r}")
    requests = first.input_requests or {}
    check(sorted(requests) == ["client_roots", "greeting", "user_name"], f"three questions in one round: {requests!r}")
    check(requests["user_name"].method == "elicitation/create", f"user_name: {requests['user_name']!r}")
    check(requests["greeting"].method == "sampling/createMessage", f"greeting: {requests['greeting']!r}")
    check(requests["client_roots"].method == "roots/list", f"client_roots: {requests['client_roots']!r}")
    check(bool(first.request_state), "a requestState")
    answers = {
        "user_name": {"action": "accept", "content": {"name": "grace"}},
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Bonjour"}, "model": "by-hand"},
        "client_roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
    }
    done = await session.call_tool(name, {}, input_responses=answers, request_state=first.request_state)
    check(isinstance(done, types.CallToolResult), f"complete on the retry: {done!r}")
    check(text_of(done) == "Bonjour grace (2 roots)", f"the retry's result: {done!r}")


async def logging_call(client: Client, user: User, expected: bool, what: str, meta: dict | None = None) -> None:
    """Call `test_tool_with_logging` and check its logs: the three `info` messages in
    order when `expected`, else none. Logs of a call are sent before its result, but the
    SDK may dispatch them a little after, so this waits for three, then a moment more so
    an extra one would be seen."""
    user.logs.clear()
    result = await client.call_tool("test_tool_with_logging", {}, meta=meta)
    check(not result.is_error, f"{what}: test_tool_with_logging failed: {text_of(result)}")
    check(
        text_of(result) == "Logging test completed: 3 messages sent.",
        f"{what}: test_tool_with_logging: {text_of(result)!r}",
    )
    with anyio.move_on_after(3 if expected else 0.3):
        while len(user.logs) < 3:
            await anyio.sleep(0.02)
    await anyio.sleep(0.1)
    if not expected:
        check(not user.logs, f"{what}: no log expected, got {user.logs!r}")
        return
    check(len(user.logs) == 3, f"{what}: three logs expected, got {user.logs!r}")
    check(all(log.level == "info" for log in user.logs), f"{what}: all at info: {user.logs!r}")
    texts = [log.data if isinstance(log.data, str) else json.dumps(log.data) for log in user.logs]
    check(texts == LOGGED, f"{what}: the messages: {texts!r}")


async def main() -> None:
    user = User()
    async with connect(user) as client:
        check(client.protocol_version == REVISION, f"negotiated {client.protocol_version}")
        check(
            client.server_info is not None and client.server_info.name == "dsh-conformance-everything-server",
            f"the server's name: {client.server_info!r}",
        )
        await asking_fixtures(client, user)
        if REVISION == "2025-11-25":
            await logging_call(client, user, True, "the default level (info)")
            await client.set_logging_level("warning")
            await logging_call(client, user, False, "level warning")
            await client.set_logging_level("debug")
            await logging_call(client, user, True, "level debug")
        else:
            await round_by_hand(client)
            await logging_call(client, user, False, "no logLevel")
            await logging_call(client, user, False, "logLevel warning", {LOG_LEVEL: "warning"})
            await logging_call(client, user, True, "logLevel debug", {LOG_LEVEL: "debug"})
        check(len(user.forms) == 2 and len(user.samples) == 2 and user.roots == 2, "nothing more was asked")
    print(f"ok: {CHECKS} checks")


anyio.run(main)
