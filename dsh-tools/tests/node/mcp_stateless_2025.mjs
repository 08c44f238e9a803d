// Drive `dsh-tools mcp --http --stateless` (no HTTP sessions) with the official MCP
// TypeScript SDK client (`@modelcontextprotocol/sdk` 1.x, protocol 2025-11-25).
//
// Usage: node mcp_stateless_2025.mjs SDK_DIR DSH_TOOLS ROOT TRANSPORT
//
// - SDK_DIR: the directory whose node_modules holds @modelcontextprotocol/sdk;
// - TRANSPORT: `http` (this script starts `dsh-tools mcp --stateless --http 127.0.0.1:0`).
//
// The revision's tasks live in a session, so this client is offered none: its
// `initialize` result has no `tasks` capability and `bash` no `execution.taskSupport`.
// Its plain calls work (`callTool`, and `callToolStream`, which then asks for no task);
// a `callToolStream` that asks for a task anyway ends with the error `-32601` (Method
// not found) and no task, and the command never runs. The last line printed is
// `ok: N checks` on success.

import { existsSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

import { checker, httpServer, textOf } from "./lib.mjs";

const [SDK_DIR, DSH_TOOLS, ROOT, TRANSPORT] = process.argv.slice(2);
const require = createRequire(path.join(SDK_DIR, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require(
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
);
const { CallToolResultSchema } = require("@modelcontextprotocol/sdk/types.js");

const check = checker(TRANSPORT);

/** Every message of a `callToolStream`. */
async function drain(stream) {
  const messages = [];
  for await (const message of stream) messages.push(message);
  return messages;
}

async function main() {
  if (TRANSPORT !== "http") throw new Error(`only http is served statelessly, not ${TRANSPORT}`);
  const server = await httpServer(DSH_TOOLS, ROOT, ["--stateless"]);
  const client = new Client({ name: "dsh-rs-stateless-test", version: "0.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(server.url));
  try {
    await client.connect(transport);
    check(transport.sessionId === undefined, `no session: ${transport.sessionId}`);
    check(client.getServerVersion()?.name === "dsh-tools", "the server answered initialize");
    const caps = client.getServerCapabilities();
    check(caps?.tools !== undefined, `tools capability ${JSON.stringify(caps)}`);
    check(caps?.tasks === undefined, `no tasks capability without a session: ${JSON.stringify(caps)}`);
    const { tools } = await client.listTools();
    const bash = tools.find((t) => t.name === "bash");
    check(bash !== undefined, "bash listed");
    check(bash.execution?.taskSupport === undefined, `bash execution ${JSON.stringify(bash.execution)}`);

    // Plain calls: callTool, and callToolStream, which asks for no task here.
    const plain = await client.callTool({
      name: "bash",
      arguments: { command: "echo plain", description: "A plain call" },
    });
    check(!plain.isError && textOf(plain).includes("plain"), `callTool ${JSON.stringify(plain)}`);
    const streamed = await drain(
      client.experimental.tasks.callToolStream(
        { name: "bash", arguments: { command: "echo streamed", description: "A streamed call" } },
        CallToolResultSchema,
      ),
    );
    check(streamed.length === 1 && streamed[0].type === "result", `callToolStream ${JSON.stringify(streamed)}`);
    check(textOf(streamed[0].result).includes("streamed"), `streamed ${JSON.stringify(streamed)}`);

    // A task asked for anyway: -32601, no task, and the command never ran.
    const marker = path.join(ROOT, "ran-as-task");
    const asked = await drain(
      client.experimental.tasks.callToolStream(
        { name: "bash", arguments: { command: `touch ${marker}`, description: "A task" } },
        CallToolResultSchema,
        { task: { ttl: 60000 } },
      ),
    );
    check(!asked.some((m) => m.type === "taskCreated"), `no task created ${JSON.stringify(asked)}`);
    const last = asked[asked.length - 1];
    check(last?.type === "error", `the stream ends with an error ${JSON.stringify(asked)}`);
    check(last.error?.code === -32601, `-32601, got ${last.error?.code}: ${last.error?.message}`);
    check(/session/.test(last.error?.message ?? ""), `says why: ${last.error?.message}`);
    check(!existsSync(marker), "the refused task's command did not run");

    // The client goes on: a plain call after the refusal.
    const after = await client.callTool({
      name: "bash",
      arguments: { command: "echo after", description: "After the refusal" },
    });
    check(!after.isError && textOf(after).includes("after"), `callTool after ${JSON.stringify(after)}`);
  } finally {
    await client.close();
    server.child.kill("SIGTERM");
  }
  console.log(`ok: ${check.count} checks`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
