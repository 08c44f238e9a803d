// Evaluated once per run, before the program. It is a function expression: the host
// calls it with its two functions and the visible tool names, so nothing of the host
// ever becomes a global. Every builtin it relies on is captured here, so a program that
// replaces `JSON.stringify` or `Array.isArray` cannot change how arguments cross.
(function (hostCall, hostLog, names, prefixLength) {
  'use strict';
  const G = globalThis;
  const isArray = Array.isArray;
  const arrayProto = Array.prototype;
  const objectProto = Object.prototype;
  const getProto = Object.getPrototypeOf;
  const ownKeys = Reflect.ownKeys;
  const getOwn = Object.getOwnPropertyDescriptor;
  const define = Object.defineProperty;
  const create = Object.create;
  const freeze = Object.freeze;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const isFinite = Number.isFinite;
  const toStr = String;
  const ErrorBase = Error;
  const TypeErr = TypeError;
  const RangeErr = RangeError;
  const ident = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const test = (re, s) => RegExp.prototype.test.call(re, s);
  const MakeSet = Set;
  const setHas = Set.prototype.has;
  const setAdd = Set.prototype.add;
  const setDelete = Set.prototype.delete;
  const push = (a, v) => { a[a.length] = v; };
  const join = (a, sep) => Array.prototype.join.call(a, sep);

  const member = (path, key) =>
    typeof key === 'number' ? `${path}[${key}]`
      : test(ident, key) ? `${path}.${key}` : `${path}[${stringify(key)}]`;

  const fail = (path, what) => { throw new TypeErr(`${path} ${what}`); };

  // A detached copy made only of null, booleans, finite numbers (not -0), strings,
  // dense plain arrays and plain objects with enumerable string keys; anything else
  // fails with the path of the first offending value. Iterative, so deep values
  // cannot exhaust the stack here; an object inside itself is a cycle, a shared
  // one is fine.
  const snapshot = (root, label) => {
    const out = { v: undefined };
    const onPath = new MakeSet();
    const tasks = [{ leave: false, v: root, holder: out, key: 'v', path: label }];
    while (tasks.length > 0) {
      const t = tasks.pop();
      if (t.leave) { setDelete.call(onPath, t.v); continue; }
      const v = t.v;
      const path = t.path;
      switch (typeof v) {
        case 'string': case 'boolean': t.holder[t.key] = v; continue;
        case 'number':
          if (!isFinite(v)) fail(path, `is ${v}, not a finite number`);
          if (v === 0 && 1 / v < 0) fail(path, 'is -0');
          t.holder[t.key] = v;
          continue;
        case 'undefined': fail(path, 'is undefined'); break;
        case 'bigint': fail(path, 'is a BigInt'); break;
        case 'symbol': fail(path, 'is a symbol'); break;
        case 'function': fail(path, 'is a function'); break;
        default: break;
      }
      if (v === null) { t.holder[t.key] = null; continue; }
      if (setHas.call(onPath, v)) fail(path, 'contains itself (a cycle)');
      const proto = getProto(v);
      const keys = ownKeys(v);
      let copy;
      const children = [];
      if (isArray(v)) {
        if (proto !== arrayProto) fail(path, 'is not a plain array');
        const length = v.length;
        copy = [];
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          if (k === 'length') continue;
          if (typeof k !== 'string' || toStr(k >>> 0) !== k || (k >>> 0) >= length) {
            fail(path, `has a property ${typeof k === 'symbol' ? 'keyed by a symbol' : stringify(k)} besides its items`);
          }
        }
        for (let i = 0; i < length; i++) {
          const d = getOwn(v, i);
          if (d === undefined) fail(member(path, i), 'is a hole (sparse array)');
          if (!('value' in d)) fail(member(path, i), 'is an accessor');
          push(children, [i, d.value]);
        }
      } else {
        if (proto !== objectProto && proto !== null) {
          const ctor = proto && getOwn(proto, 'constructor');
          const kind = ctor && typeof ctor.value === 'function' && ctor.value.name ? ctor.value.name : 'non-plain';
          fail(path, `is a ${kind} object, not a plain object`);
        }
        copy = create(null);
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          if (typeof k === 'symbol') fail(path, 'has a symbol key');
          const d = getOwn(v, k);
          if (!d.enumerable) fail(member(path, k), 'is not enumerable');
          if (!('value' in d)) fail(member(path, k), 'is an accessor');
          push(children, [k, d.value]);
        }
      }
      t.holder[t.key] = copy;
      setAdd.call(onPath, v);
      push(tasks, { leave: true, v });
      for (let i = children.length - 1; i >= 0; i--) {
        const k = children[i][0];
        push(tasks, { leave: false, v: children[i][1], holder: copy, key: k, path: member(path, k) });
      }
    }
    return out.v;
  };

  const messageOf = (e) => {
    try {
      return e instanceof ErrorBase ? toStr(e.message) : toStr(e);
    } catch (_) {
      return 'unprintable value';
    }
  };

  class ToolCallError extends ErrorBase {
    constructor(toolName, message) {
      super(message);
      define(this, 'name', { value: 'ToolCallError', writable: true, configurable: true });
      define(this, 'toolName', { value: toolName, enumerable: true, writable: true, configurable: true });
      delete this.stack;
    }
  }
  define(ToolCallError.prototype, 'name', { value: 'ToolCallError', writable: true, configurable: true });

  const binding = (name) => async function (args) {
    let text;
    try {
      if (args === undefined) {
        throw new TypeErr('(call the tool with an arguments object, e.g. `{}`)');
      }
      text = stringify(snapshot(args, 'args'));
    } catch (e) {
      const why = e instanceof RangeErr ? 'args are nested too deeply' : messageOf(e);
      throw new ToolCallError(name, `tool arguments must be lossless JSON: ${why}`);
    }
    const reply = await hostCall(name, text);
    if (reply[0]) return parse(reply[1]);
    throw new ToolCallError(name, reply[1]);
  };

  const table = create(null);
  for (let i = 0; i < names.length; i++) {
    define(table, names[i], { value: binding(names[i]), enumerable: true });
  }
  freeze(table);
  const known = join(names, ', ');
  const tools = new Proxy(table, {
    get(target, key) {
      if (typeof key === 'symbol' || key in target || key === 'then' || key === 'toJSON') {
        return target[key];
      }
      throw new TypeErr(`unknown tool ${stringify(key)}; available tools: ${known || '(none)'}`);
    },
    set() { return false; },
    defineProperty() { return false; },
    deleteProperty() { return false; },
  });

  // console: every method appends one line; strings print raw, other values as JSON
  // where possible.
  const show = (v) => {
    switch (typeof v) {
      case 'string': return v;
      case 'undefined': return 'undefined';
      case 'function': return `[Function ${v.name || '(anonymous)'}]`;
      case 'bigint': return `${v}n`;
      case 'symbol': return v.toString();
      case 'number': return v === 0 && 1 / v < 0 ? '-0' : toStr(v);
      case 'boolean': return toStr(v);
      default: break;
    }
    if (v === null) return 'null';
    try {
      if (v instanceof ErrorBase) return `${v.name}: ${v.message}`;
      const seen = new MakeSet();
      const text = stringify(v, function (k, x) {
        if (typeof x === 'bigint') return `${x}n`;
        if (typeof x === 'function') return `[Function ${x.name || '(anonymous)'}]`;
        if (typeof x === 'undefined') return 'undefined';
        if (typeof x === 'number' && !isFinite(x)) return toStr(x);
        if (typeof x === 'object' && x !== null) {
          if (setHas.call(seen, x)) return '[Circular]';
          setAdd.call(seen, x);
        }
        return x;
      });
      return text === undefined ? toStr(v) : text;
    } catch (_) {
      try { return toStr(v); } catch (_e) { return '[object]'; }
    }
  };
  const emit = function (...args) {
    const parts = [];
    for (let i = 0; i < args.length; i++) push(parts, show(args[i]));
    hostLog(join(parts, ' '));
  };
  const consoleObject = freeze({
    log: emit, info: emit, warn: emit, error: emit, debug: emit, trace: emit,
  });

  const fixed = { writable: false, enumerable: false, configurable: false };
  define(G, 'console', { ...fixed, value: consoleObject });
  define(G, 'tools', { ...fixed, value: tools });
  define(G, 'ToolCallError', { ...fixed, value: ToolCallError });

  // Where an error was thrown, in the program's own coordinates.
  const locate = (e) => {
    let stack;
    try { stack = e && typeof e === 'object' ? e.stack : undefined; } catch (_) { return ''; }
    if (typeof stack !== 'string') return '';
    const m = /\(?program:(\d+):(\d+)\)?/.exec(stack);
    if (m === null) return '';
    const line = +m[1];
    let col = +m[2];
    if (line === 1) col = col > prefixLength ? col - prefixLength : 1;
    return ` (at line ${line}, column ${col})`;
  };
  const describe = (e) => {
    try {
      if (e instanceof ErrorBase) return `${e.name}: ${e.message}${locate(e)}`;
      return `uncaught ${show(e)}`;
    } catch (_) {
      return 'uncaught unprintable value';
    }
  };

  // Settles the program's promise into [tag, text]: ['u'] no result, ['r', json] a
  // result, ['i', why] a result that is not lossless JSON, ['e', why] a throw.
  return async function finish(program) {
    let value;
    try {
      value = await program;
    } catch (e) {
      return ['e', describe(e)];
    }
    if (value === undefined) return ['u', ''];
    try {
      return ['r', stringify(snapshot(value, 'result'))];
    } catch (e) {
      return ['i', e instanceof RangeErr ? 'the result is nested too deeply' : messageOf(e)];
    }
  };
})
