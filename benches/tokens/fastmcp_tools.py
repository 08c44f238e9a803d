"""The reference tools of dsh-tools written the way a FastMCP server defines them.

Type-annotated functions with pydantic ``Field`` descriptions and bounds: the same
names, parameter names, JSON types, required sets, descriptions, bounds and MCP
annotations as the Rust definitions. The bodies are stand-ins returning text.

Prints the ``tools/list`` result as FastMCP's server sends it (the MCP SDK writes
results with ``by_alias=True, exclude_none=True``), fetched through FastMCP's
in-memory client. Run by ``benches/tokens/run.sh``.
"""

import asyncio
import sys
from typing import Annotated

from fastmcp import Client, FastMCP
from mcp.types import ToolAnnotations
from pydantic import Field

mcp = FastMCP("dsh-tools")

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True)


@mcp.tool(
    description="Read a UTF-8 text file as numbered lines.\n\nReturns up to 2000 lines (and 50 KiB) at a time, numbered from 1; use `offset` and\n`limit` to continue reading long files. Binary files and directories are refused.",
    annotations=READ_ONLY,
)
def read(
    file_path: Annotated[str, Field(description="Path of the file to read, absolute or relative to the working directory.", min_length=1)],
    offset: Annotated[int | None, Field(description="1-based number of the first line to return (default: 1).", ge=1)] = None,
    limit: Annotated[int | None, Field(description="How many lines to return (default and maximum: 2000).", ge=1, le=2000)] = None,
) -> str:
    return file_path


@mcp.tool(
    description="Create a UTF-8 text file, or replace its whole content.\n\nWrites `content` as the file's whole content, creating missing parent directories.\nPrefer `edit` for changing part of an existing file.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True),
)
def write(
    file_path: Annotated[str, Field(description="Path of the file to write, absolute or relative to the working directory. Missing\nparent directories are created.", min_length=1)],
    content: Annotated[str, Field(description="The file's complete new content.")],
) -> str:
    return file_path


@mcp.tool(
    description="Change an existing UTF-8 text file by replacing exact text.\n\n`old_string` must occur exactly once unless `replace_all` is set; include enough\nsurrounding text to make it unique. Matching is literal (no regular expressions), and\nan LF `old_string` also matches CRLF text; the file keeps its line endings.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True),
)
def edit(
    file_path: Annotated[str, Field(description="Path of the file to edit, absolute or relative to the working directory.", min_length=1)],
    old_string: Annotated[str, Field(description="The exact text to replace, including whitespace and indentation.", min_length=1)],
    new_string: Annotated[str, Field(description="The text to put in its place (must differ from `old_string`; empty deletes it).")],
    replace_all: Annotated[bool | None, Field(description="Replace every occurrence of `old_string` (default: false; `old_string` must then\noccur exactly once).")] = None,
) -> str:
    return file_path


@mcp.tool(
    description="Search file contents with a regular expression.\n\nReturns matching lines with line numbers, grouped by file; the first 250 matches are\nshown. Hidden files, files ignored by `.gitignore`/`.ignore` and binary files are\nskipped when searching a directory. Use `read` on a matched file for context.",
    annotations=READ_ONLY,
)
def grep(
    pattern: Annotated[str, Field(description="Regular expression to search for (ripgrep's syntax, e.g. `fn\\s+main`).", min_length=1)],
    path: Annotated[str | None, Field(description="File or directory to search (default: the working directory; relative paths resolve\nagainst it).")] = None,
    include: Annotated[str | None, Field(description="Search only files matching this single glob, e.g. `*.rs` or `*.{ts,tsx}` (no\ncomma-separated lists, no `!` negation).")] = None,
) -> str:
    return pattern


@mcp.tool(
    description="List the files whose paths match a glob.\n\nReturns matching file paths (never directories), hidden and ignored files included\n(version-control metadata directories excluded), oldest modification first; the first\n100 are shown.",
    annotations=READ_ONLY,
)
def glob(
    pattern: Annotated[str, Field(description="The glob, e.g. `**/*.rs` or `src/*/mod.rs`. Without a `/` it is tried against file\nnames anywhere below `path` (`*.md` finds every Markdown file); with one, against the\npath from the working directory.", min_length=1)],
    path: Annotated[str | None, Field(description="Directory to search in (default: the working directory; relative paths resolve\nagainst it).")] = None,
) -> str:
    return pattern


@mcp.tool(
    description="Run a command with `bash -c` and return what it printed and how it ended.\n\nEvery call starts a new shell: nothing (working directory, variables) carries over\nto the next call, so use `workdir` rather than `cd`. A non-zero exit shows as\n`[exit code: N]` and is not a failure of the call. Output past the size kept is cut\nfrom the front; the notice names a file holding all of it. Put long-running\ncommands (servers, watchers) in the background with `run_in_background`, then use\n`job_output` to read them and `job_kill` to stop them.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=True),
)
def bash(
    command: Annotated[str, Field(description="The command line, run with `bash -c`.")],
    description: Annotated[str, Field(description="What the command does, in a few words in the active voice (shown to the user), e.g.\n\"Show working tree status\" for `git status`.")],
    timeoutMs: Annotated[float | None, Field(description="Stop the command after this many milliseconds (default 120000, at most 600000).\nNot used in the background.")] = None,
    workdir: Annotated[str | None, Field(description="The directory to run in, instead of the workspace; a relative path starts from\nthe workspace.")] = None,
    run_in_background: Annotated[bool, Field(description="Start the command as a background job and answer with its id at once; read what it\nprints with `job_output`, stop it with `job_kill`. No timeout applies.")] = False,
) -> str:
    return command


@mcp.tool(
    description="Get what a background job printed since the previous read, and its status.\n\nWhile the job runs, each read returns only new output; after it ended, a read\nreturns what was left unread. The answer always ends with a `[status: ...]` line.\nReading does not block unless `wait` is set.",
    annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False),
)
def job_output(
    job_id: Annotated[str, Field(description="The id the starting tool returned (e.g. `bash-1`).")],
    wait: Annotated[bool, Field(description="First wait until the job ends or `timeout_ms` passes; a job still running then is\nreported as running and keeps running.")] = False,
    timeout_ms: Annotated[float | None, Field(description="How long `wait` may take, in milliseconds (default 30000; longer waits are cut to\n600000).")] = None,
) -> str:
    return job_id


@mcp.tool(
    description="List the background jobs you can reach, running or ended, oldest first.\n\nOne line per job: its id, kind, status and what it runs.",
    annotations=READ_ONLY,
)
def job_list() -> str:
    return ""


@mcp.tool(
    description="Ask a running background job to stop, by id.\n\nAnswers at once without waiting for the job to end; the job then settles as\n`killed` when everything it started is gone. `job_output` shows the final status.",
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True),
)
def job_kill(
    job_id: Annotated[str, Field(description="The id the starting tool returned (e.g. `bash-1`).")],
    reason: Annotated[str | None, Field(description="A few words on why, kept with the job and handed to it.")] = None,
) -> str:
    return job_id


async def main() -> None:
    async with Client(mcp) as client:
        result = await client.list_tools_mcp()
    sys.stdout.write(result.model_dump_json(by_alias=True, exclude_none=True))
    sys.stdout.write("\n")


if __name__ == "__main__":
    asyncio.run(main())
