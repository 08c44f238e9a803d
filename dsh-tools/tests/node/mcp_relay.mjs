// The official MCP TypeScript SDK client (1.x) answers a form that an imported server
// asks during a call, relayed by `dsh-tools mcp`.
//
// Usage: node mcp_relay.mjs SDK_DIR DSH_TOOLS ROOT TRANSPORT
//
// `dsh-tools mcp` (over TRANSPORT, `stdio` or `http`) imports with `--mcp` the SDK server
// of `mcp_relay_server.mjs`, whose `deploy` tool logs, reports progress and asks a form.
// This client calls the imported `deploy`, answers the relayed form and checks that the
// answer reached the upstream tool (its result says what was answered), and that the
// upstream's log and progress were relayed to it. The last line printed is `ok: N
// checks` on success.

import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

import { checker, httpServer, textOf } from "./lib.mjs";

const [SDK_DIR, DSH_TOOLS, ROOT, TRANSPORT] = process.argv.slice(2);
const require = createRequire(path.join(SDK_DIR, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require(
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
);
const { ElicitRequestSchema, LoggingMessageNotificationSchema } = require(
  "@modelcontextprotocol/sdk/types.js",
);

const check = checker(`relay ${TRANSPORT}`);

/** A word for a POSIX-like command line (`--mcp` splits its line as a shell would). */
const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;
const upstream = path.join(path.dirname(fileURLToPath(import.meta.url)), "mcp_relay_server.mjs");
const IMPORT = ["--mcp", [process.execPath, upstream, SDK_DIR].map(quote).join(" ")];

/** Resolve once `ready()` holds (polled; a bound against a hang only). */
async function until(ready, what) {
  const deadline = Date.now() + 30000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`[relay ${TRANSPORT}] never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function main() {
  const client = new Client(
    { name: "dsh-rs-relay-test", version: "0.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  const forms = [];
  const logs = [];
  const progress = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    forms.push(request.params);
    // The upstream logged and reported progress before it asked: answer once both
    // arrived here, so that they cannot trail the call's result.
    await until(() => logs.length > 0 && progress.length > 0, "the log and progress before the form");
    return { action: "accept", content: { branch: "release", replicas: 5 } };
  });

  let server;
  if (TRANSPORT === "stdio") {
    await client.connect(
      new StdioClientTransport({
        command: DSH_TOOLS,
        args: ["--root", ROOT, ...IMPORT, "mcp"],
        stderr: "inherit",
      }),
    );
  } else {
    server = await httpServer(DSH_TOOLS, ROOT, IMPORT);
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  }
  try {
    await client.setLoggingLevel("debug");
    const { tools } = await client.listTools();
    const deploy = tools.find((t) => t.name === "deploy");
    check(deploy !== undefined, `deploy imported: ${tools.map((t) => t.name)}`);
    check(deploy.inputSchema.required?.includes("service"), `deploy's schema ${JSON.stringify(deploy.inputSchema)}`);

    const result = await client.callTool(
      { name: "deploy", arguments: { service: "api" } },
      undefined,
      { onprogress: (p) => progress.push(p), timeout: 60000 },
    );
    check(!result.isError, `deploy failed: ${textOf(result)}`);
    // The upstream tool saw the answer given here.
    check(textOf(result) === "deployed api to release x5", `deploy answered ${textOf(result)}`);

    check(forms.length === 1, `one form relayed: ${JSON.stringify(forms)}`);
    check(forms[0].message === "Where to deploy api?", `the form's message ${JSON.stringify(forms[0])}`);
    const schema = forms[0].requestedSchema;
    check(schema?.properties?.replicas?.type === "integer", `the form's schema ${JSON.stringify(schema)}`);
    check(
      JSON.stringify([...(schema?.required ?? [])].sort()) === '["branch","replicas"]',
      `the form's required fields ${JSON.stringify(schema)}`,
    );

    const log = logs.find((l) => l.data === "deploying api");
    check(log !== undefined, `the upstream's log relayed: ${JSON.stringify(logs)}`);
    check(log.level === "warning", `the log's level ${JSON.stringify(log)}`);
    check(
      progress.some((p) => p.progress === 1 && p.total === 2),
      `the upstream's progress relayed: ${JSON.stringify(progress)}`,
    );
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
