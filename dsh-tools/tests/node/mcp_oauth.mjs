// `dsh-tools mcp --http --oauth-issuer` against a real authorization server
// (`oidc-provider`, issuing JWT access tokens with resource indicators) and the official
// MCP TypeScript SDK client's OAuth support (client credentials).
//
// Usage: node mcp_oauth.mjs SDK_DIR OIDC_DIR DSH_TOOLS ROOT
//
// - SDK_DIR, OIDC_DIR: the directories whose node_modules hold @modelcontextprotocol/sdk
//   and oidc-provider;
// - the authorization server runs in this process on a loopback port; `dsh-tools` finds
//   its keys through its metadata.
//
// The SDK client meets the server's 401, reads the protected-resource metadata, gets a
// token for the server's URL (RFC 8707) and calls tools; a client whose tokens lack
// `tools:exec` does not see `bash` and its call is refused (403, the step-up to the
// scope failing at the authorization server), and nothing runs; a token minted for
// another resource is refused; the authorization server rotates its key and the next
// client's token (signed with the new key) is accepted. The last line printed is
// `ok: N checks` on success.

import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { createRequire } from "node:module";

import { checker, httpServer, textOf } from "./lib.mjs";

const [SDK_DIR, OIDC_DIR, DSH_TOOLS, ROOT] = process.argv.slice(2);
const require = createRequire(path.join(SDK_DIR, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require(
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
);
const { ClientCredentialsProvider } = require("@modelcontextprotocol/sdk/client/auth-extensions.js");
const { default: Provider } = await import(path.join(OIDC_DIR, "node_modules/oidc-provider/lib/index.js"));

const check = checker("oauth");
const SCOPES = { full: "tools:exec tools:read tools:write", reader: "tools:read" };

/** A new RSA signing key as a private JWK with its key id. */
function signingKey(kid) {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), kid, use: "sig", alg: "RS256" };
}

/** An authorization server for `issuer` signing with the first of `keys`. */
function provider(issuer, keys) {
  const clients = Object.keys(SCOPES).map((id) => ({
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: ["client_credentials"],
    redirect_uris: [],
    response_types: [],
  }));
  const p = new Provider(issuer, {
    clients,
    jwks: { keys },
    ttl: { ClientCredentials: 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        // Every resource gets JWT access tokens, its audience the indicator; each
        // client only the scopes it is allowed.
        getResourceServerInfo: (_ctx, resourceIndicator, client) => ({
          scope: SCOPES[client.clientId],
          audience: resourceIndicator,
          accessTokenTTL: 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
  });
  return p;
}

/** The JSON of a JWT's part (0: header, 1: payload). */
function jwtPart(token, i) {
  return JSON.parse(Buffer.from(token.split(".")[i], "base64url").toString("utf8"));
}

/**
 * A connected SDK client authenticating as `clientId` with client credentials, asking
 * for every scope the server names (the authorization server grants each client only
 * its own).
 */
async function connect(url, issuer, clientId) {
  const auth = new ClientCredentialsProvider({
    clientId,
    clientSecret: `${clientId}-secret`,
    expectedIssuer: issuer,
    scope: SCOPES.full,
  });
  const client = new Client({ name: `dsh-rs-oauth-${clientId}`, version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: auth }));
  return { client, auth };
}

async function main() {
  // The authorization server, on a port of its own; its handler can be swapped (a
  // restart with other keys) while the port stays.
  let handle = (_req, res) => res.end();
  const as = createServer((req, res) => handle(req, res));
  await new Promise((resolve) => as.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${as.address().port}`;
  const first = signingKey("key-1");
  handle = provider(issuer, [first]).callback();

  const server = await httpServer(DSH_TOOLS, ROOT, [
    "--oauth-issuer",
    issuer,
    "--oauth-jwks-refresh",
    "0",
  ]);
  const url = server.url;
  const clients = [];
  try {
    // No token: 401 naming the metadata, which names the authorization server.
    const bare = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    check(bare.status === 401, `no token: ${bare.status}`);
    const challenge = bare.headers.get("www-authenticate") ?? "";
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    check(metadataUrl === `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`, challenge);
    const metadata = await (await fetch(metadataUrl)).json();
    check(metadata.resource === url, `metadata ${JSON.stringify(metadata)}`);
    check(JSON.stringify(metadata.authorization_servers) === JSON.stringify([issuer]), JSON.stringify(metadata));
    check(
      JSON.stringify(metadata.scopes_supported) === JSON.stringify(["tools:exec", "tools:read", "tools:write"]),
      JSON.stringify(metadata),
    );

    // The full client: discovery, a token for this server, tools.
    const full = await connect(url, issuer, "full");
    clients.push(full.client);
    const token = full.auth.tokens()?.access_token;
    check(typeof token === "string", "the client holds a token");
    const claims = jwtPart(token, 1);
    check(
      claims.aud === url && claims.iss === issuer && claims.sub === "full" && claims.scope === SCOPES.full,
      `claims ${JSON.stringify(claims)}`,
    );
    check(jwtPart(token, 0).kid === "key-1", `header ${JSON.stringify(jwtPart(token, 0))}`);
    let names = (await full.client.listTools()).tools.map((t) => t.name);
    for (const n of ["read", "write", "bash", "job_list"]) check(names.includes(n), `full lists ${n}: ${names}`);
    let result = await full.client.callTool({
      name: "bash",
      arguments: { command: "echo from-full", description: "Echo" },
    });
    check(!result.isError && textOf(result).includes("from-full"), `bash as full: ${textOf(result)}`);
    result = await full.client.callTool({ name: "read", arguments: { file_path: "notes.txt" } });
    check(!result.isError, `read as full: ${textOf(result)}`);

    // The reader: no bash listed, and its call refused (the step-up to tools:exec gets
    // no such scope from the authorization server), nothing run.
    const reader = await connect(url, issuer, "reader");
    clients.push(reader.client);
    check(jwtPart(reader.auth.tokens().access_token, 1).scope === "tools:read", "the reader's scope");
    names = (await reader.client.listTools()).tools.map((t) => t.name);
    check(names.includes("read") && names.includes("grep") && names.includes("glob"), `reader lists ${names}`);
    for (const n of ["bash", "write", "edit", "job_kill"]) check(!names.includes(n), `reader does not list ${n}: ${names}`);
    let refused;
    try {
      await reader.client.callTool({
        name: "bash",
        arguments: { command: `touch ${path.join(ROOT, "reader-ran")}`, description: "Touch" },
      });
    } catch (e) {
      refused = e;
    }
    check(refused && /403/.test(String(refused)), `the reader's bash call: ${refused}`);
    check(!existsSync(path.join(ROOT, "reader-ran")), "the reader's bash call ran");
    result = await reader.client.callTool({ name: "read", arguments: { file_path: "notes.txt" } });
    check(!result.isError && textOf(result).includes("alpha"), `read as reader: ${textOf(result)}`);

    // A token the same authorization server minted for another resource: 401.
    const config = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
    const minted = await fetch(config.token_endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from("full:full-secret").toString("base64")}`,
      },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        resource: "https://elsewhere.example/mcp",
        scope: SCOPES.full,
      }),
    });
    const elsewhere = (await minted.json()).access_token;
    check(jwtPart(elsewhere, 1).aud === "https://elsewhere.example/mcp", "a token for another resource");
    const misdirected = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${elsewhere}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    const refusal = misdirected.headers.get("www-authenticate") ?? "";
    check(misdirected.status === 401, `another resource's token: ${misdirected.status}`);
    check(/error="invalid_token"/.test(refusal) && /another resource/.test(refusal), refusal);

    // Key rotation: the authorization server signs with a new key (the old one still
    // published); a new client's token, under the new key id, is accepted once the
    // server has read the JWKS again.
    handle = provider(issuer, [signingKey("key-2"), first]).callback();
    const rotated = await connect(url, issuer, "full");
    clients.push(rotated.client);
    check(jwtPart(rotated.auth.tokens().access_token, 0).kid === "key-2", "the new token is signed with key-2");
    result = await rotated.client.callTool({
      name: "bash",
      arguments: { command: "echo after-rotation", description: "Echo" },
    });
    check(textOf(result).includes("after-rotation"), `after rotation: ${textOf(result)}`);
    // The first client's token (key-1) is still good.
    result = await full.client.callTool({ name: "read", arguments: { file_path: "notes.txt" } });
    check(!result.isError, `the old token after rotation: ${textOf(result)}`);
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    server.child.kill("SIGTERM");
    as.close();
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
