// Drive `dsh-tools mcp` with the task API of the official MCP TypeScript SDK client
// (`client.experimental.tasks`, protocol 2025-11-25).
//
// Usage: node mcp_tasks_2025.mjs SDK_DIR DSH_TOOLS ROOT TRANSPORT
//
// - SDK_DIR: the directory whose node_modules holds @modelcontextprotocol/sdk;
// - TRANSPORT: `stdio` (the SDK starts `dsh-tools mcp`) or `http` (this script starts
//   `dsh-tools mcp --http 127.0.0.1:0` and connects with the SDK's Streamable HTTP client).
//
// A `bash` task (`sleep 1; echo done`) is created with `callToolStream` and a task
// param, polled by the SDK to completion, and read back with `getTask`,
// `getTaskResult` and `listTasks`; a second `bash` task whose command started a process
// in a session of its own is cancelled with `cancelTask`, and every process it started
// must leave /proc before the client disconnects. The SDK validates each answer with
// its own result schemas. The last line printed is `ok: N checks` on success.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

import { checker, httpServer, textOf } from "./lib.mjs";

const [SDK_DIR, DSH_TOOLS, ROOT, TRANSPORT] = process.argv.slice(2);
const require = createRequire(path.join(SDK_DIR, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require(
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
);
const { CallToolResultSchema } = require("@modelcontextprotocol/sdk/types.js");

const check = checker(TRANSPORT);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether process `pid` is gone (no /proc entry, or a zombie). */
function gone(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 1).trim().startsWith("Z");
  } catch {
    return true;
  }
}

async function readPid(file) {
  for (let i = 0; i < 400; i += 1) {
    if (existsSync(file)) {
      const text = readFileSync(file, "utf8").trim();
      if (text) return Number(text);
    }
    await sleep(50);
  }
  throw new Error(`no pid in ${file}`);
}

/** Start `bash` with `command` as a task; the created task (the stream is left open). */
async function startTask(client, command) {
  const stream = client.experimental.tasks.callToolStream(
    { name: "bash", arguments: { command, description: "a task" } },
    CallToolResultSchema,
    { task: { ttl: 60000 } },
  );
  for await (const message of stream) {
    if (message.type === "taskCreated") return message.task;
    throw new Error(`expected taskCreated first, got ${JSON.stringify(message)}`);
  }
  throw new Error("the stream ended without a task");
}

async function main() {
  const client = new Client({ name: "dsh-rs-tasks-test", version: "0.0.0" });
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
    const caps = client.getServerCapabilities();
    check(caps?.tasks?.requests?.tools?.call !== undefined, `tasks capability ${JSON.stringify(caps)}`);
    check(caps?.tasks?.list !== undefined && caps?.tasks?.cancel !== undefined, "list and cancel");
    const { tools } = await client.listTools();
    const bash = tools.find((t) => t.name === "bash");
    check(bash?.execution?.taskSupport === "optional", `bash execution ${JSON.stringify(bash?.execution)}`);

    // A task the SDK polls to completion: taskCreated, then the result.
    const stream = client.experimental.tasks.callToolStream(
      { name: "bash", arguments: { command: "sleep 1; echo done", description: "sleep, then echo" } },
      CallToolResultSchema,
      { task: { ttl: 60000 } },
    );
    let taskId;
    let result;
    for await (const message of stream) {
      if (message.type === "taskCreated") taskId = message.task.taskId;
      else if (message.type === "result") result = message.result;
      else if (message.type === "error") throw message.error;
    }
    check(typeof taskId === "string", "a task was created");
    check(result && textOf(result).includes("done"), `result ${JSON.stringify(result)}`);
    const got = await client.experimental.tasks.getTask(taskId);
    check(got.status === "completed", `getTask ${JSON.stringify(got)}`);
    const stored = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    check(textOf(stored).includes("done"), `getTaskResult ${JSON.stringify(stored)}`);
    check(
      stored._meta?.["io.modelcontextprotocol/related-task"]?.taskId === taskId,
      `related task ${JSON.stringify(stored._meta)}`,
    );
    const listed = await client.experimental.tasks.listTasks();
    check(listed.tasks.some((t) => t.taskId === taskId), `listTasks ${JSON.stringify(listed)}`);

    // A task cancelled through the SDK: every process it started goes away.
    const escaped = path.join(ROOT, "escaped.pid");
    const shell = path.join(ROOT, "shell.pid");
    const task = await startTask(
      client,
      `setsid sh -c 'echo $$ > ${escaped}; exec sleep 1000' & echo $$ > ${shell}; sleep 1000`,
    );
    const pids = [await readPid(escaped), await readPid(shell)];
    check(pids.every((pid) => !gone(pid)), `processes ${pids} running`);
    const working = await client.experimental.tasks.getTask(task.taskId);
    check(working.status === "working", `before cancel ${JSON.stringify(working)}`);
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    check(cancelled.status === "cancelled", `cancelTask ${JSON.stringify(cancelled)}`);
    for (let i = 0; i < 400 && !pids.every(gone); i += 1) await sleep(50);
    check(pids.every(gone), `processes ${pids} gone after cancelTask`);
    const after = await client.experimental.tasks.getTask(task.taskId);
    check(after.status === "cancelled", `after cancel ${JSON.stringify(after)}`);
  } finally {
    await client.close();
    if (server) {
      server.child.kill("SIGTERM");
    }
  }
  console.log(`ok: ${check.count} checks`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
