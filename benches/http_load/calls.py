"""Send N sequential `tools/call`s (the body and headers of call.lua) to URL on one
connection and check each answer is a successful call. Usage: calls.py URL N"""
import http.client
import sys
from urllib.parse import urlparse

BODY = (
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_window",'
    '"arguments":{"path":"/tmp/x","offset":10},'
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    '"io.modelcontextprotocol/clientCapabilities":{},'
    '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'
).encode()
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "read_window",
}


def main() -> int:
    url, n = urlparse(sys.argv[1]), int(sys.argv[2])
    conn = http.client.HTTPConnection(url.hostname, url.port)
    for _ in range(n):
        conn.request("POST", url.path, BODY, HEADERS)
        response = conn.getresponse()
        body = response.read()
        if response.status != 200 or b'"isError":false' not in body:
            print(f"unexpected answer: {response.status} {body[:300]!r}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
