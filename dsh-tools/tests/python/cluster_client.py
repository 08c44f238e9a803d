"""The official MCP Python SDK against several `dsh-tools mcp --http --stateless --store
redis://… --ask write` instances behind a round-robin proxy (each request to the next
instance), on protocol 2026-07-28.

Usage: python cluster_client.py URL ROOT

The rounds of an approval by hand (`ClientSession.call_tool(..., allow_input_required=True)`):
the first call gets an `InputRequiredResult` whose `requestState` one instance minted;
the retry with the answer runs the write on the next instance; the same retry again, on
a third, is refused as already used and writes nothing. The Rust side checks in the
proxy's log that the three rounds were served by three instances.

Each check raises on failure; the last line printed is `ok: N checks` on success.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import Client, types
from mcp.shared.exceptions import MCPError

URL, ROOT = sys.argv[1:3]
CHECKS = 0


def check(condition: bool, what: str) -> None:
    global CHECKS
    if not condition:
        raise AssertionError(what)
    CHECKS += 1


async def accept(context, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approve": True})


async def main() -> None:
    written = Path(ROOT) / "approved-by-hand.txt"
    async with Client(URL, mode="auto", elicitation_callback=accept, cache=None) as client:
        check(client.protocol_version == "2026-07-28", f"negotiated {client.protocol_version}")
        session = client.session
        arguments = {"file_path": "approved-by-hand.txt", "content": "by hand\n"}
        first = await session.call_tool("write", arguments, allow_input_required=True)
        check(isinstance(first, types.InputRequiredResult), f"first round: {first!r}")
        form = first.input_requests["approval"]
        check(form.method == "elicitation/create", f"input request {form!r}")
        check(form.params.message.startswith('Allow tool "write" to run?'), f"form {form.params.message!r}")
        state = first.request_state
        check(not written.exists(), "nothing ran before the answer")
        answers = {"approval": {"action": "accept", "content": {"approve": True}}}

        result = await session.call_tool("write", arguments, input_responses=answers, request_state=state)
        check(isinstance(result, types.CallToolResult) and not result.is_error, f"redeemed: {result!r}")
        check(written.read_text() == "by hand\n", "redeemed: the write ran")

        written.unlink()
        # The proxy sends each request to the next of three instances. After a tool
        # result the SDK lists the tools once (to validate the result against its output
        # schema), so the next request would land on the instance that minted the state;
        # two more listings bring the replay to the third one (the Rust side checks where
        # each round was served).
        await session.list_tools()
        await session.list_tools()
        try:
            await session.call_tool("write", arguments, input_responses=answers, request_state=state)
            check(False, "a replayed state was accepted")
        except MCPError as e:
            check(e.error.code == -32602, f"replayed: code {e.error.code}")
            check("it was already used" in e.error.message, f"replayed: {e.error.message}")
        check(not written.exists(), "replayed: nothing ran")
    print(f"ok: {CHECKS} checks")


anyio.run(main)
