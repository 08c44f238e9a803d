// The everything server's talking-back fixtures with the official MCP TypeScript SDK 1.x
// client (`@modelcontextprotocol/sdk`), protocol 2025-11-25 (`initialize`, a session).
//
// Usage: node sdk1.mjs SDK_DIR TRANSPORT TARGET
//
// - SDK_DIR: the directory whose node_modules holds @modelcontextprotocol/sdk;
// - TRANSPORT `stdio`: TARGET is the `everything-server` binary, which the SDK starts
//   with `--stdio`; `http`: TARGET is the URL of a running server (Streamable HTTP).
//
// Checks:
// 1. The handshake: 2025-11-25 negotiated, the server names itself and declares
//    `logging`.
// 2. The server's questions arrive as server-to-client requests (`elicitation/create`,
//    `sampling/createMessage`, `roots/list`) that the SDK hands to the handlers below:
//    `test_elicitation`, `test_sampling`, `test_input_required_result_list_roots` and
//    `test_input_required_result_multiple_inputs` answer exactly the expected texts, and
//    each handler was asked what the fixture asks, once per question (lib.mjs).
// 3. Logging (`notifications/message`): with no `logging/setLevel` yet the server's level
//    is `info`, so `test_tool_with_logging`'s three `info` messages arrive; after
//    `setLoggingLevel("warning")` none does; after `setLoggingLevel("debug")` all three
//    do again, in order.
// Each check throws on failure; the last line printed is `ok: N checks` on success.

import path from "node:path";
import { createRequire } from "node:module";

import { CAPABILITIES, askingFixtures, checker, loggingCall, runMain, scriptedUser } from "./lib.mjs";

const [SDK_DIR, TRANSPORT, TARGET] = process.argv.slice(2);
const require = createRequire(path.join(SDK_DIR, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} = require("@modelcontextprotocol/sdk/types.js");

const check = checker(`sdk 1.x ${TRANSPORT}`);

async function main() {
  const user = scriptedUser();
  const client = new Client({ name: "dsh-conformance-sdk1", version: "0.0.0" }, { capabilities: CAPABILITIES });
  client.setRequestHandler(ElicitRequestSchema, async (request) => user.elicit(request.params));
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => user.sample(request.params));
  client.setRequestHandler(ListRootsRequestSchema, async () => user.listRoots());
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => user.log(notification.params));

  const transport =
    TRANSPORT === "stdio"
      ? new StdioClientTransport({ command: TARGET, args: ["--stdio"], stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(TARGET));
  // The client tells its transport the negotiated revision (HTTP sends it as a header);
  // noted here for both transports.
  let negotiated;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setProtocolVersion?.(version);
  };
  await client.connect(transport);
  try {
    check(client.getServerVersion()?.name === "dsh-conformance-everything-server", "the server's name");
    check(negotiated === "2025-11-25", `negotiated ${negotiated}`);
    check(client.getServerCapabilities()?.logging !== undefined, "the server declares logging");

    await askingFixtures(client, user, check);

    const callLogging = () => client.callTool({ name: "test_tool_with_logging", arguments: {} });
    await loggingCall(callLogging, user, check, true, "the default level (info)");
    await client.setLoggingLevel("warning");
    await loggingCall(callLogging, user, check, false, "level warning");
    await client.setLoggingLevel("debug");
    await loggingCall(callLogging, user, check, true, "level debug");
    check(user.forms.length === 2 && user.samples.length === 2 && user.roots === 2, "nothing more was asked");
  } finally {
    await client.close();
  }
}

runMain(main, check);
