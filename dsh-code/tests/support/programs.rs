//! The programs the tests run that a model could write: each must type-check against
//! the SDK declaration of the probe tools (see `typecheck.rs`).

pub(crate) const TWO_ECHOES: &str = "const a = await tools.echo({value: 1});
const b = await tools.echo({value: {b: [true, null]}});
return [a, b];";

pub(crate) const LOSSY_ARGUMENTS: &str = r#"const out: string[] = [];
const attempt = async (args: any) => {
  try {
    await tools.echo(args);
    out.push('ok');
  } catch (e) {
    out.push((e as ToolCallError).message);
  }
};
const cyclic: any = {};
cyclic.self = cyclic;
const sparse = [1, , 3];
const getter = { get g() { return 1; } };
await attempt({value: NaN});
await attempt({value: -0});
await attempt({value: Infinity});
await attempt({value: undefined});
await attempt({value: cyclic});
await attempt({value: sparse});
await attempt({value: new Date(0)});
await attempt({value: new Map()});
await attempt({value: {[Symbol('s')]: 1}});
await attempt({value: getter});
await attempt({value: 10n});
await attempt({value: () => 1});
await attempt({value: {'not an ident': undefined}});
await attempt(undefined);
await attempt({value: 1});
return out;"#;

pub(crate) const SHARED_SUBSTRUCTURE: &str = "const s = {a: 1};
return await tools.echo({value: [s, s]});";

pub(crate) const TOOL_CALL_ERROR_SHAPE: &str = r#"let failed: ToolCallError | undefined;
try {
  await tools.fail({message: 'boom'});
} catch (e) {
  failed = e as ToolCallError;
}
let invalid = '';
try {
  await tools.echo({} as { value: JsonValue });
} catch (e) {
  if (e instanceof ToolCallError) invalid = e.message;
}
if (failed === undefined) return null;
return {
  name: failed.name,
  toolName: failed.toolName,
  message: failed.message,
  own: Object.getOwnPropertyNames(failed).sort(),
  isToolCallError: failed instanceof ToolCallError,
  isError: failed instanceof Error,
  code: typeof (failed as unknown as Record<string, unknown>).code,
  invalid,
};"#;

pub(crate) const FOUR_SLOW: &str = "return await Promise.all([
  tools.slow({label: 'a', ms: 150}),
  tools.slow({label: 'b', ms: 150}),
  tools.slow({label: 'c', ms: 150}),
  tools.slow({label: 'd', ms: 150}),
]);";

pub(crate) const BARRIER: &str = "return await Promise.all([
  tools.slow({label: 'a', ms: 100}),
  tools.slow({label: 'b', ms: 100}),
  tools.exclusive({label: 'x', ms: 50}),
  tools.slow({label: 'c', ms: 100}),
  tools.slow({label: 'd', ms: 100}),
]);";

pub(crate) const DELIVERY_ORDER: &str = "const order: string[] = [];
await Promise.all([
  tools.slow({label: 'slow', ms: 300}).then((l) => order.push(l)),
  tools.slow({label: 'fast', ms: 1}).then((l) => order.push(l)),
]);
return order;";

pub(crate) const REMARKS: &str = "await tools.remark({text: 'first'});
await tools.remark({text: 'second'});";

pub(crate) const FIRE_AND_FORGET: &str =
    "void tools.exclusive({label: 'long', ms: 60000}).catch(() => {});
void tools.slow({label: 'queued', ms: 1}).catch(() => {});
return 'done';";

pub(crate) const TOOL_NAMES: &str = "let unknown = '';
try {
  (tools as unknown as Record<string, unknown>)['nope'];
} catch (e) {
  unknown = (e as Error).message;
}
return {names: Object.keys(tools), hasRunCode: 'run_code' in tools, unknown};";

pub(crate) const THOUSAND_CALLS: &str = "let sequential = 0;
for (let i = 0; i < 1000; i++) {
  const v = await tools.echo({value: i});
  if (typeof v === 'number') sequential += v;
}
const all = await Promise.all(Array.from({length: 1000}, (_, i) => tools.echo({value: i})));
const concurrent = all.reduce((s: number, v) => s + (typeof v === 'number' ? v : 0), 0);
return {sequential, concurrent};";

pub(crate) const AWAIT_SLOW: &str = "return await tools.slow({label: 'stuck', ms: 60000});";

/// Every program above, for the type check.
pub(crate) const DEEP_ARGUMENTS: &str = r#"const chain = (n: number, leaf: JsonValue): JsonValue => {
  let v: JsonValue = leaf;
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const deep = await tools.echo({value: chain(100, 1)});
const shared = {a: 1};
const twice = await tools.echo({value: [chain(80, shared), chain(80, shared)]});
const root: any[] = [];
const nodes: any[][] = [root];
for (let i = 0; i < 100; i++) {
  const next: any[] = [];
  nodes[nodes.length - 1].push(next);
  nodes.push(next);
}
nodes[100].push(nodes[70]);
let message = '';
try {
  await tools.echo({value: root});
} catch (e) {
  message = (e as ToolCallError).message;
}
return {deep: JSON.stringify(deep).length, twice: JSON.stringify(twice).length, message};"#;

/// Four overlapping reads whose bodies end in the reverse of their submission order.
pub(crate) const STAGGERED: &str = "return await Promise.all([
  tools.slow({label: 'a', ms: 240}),
  tools.slow({label: 'b', ms: 180}),
  tools.slow({label: 'c', ms: 120}),
  tools.slow({label: 'd', ms: 60}),
]);";

/// A success, a failure, a call still running when the program returns (cancelled
/// then) and one still queued (abandoned).
pub(crate) const OBSERVED: &str = "const a = await tools.echo({value: {n: 1}});
let message = '';
try {
  await tools.fail({message: 'boom'});
} catch (e) {
  message = (e as ToolCallError).message;
}
void tools.slow({label: 'long', ms: 60000}).catch(() => {});
void tools.exclusive({label: 'queued', ms: 1}).catch(() => {});
return [a, message];";

/// Pictures among other calls, then a value.
pub(crate) const PICTURES: &str = "const [a, b] = await Promise.all([
  tools.picture({caption: 'first'}),
  tools.echo({value: 'plain'}),
]);
const c = await tools.picture({caption: 'second'});
console.log(a, b, c);
return 'seen';";

/// A picture, then a failure that ends the run.
pub(crate) const PICTURE_THEN_THROW: &str = "await tools.picture({caption: 'lost'});
throw new Error('no');";

/// Arguments the host reads itself, and arguments only the encoder may read (a proxy
/// inside a plain object, a getter): no trap or getter runs more than the encoder runs it.
pub(crate) const HOST_READS: &str = r#"const counts: Record<string, number> = {};
const count = (what: string) => { counts[what] = (counts[what] ?? 0) + 1; };
const proxy = new Proxy({a: 1}, {
  getPrototypeOf(t) { count('getPrototypeOf'); return Object.getPrototypeOf(t); },
  ownKeys(t) { count('ownKeys'); return Reflect.ownKeys(t); },
  getOwnPropertyDescriptor(t, k) { count('getOwnPropertyDescriptor'); return Reflect.getOwnPropertyDescriptor(t, k); },
  get(t, k) { count('get'); return Reflect.get(t, k); },
});
const numbers = await tools.echo({value: [0.1, 1e21, 2 ** 53, -5, 1.5e-7, 7 / 2, 6 / 2, 'é ✓', {}, [], null, true]});
const keys = await tools.echo({value: {b: 2, 1: 'one', 0: 'zero', '\ufffd': 'replacement'}});
const lone = await tools.echo({value: {[String.fromCharCode(0xd800)]: 1}}).catch((e: ToolCallError) => e.message);
const nullProto = await tools.echo({value: Object.assign(Object.create(null), {x: [Object.freeze([1])]})});
const proxied = await tools.echo({value: {outer: [1, {inner: proxy}]}});
let message = '';
try {
  await tools.echo({value: {ok: 1, bad: {get g() { count('getter'); return 1; }}}});
} catch (e) {
  message = (e as ToolCallError).message;
}
return {numbers, keys, lone, nullProto, proxied, message, counts};"#;

pub(crate) const ALL: &[(&str, &str)] = &[
    ("HOST_READS", HOST_READS),
    ("OBSERVED", OBSERVED),
    ("PICTURES", PICTURES),
    ("PICTURE_THEN_THROW", PICTURE_THEN_THROW),
    ("STAGGERED", STAGGERED),
    ("DEEP_ARGUMENTS", DEEP_ARGUMENTS),
    ("TWO_ECHOES", TWO_ECHOES),
    ("LOSSY_ARGUMENTS", LOSSY_ARGUMENTS),
    ("SHARED_SUBSTRUCTURE", SHARED_SUBSTRUCTURE),
    ("TOOL_CALL_ERROR_SHAPE", TOOL_CALL_ERROR_SHAPE),
    ("FOUR_SLOW", FOUR_SLOW),
    ("BARRIER", BARRIER),
    ("DELIVERY_ORDER", DELIVERY_ORDER),
    ("REMARKS", REMARKS),
    ("FIRE_AND_FORGET", FIRE_AND_FORGET),
    ("TOOL_NAMES", TOOL_NAMES),
    ("THOUSAND_CALLS", THOUSAND_CALLS),
    ("AWAIT_SLOW", AWAIT_SLOW),
];
