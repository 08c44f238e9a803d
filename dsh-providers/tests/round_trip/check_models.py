"""Check a recorded round trip with the providers' official client libraries' own models.

Usage: python check_models.py OUT.json

OUT.json holds, per provider, the recorded `responses` and the `request` our adapters
built from them (the first request with every round's turn and tool results). Each
response must parse with the library's response model; every item of the request's
conversation must validate against the library's request type for it, and lose nothing
in validation (a key the type does not have would be dropped by the TypedDict
validators, so the validated value must equal the input). For the providers that defer
tools, `tools` holds an export with a deferred tool: every entry must validate, unchanged,
as the library's tool parameter type, and one must carry `defer_loading: true`; for
Anthropic one also carries `input_examples`. The `*_tool_search` cases are conversations
in which the provider's own tool search found a deferred tool: their tools (with the
provider's tool search tool, and for OpenAI a namespace) and every message must validate
unchanged.
Prints `ok: N checks`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping

from pydantic import TypeAdapter

CHECKS = 0


def check(condition: bool, what: str) -> None:
    global CHECKS
    if not condition:
        raise AssertionError(what)
    CHECKS += 1


def plain(value):
    """The validated value as plain JSON data (lazy iterables read out)."""
    if hasattr(value, "model_dump"):
        # A union member that is a response model (the libraries accept their response
        # blocks in requests): the fields that were given.
        return plain(value.model_dump(exclude_unset=True, by_alias=True))
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, Iterable):
        return [plain(v) for v in value]
    return value


def exact(adapter: TypeAdapter, item, what: str) -> None:
    validated = plain(adapter.validate_python(item))
    check(validated == item, f"{what}: validation changed the item\n  in:  {item}\n  out: {validated}")


def openai_chat(case) -> None:
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolMessageParam

    for r in case["responses"]:
        ChatCompletion.model_validate(r)
        check(True, "response parses")
    message = TypeAdapter(ChatCompletionMessageParam)
    tool = TypeAdapter(ChatCompletionToolMessageParam)
    for i, m in enumerate(case["request"]["messages"]):
        exact(message, m, f"openai_chat messages[{i}]")
        if m["role"] == "tool":
            exact(tool, m, f"openai_chat messages[{i}] as a tool message")


def openai_responses(case) -> None:
    from openai.types.responses import Response, ResponseInputItemParam
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    for r in case["responses"]:
        Response.model_validate(r)
        check(True, "response parses")
    openai_responses_tools(case.get("tools"), "openai_responses")
    item = TypeAdapter(ResponseInputItemParam)
    output = TypeAdapter(FunctionCallOutput)
    for i, it in enumerate(case["request"]["input"]):
        item.validate_python(it)
        check(True, f"input[{i}] validates")
        if it.get("type") == "function_call_output":
            exact(output, it, f"openai_responses input[{i}]")


def anthropic(case) -> None:
    from anthropic.types import Message, MessageParam

    for r in case["responses"]:
        Message.model_validate(r)
        check(True, "response parses")
    anthropic_tools(case.get("tools"), "anthropic")
    # `input_examples` is a field of the (non-beta) `ToolParam`: validated unchanged above.
    check(any(t.get("input_examples") for t in case["tools"]), "anthropic: a tool with input_examples")
    message = TypeAdapter(MessageParam)
    for i, m in enumerate(case["request"]["messages"]):
        if m["role"] == "user" and isinstance(m["content"], list):
            exact(message, m, f"anthropic messages[{i}]")
        else:
            message.validate_python(m)
            check(True, f"messages[{i}] validates")


def anthropic_tools(tools, provider: str) -> None:
    from anthropic.types import ToolParam, ToolSearchToolBm25_20251119Param, ToolUnionParam

    provider_search_tools(
        tools, TypeAdapter(ToolUnionParam), TypeAdapter(ToolParam), TypeAdapter(ToolSearchToolBm25_20251119Param), provider
    )


def openai_responses_tools(tools, provider: str) -> None:
    from openai.types.responses import FunctionToolParam, ToolParam, ToolSearchToolParam

    provider_search_tools(
        tools, TypeAdapter(ToolParam), TypeAdapter(FunctionToolParam), TypeAdapter(ToolSearchToolParam), provider
    )


def provider_search_tools(tools, union: TypeAdapter, function: TypeAdapter, search: TypeAdapter, provider: str) -> None:
    """The tools of a request that defers: every entry validates, unchanged, as the
    library's tool union; each function tool (namespaces' included) as the library's
    function tool type; the provider's tool search tool, last, as its own type; one tool
    is deferred."""
    check(isinstance(tools, list) and len(tools) > 1, f"{provider}: an exported tool list")
    for i, t in enumerate(tools):
        exact(union, t, f"{provider} tools[{i}]")
    exact(search, tools[-1], f"{provider} tools[-1] (the tool search tool)")
    inner = [f for t in tools[:-1] for f in (t.get("tools") or [t])]
    for i, f in enumerate(inner):
        exact(function, f, f"{provider} function tool {i}")
    check(any(f.get("defer_loading") is True for f in inner), f"{provider}: a deferred tool")


def anthropic_tool_search(case) -> None:
    from anthropic.types import Message, MessageParam

    for r in case["responses"]:
        Message.model_validate(r)
        check(True, "response parses")
    anthropic_tools(case["tools"], "anthropic_tool_search")
    message = TypeAdapter(MessageParam)
    for i, m in enumerate(case["request"]["messages"]):
        # Every message, the assistant's with its server tool blocks too, unchanged.
        exact(message, m, f"anthropic_tool_search messages[{i}]")


def openai_responses_tool_search(case) -> None:
    from openai.types.responses import NamespaceToolParam, Response, ResponseInputItemParam

    for r in case["responses"]:
        Response.model_validate(r)
        check(True, "response parses")
    tools = case["tools"]
    openai_responses_tools(tools, "openai_responses_tool_search")
    namespaces = [t for t in tools if t.get("type") == "namespace"]
    check(len(namespaces) == 1, "openai_responses_tool_search: one namespace")
    exact(TypeAdapter(NamespaceToolParam), namespaces[0], "openai_responses_tool_search namespace")
    item = TypeAdapter(ResponseInputItemParam)
    for i, it in enumerate(case["request"]["input"]):
        item.validate_python(it)
        check(True, f"input[{i}] validates")


def gemini(case) -> None:
    from google.genai import types

    for r in case["responses"]:
        types.GenerateContentResponse.model_validate(r)
        check(True, "response parses")
    for i, c in enumerate(case["request"]["contents"]):
        # The models forbid unknown keys (camelCase aliases accepted).
        types.Content.model_validate(c)
        check(True, f"contents[{i}] validates")


def main() -> None:
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    checkers = {
        "openai_chat": openai_chat,
        "openai_responses": openai_responses,
        "anthropic": anthropic,
        "gemini": gemini,
        "anthropic_tool_search": anthropic_tool_search,
        "openai_responses_tool_search": openai_responses_tool_search,
    }
    for name, case in cases.items():
        checkers[name](case)
    check(set(cases) == set(checkers), f"every provider was checked: {sorted(cases)}")
    print(f"ok: {CHECKS} checks")


if __name__ == "__main__":
    main()
