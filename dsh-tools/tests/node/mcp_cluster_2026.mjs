// The official TypeScript v2 client (`@modelcontextprotocol/client`, pinned to 2026-07-28)
// against several `dsh-tools mcp --http --stateless --store redis://… --code-mode both
// --ask write` instances behind a round-robin proxy (each request to the next instance).
//
// Usage: node mcp_cluster_2026.mjs SDK_DIR DSH_TOOLS ROOT URL
//
// - SDK_DIR: the directory whose node_modules holds @modelcontextprotocol/client;
// - ROOT: the instances' shared root; URL: the proxy's.
//
// 1. Approval: the SDK answers the `input_required` result and retries with the
//    `requestState`; the retry reaches another instance than the one that asked (the
//    Rust side checks that in the proxy's log). Accept runs the write, decline does not.
// 2. Code mode: a program with side effects between two questions. Each answer reaches
//    another instance, which forwards it to the one running the program: every side
//    effect happens once.
// 3. A task started with a plain POST (the v2 client does not model the tasks
//    extension) and followed with the client's `listen({taskIds})`, whose stream lands on
//    another instance than the one running the task; then read with `tasks/get` through
//    the proxy.
// Each check throws on failure; the last line printed is `ok: N checks` on success.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

import { checker, textOf } from "./lib.mjs";

const [SDK_DIR, , ROOT, URL_] = process.argv.slice(2);
const dist = path.join(SDK_DIR, "node_modules/@modelcontextprotocol/client/dist");
const { Client, StreamableHTTPClientTransport } = await import(path.join(dist, "index.mjs"));

const check = checker("cluster");
const TASKS = { "io.modelcontextprotocol/tasks": {} };

async function connect(answer, tasks = false) {
  const capabilities = answer ? { elicitation: { form: {} } } : {};
  if (tasks) capabilities.extensions = TASKS;
  const client = new Client(
    { name: "dsh-rs-cluster-test", version: "0.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const asked = [];
  if (answer) {
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      return answer(request.params.message);
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(URL_)));
  check(client.getNegotiatedProtocolVersion() === "2026-07-28", `negotiated ${client.getNegotiatedProtocolVersion()}`);
  return { client, asked };
}

const accept = { action: "accept", content: { approve: true } };

async function approval() {
  const { client, asked } = await connect((message) => (message.includes("declined") ? { action: "decline" } : accept));
  try {
    const write = (file) => client.callTool({ name: "write", arguments: { file_path: file, content: "x\n" } });
    let r = await write("approved-across.txt");
    check(!r.isError, `approved write: ${textOf(r)}`);
    check(existsSync(path.join(ROOT, "approved-across.txt")), "the approved write ran");
    r = await write("declined-across.txt");
    check(r.isError === true && textOf(r) === 'Error: the user rejected tool "write"', `declined: ${textOf(r)}`);
    check(!existsSync(path.join(ROOT, "declined-across.txt")), "the declined write did not run");
    check(asked.length === 2, `two forms: ${asked}`);
  } finally {
    await client.close();
  }
}

async function codeMode() {
  const { client, asked } = await connect(() => accept);
  try {
    const program = [
      'await tools.bash({command: "echo one >> side-effects.txt", description: "d"});',
      'await tools.write({file_path: "program-1.txt", content: "1\\n"});',
      'await tools.bash({command: "echo two >> side-effects.txt", description: "d"});',
      'await tools.write({file_path: "program-2.txt", content: "2\\n"});',
      'return "ran-across";',
    ].join("\n");
    const r = await client.callTool({ name: "run_code", arguments: { code: program, description: "Across" } });
    check(!r.isError, `run_code: ${textOf(r)}`);
    check(r.structuredContent?.result === "ran-across", `result ${JSON.stringify(r.structuredContent)}`);
    check(asked.length === 2, `two questions: ${asked}`);
    check(asked.every((m) => m.includes('Via: tool "run_code"')), `forms name the program: ${asked}`);
    const effects = readFileSync(path.join(ROOT, "side-effects.txt"), "utf8");
    check(effects === "one\ntwo\n", `each side effect once: ${JSON.stringify(effects)}`);
    check(existsSync(path.join(ROOT, "program-1.txt")) && existsSync(path.join(ROOT, "program-2.txt")), "both writes ran");
  } finally {
    await client.close();
  }
}

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { extensions: TASKS },
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
};

/** One JSON-RPC request POSTed through the proxy; its result (or error). */
async function post(method, params, name) {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  if (name) headers["mcp-name"] = name;
  const response = await fetch(URL_, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { _meta: META, ...params } }),
  });
  const text = await response.text();
  const data = text.trim().startsWith("{") ? text : text.split("\n").filter((l) => l.startsWith("data:")).pop().slice(5);
  return { message: JSON.parse(data), servedBy: response.headers.get("x-served-by") };
}

async function taskFollowedElsewhere() {
  const { client } = await connect(null, true);
  try {
    const created = await post(
      "tools/call",
      { name: "bash", arguments: { command: "sleep 1; echo finished-across", description: "Wait" } },
      "bash",
    );
    const task = created.message.result;
    check(task?.resultType === "task" && typeof task.taskId === "string", `task created: ${JSON.stringify(created)}`);
    const seen = [];
    const done = new Promise((resolve) => {
      client.fallbackNotificationHandler = async (n) => {
        if (n.method !== "notifications/tasks") return;
        seen.push(n.params);
        if (n.params.status === "completed") resolve(n.params);
      };
    });
    const subscription = await client.listen({ taskIds: [task.taskId] });
    const last = await Promise.race([
      done,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no terminal status: ${JSON.stringify(seen)}`)), 20000)),
    ]);
    check(last.result?.structuredContent?.result?.stdout?.text === "finished-across\n", `inline result ${JSON.stringify(last)}`);
    await subscription.close();
    // Read through the proxy: the next instances in turn answer from the one record.
    const servers = new Set();
    for (let i = 0; i < 3; i++) {
      const got = await post("tasks/get", { taskId: task.taskId }, task.taskId);
      check(got.message.result?.status === "completed", `tasks/get ${JSON.stringify(got.message)}`);
      servers.add(got.servedBy);
    }
    check(servers.size === 3, `read on three instances: ${[...servers]}`);
    console.log(`task ${task.taskId} created on ${created.servedBy}`);
  } finally {
    await client.close();
  }
}

await approval();
await codeMode();
await taskFollowedElsewhere();
console.log(`ok: ${check.count} checks`);
