// The MCP Apps view of `dsh-tools mcp` in a host built on the official host bridge
// (@modelcontextprotocol/ext-apps/app-bridge), fed real calls. Run by dsh-tools' tests
// (tests/cli/html.rs):
//
//   node bridge.mjs PAGES_DIR NODE_PREFIX DSH_TOOLS ROOT
//
// NODE_PREFIX holds playwright-core, @modelcontextprotocol/ext-apps and esbuild
// (dsh-cards/tests/browser/install.sh). The script bundles the bridge into
// PAGES_DIR/app-bridge.js (the host page, bridge.html, is copied next to it), starts
// `DSH_TOOLS --root ROOT mcp` and speaks JSON-RPC to it on stdio as a client that declares
// the UI extension: it lists the tools, reads ui://dsh-rs/cards and calls edit, bash, grep
// and job_kill (no presenters). Each call is handed to the view through the bridge as a
// host does: its input first (the pending card must show before any result), then its
// result. ROOT must hold sum.rs (`let total = a - b;`), a.txt and many.txt (lines with
// `needle`, more than grep shows). Screenshots, light and dark, go to
// PAGES_DIR/screenshots. Exits 1 with the list of failed checks.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const [pagesDir, nodePrefix, dshTools, root] = process.argv.slice(2);
const require = createRequire(path.join(nodePrefix, "package.json"));
const { chromium } = require("playwright-core");
const esbuild = require("esbuild");

const CHROMIUM = process.env.DSH_CHROMIUM || "/usr/bin/chromium";
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run",
];
const UI = "io.modelcontextprotocol/ui";
const VIEW = "ui://dsh-rs/cards";
const CARDS = "dev.dsh-rs/cards";
const WAIT = { timeout: 30000 };
const failures = [];
const shots = path.join(pagesDir, "screenshots");
mkdirSync(shots, { recursive: true });

function check(cond, what) {
  if (!cond) failures.push(what);
}

// ---- the bridge, bundled for the page (no network at test time) ----

async function bundleBridge() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  copyFileSync(path.join(here, "bridge.html"), path.join(pagesDir, "bridge.html"));
  await esbuild.build({
    stdin: {
      contents:
        'export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";',
      resolveDir: nodePrefix,
    },
    bundle: true,
    format: "iife",
    globalName: "McpAppBridge",
    platform: "browser",
    outfile: path.join(pagesDir, "app-bridge.js"),
    logLevel: "error",
  });
}

// ---- a raw JSON-RPC client of `dsh-tools mcp` on stdio ----

function startServer() {
  const child = spawn(dshTools, ["--root", root, "mcp"], { stdio: ["pipe", "pipe", "inherit"] });
  const waiting = new Map();
  let nextId = 1;
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    let message;
    try { message = JSON.parse(line); } catch { failures.push(`server wrote a non-JSON line: ${line}`); return; }
    const pending = message.id !== undefined && !message.method && waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id);
    if (message.error) pending.reject(new Error(`${pending.method}: ${JSON.stringify(message.error)}`));
    else pending.resolve(message.result);
  });
  const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject, method });
    send({ jsonrpc: "2.0", id, method, params });
  });
  const notify = (method, params) => send({ jsonrpc: "2.0", method, params });
  const close = () => { child.stdin.end(); child.kill(); };
  return { request, notify, close };
}

// What a host does before any call: initialize declaring the extension, list the tools,
// read the view.
async function discover(server) {
  const init = await server.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } } },
    clientInfo: { name: "bridge-test-host", version: "1" },
  });
  check(init.capabilities?.extensions?.[UI] !== undefined, `initialize: the UI extension declared, got ${JSON.stringify(init.capabilities)}`);
  server.notify("notifications/initialized", {});
  const { tools } = await server.request("tools/list", {});
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ["edit", "bash", "grep"]) {
    check(byName[name]?._meta?.ui?.resourceUri === VIEW, `tools/list: ${name} points at the view`);
  }
  check(byName.job_kill && byName.job_kill._meta?.ui === undefined, "tools/list: job_kill (no presenters) has no view");
  const read = await server.request("resources/read", { uri: VIEW });
  const contents = read.contents[0];
  check(contents.mimeType === "text/html;profile=mcp-app", `resources/read: mime type ${contents.mimeType}`);
  return { byName, html: contents.text };
}

// The reference calls, each with what a person must see of it.
const CALLS = [
  {
    kind: "diff", name: "edit",
    args: { file_path: "sum.rs", old_string: "a - b", new_string: "a + b" },
    async see(frame) {
      const diff = frame.locator('section[data-card="diff"]').last();
      check((await text(diff.locator("tr.dc-del"))).includes("- let total = a - b;"), "diff: the removed line");
      check((await text(diff.locator("tr.dc-add"))).includes("+ let total = a + b;"), "diff: the added line");
    },
  },
  {
    kind: "terminal", name: "bash",
    args: { command: "printf 'hello <b>world</b>\\n'; exit 3", description: "greet" },
    async see(frame) {
      check((await text(frame.locator(".dc-command"))).includes("$ printf 'hello <b>world</b>"), "terminal: the command");
      check((await text(frame.locator(".dc-output"))).includes("hello <b>world</b>"), "terminal: the output, as text");
      check((await text(frame.locator(".dc-exit"))) === "exit code 3", "terminal: the exit code");
    },
  },
  {
    kind: "search", name: "grep", args: { pattern: "needle" },
    async see(frame) {
      const files = await frame.locator(".dc-group .dc-file").allInnerTexts();
      check(JSON.stringify(files) === '["a.txt","many.txt"]', `search: grouped by file, got ${JSON.stringify(files)}`);
      const count = await text(frame.locator(".dc-count"));
      check(/^truncated: showing 250 of \d+ matches$/.test(count), `search: says it is truncated, got ${JSON.stringify(count)}`);
    },
  },
  {
    kind: "fallback", name: "job_kill", args: { job_id: "bash-99", reason: "<i>enough</i>" },
    async see(frame) {
      const shown = await text(frame.locator("main"));
      check(shown.includes('"job_id": "bash-99"'), `fallback: the raw arguments, got ${JSON.stringify(shown)}`);
      check(shown.includes('"reason": "<i>enough</i>"'), "fallback: markup in the arguments shown as text");
    },
  },
];

async function text(locator) {
  return (await locator.allInnerTexts()).join("\n");
}

// ---- one call through the bridge ----

async function showCall(context, requests, view, call, result, scheme) {
  const page = await context.newPage();
  page.on("request", (r) => {
    if (!/^(file|data|about):/.test(r.url())) requests.push(r.url());
  });
  page.on("pageerror", (e) => failures.push(`${call.name}: host script error: ${e.message}`));
  await page.goto(pathToFileURL(path.join(pagesDir, "bridge.html")).href);
  const toolInfo = { id: call.id, tool: view.byName[call.name] };
  const hello = await page.evaluate(([html, info, theme]) => window.mountView(html, info, theme), [view.html, toolInfo, scheme]);
  check(hello.app?.name === "dsh-cards", `${call.name}: the bridge took the view's ui/initialize (appInfo ${JSON.stringify(hello.app)})`);
  const frame = page.frameLocator("iframe");
  const inner = page.frames().find((f) => f !== page.mainFrame());
  check((await inner.evaluate(() => document.documentElement.dataset.theme)) === scheme, `${call.name}: the host's ${scheme} theme applied`);

  // The input alone: the pending call card, no result yet.
  await page.evaluate((args) => window.sendInput(args), call.args);
  await frame.locator("section.dc-card").waitFor(WAIT);
  const pending = await text(frame.locator("main"));
  check(pending.includes("running\u2026"), `${call.name}: the pending card says it runs, got ${JSON.stringify(pending)}`);
  check(pending.includes(call.name), `${call.name}: the pending card names the tool`);
  check(pending.includes(JSON.stringify(Object.values(call.args)[0]).slice(1, -1)), `${call.name}: the pending card shows the input`);
  check((await frame.locator("section.dc-card").count()) === 1, `${call.name}: only the call card before the result`);
  await page.screenshot({ path: path.join(shots, `${call.kind}-pending-${scheme}.png`), fullPage: true });

  // Then the result.
  await page.evaluate((r) => window.sendResult(r), result);
  await frame.locator(".dc-pending").waitFor({ state: "detached", ...WAIT });
  await call.see(frame);
  check((await inner.evaluate(() => window.__xss)) === undefined, `${call.name}: no payload ran`);
  await page.screenshot({ path: path.join(shots, `${call.kind}-${scheme}.png`), fullPage: true });
  await page.close();
}

async function run() {
  await bundleBridge();
  const server = startServer();
  const requests = [];
  try {
    const view = await discover(server);
    const results = [];
    for (const [i, call] of CALLS.entries()) {
      call.id = 100 + i;
      const result = await server.request("tools/call", { name: call.name, arguments: call.args });
      const cards = result._meta?.[CARDS];
      check(call.kind === "fallback" ? cards === undefined : cards?.resultCard?.card === call.kind,
        `${call.name}: the result's cards ${JSON.stringify(cards)}`);
      results.push(result);
    }
    for (const scheme of ["light", "dark"]) {
      const profile = mkdtempSync(path.join(tmpdir(), "dsh-cards-bridge-"));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM, headless: true, args: ARGS, colorScheme: scheme,
        viewport: { width: 820, height: 700 },
      });
      try {
        for (const [i, call] of CALLS.entries()) {
          await showCall(context, requests, view, call, results[i], scheme);
        }
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    }
  } finally {
    server.close();
  }
  check(requests.length === 0, `network requests: ${requests}`);
}

try {
  await run();
} catch (e) {
  failures.push(`error: ${e.stack || e}`);
}
if (failures.length) {
  console.error(failures.map((f) => `FAILED ${f}`).join("\n"));
  process.exit(1);
}
console.log("ok: all checks passed; screenshots in " + shots);
