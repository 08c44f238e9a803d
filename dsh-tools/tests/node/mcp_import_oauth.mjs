// `dsh-tools --mcp-http URL` importing from an OAuth-protected MCP server, with a real
// authorization server (`oidc-provider`) and this script playing the user's browser.
//
// Usage: node mcp_import_oauth.mjs SDK_DIR OIDC_DIR DSH_TOOLS WORK
//
// - SDK_DIR, OIDC_DIR: the directories whose node_modules hold @modelcontextprotocol/sdk
//   and oidc-provider;
// - WORK: an empty directory for the roots and the token files.
//
// The authorization server runs in this process on a loopback port; its interactions
// approve at once (as user `alice`) and count themselves, or refuse when told to. The
// protected upstream is `dsh-tools mcp --http --oauth-issuer` importing the SDK server
// of `mcp_relay_server.mjs` (its read-only `echo` needs `tools:read`). The importing
// `dsh-tools --mcp-http URL ... call echo` runs:
//
// - without an OAuth flag: it fails naming the flag to pass;
// - with the authorization code grant of a pre-registered public client and a token
//   file: it prints the authorization URL on stderr; the browser here opens it, is sent
//   through the approving interaction to the loopback redirect, and the call answers;
//   the token file is written with mode 0600, keyed by the server's URL;
// - again with the same token file: no URL printed, no interaction, the call answers
//   (and with --mcp-http-deferred, the tools deferred in a namespace);
// - with the stored access token spoiled: the refresh token gets a new one, no browser;
//   with the refresh token spoiled too: an error naming the token endpoint, the tokens
//   forgotten, and the next run authorizes again;
// - with `--mcp-oauth` alone: the client registers dynamically, then as above;
// - with `--mcp-oauth-scopes tools:read`: only that scope is asked for;
// - with client credentials (the secret from an environment variable): the call answers;
// - with a refusing interaction: the `error=access_denied` redirect is a clear error;
// - with nobody opening the URL: the wait ends with an error naming the redirect URI.
//
// The last line printed is `ok: N checks` on success.

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { checker, httpServer } from "./lib.mjs";

const [SDK_DIR, OIDC_DIR, DSH_TOOLS, WORK] = process.argv.slice(2);
const { default: Provider } = await import(path.join(OIDC_DIR, "node_modules/oidc-provider/lib/index.js"));

const check = checker("import-oauth");
const SCOPES = "tools:exec tools:read tools:write";
const SECRET = "svc-secret-for-the-test";

/** The authorization server's state the test reads and steers. */
const interactions = { approved: 0, refuse: false };

/** An authorization server for `issuer`. */
function provider(issuer) {
  const p = new Provider(issuer, {
    clients: [
      {
        // The CLI as a public native client: any loopback port (RFC 8252).
        client_id: "dsh-cli",
        application_type: "native",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: ["http://127.0.0.1/callback"],
      },
      {
        client_id: "dsh-svc",
        client_secret: SECRET,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
      },
    ],
    // The scopes dynamic registration may ask for.
    scopes: ["openid", "offline_access", ...SCOPES.split(" ")],
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    // A refresh token with every authorization code the client may refresh.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: { ClientCredentials: 600, AccessToken: 600, Interaction: 600, Grant: 600, Session: 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: SCOPES,
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

/** The interaction: approve what was asked for as `alice`, or refuse. */
async function interact(p, req, res) {
  const details = await p.interactionDetails(req, res);
  if (interactions.refuse) {
    await p.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: "the user said no" },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const { params } = details;
  const grant = new p.Grant({ accountId: "alice", clientId: params.client_id });
  if (params.scope) {
    grant.addOIDCScope(params.scope);
    if (params.resource) grant.addResourceScope(params.resource, params.scope);
  }
  const grantId = await grant.save();
  interactions.approved += 1;
  await p.interactionFinished(
    req,
    res,
    { login: { accountId: "alice" }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

/**
 * Follow `url` as a browser does (cookies kept, redirects followed) until it reaches
 * `redirectUri`, then open that too (the loopback listener); its response.
 */
async function browse(url, redirectUri) {
  const jar = new Map();
  let next = url;
  for (let hops = 0; hops < 20; hops += 1) {
    if (next.startsWith(redirectUri)) {
      const res = await fetch(next);
      return { status: res.status, url: next, body: await res.text() };
    }
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(next, { redirect: "manual", headers: cookie ? { cookie } : {} });
    for (const set of res.headers.getSetCookie()) {
      const pair = set.split(";")[0];
      const at = pair.indexOf("=");
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = res.headers.get("location");
    if (!location) throw new Error(`the browser stopped at ${next}: ${res.status} ${await res.text()}`);
    next = new URL(location, next).toString();
  }
  throw new Error(`too many redirects from ${url}`);
}

/**
 * Run `dsh-tools ARGS` with `env` added; when it prints an authorization URL, open it
 * with `browse` unless `open` is false. Its exit code, output and what the browser saw.
 */
function run(args, { env = {}, open = true } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(DSH_TOOLS, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let browsed;
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const m = /open this URL in a browser: (\S+)/.exec(stderr);
      if (m && open && browsed === undefined) {
        const redirectUri = new URL(m[1]).searchParams.get("redirect_uri");
        // A browser that fails ends the run at once (dsh-tools would wait for it).
        browsed = browse(m[1], redirectUri).catch((e) => {
          child.kill("SIGKILL");
          return { error: String(e) };
        });
      }
    });
    // A bound against a hang only.
    const timer = setTimeout(() => child.kill("SIGKILL"), 120000);
    child.on("error", reject);
    child.on("exit", async (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, browsed: await browsed });
    });
  });
}

async function main() {
  let handle = (_req, res) => res.end();
  const as = createServer((req, res) => handle(req, res));
  await new Promise((resolve) => as.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${as.address().port}`;
  const p = provider(issuer);
  const callback = p.callback();
  handle = (req, res) => {
    if (req.url.startsWith("/interaction/")) {
      interact(p, req, res).catch((e) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    } else {
      callback(req, res);
    }
  };

  const upstreamRoot = path.join(WORK, "upstream");
  const root = path.join(WORK, "importer");
  mkdirSync(upstreamRoot);
  mkdirSync(root);
  const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;
  const serverScript = path.join(path.dirname(fileURLToPath(import.meta.url)), "mcp_relay_server.mjs");
  const upstream = await httpServer(DSH_TOOLS, upstreamRoot, [
    "--mcp",
    [process.execPath, serverScript, SDK_DIR].map(quote).join(" "),
    "--oauth-issuer",
    issuer,
  ]);
  const url = upstream.url;
  const tokens = path.join(WORK, "tokens.json");
  const call = ["call", "echo", '{"text":"hello through OAuth"}'];
  const importing = (...flags) => ["--root", root, "--mcp-http", url, ...flags, ...call];
  try {
    // No OAuth flag: the 401 names the flag.
    let r = await run(importing());
    check(r.code === 1, `without OAuth: exit ${r.code}: ${r.stderr}`);
    check(
      r.stderr.includes(`--mcp-http "${url}": the server requires OAuth authorization (it answered 401): pass --mcp-oauth`),
      `without OAuth: ${r.stderr}`,
    );

    // The authorization code grant, the browser played here.
    r = await run(importing("--mcp-oauth-client-id", "dsh-cli", "--mcp-oauth-token-file", tokens));
    check(r.code === 0, `authorization code: exit ${r.code}: ${r.stderr}`);
    check(r.stdout.includes("hello through OAuth"), `authorization code: ${r.stdout}`);
    check(r.browsed?.status === 200, `the loopback answered the browser: ${JSON.stringify(r.browsed)}`);
    check(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/.test(r.browsed.url), `redirect ${r.browsed.url}`);
    const authUrl = new URL(/open this URL in a browser: (\S+)/.exec(r.stderr)[1]);
    check(authUrl.searchParams.get("code_challenge_method") === "S256", `PKCE: ${authUrl}`);
    check(authUrl.searchParams.get("resource") === url, `resource: ${authUrl}`);
    check(interactions.approved === 1, `one interaction: ${interactions.approved}`);
    const mode = statSync(tokens).mode & 0o777;
    check(mode === 0o600, `the token file's mode: ${mode.toString(8)}`);
    const stored = JSON.parse(readFileSync(tokens, "utf8"));
    check(Object.keys(stored).includes(url), `the token file's servers: ${Object.keys(stored)}`);

    // The stored token again: no URL, no interaction.
    r = await run(importing("--mcp-oauth-client-id", "dsh-cli", "--mcp-oauth-token-file", tokens));
    check(r.code === 0 && r.stdout.includes("hello through OAuth"), `reused: exit ${r.code}: ${r.stderr}`);
    check(!r.stderr.includes("open this URL"), `reused: a new authorization: ${r.stderr}`);
    check(interactions.approved === 1, `reused: interactions ${interactions.approved}`);

    // --mcp-http-deferred, with the same tokens: the server's tools deferred, in a
    // namespace of their own.
    r = await run([
      "--root", root, "--mcp-http-deferred", url, "--mcp-oauth-client-id", "dsh-cli",
      "--mcp-oauth-token-file", tokens, "export", "--provider", "openai",
    ]);
    check(r.code === 0 && !r.stderr.includes("open this URL"), `deferred: exit ${r.code}: ${r.stderr}`);
    const namespace = JSON.parse(r.stdout).find((t) => t.type === "namespace");
    const echo = namespace?.tools?.find((t) => t.name === "echo");
    check(echo?.defer_loading === true, `deferred: ${r.stdout}`);

    // A rejected access token is refreshed with the stored refresh token: no browser.
    const before = JSON.parse(readFileSync(tokens, "utf8"))[url];
    check(typeof before.token_response?.refresh_token === "string", `a refresh token stored: ${Object.keys(before.token_response ?? {})}`);
    before.token_response.access_token = "not-a-token";
    writeFileSync(tokens, JSON.stringify({ [url]: before }));
    r = await run(importing("--mcp-oauth-client-id", "dsh-cli", "--mcp-oauth-token-file", tokens));
    check(r.code === 0 && r.stdout.includes("hello through OAuth"), `refreshed: exit ${r.code}: ${r.stderr}`);
    check(!r.stderr.includes("open this URL") && interactions.approved === 1, `refreshed: a new authorization: ${r.stderr}`);
    const after = JSON.parse(readFileSync(tokens, "utf8"))[url];
    check(after.token_response.access_token.split(".").length === 3, `the refreshed token stored: ${JSON.stringify(after)}`);
    check((statSync(tokens).mode & 0o777) === 0o600, "the token file's mode after the refresh");

    // A refresh that fails is an error naming the token endpoint; the tokens are
    // forgotten, and the next run authorizes again.
    const spoiled = { ...after.token_response, access_token: "not-a-token", refresh_token: "not-a-refresh-token" };
    writeFileSync(tokens, JSON.stringify({ [url]: { ...after, token_response: spoiled } }));
    r = await run(importing("--mcp-oauth-client-id", "dsh-cli", "--mcp-oauth-token-file", tokens));
    check(r.code === 1, `failed refresh: exit ${r.code}: ${r.stderr}`);
    check(
      r.stderr.includes(`refreshing the access token at ${issuer}/token failed`) && r.stderr.includes("invalid_grant"),
      `failed refresh: ${r.stderr}`,
    );
    check(!(url in JSON.parse(readFileSync(tokens, "utf8"))), "failed refresh: the tokens kept");
    r = await run(importing("--mcp-oauth-client-id", "dsh-cli", "--mcp-oauth-token-file", tokens));
    check(r.code === 0 && r.stdout.includes("hello through OAuth"), `after a failed refresh: exit ${r.code}: ${r.stderr}`);
    check(r.stderr.includes("open this URL") && interactions.approved === 2, `after a failed refresh: ${r.stderr}`);

    // No client id: the client registers dynamically (tokens in memory).
    r = await run(importing("--mcp-oauth"));
    check(r.code === 0 && r.stdout.includes("hello through OAuth"), `registered: exit ${r.code}: ${r.stderr}`);
    const registered = new URL(/open this URL in a browser: (\S+)/.exec(r.stderr)?.[1] ?? "http://x").searchParams;
    check(![null, "dsh-cli"].includes(registered.get("client_id")), `registered: client ${registered}`);
    check(interactions.approved === 3, `registered: interactions ${interactions.approved}`);

    // --mcp-oauth-scopes replaces the scopes the server names: echo (read-only) needs
    // no more than tools:read.
    r = await run(importing("--mcp-oauth-client-id", "dsh-cli", "--mcp-oauth-scopes", "tools:read"));
    check(r.code === 0 && r.stdout.includes("hello through OAuth"), `scoped: exit ${r.code}: ${r.stderr}`);
    const asked = new URL(/open this URL in a browser: (\S+)/.exec(r.stderr)?.[1] ?? "http://x").searchParams;
    const scopes = (asked.get("scope") ?? "").split(" ");
    check(scopes.includes("tools:read") && !scopes.includes("tools:exec"), `scoped: asked for ${asked.get("scope")}`);

    // Client credentials, the secret from the environment.
    r = await run(
      importing(
        "--mcp-oauth-grant",
        "client-credentials",
        "--mcp-oauth-client-id",
        "dsh-svc",
        "--mcp-oauth-client-secret-env",
        "SVC_SECRET",
      ),
      { env: { SVC_SECRET: SECRET } },
    );
    check(r.code === 0 && r.stdout.includes("hello through OAuth"), `client credentials: exit ${r.code}: ${r.stderr}`);
    check(!r.stderr.includes("open this URL"), `client credentials asked a browser: ${r.stderr}`);

    // The user refuses: the error redirect is the error.
    interactions.refuse = true;
    r = await run(importing("--mcp-oauth-client-id", "dsh-cli"));
    check(r.code === 1, `refused: exit ${r.code}: ${r.stderr}`);
    check(/access_denied/.test(r.stderr) && /the user said no/.test(r.stderr), `refused: ${r.stderr}`);
    check(r.browsed?.status === 400, `the loopback's page on a refusal: ${JSON.stringify(r.browsed)}`);

    // Nobody opens the URL.
    r = await run(importing("--mcp-oauth-client-id", "dsh-cli", "--mcp-oauth-timeout", "1"), { open: false });
    check(r.code === 1, `timeout: exit ${r.code}: ${r.stderr}`);
    check(/no OAuth redirect reached http:\/\/127\.0\.0\.1:\d+\/callback within 1 s/.test(r.stderr), `timeout: ${r.stderr}`);
  } finally {
    upstream.child.kill("SIGTERM");
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
