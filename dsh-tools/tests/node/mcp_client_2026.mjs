// Drive `dsh-tools mcp` on protocol revision 2026-07-28 with the official MCP TypeScript
// SDK's v2 client (`@modelcontextprotocol/client`, pinned to that revision).
//
// Usage: node mcp_client_2026.mjs SDK_DIR DSH_TOOLS ROOT TRANSPORT
//
// - SDK_DIR: the directory whose node_modules holds @modelcontextprotocol/client;
// - TRANSPORT: `stdio` (the SDK starts `dsh-tools mcp` itself) or `http` (this script
//   starts `dsh-tools mcp --http 127.0.0.1:0` and connects with the SDK's Streamable
//   HTTP client).
//
// 1. Every reference tool is called so that it completes (the sweep of `lib.mjs`, as
//    `mcp_client.mjs` runs it with 1.x); `callTool` checks each result's structuredContent
//    against the tool's outputSchema with the SDK's own validator.
// 2. Approval (`--ask write`): the server answers `tools/call` with an `input_required`
//    result carrying the approval form; the SDK fulfils it through its
//    `elicitation/create` handler and retries with the opaque `requestState`. Accept
//    runs the call, decline is APPROVAL_REJECTED, cancel APPROVAL_CANCELLED, and a client
//    without the elicitation capability gets the policy's denial saying it cannot ask.
// 3. Code mode (`--code-mode code --ask bash`): a program's sub-call waits for the same
//    approval, which names both the sub-call and the program's call.
//
// 4. Over HTTP, a task's status notifications: the v2 client does not model the tasks
//    extension (its task types are 2025-11-25's, and `callTool` refuses a `task`
//    result), so the task is started with a plain POST (stateless: the same, absent,
//    credentials), and the client's `listen({taskIds})` follows it: the SDK's own
//    subscription machinery takes the acknowledgment and routes `notifications/tasks`.
// Each check throws on failure; the last line printed is `ok: N checks` on success.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

import { checker, httpServer, referenceSweep, textOf } from "./lib.mjs";

const [SDK_DIR, DSH_TOOLS, ROOT, TRANSPORT] = process.argv.slice(2);
const dist = path.join(SDK_DIR, "node_modules/@modelcontextprotocol/client/dist");
const { Client, StreamableHTTPClientTransport } = await import(path.join(dist, "index.mjs"));
const { StdioClientTransport } = await import(path.join(dist, "stdio.mjs"));

const check = checker(TRANSPORT);

/**
 * A client pinned to 2026-07-28, connected to `dsh-tools mcp ARGS`; `answer(message)`
 * (when given) is its user: it declares form elicitation and answers each form; `tasks`:
 * it declares the tasks extension.
 */
async function connect(args, answer, tasks = false) {
  const capabilities = answer ? { elicitation: { form: {} } } : {};
  if (tasks) capabilities.extensions = { "io.modelcontextprotocol/tasks": {} };
  const client = new Client(
    { name: "dsh-rs-test-2026", version: "0.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const asked = [];
  if (answer) {
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      return answer(request.params.message);
    });
  }
  let server;
  if (TRANSPORT === "stdio") {
    await client.connect(
      new StdioClientTransport({ command: DSH_TOOLS, args: ["--root", ROOT, "mcp", ...args], stderr: "inherit" }),
    );
  } else {
    server = await httpServer(DSH_TOOLS, ROOT, args);
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  }
  check(
    client.getNegotiatedProtocolVersion() === "2026-07-28",
    `negotiated ${client.getNegotiatedProtocolVersion()}`,
  );
  const close = async () => {
    await client.close();
    if (server) server.child.kill("SIGTERM");
  };
  return { client, asked, close, url: server?.url };
}

async function referenceTools() {
  const { client, close } = await connect([]);
  try {
    await referenceSweep(client, ROOT, check);
  } finally {
    await close();
  }
}

async function approval() {
  // The user approves `yes.txt`, declines `no.txt` and dismisses anything else.
  const answer = (message) => {
    if (message.includes("yes.txt")) return { action: "accept", content: { approve: true } };
    if (message.includes("no.txt")) return { action: "decline" };
    return { action: "cancel" };
  };
  const { client, asked, close } = await connect(["--ask", "write"], answer);
  try {
    const write = (file) => client.callTool({ name: "write", arguments: { file_path: file, content: "x\n" } });
    let r = await write("yes.txt");
    check(!r.isError, `approved write: ${textOf(r)}`);
    check(existsSync(path.join(ROOT, "yes.txt")), "the approved write ran");
    check(asked.length === 1 && asked[0].startsWith('Allow tool "write" to run?'), `form ${asked}`);
    check(asked[0].includes('Reason: dsh-tools mcp --ask lists tool "write"'), `reason in ${asked[0]}`);
    r = await write("no.txt");
    check(r.isError === true && textOf(r) === 'Error: the user rejected tool "write"', `declined: ${textOf(r)}`);
    check(!existsSync(path.join(ROOT, "no.txt")), "the declined write did not run");
    r = await write("maybe.txt");
    check(
      r.isError === true && textOf(r) === 'Error: approval for tool "write" was cancelled',
      `cancelled: ${textOf(r)}`,
    );
    check(!existsSync(path.join(ROOT, "maybe.txt")), "the cancelled write did not run");
    // Tools without `ask` are not held.
    r = await client.callTool({ name: "read", arguments: { file_path: "yes.txt" } });
    check(!r.isError && asked.length === 3, `read is not asked about (${asked.length} forms)`);
  } finally {
    await close();
  }
  // A client that cannot ask its user: the denial says so.
  const mute = await connect(["--ask", "write"], null);
  try {
    const r = await mute.client.callTool({ name: "write", arguments: { file_path: "mute.txt", content: "x\n" } });
    check(r.isError === true, `no capability: ${textOf(r)}`);
    check(
      textOf(r).endsWith(
        "(the MCP client cannot ask its user for approval: it did not declare the elicitation capability)",
      ),
      `no capability: ${textOf(r)}`,
    );
    check(!existsSync(path.join(ROOT, "mute.txt")), "the unasked write did not run");
  } finally {
    await mute.close();
  }
}

async function codeMode() {
  const { client, asked, close } = await connect(
    ["--code-mode", "code", "--ask", "bash"],
    () => ({ action: "accept", content: { approve: true } }),
  );
  try {
    const program =
      'await tools.bash({command: "touch from-program.txt", description: "create a file"});\nreturn "ran";';
    const r = await client.callTool({ name: "run_code", arguments: { code: program, description: "Create a file" } });
    check(!r.isError, `run_code: ${textOf(r)}`);
    check(r.structuredContent?.result === "ran", `run_code result ${JSON.stringify(r.structuredContent)}`);
    check(existsSync(path.join(ROOT, "from-program.txt")), "the approved sub-call ran");
    check(asked.length === 1, `one form: ${asked}`);
    check(
      asked[0].startsWith('Allow tool "bash" to run?\nCall: touch from-program.txt\nVia: tool "run_code", call "'),
      `the form names the sub-call and the program's call: ${asked[0]}`,
    );
  } finally {
    await close();
  }
}

async function taskNotifications() {
  const { client, close, url } = await connect([], null, true);
  try {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
    };
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "bash",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { _meta: meta, name: "bash", arguments: { command: "sleep 0.5; echo finished", description: "Wait" } },
      }),
    });
    const text = await response.text();
    const data = text.trim().startsWith("{") ? text : text.split("\n").filter((l) => l.startsWith("data:")).pop().slice(5);
    const created = JSON.parse(data).result;
    check(created?.resultType === "task" && typeof created.taskId === "string", `task created: ${text}`);
    const seen = [];
    const done = new Promise((resolve) => {
      client.fallbackNotificationHandler = async (n) => {
        if (n.method !== "notifications/tasks") return;
        seen.push(n.params);
        if (n.params.status === "completed") resolve(n.params);
      };
    });
    const subscription = await client.listen({ taskIds: [created.taskId] });
    const last = await Promise.race([
      done,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no terminal status: ${JSON.stringify(seen)}`)), 20000)),
    ]);
    check(last.taskId === created.taskId, `notified about ${last.taskId}`);
    check(last.result?.structuredContent?.result?.stdout?.text === "finished\n", `the result inline: ${JSON.stringify(last)}`);
    check(seen.every((p) => p.taskId === created.taskId), `only the followed task: ${JSON.stringify(seen)}`);
    await subscription.close();
    check((await subscription.closed) === "local", "closed by the client");
  } finally {
    await close();
  }
}

async function main() {
  await referenceTools();
  await approval();
  await codeMode();
  if (TRANSPORT === "http") await taskNotifications();
  check(readFileSync(path.join(ROOT, "made/new.txt"), "utf8") === "three\n", "the edits are on disk");
  console.log(`ok: ${check.count} checks`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e?.stack ?? String(e));
    process.exit(1);
  },
);
