// The everything server with the official MCP TypeScript SDK 1.x client
// (`@modelcontextprotocol/sdk`), protocol 2025-11-25 (`initialize`, a session): the
// fixtures that talk back, and resources, prompts and completion.
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
// 4. Resources, prompts and completion (lib.mjs): the server declares `resources`
//    (`subscribe`, `listChanged`), `prompts` (`listChanged`) and `completions`;
//    `resources/list` has the three fixed URIs among its resources, with their mimeTypes,
//    `resources/templates/list` the template `test://template/{id}/data`;
//    `resources/read` of `test://static-text` (its exact text, text/plain),
//    `test://static-binary` (a PNG blob), `test://template/42/data` (its JSON), and of an
//    unknown URI (-32602, the URI in the error's `data`); `prompts/list` (the four fixed
//    prompts among them: descriptions, arguments and their required flags); `prompts/get`
//    of each prompt (roles, texts, the embedded resource, the image), with a required
//    argument missing or an unknown name (-32602); `completion/complete` of `arg1` from
//    "pa" and of the template's `id` from "1" (the values, `total`, `hasMore`).
// 5. `resources/subscribe` and `resources/unsubscribe` of `test://watched-resource`
//    succeed; subscribing to an unknown URI is -32602 with the URI in `data`.
// 6. `notifications/prompts/list_changed`: `test_trigger_prompt_change` adds
//    `test_dynamic_prompt`, the notification arrives (once), the list and `prompts/get`
//    show it; called again it removes it, one more notification, the list is as before.
// Each check throws on failure; the last line printed is `ok: N checks` on success.

import path from "node:path";
import { createRequire } from "node:module";

import {
  CAPABILITIES,
  askingFixtures,
  checker,
  completionFixtures,
  loggingCall,
  promptFixtures,
  promptListChange,
  rejection,
  resourceFixtures,
  runMain,
  scriptedUser,
} from "./lib.mjs";

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
  PromptListChangedNotificationSchema,
} = require("@modelcontextprotocol/sdk/types.js");

const check = checker(`sdk 1.x ${TRANSPORT}`);

/** `resources/subscribe` and `resources/unsubscribe` (2025-11-25 sessions). */
async function subscriptions(client) {
  const uri = "test://watched-resource";
  const subscribed = await client.subscribeResource({ uri });
  check(subscribed !== null && typeof subscribed === "object", `subscribe: ${JSON.stringify(subscribed)}`);
  const unsubscribed = await client.unsubscribeResource({ uri });
  check(unsubscribed !== null && typeof unsubscribed === "object", `unsubscribe: ${JSON.stringify(unsubscribed)}`);
  const unknown = "test://no-such-resource";
  const error = await rejection(client.subscribeResource({ uri: unknown }), check, "subscribing to an unknown URI");
  check(
    error?.code === -32602 && error?.data?.uri === unknown,
    `subscribing to an unknown URI: ${error?.code} ${JSON.stringify(error?.data)}`,
  );
}

async function main() {
  const user = scriptedUser();
  const client = new Client({ name: "dsh-conformance-sdk1", version: "0.0.0" }, { capabilities: CAPABILITIES });
  client.setRequestHandler(ElicitRequestSchema, async (request) => user.elicit(request.params));
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => user.sample(request.params));
  client.setRequestHandler(ListRootsRequestSchema, async () => user.listRoots());
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => user.log(notification.params));
  let promptChanges = 0;
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
    promptChanges += 1;
  });

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

    const capabilities = client.getServerCapabilities();
    check(
      capabilities?.resources?.subscribe === true &&
        capabilities?.resources?.listChanged === true &&
        capabilities?.prompts?.listChanged === true &&
        capabilities?.completions !== undefined,
      `the server declares resources, prompts and completions: ${JSON.stringify(capabilities)}`,
    );
    await resourceFixtures(client, check);
    await promptFixtures(client, check);
    await completionFixtures(client, check);
    await subscriptions(client);
    const listPrompts = async () => (await client.listPrompts()).prompts;
    await promptListChange(client, check, () => promptChanges, listPrompts);
  } finally {
    await client.close();
  }
}

runMain(main, check);
