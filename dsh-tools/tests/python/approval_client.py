"""Approval with the official MCP Python SDK against `dsh-tools mcp --ask bash`.

Usage: python approval_client.py DSH_TOOLS ROOT TRANSPORT LIFECYCLE

- TRANSPORT: `stdio` (the SDK starts `dsh-tools mcp` itself) or `http` (this script
  starts `dsh-tools mcp --http 127.0.0.1:0` and the SDK connects to the URL it prints);
- LIFECYCLE: `legacy` (`initialize`, protocol 2025-11-25: the server sends
  `elicitation/create` requests, which the SDK hands to `elicitation_callback`) or
  `modern` (`server/discover`, protocol 2026-07-28: the server answers
  `InputRequiredResult` with a `requestState`; the SDK's `Client` runs the same callback
  on the embedded request and retries the call with the answer and the state).

The SDK (2.x) speaks both revisions, so every check runs on both: a bash call approved,
declined and cancelled through `elicitation_callback`, a client without the callback
(no elicitation capability), a code-mode program (`--code-mode code`) whose tool call
waits for the answer (on `http`/`modern` in the server's stateless context, which every
request of that revision runs in), and on `modern` a tampered and a replayed
`requestState`, driven by hand with `ClientSession.call_tool(..., allow_input_required=True)`.

Each check raises on failure; the last line printed is `ok: N checks` on success.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

DSH_TOOLS, ROOT, TRANSPORT, LIFECYCLE = sys.argv[1:5]
CHECKS = 0
REASON = 'Reason: dsh-tools mcp --ask lists tool "bash": each call needs the user\'s approval'


def check(condition: bool, what: str) -> None:
    global CHECKS
    if not condition:
        raise AssertionError(f"[{TRANSPORT}/{LIFECYCLE}] {what}")
    CHECKS += 1


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


class User:
    """Answers each form by the command it names: `approved` yes, `declined` no,
    `cancelled` cancel; records the messages."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def __call__(self, context, params: types.ElicitRequestParams) -> types.ElicitResult:
        message = params.message
        self.messages.append(message)
        if "approved" in message:
            return types.ElicitResult(action="accept", content={"approve": True})
        if "declined" in message:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="cancel")


@asynccontextmanager
async def server(extra: list[str]):
    """The `Client` target: stdio parameters, or the URL of a `--http` server."""
    args = ["--root", ROOT, "mcp", *extra]
    if TRANSPORT == "stdio":
        yield StdioServerParameters(command=DSH_TOOLS, args=args)
        return
    proc = subprocess.Popen(
        [DSH_TOOLS, *args, "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        match = re.search(r"serving MCP at (\S+)", line)
        if not match:
            raise AssertionError(f"no URL announced by dsh-tools mcp --http: {line!r}")
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError("dsh-tools mcp --http did not stop on SIGTERM")


@asynccontextmanager
async def connect(target, user: User | None):
    mode = "legacy" if LIFECYCLE == "legacy" else "auto"
    async with Client(target, mode=mode, elicitation_callback=user, cache=None) as client:
        expected = "2025-11-25" if LIFECYCLE == "legacy" else "2026-07-28"
        check(client.protocol_version == expected, f"negotiated {client.protocol_version}")
        yield client


def bash(command: str) -> dict:
    return {"command": command, "description": "create a file"}


async def plain_approval() -> None:
    root = Path(ROOT)
    async with server(["--ask", "bash"]) as target:
        user = User()
        async with connect(target, user) as client:
            result = await client.call_tool("bash", bash("touch approved.txt"))
            check(not result.is_error, f"approved bash failed: {text_of(result)}")
            check((root / "approved.txt").exists(), "approved: bash ran")

            result = await client.call_tool("bash", bash("touch declined.txt"))
            check(result.is_error is True, "declined: an error result")
            check(text_of(result) == 'Error: the user rejected tool "bash"', f"declined: {text_of(result)!r}")
            check(not (root / "declined.txt").exists(), "declined: bash did not run")

            result = await client.call_tool("bash", bash("touch cancelled.txt"))
            check(
                text_of(result) == 'Error: approval for tool "bash" was cancelled',
                f"cancelled: {text_of(result)!r}",
            )
            check(not (root / "cancelled.txt").exists(), "cancelled: bash did not run")

            # Not listed: never asked.
            result = await client.call_tool("glob", {"pattern": "*.txt"})
            check(not result.is_error, f"glob {text_of(result)!r}")

        check(len(user.messages) == 3, f"three questions: {user.messages}")
        check(
            user.messages[0] == f'Allow tool "bash" to run?\nCall: touch approved.txt\n{REASON}',
            f"message {user.messages[0]!r}",
        )

        # No elicitation callback: no capability, the no-handler denial saying why.
        async with connect(target, None) as client:
            result = await client.call_tool("bash", bash("touch unasked.txt"))
            check(result.is_error is True, "no capability: an error result")
            check(
                text_of(result)
                == 'Error: dsh-tools mcp --ask lists tool "bash": each call needs the user\'s approval '
                "(the MCP client cannot ask its user for approval: it did not declare the elicitation capability)",
                f"no capability: {text_of(result)!r}",
            )
            check(not (root / "unasked.txt").exists(), "no capability: bash did not run")

        if LIFECYCLE == "modern":
            await states(target)


async def states(target) -> None:
    """On 2026-07-28, the rounds by hand: a tampered and a replayed `requestState`."""
    root = Path(ROOT)
    async with connect(target, User()) as client:
        session = client.session
        arguments = bash("touch approved-by-hand.txt")
        first = await session.call_tool("bash", arguments, allow_input_required=True)
        check(isinstance(first, types.InputRequiredResult), f"first round: {first!r}")
        form = first.input_requests["approval"]
        check(form.method == "elicitation/create", f"input request {form!r}")
        check(
            form.params.message == f'Allow tool "bash" to run?\nCall: touch approved-by-hand.txt\n{REASON}',
            f"form message {form.params.message!r}",
        )
        state = first.request_state
        answers = {"approval": {"action": "accept", "content": {"approve": True}}}

        middle = len(state) // 2
        tampered = state[:middle] + ("A" if state[middle] != "A" else "Q") + state[middle + 1 :]
        try:
            await session.call_tool("bash", arguments, input_responses=answers, request_state=tampered)
            check(False, "a tampered state was accepted")
        except MCPError as e:
            check(e.error.code == -32602, f"tampered: code {e.error.code}")
            check('tools/call "bash": requestState refused' in e.error.message, f"tampered: {e.error.message}")
        check(not (root / "approved-by-hand.txt").exists(), "tampered: nothing ran")

        result = await session.call_tool("bash", arguments, input_responses=answers, request_state=state)
        check(isinstance(result, types.CallToolResult) and not result.is_error, f"genuine retry: {result!r}")
        check((root / "approved-by-hand.txt").exists(), "genuine retry: bash ran")

        (root / "approved-by-hand.txt").unlink()
        try:
            await session.call_tool("bash", arguments, input_responses=answers, request_state=state)
            check(False, "a replayed state was accepted")
        except MCPError as e:
            check(e.error.code == -32602, f"replayed: code {e.error.code}")
            check("it was already used" in e.error.message, f"replayed: {e.error.message}")
        check(not (root / "approved-by-hand.txt").exists(), "replayed: nothing ran")


async def code_mode() -> None:
    """A program's tool call waits for the answer; the question names both calls."""
    root = Path(ROOT)
    async with server(["--code-mode", "code", "--ask", "bash"]) as target:
        user = User()
        async with connect(target, user) as client:
            program = 'await tools.bash({command: "touch approved-code.txt", description: "create"}); return "ran";'
            result = await client.call_tool("run_code", {"code": program, "description": "Create a file"})
            check(not result.is_error, f"run_code failed: {text_of(result)}")
            check(result.structured_content == {"logs": [], "result": "ran"}, f"value {result.structured_content}")
            check((root / "approved-code.txt").exists(), "code mode: bash ran")

            # Two questions in one program (on 2026-07-28, two rounds of the same call).
            program = (
                'await tools.bash({command: "touch approved-code-too.txt", description: "create"});'
                ' try { await tools.bash({command: "touch declined-code.txt", description: "create"}); return "ran"; }'
                " catch (e) { return (e as ToolCallError).message; }"
            )
            result = await client.call_tool("run_code", {"code": program, "description": "Create a file"})
            check(
                result.structured_content == {"logs": [], "result": 'the user rejected tool "bash"'},
                f"declined in code mode: {result.structured_content}",
            )
            check((root / "approved-code-too.txt").exists(), "code mode: the second program's first bash ran")
            check(not (root / "declined-code.txt").exists(), "code mode: declined bash did not run")
        check(len(user.messages) == 3, f"three questions: {user.messages}")
        commands = ["touch approved-code.txt", "touch approved-code-too.txt", "touch declined-code.txt"]
        for message, command in zip(user.messages, commands):
            match = re.fullmatch(
                r'Allow tool "bash" to run\?\nCall: (.*)\nVia: tool "run_code", call "([^"]+)"\n(.*)',
                message,
                re.S,
            )
            check(match is not None, f"code-mode message {message!r}")
            check(match.group(1) == command and match.group(3) == REASON, f"code-mode message {message!r}")


async def main() -> None:
    await plain_approval()
    # On http/modern every request runs in the server's stateless context, which is in
    # code mode too.
    await code_mode()
    print(f"ok: {CHECKS} checks")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    anyio.run(main)
