"""A small MCP server written with the official Python SDK, for `dsh-tools --mcp`.

`shout`'s optional integer is published as `anyOf` (integer or null), a keyword outside
dsh-rs's schema vocabulary, so it is not imported; the other tools are.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("echo-server")


@server.tool()
def echo(text: str) -> str:
    """Send the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str, times: int | None = None) -> str:
    """Upper-case the text, repeated."""
    return text.upper() * (times or 1)


if __name__ == "__main__":
    server.run()
