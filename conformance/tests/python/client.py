"""The everything server with the official MCP Python SDK (`mcp` 2.x): the fixtures that
talk back, and resources, prompts and completion.

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
5. Resources, prompts and completion: the server declares `resources` (`listChanged`),
   `prompts` (`listChanged`) and `completions`; `list_resources` has the three fixed URIs
   among its resources, with their mimeTypes, `list_resource_templates` the template
   `test://template/{id}/data`; `read_resource` of `test://static-text` (its exact text,
   text/plain), `test://static-binary` (a PNG blob), `test://template/42/data` (its JSON),
   and of an unknown URI (`MCPError` -32602, the URI in its `data`); `list_prompts` (the
   four fixed prompts among them: descriptions, arguments and their required flags);
   `get_prompt` of each prompt (roles, texts, the embedded resource, the image), with a
   required argument missing or an unknown name (-32602); `complete` of `arg1` from "pa"
   and of the template's `id` from "1" (the values, `total`, `has_more`).
6. On 2025-11-25: the server also declares `resources.subscribe`; `subscribe_resource`
   and `unsubscribe_resource` of `test://watched-resource` succeed, subscribing to an
   unknown URI is -32602 with the URI in `data`. On 2026-07-28 the SDK has no
   `resources/subscribe` (removed there); a resource's updates would be asked on a
   `subscriptions/listen` stream (`resource_subscriptions`), which this server does not
   honour yet, so nothing about them is checked.
7. The prompt list changing: `test_trigger_prompt_change` adds `test_dynamic_prompt`, one
   prompt-list-changed notification arrives, the list and `get_prompt` show it; called
   again it removes it, one more notification arrives, the list is as before. On
   2025-11-25 the notification is `notifications/prompts/list_changed`, seen by the
   client's `message_handler`; on 2026-07-28 it is a `PromptsListChanged` event of a
   `client.listen(prompts_list_changed=True)` stream, whose acknowledged filter is exactly
   `promptsListChanged`.

Each check raises on failure; the last line printed is `ok: N checks` on success.
"""

from __future__ import annotations

import base64
import json
import sys
import warnings

import anyio
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.subscriptions import PromptsListChanged

TRANSPORT, REVISION, TARGET = sys.argv[1:4]
CHECKS = 0
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
# `logging/setLevel` is deprecated as of 2026-07-28; on 2025-11-25 it is the way to set a level.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")
# `resources/subscribe` is removed as of 2026-07-28; on 2025-11-25 it is the way to subscribe.
warnings.filterwarnings("ignore", message="resources/(un)?subscribe is removed")
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
        self.prompt_changes = 0

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

    async def message(self, message) -> None:
        """The server's notifications (and transport faults): counts the prompt list's changes."""
        if isinstance(message, types.PromptListChangedNotification):
            self.prompt_changes += 1


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
        message_handler=user.message,
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


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

RESOURCES = {
    "test://static-binary": "image/png",
    "test://static-text": "text/plain",
    "test://watched-resource": "text/plain",
}

TEMPLATE = "test://template/{id}/data"

PROMPTS = {
    "test_prompt_with_arguments": (
        "A prompt with two arguments.",
        [("arg1", True, "First test argument"), ("arg2", True, "Second test argument")],
    ),
    "test_prompt_with_embedded_resource": (
        "A prompt embedding a resource.",
        [("resourceUri", True, "URI of the resource to embed")],
    ),
    "test_prompt_with_image": ("A prompt with an image.", []),
    "test_simple_prompt": ("A prompt without arguments.", []),
}


def is_png(data) -> bool:
    try:
        return base64.b64decode(data, validate=True).startswith(PNG_SIGNATURE)
    except (TypeError, ValueError):
        return False


async def error_of(call, what: str) -> MCPError:
    """The `MCPError` the awaitable `call` raises; a check fails when it succeeds."""
    try:
        value = await call
    except MCPError as error:
        return error
    check(False, f"{what}: expected an error, got {value!r}")
    raise AssertionError("unreachable")


async def resource_fixtures(client: Client) -> None:
    """Lists, reads and an unknown URI. 14 checks."""
    resources = (await client.list_resources()).resources
    by_uri = {str(r.uri): r for r in resources}
    check(all(uri in by_uri for uri in RESOURCES), f"the resources: {resources!r}")
    check(
        all(by_uri[uri].mime_type == mime_type and by_uri[uri].name for uri, mime_type in RESOURCES.items()),
        f"the resources' mimeTypes and names: {resources!r}",
    )

    templates = (await client.list_resource_templates()).resource_templates
    template = next((t for t in templates if t.uri_template == TEMPLATE), None)
    check(template is not None, f"the templates: {templates!r}")
    check(template.mime_type == "application/json", f"the template's mimeType: {template!r}")

    read = await client.read_resource("test://static-text")
    contents = read.contents[0]
    check(len(read.contents) == 1 and str(contents.uri) == "test://static-text", f"static-text: {read!r}")
    check(
        isinstance(contents, types.TextResourceContents)
        and contents.text == "This is the content of the static text resource.",
        f"static-text's text: {read!r}",
    )
    check(contents.mime_type == "text/plain", f"static-text's mimeType: {read!r}")

    read = await client.read_resource("test://static-binary")
    contents = read.contents[0]
    check(len(read.contents) == 1 and str(contents.uri) == "test://static-binary", f"static-binary: {read!r}")
    check(
        isinstance(contents, types.BlobResourceContents) and contents.mime_type == "image/png",
        f"static-binary's mimeType: {read!r}",
    )
    check(is_png(contents.blob), f"static-binary's blob is a PNG: {read!r}")

    read = await client.read_resource("test://template/42/data")
    contents = read.contents[0]
    check(
        len(read.contents) == 1
        and str(contents.uri) == "test://template/42/data"
        and contents.mime_type == "application/json",
        f"template/42: {read!r}",
    )
    try:
        parsed = json.loads(getattr(contents, "text", ""))
    except ValueError:
        parsed = None
    check(parsed == {"id": "42", "templateTest": True, "data": "Data for ID: 42"}, f"template/42's JSON: {contents!r}")

    unknown = "test://no-such-resource"
    error = await error_of(client.read_resource(unknown), "reading an unknown URI")
    check(error.code == -32602, f"an unknown URI: code {error.code} ({error.message})")
    check(isinstance(error.data, dict) and error.data.get("uri") == unknown, f"an unknown URI: data {error.data!r}")


def text_message(message, text: str) -> bool:
    return message.role == "user" and message.content.type == "text" and message.content.text == text


async def prompt_fixtures(client: Client) -> None:
    """The list, each prompt, a missing argument, an unknown prompt. 14 checks."""
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    check(all(name in prompts for name in PROMPTS), f"the prompts: {list(prompts)!r}")
    check(
        all(prompts[name].description == description for name, (description, _) in PROMPTS.items()),
        f"the prompts' descriptions: {prompts!r}",
    )
    check(
        all(
            [(a.name, a.required is True, a.description) for a in prompts[name].arguments or []] == arguments
            for name, (_, arguments) in PROMPTS.items()
        ),
        f"the prompts' arguments: {prompts!r}",
    )

    got = await client.get_prompt("test_simple_prompt")
    check(
        len(got.messages) == 1 and text_message(got.messages[0], "This is a simple prompt for testing."),
        f"test_simple_prompt: {got!r}",
    )

    got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
    check(
        len(got.messages) == 1 and text_message(got.messages[0], "Prompt with arguments: arg1='hello', arg2='world'"),
        f"test_prompt_with_arguments: {got!r}",
    )

    got = await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://static-text"})
    check(
        len(got.messages) == 2 and all(m.role == "user" for m in got.messages),
        f"the embedded resource prompt's messages: {got!r}",
    )
    first = got.messages[0].content
    resource = getattr(first, "resource", None)
    check(
        first.type == "resource"
        and str(resource.uri) == "test://static-text"
        and getattr(resource, "text", None) == "Embedded resource content for testing."
        and resource.mime_type == "text/plain",
        f"the embedded resource: {first!r}",
    )
    check(
        text_message(got.messages[1], "Please process the embedded resource above."),
        f"the embedded resource prompt's text: {got.messages[1]!r}",
    )

    got = await client.get_prompt("test_prompt_with_image")
    check(
        len(got.messages) == 2 and all(m.role == "user" for m in got.messages),
        f"the image prompt's messages: {got!r}",
    )
    image = got.messages[0].content
    check(
        image.type == "image" and image.mime_type == "image/png" and is_png(image.data),
        f"the image: {image!r}",
    )
    check(text_message(got.messages[1], "Please analyze the image above."), f"the image prompt's text: {got!r}")

    error = await error_of(
        client.get_prompt("test_prompt_with_arguments", {"arg1": "hello"}), "a missing required argument"
    )
    check(error.code == -32602, f"a missing argument: code {error.code} ({error.message})")
    check("arg2" in error.message, f"the error names arg2: {error.message}")

    error = await error_of(client.get_prompt("no_such_prompt"), "an unknown prompt")
    check(error.code == -32602, f"an unknown prompt: code {error.code} ({error.message})")


async def completion_fixtures(client: Client) -> None:
    """`arg1` from "pa", the template's `id` from "1". 2 checks."""
    result = await client.complete(
        types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"), {"name": "arg1", "value": "pa"}
    )
    completion = result.completion
    check(
        completion.values == ["paris", "park", "party"] and completion.total == 3 and completion.has_more is False,
        f"arg1 from 'pa': {completion!r}",
    )
    result = await client.complete(
        types.ResourceTemplateReference(type="ref/resource", uri=TEMPLATE), {"name": "id", "value": "1"}
    )
    completion = result.completion
    check(
        completion.values == ["1", "123"] and completion.total == 2 and completion.has_more is False,
        f"id from '1': {completion!r}",
    )


async def subscriptions(client: Client) -> None:
    """On 2025-11-25: subscribe, unsubscribe, an unknown URI. 3 checks."""
    uri = "test://watched-resource"
    check(isinstance(await client.subscribe_resource(uri), types.EmptyResult), "subscribe")
    check(isinstance(await client.unsubscribe_resource(uri), types.EmptyResult), "unsubscribe")
    unknown = "test://no-such-resource"
    error = await error_of(client.subscribe_resource(unknown), "subscribing to an unknown URI")
    check(
        error.code == -32602 and isinstance(error.data, dict) and error.data.get("uri") == unknown,
        f"subscribing to an unknown URI: {error.code} {error.data!r}",
    )


async def wait_until(done, seconds: float = 3) -> bool:
    with anyio.move_on_after(seconds):
        while not done():
            await anyio.sleep(0.02)
    return done()


async def prompt_list_change(client: Client, changes) -> None:
    """Add `test_dynamic_prompt`, then remove it; `changes()` counts the notifications. 10 checks."""
    async def listed() -> list[str]:
        return sorted(p.name for p in (await client.list_prompts()).prompts)

    served = await listed()
    before = changes()

    async def trigger() -> str:
        result = await client.call_tool("test_trigger_prompt_change", {})
        check(not result.is_error, f"test_trigger_prompt_change failed: {text_of(result)}")
        return text_of(result)

    text = await trigger()
    check(text == "Mutation triggered: test_dynamic_prompt added", f"added: {text!r}")
    check(await wait_until(lambda: changes() >= before + 1), f"a notification after adding ({changes() - before})")
    names = await listed()
    check(names == sorted([*served, "test_dynamic_prompt"]), f"the dynamic prompt is listed: {names!r}")
    got = await client.get_prompt("test_dynamic_prompt")
    check(
        len(got.messages) == 1 and getattr(got.messages[0].content, "text", None) == "A prompt that comes and goes.",
        f"test_dynamic_prompt: {got!r}",
    )

    text = await trigger()
    check(text == "Mutation triggered: test_dynamic_prompt removed", f"removed: {text!r}")
    check(await wait_until(lambda: changes() >= before + 2), f"a notification after removing ({changes() - before})")
    names = await listed()
    check(names == served, f"the dynamic prompt is gone: {names!r}")
    # A moment more, so an extra notification would be seen.
    await anyio.sleep(0.1)
    check(changes() == before + 2, f"one notification per change: {changes() - before}")


async def listened_prompt_change(client: Client) -> None:
    """On 2026-07-28: the prompt list's changes on a listen stream. 11 checks."""
    events: list = []
    async with client.listen(prompts_list_changed=True) as subscription:
        honored = subscription.honored.model_dump(by_alias=True, exclude_none=True)
        check(honored == {"promptsListChanged": True}, f"the listen stream's filter: {honored!r}")

        async def collect() -> None:
            async for event in subscription:
                events.append(event)

        async with anyio.create_task_group() as group:
            group.start_soon(collect)
            await prompt_list_change(client, lambda: sum(isinstance(e, PromptsListChanged) for e in events))
            group.cancel_scope.cancel()
    check(all(isinstance(e, PromptsListChanged) for e in events), f"only prompt list changes: {events!r}")


async def context_fixtures(client: Client, user: User) -> None:
    capabilities = client.server_capabilities
    check(
        capabilities.resources is not None
        and capabilities.resources.list_changed is True
        and capabilities.prompts is not None
        and capabilities.prompts.list_changed is True
        and capabilities.completions is not None,
        f"the server declares resources, prompts and completions: {capabilities!r}",
    )
    await resource_fixtures(client)
    await prompt_fixtures(client)
    await completion_fixtures(client)
    if REVISION == "2025-11-25":
        check(capabilities.resources.subscribe is True, f"the server declares resources.subscribe: {capabilities!r}")
        await subscriptions(client)
        await prompt_list_change(client, lambda: user.prompt_changes)
    else:
        await listened_prompt_change(client)


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
        await context_fixtures(client, user)
    print(f"ok: {CHECKS} checks")


anyio.run(main)
