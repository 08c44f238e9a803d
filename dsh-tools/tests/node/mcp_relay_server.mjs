// An MCP server on stdio written with the official TypeScript SDK (1.x, protocol
// 2025-11-25), for `dsh-tools --mcp`: its tool `deploy` logs, reports progress and asks
// its client a form during the call, then answers with what the form said; `echo`
// (read-only) sends its text back.
//
// Usage: node mcp_relay_server.mjs SDK_DIR

import path from "node:path";
import { createRequire } from "node:module";

const [SDK_DIR] = process.argv.slice(2);
const require = createRequire(path.join(SDK_DIR, "package.json"));
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { CallToolRequestSchema, ListToolsRequestSchema } = require(
  "@modelcontextprotocol/sdk/types.js",
);

const server = new Server(
  { name: "relay-upstream", version: "1.0.0" },
  { capabilities: { tools: {}, logging: {} } },
);

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "deploy",
      description: "Deploy a service where the user says.",
      inputSchema: {
        type: "object",
        properties: { service: { type: "string", description: "The service." } },
        required: ["service"],
        additionalProperties: false,
      },
    },
    {
      name: "echo",
      description: "Send the text back.",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string", description: "The text." } },
        required: ["text"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  if (request.params.name === "echo") {
    return { content: [{ type: "text", text: String(request.params.arguments?.text) }] };
  }
  const service = request.params.arguments?.service;
  await extra.sendNotification({
    method: "notifications/message",
    params: { level: "warning", logger: "deploy", data: `deploying ${service}` },
  });
  const token = request.params._meta?.progressToken;
  if (token !== undefined) {
    await extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken: token, progress: 1, total: 2, message: "asking where" },
    });
  }
  // The SDK checks that the client declared form elicitation, and the answer against
  // the schema.
  const answer = await server.elicitInput(
    {
      mode: "form",
      message: `Where to deploy ${service}?`,
      requestedSchema: {
        type: "object",
        properties: {
          branch: { type: "string", description: "The branch." },
          replicas: { type: "integer", description: "How many replicas." },
        },
        required: ["branch", "replicas"],
      },
    },
    { relatedRequestId: extra.requestId },
  );
  const text =
    answer.action === "accept"
      ? `deployed ${service} to ${answer.content.branch} x${answer.content.replicas}`
      : `not deployed: ${answer.action}`;
  return { content: [{ type: "text", text }] };
});

await server.connect(new StdioServerTransport());
