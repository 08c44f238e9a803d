// What the TypeScript client scripts share: checks, `dsh-tools mcp --http` startup and the
// reference-tool sweep (the same calls whichever SDK version drives them).

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

/** A `check(condition, what)` that throws `[label] what` on failure and counts passes. */
export function checker(label) {
  const check = (condition, what) => {
    if (!condition) throw new Error(`[${label}] ${what}`);
    check.count += 1;
  };
  check.count = 0;
  return check;
}

/** The text blocks of a tool result, joined by newlines. */
export function textOf(result) {
  return (result.content ?? [])
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n");
}

/**
 * Start `dsh-tools --root ROOT mcp ARGS --http 127.0.0.1:0` and resolve with its URL and
 * process.
 */
export function httpServer(dshTools, root, args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(dshTools, ["--root", root, "mcp", ...args, "--http", "127.0.0.1:0"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`no URL announced: ${seen}`)), 20000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      seen += chunk;
      const m = /serving MCP at (\S+)/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.on("exit", (code) => reject(new Error(`dsh-tools mcp --http exited ${code}: ${seen}`)));
  });
}

/**
 * List the tools and call every reference tool so that it completes, with `client`
 * (whose `callTool` checks each result's structuredContent against the tool's
 * outputSchema and throws on a mismatch) on a server rooted at `root`, which holds
 * `notes.txt` ("alpha\nbeta\n").
 */
export async function referenceSweep(client, root, check) {
  check(client.getServerVersion()?.name === "dsh-tools", `server ${JSON.stringify(client.getServerVersion())}`);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ["read", "write", "edit", "grep", "glob", "bash", "job_output", "job_list", "job_kill"]) {
    check(names.includes(n), `tool ${n} listed: ${names}`);
  }
  for (const t of tools) {
    check(t.outputSchema?.type === "object", `${t.name} publishes an object outputSchema`);
  }

  const completes = async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    check(!result.isError, `${name} ${JSON.stringify(args)} failed: ${textOf(result)}`);
    check(result.structuredContent !== undefined, `${name}: no structuredContent`);
    return result.structuredContent;
  };

  let sc = await completes("read", { file_path: "notes.txt" });
  check(sc.totalLines === 2, `read ${JSON.stringify(sc)}`);
  sc = await completes("write", { file_path: "made/new.txt", content: "one\n" });
  check(sc.operation === "create" && !("before" in sc), `write (create) ${JSON.stringify(sc)}`);
  sc = await completes("write", { file_path: "made/new.txt", content: "two\n" });
  check(sc.operation === "update" && sc.before === "one\n", `write (update) ${JSON.stringify(sc)}`);
  check(readFileSync(path.join(root, "made/new.txt"), "utf8") === "two\n", "the file was written");
  await completes("edit", { file_path: "made/new.txt", old_string: "two", new_string: "three" });
  sc = await completes("grep", { pattern: "thr+ee" });
  check(sc.matches.length === 1, `grep ${JSON.stringify(sc)}`);
  await completes("grep", { pattern: "nowhere to be found" });
  await completes("glob", { pattern: "**/*.txt" });

  sc = (await completes("bash", { command: "echo hi", description: "Say hi" })).result;
  check(sc.exitCode === 0 && !("signal" in sc), `bash exit 0 ${JSON.stringify(sc)}`);
  sc = (await completes("bash", { command: "echo no >&2; exit 7", description: "Fail" })).result;
  check(sc.exitCode === 7, `bash exit 7 ${JSON.stringify(sc)}`);
  sc = (await completes("bash", { command: "kill -KILL $$", description: "Killed" })).result;
  check(!("exitCode" in sc) && typeof sc.signal === "string", `bash killed ${JSON.stringify(sc)}`);

  sc = (
    await completes("bash", {
      command: "echo started; sleep 30",
      description: "Wait",
      run_in_background: true,
    })
  ).result;
  const running = sc.jobId;
  check(typeof running === "string", `background bash ${JSON.stringify(sc)}`);
  await completes("job_output", { job_id: running });
  await completes("job_list", {});
  sc = await completes("job_kill", { job_id: running });
  check(sc.outcome === "cancellation-requested", `job_kill ${JSON.stringify(sc)}`);
  await completes("job_output", { job_id: running, wait: true, timeout_ms: 20000 });
  sc = (
    await completes("bash", { command: "echo done", description: "Quick", run_in_background: true })
  ).result;
  sc = await completes("job_output", { job_id: sc.jobId, wait: true, timeout_ms: 20000 });
  check(JSON.stringify(sc).includes("done"), `job_output ${JSON.stringify(sc)}`);
  sc = await completes("job_kill", { job_id: sc.job.id });
  check(sc.outcome === "already-finished", `job_kill (finished) ${JSON.stringify(sc)}`);
  await completes("job_list", {});

  // A failure is a result with isError (not validated against the output schema).
  const failed = await client.callTool({ name: "read", arguments: { file_path: "no/such/file" } });
  check(failed.isError === true && textOf(failed).startsWith("Error: "), `failure ${textOf(failed)}`);
}
