// The everything server with the official MCP TypeScript v2 client
// (`@modelcontextprotocol/client`), pinned to protocol 2026-07-28 (stateless: no
// session, each request carries its revision and the client's capabilities in `_meta`):
// the fixtures that talk back, and resources, prompts and completion.
//
// Usage: node client_v2.mjs SDK_DIR TRANSPORT TARGET
//
// - SDK_DIR: the directory whose node_modules holds @modelcontextprotocol/client;
// - TRANSPORT `stdio`: TARGET is the `everything-server` binary, which the SDK starts
//   with `--stdio`; `http`: TARGET is the URL of a running server (Streamable HTTP).
//
// Checks:
// 1. 2026-07-28 negotiated (`server/discover`), the server names itself.
// 2. The server's questions come back as `InputRequiredResult`s whose `inputRequests`
//    the client's auto-fulfilment hands to the handlers below, then retries the call with
//    `inputResponses` and the `requestState`: `test_elicitation`, `test_sampling`,
//    `test_input_required_result_list_roots` and
//    `test_input_required_result_multiple_inputs` answer exactly the expected texts, and
//    each handler was asked what the fixture asks, once per question (lib.mjs).
// 3. One round by hand (`allowInputRequired`): `test_input_required_result_multiple_inputs`
//    first answers `input_required` with its three questions in one round (`user_name`
//    an `elicitation/create` form, `greeting` a `sampling/createMessage`, `client_roots`
//    a `roots/list`) and a `requestState`; retried with the three answers and the state
//    it completes.
// 4. Logging: the v2 client has no per-connection level on 2026-07-28 (its
//    `setLoggingLevel` sends `logging/setLevel`, which that revision does not have), but
//    a request's own `_meta` keys win over the envelope it stamps, so a call carries
//    `io.modelcontextprotocol/logLevel` by passing it in `callTool`'s `_meta`. Without it
//    no log arrives; with `warning` none of the three `info` logs does; with `debug` all
//    three arrive, in order, on the call's response stream.
// 5. Resources, prompts and completion (lib.mjs): the server declares `resources`
//    (`listChanged`), `prompts` (`listChanged`) and `completions`; `resources/list` has
//    the three fixed URIs among its resources, with their mimeTypes,
//    `resources/templates/list` the template `test://template/{id}/data`;
//    `resources/read` of `test://static-text` (its exact text, text/plain),
//    `test://static-binary` (a PNG blob), `test://template/42/data` (its JSON), and of an
//    unknown URI (-32602, the URI in the error's `data`); `prompts/list` (the four fixed
//    prompts among them: descriptions, arguments and their required flags); `prompts/get`
//    of each prompt (roles, texts, the embedded resource, the image), with a required
//    argument missing or an unknown name (-32602); `completion/complete` of `arg1` from
//    "pa" and of the template's `id` from "1" (the values, `total`, `hasMore`).
// 6. No `resources/subscribe` on 2026-07-28 (the v2 client refuses it for that revision:
//    `METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION`); a resource's updates would be asked on
//    a `subscriptions/listen` stream (`resourceSubscriptions`), which this server does
//    not honour yet, so nothing about them is checked here.
// 7. List changes on a `subscriptions/listen` stream (`client.listen`): asked for
//    `promptsListChanged` alone, the server acknowledges exactly that; then
//    `test_trigger_prompt_change` adds `test_dynamic_prompt`, one
//    `notifications/prompts/list_changed` arrives on the stream (to the client's
//    notification handler, naming the stream in `_meta`), the list and `prompts/get` show
//    it; called again it removes it, one more notification, the list is as before.
//    Closing the stream ends it locally.
// Each check throws on failure; the last line printed is `ok: N checks` on success.

import path from "node:path";

import {
  CAPABILITIES,
  askingFixtures,
  checker,
  completionFixtures,
  loggingCall,
  promptFixtures,
  promptListChange,
  resourceFixtures,
  runMain,
  scriptedUser,
  textOf,
} from "./lib.mjs";

const [SDK_DIR, TRANSPORT, TARGET] = process.argv.slice(2);
const dist = path.join(SDK_DIR, "node_modules/@modelcontextprotocol/client/dist");
const { Client, StreamableHTTPClientTransport } = await import(path.join(dist, "index.mjs"));
const { StdioClientTransport } = await import(path.join(dist, "stdio.mjs"));

const check = checker(`v2 client ${TRANSPORT}`);

/** The `_meta` key of a 2026-07-28 request's log level. */
const LOG_LEVEL = "io.modelcontextprotocol/logLevel";

/** The `_meta` key naming the listen stream a notification belongs to. */
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/** Call `test_input_required_result_multiple_inputs` one round at a time, by hand. */
async function roundByHand(client) {
  const params = { name: "test_input_required_result_multiple_inputs", arguments: {} };
  const first = await client.request({ method: "tools/call", params }, { allowInputRequired: true });
  check(first.resultType === "input_required", `input_required first: ${JSON.stringify(first)}`);
  const requests = first.inputRequests ?? {};
  check(
    JSON.stringify(Object.keys(requests).sort()) === '["client_roots","greeting","user_name"]',
    `three questions in one round: ${JSON.stringify(requests)}`,
  );
  check(requests.user_name?.method === "elicitation/create", `user_name: ${JSON.stringify(requests.user_name)}`);
  check(requests.greeting?.method === "sampling/createMessage", `greeting: ${JSON.stringify(requests.greeting)}`);
  check(requests.client_roots?.method === "roots/list", `client_roots: ${JSON.stringify(requests.client_roots)}`);
  check(typeof first.requestState === "string" && first.requestState !== "", "a requestState");
  const inputResponses = {
    user_name: { action: "accept", content: { name: "grace" } },
    greeting: { role: "assistant", content: { type: "text", text: "Bonjour" }, model: "by-hand" },
    client_roots: { roots: [{ uri: "file:///a" }, { uri: "file:///b" }] },
  };
  const done = await client.request(
    { method: "tools/call", params: { ...params, inputResponses, requestState: first.requestState } },
    { allowInputRequired: true },
  );
  check(done.resultType !== "input_required", `complete on the retry: ${JSON.stringify(done)}`);
  check(textOf(done) === "Bonjour grace (2 roots)", `the retry's result: ${JSON.stringify(done)}`);
}

async function main() {
  const user = scriptedUser();
  const client = new Client(
    { name: "dsh-conformance-v2", version: "0.0.0" },
    { capabilities: CAPABILITIES, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", async (request) => user.elicit(request.params));
  client.setRequestHandler("sampling/createMessage", async (request) => user.sample(request.params));
  client.setRequestHandler("roots/list", async () => user.listRoots());
  client.setNotificationHandler("notifications/message", (notification) => user.log(notification.params));
  // Dispatched here from the listen stream (2026-07-28 has no unsolicited notifications).
  const promptChanges = [];
  client.setNotificationHandler("notifications/prompts/list_changed", (notification) => {
    promptChanges.push(notification.params ?? {});
  });

  const transport =
    TRANSPORT === "stdio"
      ? new StdioClientTransport({ command: TARGET, args: ["--stdio"], stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(TARGET));
  await client.connect(transport);
  try {
    check(client.getNegotiatedProtocolVersion() === "2026-07-28", `negotiated ${client.getNegotiatedProtocolVersion()}`);
    check(client.getServerVersion()?.name === "dsh-conformance-everything-server", "the server's name");

    await askingFixtures(client, user, check);
    await roundByHand(client);

    const callLogging = (level) => () =>
      client.callTool({
        name: "test_tool_with_logging",
        arguments: {},
        ...(level && { _meta: { [LOG_LEVEL]: level } }),
      });
    await loggingCall(callLogging(null), user, check, false, "no logLevel");
    await loggingCall(callLogging("warning"), user, check, false, "logLevel warning");
    await loggingCall(callLogging("debug"), user, check, true, "logLevel debug");
    check(user.forms.length === 2 && user.samples.length === 2 && user.roots === 2, "nothing more was asked");

    const capabilities = client.getServerCapabilities();
    check(
      capabilities?.resources?.listChanged === true &&
        capabilities?.prompts?.listChanged === true &&
        capabilities?.completions !== undefined,
      `the server declares resources, prompts and completions: ${JSON.stringify(capabilities)}`,
    );
    await resourceFixtures(client, check);
    await promptFixtures(client, check);
    await completionFixtures(client, check);

    const subscription = await client.listen({ promptsListChanged: true });
    check(
      JSON.stringify(subscription.honoredFilter) === '{"promptsListChanged":true}',
      `the listen stream's filter: ${JSON.stringify(subscription.honoredFilter)}`,
    );
    const listPrompts = async () => (await client.listPrompts()).prompts;
    await promptListChange(client, check, () => promptChanges.length, listPrompts);
    check(
      promptChanges.every((params) => params._meta?.[SUBSCRIPTION_ID] !== undefined),
      `the notifications name the listen stream: ${JSON.stringify(promptChanges)}`,
    );
    await subscription.close();
    check((await subscription.closed) === "local", "the listen stream closed locally");
  } finally {
    await client.close();
  }
}

runMain(main, check);
