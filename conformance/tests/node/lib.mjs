// What the TypeScript client scripts share: the checks, the scripted user that answers
// the server's questions, and the calls of the talking-back fixtures with the exact
// results they must give (the same whichever SDK drives them).

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

/** The client's capabilities: sampling, form elicitation and roots. */
export const CAPABILITIES = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };

/** The three messages `test_tool_with_logging` logs, in order, each at `info`. */
export const LOGGED = ["Tool execution started", "Tool processing data", "Tool execution completed"];

/**
 * The scripted user: it answers every question the server asks and records it.
 *
 * - a form: accepted, with `{name: "ada"}` when the form asks for a `name` (the
 *   `InputRequiredResult` fixtures' form), else `{username: "ada", email:
 *   "ada@example.com"}` (`test_elicitation`'s form);
 * - the model: an assistant text message "Paris";
 * - roots: `[{uri: "file:///work", name: "work"}]`;
 * - each log notification is kept (its params).
 */
export function scriptedUser() {
  const user = { forms: [], samples: [], roots: 0, logs: [] };
  user.elicit = (params) => {
    user.forms.push(params);
    const asksName = Object.hasOwn(params.requestedSchema?.properties ?? {}, "name");
    const content = asksName ? { name: "ada" } : { username: "ada", email: "ada@example.com" };
    return { action: "accept", content };
  };
  user.sample = (params) => {
    user.samples.push(params);
    return {
      role: "assistant",
      content: { type: "text", text: "Paris" },
      model: "scripted-model",
      stopReason: "endTurn",
    };
  };
  user.listRoots = () => {
    user.roots += 1;
    return { roots: [{ uri: "file:///work", name: "work" }] };
  };
  user.log = (params) => user.logs.push(params);
  return user;
}

/** Wait (up to `ms`) until `done()` holds; resolve with whether it does. */
export async function waitFor(done, ms = 3000) {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > ms) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/**
 * Call the fixtures that ask the user (a form, the model, roots, all three at once) with
 * `client` answered by `user`, and check the exact results and what each handler was
 * asked, and how often (a handler that is not called, or called twice, fails).
 */
export async function askingFixtures(client, user, check) {
  const call = async (name, args = {}) => {
    const result = await client.callTool({ name, arguments: args });
    check(!result.isError, `${name} failed: ${textOf(result)}`);
    return textOf(result);
  };

  // A typed form {username, email}: its answer comes back in the result.
  let text = await call("test_elicitation", { message: "Who are you?" });
  check(
    text === 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
    `test_elicitation: ${text}`,
  );
  check(user.forms.length === 1, `one form asked: ${JSON.stringify(user.forms)}`);
  const form = user.forms[0];
  check(form.message === "Who are you?", `the form's message: ${form.message}`);
  const schema = form.requestedSchema;
  check(
    schema?.type === "object" &&
      schema.properties?.username?.type === "string" &&
      schema.properties?.email?.type === "string",
    `the form's schema: ${JSON.stringify(schema)}`,
  );
  check(
    JSON.stringify([...(schema.required ?? [])].sort()) === '["email","username"]',
    `both fields required: ${JSON.stringify(schema)}`,
  );

  // The model is asked the prompt, as a user message.
  text = await call("test_sampling", { prompt: "What is the capital of France?" });
  check(text === "LLM response: Paris", `test_sampling: ${text}`);
  check(user.samples.length === 1, `one sampling request: ${JSON.stringify(user.samples)}`);
  const sample = user.samples[0];
  const first = sample.messages?.[0];
  check(
    sample.messages?.length === 1 && first.role === "user" && first.content?.text === "What is the capital of France?",
    `the sampling request's messages: ${JSON.stringify(sample.messages)}`,
  );
  check(sample.maxTokens === 100, `maxTokens: ${sample.maxTokens}`);

  // Roots: the URI of each root the client listed.
  text = await call("test_input_required_result_list_roots");
  check(text === "Client roots: file:///work", `test_input_required_result_list_roots: ${text}`);
  check(user.roots === 1, `roots listed once: ${user.roots}`);

  // A form asking `name`, the model and the roots together (one round on 2026-07-28).
  text = await call("test_input_required_result_multiple_inputs");
  check(text === "Paris ada (1 roots)", `test_input_required_result_multiple_inputs: ${text}`);
  check(user.forms.length === 2, `one more form: ${user.forms.length}`);
  check(user.forms[1].message === "What is your name?", `the name form: ${user.forms[1].message}`);
  check(user.samples.length === 2, `one more sampling request: ${user.samples.length}`);
  check(
    user.samples[1].messages?.[0]?.content?.text === "Generate a greeting" && user.samples[1].maxTokens === 50,
    `the greeting request: ${JSON.stringify(user.samples[1])}`,
  );
  check(user.roots === 2, `roots listed once more: ${user.roots}`);
}

/**
 * Call `test_tool_with_logging` with `callLogging()` and check its logs: when
 * `expected` is true, the three `info` messages in order; when false, none. The logs
 * seen so far are cleared first. Logs of a call arrive before its result on both
 * transports, but a client may dispatch them a little after; so this waits for three,
 * then a moment more so an extra one would be seen.
 */
export async function loggingCall(callLogging, user, check, expected, what) {
  user.logs.length = 0;
  const result = await callLogging();
  check(!result.isError, `${what}: test_tool_with_logging failed: ${textOf(result)}`);
  check(
    textOf(result) === "Logging test completed: 3 messages sent.",
    `${what}: test_tool_with_logging: ${textOf(result)}`,
  );
  await waitFor(() => user.logs.length >= 3, expected ? 3000 : 300);
  await new Promise((r) => setTimeout(r, 100));
  if (!expected) {
    check(user.logs.length === 0, `${what}: no log expected, got ${JSON.stringify(user.logs)}`);
    return;
  }
  check(user.logs.length === 3, `${what}: three logs expected, got ${JSON.stringify(user.logs)}`);
  check(user.logs.every((l) => l.level === "info"), `${what}: all at info: ${JSON.stringify(user.logs)}`);
  const texts = user.logs.map((l) => (typeof l.data === "string" ? l.data : JSON.stringify(l.data)));
  check(JSON.stringify(texts) === JSON.stringify(LOGGED), `${what}: the messages: ${JSON.stringify(texts)}`);
}

/** Run `main`, print `ok: N checks` and exit 0, or print the error and exit 1. */
export function runMain(main, check) {
  main().then(
    () => {
      console.log(`ok: ${check.count} checks`);
      process.exit(0);
    },
    (e) => {
      console.error(e?.stack ?? String(e));
      process.exit(1);
    },
  );
}
