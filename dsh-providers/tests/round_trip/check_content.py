"""Check the tool results built from every MCP content block kind with the providers'
official client libraries' own request types.

Usage: python check_content.py OUT.json

OUT.json holds one message (or item) per provider: the Anthropic user message of
`tool_result` blocks, the OpenAI Responses `function_call_output` item, the OpenAI Chat
tool message, and the Gemini user content of `functionResponse` parts. Each must validate
against the library's type and lose nothing in validation (the validated value equals
the input). Prints `ok: N checks`.
"""

from __future__ import annotations

import base64
import json
import sys

from pydantic import TypeAdapter

from check_models import check, exact


def main() -> None:
    with open(sys.argv[1]) as f:
        cases = json.load(f)

    from anthropic.types import MessageParam

    exact(TypeAdapter(MessageParam), cases["anthropic"], "anthropic tool results")

    from openai.types.responses.response_input_item_param import FunctionCallOutput

    exact(TypeAdapter(FunctionCallOutput), cases["openai_responses"], "openai_responses output")

    from openai.types.chat import ChatCompletionToolMessageParam

    exact(TypeAdapter(ChatCompletionToolMessageParam), cases["openai_chat"], "openai_chat tool message")

    from google.genai import types

    # The models forbid unknown keys; bytes are read from base64 when parsing JSON.
    given = cases["gemini"]
    content = types.Content.model_validate_json(json.dumps(given))
    check(len(content.parts) == len(given["parts"]), "gemini: every part kept")
    for i, (part, raw) in enumerate(zip(content.parts, given["parts"])):
        response = part.function_response
        check(response is not None and response.name == raw["functionResponse"]["name"], f"gemini parts[{i}] is the function response")
        check(response.response == raw["functionResponse"]["response"], f"gemini parts[{i}] response kept")
        media = raw["functionResponse"].get("parts", [])
        check(len(response.parts or []) == len(media), f"gemini parts[{i}]: every media part kept")
        for j, (p, m) in enumerate(zip(response.parts or [], media)):
            blob = p.inline_data
            check(blob is not None and blob.mime_type == m["inlineData"]["mimeType"], f"gemini parts[{i}].parts[{j}] MIME type")
            check(blob.data == base64.b64decode(m["inlineData"]["data"]), f"gemini parts[{i}].parts[{j}] data")

    check(set(cases) == {"anthropic", "openai_responses", "openai_chat", "gemini"}, "every provider was checked")
    import check_models

    print(f"ok: {check_models.CHECKS} checks")


if __name__ == "__main__":
    main()
