// The card renderer in a real browser: headless Chromium (Debian's) driven by
// playwright-core. Run by dsh-cards/tests/browser.rs, which writes the pages:
//
//   node cards.mjs PAGES_DIR NODE_PREFIX
//
// PAGES_DIR holds kinds.html (one entry per card kind), xss.html (hostile text in every
// field), view.html (the MCP Apps view) and host.html (a host page that embeds the view
// and speaks its postMessage protocol). Screenshots, light and dark, go to
// PAGES_DIR/screenshots. Exits 1 with the list of failed checks.
import { createRequire } from "node:module";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

// With a third argument `replay`, only PAGES_DIR/replay.html (a `dsh-tools replay --html`
// page of a recorded log, written by dsh-tools' tests) is checked.
const [pagesDir, nodePrefix, mode] = process.argv.slice(2);
const require = createRequire(path.join(nodePrefix, "package.json"));
const { chromium } = require("playwright-core");

const CHROMIUM = process.env.DSH_CHROMIUM || "/usr/bin/chromium";
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run",
];
const failures = [];
const shots = path.join(pagesDir, "screenshots");
mkdirSync(shots, { recursive: true });

function check(cond, what) {
  if (!cond) failures.push(what);
}

function url(name) {
  return pathToFileURL(path.join(pagesDir, name)).href;
}

async function open(context, name, requests) {
  const page = await context.newPage();
  page.on("request", (r) => {
    if (!/^(file|data|about):/.test(r.url())) requests.push(r.url());
  });
  page.on("pageerror", (e) => failures.push(`${name}: script error: ${e.message}`));
  await page.goto(url(name));
  return page;
}

async function text(locator) {
  return (await locator.allInnerTexts()).join("\n");
}

async function checkKinds(page) {
  const entry = (n) => page.locator("article.dc-entry").nth(n);
  check((await page.locator("article.dc-entry").count()) === 7, "kinds: 7 entries");

  // Diff: the changed lines, old and new, with line numbers.
  const diff = entry(0).locator('section[data-card="diff"]').last();
  const removed = await text(diff.locator("tr.dc-del"));
  const added = await text(diff.locator("tr.dc-add"));
  check(removed.includes("2\t\t- let total = a - b;"), `diff: removed line with its number, got ${JSON.stringify(removed)}`);
  check(added.includes("2\t+ let total = a + b;"), `diff: added line with its number, got ${JSON.stringify(added)}`);
  check(!(await text(diff)).includes("unchanged far away"), "diff: far context is not shown");

  // Terminal: the command, its output and its exit code.
  check((await text(entry(1).locator(".dc-command"))).includes("$ cargo test"), "terminal: the command");
  check((await text(entry(1).locator(".dc-output"))).includes("test result: FAILED"), "terminal: the output");
  check((await text(entry(1).locator(".dc-exit"))) === "exit code 101", "terminal: the exit code");

  // Search: grouped by file, and it says it is truncated.
  const groups = entry(2).locator(".dc-group");
  check((await groups.count()) === 2, "search: two file groups");
  check((await text(groups.nth(0).locator(".dc-file"))) === "src/a.rs", "search: first file");
  check((await groups.nth(0).locator("tr").count()) === 2, "search: two matches in the first file");
  check((await text(groups.nth(1))).includes("fn b_helper()"), "search: the second file's match");
  check((await text(entry(2).locator(".dc-count"))) === "truncated: showing 3 of 57 matches", "search: truncated and total");

  // Fallback: an unknown card shows the raw arguments.
  const fallback = await text(entry(3));
  check(fallback.includes('"beam": "42"'), `fallback: raw arguments, got ${JSON.stringify(fallback)}`);
  check(fallback.includes("hologram"), "fallback: the unknown result card's raw JSON");

  // Read and web.
  check((await text(entry(4))).includes("lines 10\u201311 of 120"), "read: the window");
  const links = await page.locator("a").evaluateAll((as) => as.map((a) => a.href));
  check(links.includes("https://example.com/docs"), "web: the source is a link");
  check((await text(page.locator(".dc-malformed"))).includes("malformed line 9"), "malformed: its line number");

  // Keyboard: Tab reaches the first card.
  await page.keyboard.press("Tab");
  check(await page.evaluate(() => document.activeElement?.classList.contains("dc-card")), "keyboard: Tab focuses a card");
}

async function checkXss(page) {
  // Let any handler that could fire do so: image errors, focus, details toggles.
  await page.locator("details").evaluateAll((ds) => ds.forEach((d) => { d.open = true; }));
  for (let i = 0; i < 40; i++) await page.keyboard.press("Tab");
  await page.waitForTimeout(300);
  check((await page.evaluate(() => window.__xss)) === undefined, "xss: a payload ran (window.__xss is set)");
  const hrefs = await page.locator("a[href]").evaluateAll((as) => as.map((a) => new URL(a.href).protocol));
  check(hrefs.every((p) => p === "http:" || p === "https:" || p === "file:"), `xss: link protocols ${hrefs}`);
  check((await page.locator("img, svg, iframe, object, embed").count()) === 0, "xss: no element from the payloads");
  const shown = await page.locator("main").innerText();
  check(shown.includes('<img src=x onerror="window.__xss=1">'), "xss: the payload is shown as text");
  check(shown.includes("\u241b[31m"), "xss: control characters made visible");
  check((await page.locator("section.dc-card").count()) >= 8, "xss: every card rendered");
}

async function checkView(page) {
  const frame = page.frameLocator("iframe");
  await frame.locator(".dc-exit").waitFor({ timeout: 10000 });
  const log = await page.evaluate(() => window.hostLog);
  check(log[0] === "ui/initialize" && log.includes("ui/notifications/initialized"), `view: handshake ${log}`);
  check((await text(frame.locator(".dc-exit"))) === "exit code 2", "view: the result card from _meta");
  check((await text(frame.locator(".dc-command"))).includes("$ make test"), "view: the call card from _meta");
  const view = page.frames().find((f) => f !== page.mainFrame());
  check((await view.evaluate(() => document.documentElement.dataset.theme)) === "dark", "view: the host's theme applied");
  await page.evaluate(() => window.sendUnknown());
  await frame.locator(".dc-fallback").first().waitFor({ timeout: 10000 });
  const fallback = await text(frame.locator(".dc-fallback").first());
  check(fallback.includes('"target": "moon"'), `view: fallback shows the raw arguments, got ${JSON.stringify(fallback)}`);
  check((await view.evaluate(() => window.__xss)) === undefined, "view: no payload ran");
}

// The page of a recorded log: the same things a person must see, found by card kind.
async function checkReplay(page) {
  const diff = page.locator('section[data-card="diff"]').last();
  check((await text(diff.locator("tr.dc-del"))).includes("- let total = a - b;"), "replay: the diff's removed line");
  check((await text(diff.locator("tr.dc-add"))).includes("+ let total = a + b;"), "replay: the diff's added line");
  check((await text(page.locator(".dc-output"))).includes("<b>out</b>"), "replay: the terminal output");
  check((await text(page.locator(".dc-exit"))) === "exit code 3", "replay: the exit code");
  const search = page.locator('section[data-card="search"]');
  check((await search.locator(".dc-group .dc-file").count()) === 1, "replay: matches grouped by file");
  check((await text(search.locator(".dc-count"))).startsWith("truncated: showing"), "replay: the search says it is truncated");
  check((await text(search.locator(".dc-count"))).endsWith("of 300 matches"), "replay: the search's total");
  check((await page.locator("main").innerText()).includes('"beam": "42"'), "replay: the fallback's raw arguments");
  check((await text(page.locator(".dc-malformed"))).includes("malformed line 5"), "replay: the malformed line");
  check((await page.evaluate(() => window.__xss)) === undefined, "replay: no payload ran");
}

async function screenshots(page, name, scheme) {
  await page.screenshot({ path: path.join(shots, `${name}-${scheme}.png`), fullPage: true });
  const entries = page.locator("article.dc-entry");
  const n = await entries.count();
  for (let i = 0; i < n; i++) {
    const kind = await entries.nth(i).locator("section.dc-card").last().getAttribute("data-card");
    await entries.nth(i).screenshot({ path: path.join(shots, `${name}-${i}-${kind}-${scheme}.png`) });
  }
}

async function run() {
  const requests = [];
  for (const scheme of ["light", "dark"]) {
    const profile = mkdtempSync(path.join(tmpdir(), "dsh-cards-chromium-"));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, args: ARGS, colorScheme: scheme,
      viewport: { width: 820, height: 900 },
    });
    try {
      if (mode === "replay") {
        const replay = await open(context, "replay.html", requests);
        await checkReplay(replay);
        await replay.screenshot({ path: path.join(shots, `replay-${scheme}.png`), fullPage: true });
        continue;
      }
      const kinds = await open(context, "kinds.html", requests);
      await checkKinds(kinds);
      await screenshots(kinds, "kinds", scheme);
      const bg = await kinds.evaluate(() => getComputedStyle(document.body).backgroundColor);
      check(scheme === "dark" ? bg === "rgb(13, 17, 23)" : bg === "rgb(255, 255, 255)", `${scheme}: background ${bg}`);
      const xss = await open(context, "xss.html", requests);
      await checkXss(xss);
      await xss.screenshot({ path: path.join(shots, `xss-${scheme}.png`), fullPage: true });
      const host = await open(context, "host.html", requests);
      await checkView(host);
      await host.screenshot({ path: path.join(shots, `view-${scheme}.png`), fullPage: true });
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
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
