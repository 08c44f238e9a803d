-- One `tools/call` of `read_window` (shape A, valid arguments) on revision 2026-07-28,
-- stateless: the protocol's headers, and the client's version, capabilities and name in
-- `params._meta`. Every request is the same message (JSON-RPC ids need not differ
-- between requests without a session).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "read_window"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_window",'
  .. '"arguments":{"path":"/tmp/x","offset":10},'
  .. '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{},'
  .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'

-- Count the answers that are not a successful call, so a table never reports errors as
-- throughput.
local bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"isError":false', 1, true) then
    bad = bad + 1
    if bad == 1 then
      io.stderr:write("unexpected answer: " .. status .. " " .. body .. "\n")
    end
  end
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d p50_us=%d p90_us=%d p99_us=%d rps=%.0f\n",
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read
      + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    summary.requests / (summary.duration / 1e6)))
end
