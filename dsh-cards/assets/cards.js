// dsh-cards: the card renderer. It reads cards (JSON) and builds DOM nodes with
// textContent only: no text of a card is ever parsed as HTML, and links get an href only
// for http(s) URLs and file paths. Every string is bounded (MAX_CHARS) and every list
// (MAX_ITEMS) before it reaches the page. A card this renderer does not know, or one whose
// fields do not have the expected types, is shown as the generic fallback: its raw JSON
// and the call's raw arguments.
//
// Two ways in: a page written by `CardPage::render` carries its entries in a
// JSON island (a script element of type application/json, id dsh-cards-data); the MCP Apps view
// (`view_html`) has none and talks to its host over postMessage in the MCP Apps protocol
// the official host bridge (@modelcontextprotocol/ext-apps, AppBridge) speaks: ui/initialize,
// ui/notifications/initialized, then ui/notifications/tool-input (the pending call card,
// at once) and tool-result, whose `_meta["dev.dsh-rs/cards"]` holds the call's cards.
(function () {
  "use strict";

  var MAX_CHARS = 65536;
  var MAX_ITEMS = 2000;
  var CONTEXT = 3;
  var META_KEY = "dev.dsh-rs/cards";

  // ---- text, bounded and with control characters made visible ----

  function clip(text) {
    var s = typeof text === "string" ? text : String(text);
    var cut = "";
    if (s.length > MAX_CHARS) {
      cut = "\u2026 [" + (s.length - MAX_CHARS) + " more characters not shown]";
      s = s.slice(0, MAX_CHARS);
    }
    // C0 controls (but tab and newline), DEL and the bidi overrides as visible symbols.
    s = s.replace(/[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, function (c) {
      var code = c.charCodeAt(0);
      if (code < 0x20) return String.fromCharCode(0x2400 + code);
      if (code === 0x7f) return "\u2421";
      return "\u2426";
    });
    return s + cut;
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = clip(text);
    return node;
  }

  function str(v) {
    return typeof v === "string" ? v : null;
  }

  function num(v) {
    return typeof v === "number" && isFinite(v) ? v : null;
  }

  function need(cond) {
    if (!cond) throw new Error("card shape");
  }

  function bounded(list) {
    return list.length > MAX_ITEMS ? list.slice(0, MAX_ITEMS) : list;
  }

  function moreNote(parent, list) {
    if (list.length > MAX_ITEMS) {
      parent.appendChild(el("p", "dc-note", (list.length - MAX_ITEMS) + " more not shown"));
    }
  }

  function pretty(value) {
    try {
      var text = JSON.stringify(value, null, 2);
      return text === undefined ? String(value) : text;
    } catch (e) {
      return String(value);
    }
  }

  // ---- links ----

  function fileHref(path, line) {
    var encoded = encodeURI(path).replace(/#/g, "%23").replace(/\?/g, "%3F");
    var href = path.charAt(0) === "/" ? "file://" + encoded : "./" + encoded;
    return line ? href + "#L" + line : href;
  }

  function webHref(url) {
    try {
      var parsed = new URL(url);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch (e) {
      return null;
    }
  }

  function link(text, href) {
    if (!href) return el("span", "dc-link", text);
    var a = el("a", null, text);
    a.href = href;
    a.rel = "noopener noreferrer";
    a.target = "_blank";
    return a;
  }

  function locationLink(loc) {
    need(loc && str(loc.path) !== null);
    var line = num(loc.line);
    return link(line ? loc.path + ":" + line : loc.path, fileHref(loc.path, line));
  }

  // ---- card frame ----

  function frame(tag, title, label) {
    var card = el("section", "dc-card");
    card.tabIndex = 0;
    card.setAttribute("aria-label", label + (title ? ": " + clip(title) : ""));
    card.dataset.card = tag;
    var head = el("div", "dc-head");
    head.appendChild(el("span", "dc-tag", tag));
    if (title) head.appendChild(el("span", "dc-title", title));
    card.appendChild(head);
    var body = el("div", "dc-body");
    card.appendChild(body);
    return { card: card, body: body };
  }

  function lineTable(rows) {
    var table = el("table", "dc-lines");
    var tbody = el("tbody");
    table.appendChild(tbody);
    rows.forEach(function (row) {
      var tr = el("tr", row.cls || null);
      tr.appendChild(el("td", "dc-n", row.a === null || row.a === undefined ? "" : row.a));
      if (row.b !== undefined) tr.appendChild(el("td", "dc-n", row.b === null ? "" : row.b));
      tr.appendChild(el("td", "dc-t", row.text));
      tbody.appendChild(tr);
    });
    return table;
  }

  // ---- content blocks ----

  function contentBlock(block) {
    if (block && block.type === "text" && str(block.text) !== null) return el("pre", null, block.text);
    if (block && block.type === "image") return el("p", "dc-note", "[image: " + (str(block.mimeType) || "?") + "]");
    if (block && block.type === "resource_link" && str(block.uri) !== null) {
      return link(str(block.name) || block.uri, webHref(block.uri));
    }
    return el("pre", null, pretty(block));
  }

  function contentList(parent, blocks) {
    if (!Array.isArray(blocks)) return;
    bounded(blocks).forEach(function (b) { parent.appendChild(contentBlock(b)); });
    moreNote(parent, blocks);
  }

  function locations(parent, locs) {
    if (!Array.isArray(locs) || locs.length === 0) return;
    var ul = el("ul", "dc-list dc-locations");
    bounded(locs).forEach(function (loc) {
      var li = el("li");
      li.appendChild(locationLink(loc));
      ul.appendChild(li);
    });
    parent.appendChild(ul);
    moreNote(parent, locs);
  }

  function rawDetails(parent, label, value, open) {
    var details = el("details", "dc-raw");
    if (open) details.open = true;
    details.appendChild(el("summary", null, label));
    details.appendChild(el("pre", null, pretty(value)));
    parent.appendChild(details);
  }

  // ---- diff ----

  function splitLines(text) {
    if (text === null || text === undefined || text === "") return [];
    var lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    return lines;
  }

  // The edit script of two line lists: common prefix and suffix, then an LCS table for
  // the middle when it is small enough, else the middle as removed then added.
  function diffOps(a, b) {
    var start = 0;
    while (start < a.length && start < b.length && a[start] === b[start]) start++;
    var endA = a.length, endB = b.length;
    while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
    var ops = [];
    for (var i = 0; i < start; i++) ops.push({ op: " ", a: i, b: i });
    middleOps(a, b, start, endA, endB, ops);
    for (var k = 0; k < a.length - endA; k++) ops.push({ op: " ", a: endA + k, b: endB + k });
    return ops;
  }

  function middleOps(a, b, start, endA, endB, ops) {
    var n = endA - start, m = endB - start, i, j;
    if (n * m > 4000000) {
      for (i = start; i < endA; i++) ops.push({ op: "-", a: i });
      for (j = start; j < endB; j++) ops.push({ op: "+", b: j });
      return;
    }
    var w = m + 1, t = new Uint32Array((n + 1) * w);
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        t[i * w + j] = a[start + i] === b[start + j] ? t[(i + 1) * w + j + 1] + 1
          : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
      }
    }
    i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[start + i] === b[start + j]) { ops.push({ op: " ", a: start + i, b: start + j }); i++; j++; }
      else if (i < n && (j === m || t[(i + 1) * w + j] >= t[i * w + j + 1])) { ops.push({ op: "-", a: start + i }); i++; }
      else { ops.push({ op: "+", b: start + j }); j++; }
    }
  }

  // Hunks: changed lines with CONTEXT lines around them, old and new line numbers.
  function diffRows(oldText, newText) {
    var a = splitLines(oldText), b = splitLines(newText);
    var ops = diffOps(a, b), keep = new Array(ops.length), rows = [], last = -1;
    ops.forEach(function (o, i) {
      if (o.op === " ") return;
      for (var k = Math.max(0, i - CONTEXT); k <= Math.min(ops.length - 1, i + CONTEXT); k++) keep[k] = true;
    });
    ops.forEach(function (o, i) {
      if (!keep[i]) return;
      if (i !== last + 1 || rows.length === 0) {
        rows.push({ cls: "dc-hunk", a: "", b: "", text: "@@ -" + ((o.a === undefined ? 0 : o.a) + 1) + " +" + ((o.b === undefined ? 0 : o.b) + 1) + " @@" });
      }
      last = i;
      if (o.op === " ") rows.push({ a: o.a + 1, b: o.b + 1, text: "  " + a[o.a] });
      else if (o.op === "-") rows.push({ cls: "dc-del", a: o.a + 1, b: null, text: "- " + a[o.a] });
      else rows.push({ cls: "dc-add", a: null, b: o.b + 1, text: "+ " + b[o.b] });
    });
    return rows;
  }

  function fileDiff(parent, d) {
    need(d && str(d.path) !== null && str(d.newText) !== null);
    need(d.oldText === undefined || d.oldText === null || str(d.oldText) !== null);
    var head = el("div", "dc-file");
    head.appendChild(locationLink({ path: d.path }));
    if (d.oldText === null || d.oldText === undefined) head.appendChild(el("span", "dc-note", " (new file)"));
    parent.appendChild(head);
    var rows = diffRows(d.oldText, d.newText);
    if (rows.length === 0) { parent.appendChild(el("p", "dc-note", "no changes")); return; }
    parent.appendChild(lineTable(bounded(rows)));
    moreNote(parent, rows);
  }

  function diffCard(card, phase) {
    need(Array.isArray(card.diffs));
    var f = frame("diff", str(card.title), phase + " diff");
    bounded(card.diffs).forEach(function (d) { fileDiff(f.body, d); });
    moreNote(f.body, card.diffs);
    locations(f.body, card.locations);
    return f.card;
  }

  // ---- terminal ----

  function exitNote(card) {
    var code = num(card.exitCode), signal = str(card.signal);
    if (code !== null) return el("p", code === 0 ? "dc-ok dc-exit" : "dc-warn dc-exit", "exit code " + code);
    if (signal !== null) return el("p", "dc-warn dc-exit", "killed by signal " + signal);
    return el("p", "dc-note dc-exit", "exit status unknown");
  }

  function terminalCall(card) {
    need(str(card.title) !== null);
    var f = frame("terminal", null, "command");
    if (str(card.description)) f.body.appendChild(el("p", "dc-note", card.description));
    f.body.appendChild(el("pre", "dc-term dc-command", "$ " + card.title));
    if (str(card.cwd)) f.body.appendChild(el("p", "dc-note", "in " + card.cwd));
    return f.card;
  }

  function terminalResult(card) {
    need(card.output === undefined || card.output === null || str(card.output) !== null);
    var f = frame("terminal", str(card.title), "command output");
    f.body.appendChild(el("pre", "dc-term dc-output", str(card.output) || ""));
    f.body.appendChild(exitNote(card));
    return f.card;
  }

  // ---- search, read, web ----

  function capNote(parent, shown, total, truncated, noun) {
    var text = truncated ? "truncated: showing " + shown + " of " + total + " " + noun
      : total + " " + noun;
    parent.appendChild(el("p", truncated ? "dc-warn dc-count" : "dc-note dc-count", text));
  }

  function searchMatches(f, card) {
    need(Array.isArray(card.files) && num(card.total) !== null && typeof card.truncated === "boolean");
    var shown = 0;
    bounded(card.files).forEach(function (file) {
      need(file && str(file.path) !== null && Array.isArray(file.matches));
      var group = el("div", "dc-group");
      var head = el("div", "dc-file");
      head.appendChild(locationLink({ path: file.path }));
      group.appendChild(head);
      group.appendChild(lineTable(bounded(file.matches).map(function (m) {
        need(m && num(m.lineNumber) !== null && str(m.line) !== null);
        return { a: m.lineNumber, text: m.line };
      })));
      moreNote(group, file.matches);
      shown += file.matches.length;
      f.body.appendChild(group);
    });
    moreNote(f.body, card.files);
    capNote(f.body, shown, card.total, card.truncated, "matches");
  }

  function searchPaths(f, card) {
    need(Array.isArray(card.paths) && num(card.total) !== null && typeof card.truncated === "boolean");
    var ul = el("ul", "dc-list");
    bounded(card.paths).forEach(function (p) {
      need(str(p) !== null);
      var li = el("li");
      li.appendChild(locationLink({ path: p }));
      ul.appendChild(li);
    });
    f.body.appendChild(ul);
    moreNote(f.body, card.paths);
    capNote(f.body, card.paths.length, card.total, card.truncated, "paths");
  }

  function searchCard(card) {
    var f = frame("search", str(card.title), "search result");
    if (card.shape === "matches") searchMatches(f, card);
    else if (card.shape === "paths") searchPaths(f, card);
    else need(false);
    return f.card;
  }

  function readCard(card) {
    need(str(card.path) !== null && Array.isArray(card.lines) && num(card.totalLines) !== null);
    var f = frame("read", str(card.title), "file read");
    var head = el("div", "dc-file");
    head.appendChild(locationLink({ path: card.path, line: num(card.offset) }));
    f.body.appendChild(head);
    f.body.appendChild(lineTable(bounded(card.lines).map(function (l) {
      need(l && num(l.number) !== null && str(l.text) !== null);
      return { a: l.number, text: l.text };
    })));
    moreNote(f.body, card.lines);
    var first = card.lines.length ? card.lines[0].number : num(card.offset);
    var lastLine = card.lines.length ? card.lines[card.lines.length - 1].number : first;
    f.body.appendChild(el("p", "dc-note", "lines " + first + "\u2013" + lastLine + " of " + card.totalLines));
    return f.card;
  }

  function webCard(card) {
    var f = frame("web", str(card.title), "web result");
    if (card.kind === "search") {
      need(Array.isArray(card.sources) && typeof card.truncated === "boolean");
      if (str(card.answer)) f.body.appendChild(el("p", null, card.answer));
      var ul = el("ul", "dc-list");
      bounded(card.sources).forEach(function (s) {
        need(s && str(s.url) !== null);
        var li = el("li");
        li.appendChild(link(str(s.title) || s.url, webHref(s.url)));
        if (str(s.publishedAt)) li.appendChild(el("span", "dc-note", " " + s.publishedAt));
        if (str(s.snippet)) li.appendChild(el("p", "dc-note", s.snippet));
        ul.appendChild(li);
      });
      f.body.appendChild(ul);
      if (card.truncated) f.body.appendChild(el("p", "dc-warn dc-count", "truncated: more sources not shown"));
    } else if (card.kind === "fetch") {
      need(str(card.url) !== null && num(card.statusCode) !== null && typeof card.truncated === "boolean");
      f.body.appendChild(link(card.url, webHref(card.url)));
      f.body.appendChild(el("p", card.statusCode < 400 ? "dc-note" : "dc-warn", "HTTP " + card.statusCode));
      if (card.truncated) f.body.appendChild(el("p", "dc-warn dc-count", "truncated: the body was cut short"));
    } else {
      need(false);
    }
    return f.card;
  }

  // ---- generic and fallback ----

  function genericCard(card, phase) {
    need(card.title === undefined || card.title === null || str(card.title) !== null);
    var f = frame("generic", str(card.title), phase);
    if (str(card.kind)) f.body.appendChild(el("p", "dc-note", card.kind));
    if (card.rawInput !== undefined && card.rawInput !== null) rawDetails(f.body, "arguments", card.rawInput, true);
    contentList(f.body, card.content);
    locations(f.body, card.locations);
    return f.card;
  }

  // What a person sees of a card this renderer cannot show: its raw JSON and the call's
  // raw arguments.
  function fallbackCard(card, phase, args) {
    var f = frame("generic", null, phase + " (unrecognized card)");
    f.card.classList.add("dc-fallback");
    f.body.appendChild(el("p", "dc-note", "This card could not be shown as it is; its raw form follows."));
    if (args !== undefined) rawDetails(f.body, "arguments", args, true);
    rawDetails(f.body, "card", card, true);
    return f.card;
  }

  var CALL_CARDS = { generic: genericCard, terminal: terminalCall, diff: diffCard };
  var RESULT_CARDS = {
    generic: genericCard, terminal: terminalResult, diff: diffCard,
    search: searchCard, read: readCard, web: webCard
  };

  function renderCard(card, phase, args) {
    var table = phase === "call" ? CALL_CARDS : RESULT_CARDS;
    try {
      need(card && typeof card === "object" && !Array.isArray(card));
      var render = Object.prototype.hasOwnProperty.call(table, card.card) ? table[card.card] : null;
      need(render);
      return render(card, phase);
    } catch (e) {
      return fallbackCard(card, phase, args);
    }
  }

  // ---- entries ----

  function entryHead(entry) {
    var parts = [];
    if (num(entry.line) !== null) parts.push("line " + entry.line);
    if (str(entry.name)) parts.push(entry.name);
    if (str(entry.id)) parts.push("(" + entry.id + ")");
    return el("div", "dc-entry-head", parts.join(" "));
  }

  function callEntry(entry) {
    var box = el("article", "dc-entry");
    box.appendChild(entryHead(entry));
    var callCard = entry.callCard === undefined
      ? { card: "generic", title: str(entry.name) || "call", rawInput: entry.arguments }
      : entry.callCard;
    box.appendChild(renderCard(callCard, "call", entry.arguments));
    if (entry.resultCard !== undefined) {
      var result = renderCard(entry.resultCard, "result", entry.arguments);
      if (entry.isError === true) result.classList.add("dc-error");
      box.appendChild(result);
    } else if (entry.pending === true) {
      box.appendChild(el("p", "dc-note dc-pending", "running\u2026"));
    } else {
      box.appendChild(el("p", "dc-note", "result not logged"));
    }
    return box;
  }

  function malformedEntry(entry) {
    var box = el("article", "dc-entry");
    var card = el("section", "dc-card dc-malformed");
    card.tabIndex = 0;
    card.dataset.card = "malformed";
    card.appendChild(el("div", "dc-head", "malformed line " + (num(entry.line) === null ? "?" : entry.line)));
    card.appendChild(el("pre", "dc-body", str(entry.error) || "not a log record"));
    box.appendChild(card);
    return box;
  }

  function renderEntries(root, entries) {
    root.textContent = "";
    if (!Array.isArray(entries)) entries = [];
    bounded(entries).forEach(function (entry) {
      try {
        root.appendChild(entry && entry.kind === "malformed" ? malformedEntry(entry) : callEntry(entry || {}));
      } catch (e) {
        root.appendChild(fallbackCard(entry, "entry"));
      }
    });
    moreNote(root, entries);
    if (entries.length === 0) root.appendChild(el("p", "dc-note", "no calls"));
  }

  // ---- MCP Apps view: the host bridge (read-only) ----

  var bridge = { nextId: 1, pending: {}, entry: { pending: true }, root: null };

  function post(message) {
    window.parent.postMessage(message, "*");
  }

  function request(method, params) {
    var id = bridge.nextId++;
    post({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { bridge.pending[id] = { resolve: resolve, reject: reject }; });
  }

  function applyHostContext(context) {
    if (!context || typeof context !== "object") return;
    if (context.theme === "dark" || context.theme === "light") document.documentElement.dataset.theme = context.theme;
    var vars = context.styles && context.styles.variables;
    if (vars && typeof vars === "object") {
      Object.keys(vars).forEach(function (name) {
        if (/^--[a-z0-9-]+$/.test(name) && typeof vars[name] === "string") {
          document.documentElement.style.setProperty(name, vars[name]);
        }
      });
    }
  }

  function onToolResult(params) {
    var meta = params && params._meta && params._meta[META_KEY];
    var entry = bridge.entry;
    delete entry.pending;
    entry.isError = !!(params && params.isError);
    if (meta && typeof meta === "object") {
      if (meta.callCard !== undefined) entry.callCard = meta.callCard;
      if (meta.resultCard !== undefined) entry.resultCard = meta.resultCard;
    }
    if (entry.resultCard === undefined) {
      entry.resultCard = { card: "generic", content: params && params.content };
    }
    renderEntries(bridge.root, [entry]);
  }

  function onHostMessage(event) {
    if (event.source !== window.parent) return;
    var msg = event.data;
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.id !== undefined && !msg.method && bridge.pending[msg.id]) {
      var p = bridge.pending[msg.id];
      delete bridge.pending[msg.id];
      if (msg.error) p.reject(msg.error); else p.resolve(msg.result);
      return;
    }
    var params = msg.params || {};
    if (msg.method === "ui/notifications/tool-input") {
      bridge.entry.arguments = params.arguments;
      renderEntries(bridge.root, [bridge.entry]);
    } else if (msg.method === "ui/notifications/tool-result") {
      onToolResult(params);
    } else if (msg.method === "ui/notifications/tool-cancelled") {
      delete bridge.entry.pending;
      renderEntries(bridge.root, [bridge.entry]);
      bridge.root.appendChild(el("p", "dc-warn", "cancelled" + (str(params.reason) ? ": " + params.reason : "")));
    } else if (msg.method === "ui/notifications/host-context-changed") {
      applyHostContext(params);
    } else if (msg.method === "ui/resource-teardown" && msg.id !== undefined) {
      post({ jsonrpc: "2.0", id: msg.id, result: {} });
    } else if (msg.method === "ping" && msg.id !== undefined) {
      post({ jsonrpc: "2.0", id: msg.id, result: {} });
    }
  }

  function reportSize() {
    var body = document.body;
    post({
      jsonrpc: "2.0", method: "ui/notifications/size-changed",
      params: { width: Math.ceil(body.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight) }
    });
  }

  function startView(root) {
    bridge.root = root;
    window.addEventListener("message", onHostMessage);
    root.appendChild(el("p", "dc-note dc-pending", "waiting for the call\u2026"));
    request("ui/initialize", {
      protocolVersion: "2026-01-26",
      appInfo: { name: "dsh-cards", version: "1" },
      appCapabilities: { availableDisplayModes: ["inline"] }
    }).then(function (result) {
      var context = result && result.hostContext;
      applyHostContext(context);
      // The call's tool, as the host names it (the pending card's title until the result
      // brings the tool's own call card).
      var tool = context && context.toolInfo && context.toolInfo.tool;
      if (tool && str(tool.name) !== null) bridge.entry.name = tool.name;
      post({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
      if (typeof ResizeObserver === "function") new ResizeObserver(reportSize).observe(document.body);
    }, function () {
      root.appendChild(el("p", "dc-warn", "the host refused the view"));
    });
  }

  function boot() {
    var root = document.getElementById("dsh-cards");
    if (!root) return;
    var island = document.getElementById("dsh-cards-data");
    if (island) {
      var entries;
      try { entries = JSON.parse(island.textContent); } catch (e) { entries = []; }
      renderEntries(root, entries);
    } else if (window.parent !== window) {
      startView(root);
    }
  }

  window.DshCards = { render: renderEntries, renderCard: renderCard, diffRows: diffRows };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
