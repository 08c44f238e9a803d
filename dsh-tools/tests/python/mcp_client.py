"""Drive `dsh-tools mcp` with the official MCP Python SDK.

Usage: python mcp_client.py DSH_TOOLS ROOT TRANSPORT LIFECYCLE

- TRANSPORT: `stdio` (the SDK starts `dsh-tools mcp` itself through `mcp.client.stdio`)
  or `http` (this script starts `dsh-tools mcp --http 127.0.0.1:0` and connects with the
  SDK's Streamable HTTP client);
- LIFECYCLE: `legacy` (`initialize`, protocol 2025-11-25) or `modern`
  (`server/discover`, protocol 2026-07-28).

Each check raises on failure; the last line printed is `ok: N checks` on success.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

DSH_TOOLS, ROOT, TRANSPORT, LIFECYCLE = sys.argv[1:5]
CHECKS = 0


def check(condition: bool, what: str) -> None:
    global CHECKS
    if not condition:
        raise AssertionError(f"[{TRANSPORT}/{LIFECYCLE}] {what}")
    CHECKS += 1


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


def process_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    # A zombie has exited; only its exit status is left.
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@asynccontextmanager
async def http_server():
    proc = subprocess.Popen(
        [DSH_TOOLS, "--root", ROOT, "mcp", "--http", "127.0.0.1:0"],
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
        # The host exits with 128 + the signal that stopped it (SIGTERM: 143).
        check(proc.returncode == 143, f"dsh-tools mcp --http exit status {proc.returncode}")


@asynccontextmanager
async def connect():
    if TRANSPORT == "stdio":
        params = StdioServerParameters(command=DSH_TOOLS, args=["--root", ROOT, "mcp"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                yield session
    else:
        async with http_server() as url:
            async with streamable_http_client(url) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    yield session


async def main() -> None:
    expected = json.loads(
        subprocess.run([DSH_TOOLS, "--root", ROOT, "list", "--json"], check=True, capture_output=True, text=True).stdout
    )
    async with connect() as session:
        if LIFECYCLE == "legacy":
            init = await session.initialize()
            check(init.protocol_version == "2025-11-25", f"negotiated {init.protocol_version}")
            check(init.capabilities.tools is not None and init.capabilities.tools.list_changed, "tools.listChanged")
        else:
            found = await session.discover()
            check("2026-07-28" in found.supported_versions, f"supported {found.supported_versions}")
        check(session.server_info.name == "dsh-tools", f"server name {session.server_info}")

        # tools/list: the names and input schemas the registry publishes.
        listed = (await session.list_tools()).tools
        check([t.name for t in listed] == [e["name"] for e in expected], f"names {[t.name for t in listed]}")
        by_name = {t.name: t for t in listed}
        for e in expected:
            tool = by_name[e["name"]]
            check(tool.input_schema == e["parameters"], f"input schema of {e['name']}: {tool.input_schema}")
            check(tool.description == e["description"], f"description of {e['name']}")
            check(tool.output_schema is not None and tool.output_schema["type"] == "object", f"output of {e['name']}")
        check(by_name["read"].annotations.read_only_hint is True, "read is read-only")
        check(by_name["bash"].annotations.destructive_hint is True, "bash is destructive")

        # read on a real file: structured content and text.
        result = await session.call_tool("read", {"file_path": "notes.txt"})
        check(not result.is_error, f"read failed: {text_of(result)}")
        sc = result.structured_content
        check(sc["path"].endswith("/notes.txt") and sc["totalLines"] == 2, f"structuredContent {sc}")
        check([line["text"] for line in sc["lines"]] == ["alpha", "beta"], f"lines {sc['lines']}")
        check("alpha" in text_of(result) and "beta" in text_of(result), f"text {text_of(result)!r}")

        # Invalid arguments: isError with every violation, path-qualified.
        result = await session.call_tool("read", {"file_path": 5, "offset": 0})
        check(result.is_error is True, "invalid arguments are an error result")
        text = text_of(result)
        check(text.startswith("Error: invalid arguments"), f"error text {text!r}")
        check('"file_path" must be a string' in text and '"offset" must be at least 1' in text, f"violations {text!r}")

        # Every reference tool, called so that it completes: `call_tool` validates each
        # result's structuredContent against the listed outputSchema (the SDK raises on a
        # mismatch), so a `null` the schema does not publish would fail here.
        async def completes(name: str, arguments: dict) -> dict:
            result = await session.call_tool(name, arguments)
            check(not result.is_error, f"{name} {arguments} failed: {text_of(result)}")
            check(result.structured_content is not None, f"{name}: no structuredContent")
            return result.structured_content

        sc = await completes("write", {"file_path": "made/new.txt", "content": "one\n"})
        check(sc["operation"] == "create" and "before" not in sc, f"write (create) {sc}")
        sc = await completes("write", {"file_path": "made/new.txt", "content": "two\n"})
        check(sc["operation"] == "update" and sc["before"] == "one\n", f"write (update) {sc}")
        await completes("edit", {"file_path": "made/new.txt", "old_string": "two", "new_string": "three"})
        sc = await completes("grep", {"pattern": "thr+ee"})
        check(len(sc["matches"]) == 1, f"grep {sc}")
        await completes("grep", {"pattern": "nowhere to be found"})
        await completes("glob", {"pattern": "**/*.txt"})
        sc = (await completes("bash", {"command": "echo hi", "description": "say hi"}))["result"]
        check(sc["exitCode"] == 0 and "signal" not in sc, f"bash exit 0 {sc}")
        sc = (await completes("bash", {"command": "exit 7", "description": "fail"}))["result"]
        check(sc["exitCode"] == 7, f"bash exit 7 {sc}")
        sc = (await completes("bash", {"command": "kill -KILL $$", "description": "killed"}))["result"]
        check("exitCode" not in sc and sc.get("signal"), f"bash killed by a signal {sc}")
        await completes("job_list", {})

        # A background job keeps running between calls; its output is read later.
        result = await session.call_tool(
            "bash",
            {"command": "echo first; sleep 0.3; echo second", "description": "print twice", "run_in_background": True},
        )
        check(not result.is_error, f"background bash failed: {text_of(result)}")
        job_id = result.structured_content["result"]["jobId"]
        check(job_id.startswith("bash-"), f"job id {job_id}")
        result = await session.call_tool("job_output", {"job_id": job_id, "wait": True, "timeout_ms": 20000})
        check(not result.is_error, f"job_output failed: {text_of(result)}")
        out = json.dumps(result.structured_content)
        check("first" in out and "second" in out, f"job output {out}")
        sc = await completes("job_kill", {"job_id": job_id})
        check(sc["outcome"] == "already-finished", f"job_kill {sc}")
        await completes("job_list", {})

        # Cancelling a long foreground command: the call ends and the process is gone.
        pid_file = Path(ROOT) / f"sleep-{TRANSPORT}-{LIFECYCLE}.pid"
        for stale in (pid_file, Path(f"{pid_file}.bg")):
            stale.unlink(missing_ok=True)
        command = f"echo $$ > {pid_file}; exec sleep 300"
        async with anyio.create_task_group() as group:

            async def long_call() -> None:
                await session.call_tool("bash", {"command": command, "description": "sleep"})

            group.start_soon(long_call)
            with anyio.fail_after(20):
                while not (pid_file.exists() and pid_file.read_text().strip()):
                    await anyio.sleep(0.05)
            pid = int(pid_file.read_text())
            check(not process_gone(pid), "the sleep is running")
            group.cancel_scope.cancel()
        deadline = time.monotonic() + 20
        while not process_gone(pid) and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        check(process_gone(pid), f"the cancelled sleep (pid {pid}) is gone")

        # The session still works after the cancellation.
        result = await session.call_tool("glob", {"pattern": "*.txt"})
        check(not result.is_error and "notes.txt" in text_of(result), f"glob {text_of(result)!r}")

        # A background job still running when the session ends is killed.
        result = await session.call_tool(
            "bash",
            {
                "command": f"echo $$ > {pid_file}.bg; exec sleep 300",
                "description": "outlive me",
                "run_in_background": True,
            },
        )
        check(not result.is_error, "second background job")
        with anyio.fail_after(20):
            while not (Path(f"{pid_file}.bg").exists() and Path(f"{pid_file}.bg").read_text().strip()):
                await anyio.sleep(0.05)
        bg_pid = int(Path(f"{pid_file}.bg").read_text())
        check(not process_gone(bg_pid), "the background sleep is running")
    deadline = time.monotonic() + 20
    while not process_gone(bg_pid) and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    check(process_gone(bg_pid), f"the background job (pid {bg_pid}) died with the session")
    print(f"ok: {CHECKS} checks")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    anyio.run(main)
