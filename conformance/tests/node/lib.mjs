// What the TypeScript client scripts share: the checks, the scripted user that answers
// the server's questions, and the calls of the talking-back fixtures and of the
// resources, prompts and completion with the exact results they must give (the same
// whichever SDK drives them).

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

// ---------------------------------------------------------------------------------------
// Resources, prompts and completion: the same calls and results on both SDKs.

/** The first eight bytes of every PNG file. */
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Whether `base64` decodes to bytes starting with the PNG signature. */
export function isPng(base64) {
  if (typeof base64 !== "string") return false;
  const bytes = Buffer.from(base64, "base64");
  return bytes.length > PNG_SIGNATURE.length && PNG_SIGNATURE.every((b, i) => bytes[i] === b);
}

/** The error `promise` rejects with; a check fails when it resolves. */
export async function rejection(promise, check, what) {
  let value;
  try {
    value = await promise;
  } catch (e) {
    return e;
  }
  check(false, `${what}: expected an error, got ${JSON.stringify(value)}`);
}

/** The fixed resources, by URI, with their mimeTypes. */
const RESOURCES = {
  "test://static-binary": "image/png",
  "test://static-text": "text/plain",
  "test://watched-resource": "text/plain",
};

/** The template of `test://template/{id}/data`. */
const TEMPLATE = "test://template/{id}/data";

/** The prompts served from the start, with their descriptions and arguments. */
const PROMPTS = {
  test_prompt_with_arguments: {
    description: "A prompt with two arguments.",
    arguments: [
      { name: "arg1", required: true, description: "First test argument" },
      { name: "arg2", required: true, description: "Second test argument" },
    ],
  },
  test_prompt_with_embedded_resource: {
    description: "A prompt embedding a resource.",
    arguments: [{ name: "resourceUri", required: true, description: "URI of the resource to embed" }],
  },
  test_prompt_with_image: { description: "A prompt with an image.", arguments: [] },
  test_simple_prompt: { description: "A prompt without arguments.", arguments: [] },
};

/** A prompt's arguments as `{name, required, description}`, in order. */
function argumentsOf(prompt) {
  return (prompt.arguments ?? []).map((a) => ({
    name: a.name,
    required: a.required === true,
    description: a.description,
  }));
}

/**
 * Resources: list them (the three fixed URIs among them, with their mimeTypes), list the
 * templates (`test://template/{id}/data` among them, JSON), read each kind (exact text, a
 * PNG blob, the template's JSON) and an unknown URI (-32602, the URI in `data`). Other
 * fixtures may be listed too. 14 checks.
 */
export async function resourceFixtures(client, check) {
  const { resources } = await client.listResources();
  const byUri = Object.fromEntries(resources.map((r) => [r.uri, r]));
  check(Object.keys(RESOURCES).every((uri) => byUri[uri]), `the resources: ${JSON.stringify(resources)}`);
  check(
    Object.entries(RESOURCES).every(
      ([uri, mimeType]) => byUri[uri].mimeType === mimeType && typeof byUri[uri].name === "string" && byUri[uri].name,
    ),
    `the resources' mimeTypes and names: ${JSON.stringify(resources)}`,
  );

  const { resourceTemplates } = await client.listResourceTemplates();
  const template = resourceTemplates.find((t) => t.uriTemplate === TEMPLATE);
  check(template, `the templates: ${JSON.stringify(resourceTemplates)}`);
  check(template.mimeType === "application/json", `the template's mimeType: ${JSON.stringify(template)}`);

  let read = await client.readResource({ uri: "test://static-text" });
  let [contents] = read.contents;
  check(read.contents.length === 1 && contents.uri === "test://static-text", `static-text: ${JSON.stringify(read)}`);
  check(
    contents.text === "This is the content of the static text resource.",
    `static-text's text: ${JSON.stringify(read)}`,
  );
  check(contents.mimeType === "text/plain", `static-text's mimeType: ${JSON.stringify(read)}`);

  read = await client.readResource({ uri: "test://static-binary" });
  [contents] = read.contents;
  check(
    read.contents.length === 1 && contents.uri === "test://static-binary",
    `static-binary: ${JSON.stringify(read)}`,
  );
  check(
    contents.mimeType === "image/png" && contents.text === undefined,
    `static-binary's mimeType: ${JSON.stringify(read)}`,
  );
  check(isPng(contents.blob), `static-binary's blob is a PNG: ${JSON.stringify(read)}`);

  read = await client.readResource({ uri: "test://template/42/data" });
  [contents] = read.contents;
  check(
    read.contents.length === 1 &&
      contents.uri === "test://template/42/data" &&
      contents.mimeType === "application/json",
    `template/42: ${JSON.stringify(read)}`,
  );
  let parsed;
  try {
    parsed = JSON.parse(contents.text);
  } catch {
    parsed = undefined;
  }
  check(
    JSON.stringify(parsed) === JSON.stringify({ id: "42", templateTest: true, data: "Data for ID: 42" }),
    `template/42's JSON: ${contents.text}`,
  );

  const unknown = "test://no-such-resource";
  const error = await rejection(client.readResource({ uri: unknown }), check, "reading an unknown URI");
  check(error?.code === -32602, `an unknown URI: code ${error?.code} (${error?.message})`);
  check(error?.data?.uri === unknown, `an unknown URI: data ${JSON.stringify(error?.data)}`);
}

/**
 * Prompts: list them (the four fixed prompts among them, with their descriptions,
 * arguments and required flags), get each
 * with arguments (roles, texts, the embedded resource, the image), and a missing
 * required argument and an unknown prompt (-32602). 14 checks.
 */
export async function promptFixtures(client, check) {
  const { prompts } = await client.listPrompts();
  const byName = Object.fromEntries(prompts.map((p) => [p.name, p]));
  check(Object.keys(PROMPTS).every((name) => byName[name]), `the prompts: ${JSON.stringify(prompts)}`);
  check(
    Object.entries(PROMPTS).every(([name, p]) => byName[name].description === p.description),
    `the prompts' descriptions: ${JSON.stringify(prompts)}`,
  );
  check(
    Object.entries(PROMPTS).every(
      ([name, p]) => JSON.stringify(argumentsOf(byName[name])) === JSON.stringify(p.arguments),
    ),
    `the prompts' arguments: ${JSON.stringify(prompts)}`,
  );

  let got = await client.getPrompt({ name: "test_simple_prompt" });
  check(
    got.messages.length === 1 &&
      got.messages[0].role === "user" &&
      got.messages[0].content.type === "text" &&
      got.messages[0].content.text === "This is a simple prompt for testing.",
    `test_simple_prompt: ${JSON.stringify(got)}`,
  );

  got = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "hello", arg2: "world" } });
  check(
    got.messages.length === 1 &&
      got.messages[0].role === "user" &&
      got.messages[0].content.text === "Prompt with arguments: arg1='hello', arg2='world'",
    `test_prompt_with_arguments: ${JSON.stringify(got)}`,
  );

  got = await client.getPrompt({
    name: "test_prompt_with_embedded_resource",
    arguments: { resourceUri: "test://static-text" },
  });
  let [first, second] = got.messages;
  check(
    got.messages.length === 2 && first.role === "user" && second.role === "user",
    `the embedded resource prompt's messages: ${JSON.stringify(got)}`,
  );
  const resource = first.content?.resource;
  check(
    first.content?.type === "resource" &&
      resource?.uri === "test://static-text" &&
      resource?.text === "Embedded resource content for testing." &&
      resource?.mimeType === "text/plain",
    `the embedded resource: ${JSON.stringify(first)}`,
  );
  check(
    second.content?.type === "text" && second.content.text === "Please process the embedded resource above.",
    `the embedded resource prompt's text: ${JSON.stringify(second)}`,
  );

  got = await client.getPrompt({ name: "test_prompt_with_image" });
  [first, second] = got.messages;
  check(
    got.messages.length === 2 && first.role === "user" && second.role === "user",
    `the image prompt's messages: ${JSON.stringify(got)}`,
  );
  check(
    first.content?.type === "image" && first.content.mimeType === "image/png" && isPng(first.content.data),
    `the image: ${JSON.stringify(first)}`,
  );
  check(
    second.content?.type === "text" && second.content.text === "Please analyze the image above.",
    `the image prompt's text: ${JSON.stringify(second)}`,
  );

  let error = await rejection(
    client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "hello" } }),
    check,
    "a missing required argument",
  );
  check(error?.code === -32602, `a missing argument: code ${error?.code} (${error?.message})`);
  check(String(error?.message).includes("arg2"), `the error names arg2: ${error?.message}`);

  error = await rejection(client.getPrompt({ name: "no_such_prompt" }), check, "an unknown prompt");
  check(error?.code === -32602, `an unknown prompt: code ${error?.code} (${error?.message})`);
}

/**
 * Completion: `test_prompt_with_arguments`' `arg1` from "pa", the template's `id` from
 * "1": the values exactly, `total` and `hasMore`. 2 checks.
 */
export async function completionFixtures(client, check) {
  let { completion } = await client.complete({
    ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
    argument: { name: "arg1", value: "pa" },
  });
  check(
    JSON.stringify(completion.values) === '["paris","park","party"]' &&
      completion.total === 3 &&
      completion.hasMore === false,
    `arg1 from "pa": ${JSON.stringify(completion)}`,
  );
  ({ completion } = await client.complete({
    ref: { type: "ref/resource", uri: TEMPLATE },
    argument: { name: "id", value: "1" },
  }));
  check(
    JSON.stringify(completion.values) === '["1","123"]' && completion.total === 2 && completion.hasMore === false,
    `id from "1": ${JSON.stringify(completion)}`,
  );
}

/**
 * The prompt list changing: `test_trigger_prompt_change` adds `test_dynamic_prompt`,
 * one more prompt-list-changed notification arrives (`changes()` counts them), the list
 * and `prompts/get` show it; called again it removes it, one more notification arrives
 * and the list is back to what it was. `list()` lists the prompts afresh. 10 checks.
 */
export async function promptListChange(client, check, changes, list) {
  const listed = async () => (await list()).map((p) => p.name).sort();
  const served = await listed();
  const before = changes();
  const trigger = async () => {
    const result = await client.callTool({ name: "test_trigger_prompt_change", arguments: {} });
    check(!result.isError, `test_trigger_prompt_change failed: ${textOf(result)}`);
    return textOf(result);
  };
  let text = await trigger();
  check(text === "Mutation triggered: test_dynamic_prompt added", `added: ${text}`);
  check(
    await waitFor(() => changes() >= before + 1),
    `a prompt-list-changed notification after adding (${changes() - before})`,
  );
  let names = await listed();
  check(
    JSON.stringify(names) === JSON.stringify([...served, "test_dynamic_prompt"].sort()),
    `the dynamic prompt is listed: ${JSON.stringify(names)}`,
  );
  const got = await client.getPrompt({ name: "test_dynamic_prompt" });
  check(
    got.messages?.length === 1 && got.messages[0].content?.text === "A prompt that comes and goes.",
    `test_dynamic_prompt: ${JSON.stringify(got)}`,
  );

  text = await trigger();
  check(text === "Mutation triggered: test_dynamic_prompt removed", `removed: ${text}`);
  check(
    await waitFor(() => changes() >= before + 2),
    `a prompt-list-changed notification after removing (${changes() - before})`,
  );
  names = await listed();
  check(JSON.stringify(names) === JSON.stringify(served), `the dynamic prompt is gone: ${JSON.stringify(names)}`);
  // A moment more, so an extra notification would be seen.
  await new Promise((r) => setTimeout(r, 100));
  check(changes() === before + 2, `one notification per change: ${changes() - before}`);
}
