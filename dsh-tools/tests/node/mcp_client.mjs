// Drive `dsh-tools mcp` with the official MCP TypeScript SDK client.
//
// Usage: node mcp_client.mjs SDK_DIR DSH_TOOLS ROOT TRANSPORT
//
// - SDK_DIR: the directory whose node_modules holds @modelcontextprotocol/sdk;
// - TRANSPORT: `stdio` (the SDK starts `dsh-tools mcp` itself) or `http` (this script
//   starts `dsh-tools mcp --http 127.0.0.1:0` and connects with the SDK's Streamable
//   HTTP client).
//
// The client lists the tools (which caches an output-schema validator per tool), then
// calls every reference tool so that it completes: `callTool` checks each result's
// structuredContent against the tool's outputSchema and throws on a mismatch. Each
// check throws on failure; the last line printed is `ok: N checks` on success.

import path from "node:path";
import { createRequire } from "node:module";

import { checker, httpServer, referenceSweep } from "./lib.mjs";

const [SDK_DIR, DSH_TOOLS, ROOT, TRANSPORT] = process.argv.slice(2);
const require = createRequire(path.join(SDK_DIR, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require(
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
);

const check = checker(TRANSPORT);

async function main() {
  const client = new Client({ name: "dsh-rs-test", version: "0.0.0" });
  let server;
  if (TRANSPORT === "stdio") {
    await client.connect(
      new StdioClientTransport({ command: DSH_TOOLS, args: ["--root", ROOT, "mcp"], stderr: "inherit" }),
    );
  } else {
    server = await httpServer(DSH_TOOLS, ROOT);
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  }
  try {
    await referenceSweep(client, ROOT, check);
  } finally {
    await client.close();
    if (server) {
      server.child.kill("SIGTERM");
    }
  }
  console.log(`ok: ${check.count} checks`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e?.stack ?? String(e));
    process.exit(1);
  },
);
